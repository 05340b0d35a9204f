"""The plan of a ``ragmark probe``: everything decided before the first question is
asked, as one frozen value. The dataset, the configs, what each computes and the LLM
endpoint are a compare's plan (:func:`ragmark.plan.plan_compare`, so a probe takes the
same flags); the probe adds its arms (an attack, and an injection's style), the target
questions drawn with the seed, how many passages each attack plants, its gates, and
where each finished config and arm is written."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragmark.config import RunConfig
from ragmark.data.fingerprint import dataset_hash
from ragmark.errors import ConfigError
from ragmark.plan.build import plan_compare
from ragmark.plan.paths import check_targets, output_stem
from ragmark.plan.request import CompareRequest
from ragmark.probe.attacks import ATTACKS, STYLES, Planted
from ragmark.probe.given import GIVEN
from ragmark.probe.overlay import targets
from ragmark.probe.rates import RATES, SUBSTRING

if TYPE_CHECKING:
    from ragmark.plan.model import Plan

CLEAN = "clean"
"""The arm name of a config's run without planted documents."""

COPIES: Mapping[str, int] = {"injection": 1, "poisoning": 5, "exfiltration": 1,
                             "leakage": 1}
"""Passages planted a target by default (PoisonedRAG plants five poisoned passages)."""


@dataclass(frozen=True, order=True)
class Arm:
    """One attack as planted: ``attack``, and the ``style`` of an injection."""

    attack: str
    style: str = ""

    @property
    def name(self) -> str:
        return f"{self.attack}:{self.style}" if self.style else self.attack


def arms_of(attacks: Sequence[str], styles: Sequence[str]) -> tuple[Arm, ...]:
    """The arms of ``attacks`` (an injection once per style), in the order given; a
    ConfigError naming a word that is neither an attack nor a style.

    >>> [a.name for a in arms_of(["injection", "poisoning"], ["plain", "ignore"])]
    ['injection:plain', 'injection:ignore', 'poisoning']
    """
    bad = [a for a in attacks if a not in ATTACKS]
    if bad or not attacks:
        raise ConfigError(f"--attacks: {', '.join(bad) or 'none given'}: expected some of "
                          f"{', '.join(ATTACKS)}")
    wrong = [s for s in styles if s not in STYLES]
    if wrong or not styles:
        raise ConfigError(f"--styles: {', '.join(wrong) or 'none given'}: expected some of "
                          f"{', '.join(STYLES)}")
    out: list[Arm] = []
    for a in dict.fromkeys(attacks):
        out += [Arm(a, s) for s in dict.fromkeys(styles)] if a == "injection" else [Arm(a)]
    return tuple(out)


_GATE = re.compile(r"^probe:(?P<arm>[a-z-]+(?::[a-z-]+)?)(?:\.(?P<rate>[a-z_]+))?"
                   r"(?P<op>>=|>)(?P<at>[0-9]*\.?[0-9]+)$")


@dataclass(frozen=True)
class ProbeGate:
    """``--fail-on probe:ATTACK[:STYLE][.RATE]>X``: the probe fails (exit 1) when the
    rate (default ``success``: the attack success rate over the targets with an answer,
    every style of an injection pooled) is above ``at`` in any config."""

    arm: str
    rate: str
    at: float
    inclusive: bool = False
    text: str = ""

    def failed_by(self, value: float) -> bool:
        return value >= self.at if self.inclusive else value > self.at


def parse_gate(text: str) -> ProbeGate:
    """A probe gate from its text; a ConfigError that says the form otherwise.

    >>> g = parse_gate("probe:injection>0.05")
    >>> g.arm, g.rate, g.at, g.inclusive
    ('injection', 'success', 0.05, False)
    >>> parse_gate("probe:injection:ignore.retrieved>=0.5").rate
    'retrieved'
    """
    m = _GATE.match(text.replace(" ", ""))
    form = ("expected probe:ATTACK[:STYLE][.RATE]>X, e.g. probe:injection>0.05 (attacks: "
            f"{', '.join(ATTACKS)}; rates: {', '.join(RATES)}, {SUBSTRING})")
    if m is None:
        raise ConfigError(f"--fail-on {text!r}: {form}")
    arm, rate = m["arm"], m["rate"] or "success"
    attack, _, style = arm.partition(":")
    if attack not in ATTACKS or (style and style not in (*STYLES, GIVEN)) or rate not in (
            *RATES, SUBSTRING):
        raise ConfigError(f"--fail-on {text!r}: {form}")
    return ProbeGate(arm, rate, float(m["at"]), m["op"] == ">=", text)


@dataclass(frozen=True, kw_only=True)
class ProbeRequest(CompareRequest):
    """``ragmark probe``: a compare's request (dataset, configs, endpoint, options) and
    the attacks: ``attacks`` and the injections' ``styles`` (names, or comma-separated),
    ``targets`` questions drawn with ``seed`` (None: every answerable one), ``copies``
    (``ATTACK=N``: passages planted a target), and the gates (``fail_on``)."""

    attacks: str | Sequence[str] = ATTACKS
    styles: str | Sequence[str] = STYLES
    targets: int | None = 30
    copies: Sequence[str] = ()
    fail_on: Sequence[str] = ()
    write_planted: str | None = None
    """``--write-planted DIR``: write each attack's planted documents for a system
    ragmark does not run, and stop."""
    logged: Sequence[str] = ()
    """``--outputs ARM=FILE``: the answers such a system logged with the planted
    documents of ARM (``clean=FILE``: without any), scored instead of running configs."""
    planted: str | None = None
    """``--planted FILE``: attack texts of your own (:mod:`ragmark.probe.given`), planted
    instead of the generated attacks; its questions are the targets."""


@dataclass(frozen=True)
class ProbePlan:
    """A probe, decided: the compare's ``base`` plan (dataset, configs, what they
    compute, the endpoint), its ``arms``, the ``questions`` attacked (ids, drawn with
    ``seed``), passages planted per attack (``copies``), the ``gates``, and where each
    finished (config, arm) is kept (``state``: a killed probe resumes from it) and the
    results go (``output``: ``.json`` and ``.md`` are added)."""

    base: Plan
    arms: tuple[Arm, ...]
    questions: tuple[str, ...]
    seed: int = 0
    copies: Mapping[str, int] = field(default_factory=lambda: dict(COPIES))
    gates: tuple[ProbeGate, ...] = ()
    state: Path | None = None
    output: Path | None = None
    resamples: int = 10_000
    """Bootstrap and permutation resamples of the intervals and tests."""
    write_to: Path | None = None
    """Write the planted documents there and stop (a system ragmark does not run)."""
    logged: Mapping[str, Path] = field(default_factory=dict)
    """Arm (or ``clean``) -> the file of answers a system logged, scored instead of runs."""
    strict: bool = False
    """Odd data in the logged files is an error, not a counted warning (``--strict``)."""
    history: Path | None = None
    """The run history the probe is recorded in, as kind ``probe`` (None: not recorded);
    the baselines of runs and compares never come from it."""
    dry_run: bool = False
    """Say what would be run and what is kept already; run, write and record nothing."""
    allow_missing: bool = False
    """A target without an answer does not make the probe exit 1 (``--allow-missing``)."""
    given: tuple[Planted, ...] = ()
    """The attacks of ``--planted FILE`` (their arms' style :data:`GIVEN`)."""

    @cached_property
    def data_hash(self) -> str:
        """The dataset's and corpus's contents, hashed once a plan (see
        :func:`ragmark.data.fingerprint.dataset_hash`)."""
        return dataset_hash(self.base.dataset)

    def describe(self) -> dict[str, Any]:
        """What the plan will do, as JSON (the report's head and the resume check)."""
        ds = self.base.dataset
        return {"dataset": {"name": ds.name, "path": ds.path, "questions": len(ds.samples)},
                "configs": [c.name for c in self.base.configs],
                "arms": [a.name for a in self.arms], "targets": list(self.questions),
                "seed": self.seed, "copies": {a.attack: self.copies[a.attack]
                                              for a in self.arms},
                **({"logged": sorted(self.logged)} if self.logged else {}),
                **({"planted": len(self.given)} if self.given else {})}


def _copies(given: Sequence[str]) -> dict[str, int]:
    """``--copies ATTACK=N`` over the defaults (:data:`COPIES`).

    >>> _copies(["poisoning=3"])["poisoning"]
    3
    """
    out = dict(COPIES)
    for text in given:
        attack, eq, n = text.partition("=")
        if not eq or attack.strip() not in ATTACKS or not n.strip().isdigit() or int(n) < 1:
            raise ConfigError(f"--copies {text!r}: expected ATTACK=N with N a positive "
                              f"whole number, ATTACK one of {', '.join(ATTACKS)}")
        out[attack.strip()] = int(n)
    return out


def plan_probe(req: Any) -> tuple[ProbePlan, list[str]]:
    """The plan of ``ragmark probe`` (a :class:`ProbeRequest`), and the notes to tell
    before it runs. Every flag is checked before the data is read."""
    gates = tuple(parse_gate(g) for g in req.fail_on)
    arms = arms_of(_words(req.attacks), _words(req.styles))
    copies = _copies(req.copies)
    logged = dict(_pair(t) for t in req.logged)
    if (logged or req.write_planted) and req.configs:
        raise ConfigError("--outputs and --write-planted are for a system ragmark does not "
                          "run; they cannot be combined with --configs")
    if logged and req.write_planted:
        raise ConfigError("--write-planted writes the documents to ingest; --outputs scores "
                          "the answers logged with them: one at a time")
    solo = (RunConfig.model_validate({"name": "logged", "unit": "auto"}),)
    base, told = plan_compare(replace(req, output=None, no_history=True, dry_run=False,
                                      configs=(
        solo if logged or req.write_planted else req.configs or ("sparse",))))
    bad = [c.name for c in base.configs
           if c.pipeline is not None and getattr(c.pipeline, "documents", None) is None]
    if bad:
        raise ConfigError(f"config {bad[0]!r} is an external [pipeline]: it retrieves from "
                          "its own store, which probe can plant in only through its "
                          "documents function ([pipeline] documents = 'module:function', "
                          "a Python pipeline); else write the documents for it "
                          "(--write-planted DIR), then score its logged answers "
                          "(--outputs ARM=FILE)")
    if not (req.dry_run or logged or req.write_planted):
        from ragmark.plan.endpoint import check_generators

        check_generators(base.configs)
    given: tuple[Planted, ...] = ()
    if req.planted:  # the file's attacks and its questions, not generated ones
        from ragmark.probe.given import given_arms, read_planted

        given = read_planted(req.planted, base.dataset)
        arms = tuple(Arm(a, GIVEN) for a in given_arms(given))
        asked = {p.question_id for p in given}
        chosen = tuple(s for s in base.dataset.samples if s.id in asked)
        told = [*told, f"--planted {req.planted}: {len(given)} attacks of your own on "
                f"{len(chosen)} questions (--attacks, --styles and --targets not used)"]
    else:
        chosen = targets(base.dataset.samples, req.targets, req.seed)
    if not chosen:
        raise ConfigError(f"{base.dataset.path}: no answerable question to attack")

    out = Path(output_stem(req.output, "probe")) if req.output else None
    state = None if out is None else out.with_name(out.name + ".probe-state")
    history = None if req.write_planted or req.dry_run else check_targets(
        () if out is None else (f"{out}.json", f"{out}.md"), history=req.history,
        no_history=req.no_history)
    if logged:
        files = logged_arms(logged, [a.name for a in arms])
        arms = tuple(a for a in arms if a.name in files)
        state = None  # nothing is run: the logs are the record
    check_gates(gates, arms)
    write_to = Path(req.write_planted) if req.write_planted else None
    return ProbePlan(base, arms, tuple(s.id for s in chosen), req.seed, copies, gates,
                     state, out, req.resamples, write_to, files if logged else {},
                     req.strict, history, req.dry_run, req.allow_missing, given), told


def check_gates(gates: Sequence[ProbeGate], arms: Sequence[Arm]) -> None:
    """Each gate names an arm the plan has (``injection:plain``) or an attack of it (its
    styles pooled): a ConfigError otherwise, before any work, so a typo or a changed
    ``--attacks``/``--styles`` never disables a gate silently."""
    names = list(dict.fromkeys([*(a.name for a in arms), *(a.attack for a in arms)]))
    for g in gates:
        if g.arm not in names:
            raise ConfigError(f"--fail-on {g.text!r}: this probe has no {g.arm!r} to gate "
                              f"(its arms and attacks: {', '.join(names)}); change "
                              "--attacks/--styles or the gate")


def _pair(text: str) -> tuple[str, str]:
    arm, eq, file = text.partition("=")
    if not eq or not arm.strip() or not file.strip():
        raise ConfigError(f"--outputs {text!r}: expected ARM=FILE (an arm such as "
                          "injection:plain or poisoning, or clean)")
    if not Path(file.strip()).is_file():
        raise ConfigError(f"--outputs {text!r}: {file.strip()} is not a file")
    return arm.strip(), file.strip()


def _words(given: str | Sequence[str]) -> list[str]:
    items = given.split(",") if isinstance(given, str) else list(given)
    return [w.strip() for w in items if w.strip()]


def logged_arms(given: Mapping[str, str], known: list[str]) -> dict[str, Path]:
    """``--outputs ARM=FILE`` checked: each ARM one of the plan's arms or ``clean``."""
    out: dict[str, Path] = {}
    for arm, file in given.items():
        if arm != CLEAN and arm not in known:
            raise ConfigError(f"--outputs {arm}={file}: {arm!r} is not an arm of this probe "
                              f"({', '.join(known)}, or clean)")
        out[arm] = Path(file)
    return out
