"""``ragmark simulate``: what a simulation will do, checked before any call (the
scenarios read, the system's config read, the simulator's endpoint alive), then done:
every scenario played (:mod:`ragmark.simulate.play`), the conversations written as a
conversation log (``--transcripts``) that ``ragmark run --outputs`` scores with any
metric, and how they ended summarised."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ragmark.aio import run_sync
from ragmark.analysis.gates import Threshold, check_names, parse_thresholds
from ragmark.config import RunConfig, load_configs
from ragmark.data.corpus import open_corpus
from ragmark.data.fingerprint import dataset_hash
from ragmark.data.leniency import Leniency
from ragmark.errors import ConfigError
from ragmark.history.store import history_path
from ragmark.llm import LLMSettings
from ragmark.llm.factory import check_endpoint, direct_client
from ragmark.llm.fields import SET_ENDPOINT
from ragmark.llm.table import SimulatorTable
from ragmark.pipelines.config import HttpPipelineConfig, PythonPipelineConfig, pipeline_json
from ragmark.pipelines.python import target_digest
from ragmark.plan.endpoint import model_at, resolve_llm
from ragmark.plan.paths import check_output
from ragmark.plan.simulate_turns import score_turns, turn_metrics
from ragmark.plan.simulation_history import record_simulation, scenarios_hash
from ragmark.progress import Progress
from ragmark.results import SIMULATION, envelope
from ragmark.running.source import build
from ragmark.running.turns import OwnTurns
from ragmark.simulate.compare import METRICS, gate_results, paired_rows, values_of
from ragmark.simulate.journal import Journal
from ragmark.simulate.play import Played, play_all
from ragmark.simulate.scenarios import Scenario, load_scenarios
from ragmark.simulate.scores import judge_conversations, score_json, score_summary
from ragmark.simulate.transcripts import (
    chat_messages,
    conversation_line,
    shown_turns,
    summary,
)
from ragmark.text import visible
from ragmark.types import Dataset, Score


@dataclass(frozen=True)
class SimulateRequest:
    scenarios: str
    config: tuple[str, ...]
    """--config, repeated: each config simulated on the same scenarios; the first is
    the baseline the others are compared with."""
    transcripts: str
    messages: str | None = None
    concurrency: int = 2
    temperature: float | None = None
    """--simulator-temperature; None: the [simulator] table's, else 0."""
    simulator: str | None = None
    """--simulator MODEL[@URL]: the simulated user's model, at the judges' endpoint or URL."""
    seed: int = 0
    fresh: bool = False
    strict: bool = False
    encoding: str | None = None
    corpus: str | None = None
    output: str | None = None
    fail_under: tuple[str, ...] = ()
    history: str | None = None
    no_history: bool = False
    metrics: str | None = None
    """--metrics: what every turn is scored with once played (as run --outputs scores
    the transcripts)."""
    llm_flags: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Simulated:
    """One config simulated: its name, its system (the config's [pipeline], or ragmark's
    own pipeline over --corpus), where its conversations are written."""

    name: str
    system: PythonPipelineConfig | HttpPipelineConfig | OwnTurns
    transcripts: Path
    messages: Path | None

    @property
    def journal(self) -> Path:
        """Where the turns are written as they finish (what a resume reads)."""
        return self.transcripts.with_name(self.transcripts.name + ".journal")


@dataclass(frozen=True)
class SimulatePlan:
    scenarios: tuple[Scenario, ...]
    systems: tuple[Simulated, ...]
    simulator: LLMSettings
    judges: LLMSettings
    """The endpoint of the judges that score the conversations (--llm-*)."""
    concurrency: int
    temperature: float
    seed: int
    fresh: bool
    warnings: tuple[str, ...]
    output: Path | None = None
    fail_under: tuple[Threshold, ...] = ()
    history: Path | None = None
    """The run history the simulation is recorded in, as kind ``simulation`` (None: not
    recorded)."""
    name: str = "scenarios"
    """The scenarios file's name, as the history names the simulation's "dataset"."""
    turn_metrics: tuple[str, ...] = ()
    """What each turn is scored with (--metrics; :mod:`ragmark.plan.simulate_turns`)."""

    def key(self, sim: Simulated) -> str:
        """What one config's simulation depends on: the scenarios, the system (for a
        Python target, its module's file and the local modules it imports, once
        imported), the simulator's model and endpoint, its temperature and seed."""
        code = (target_digest(sim.system) if isinstance(sim.system, PythonPipelineConfig)
                else None)
        what = {"scenarios": [asdict(s) for s in self.scenarios],
                "system": system_json(sim.system), **({"code": code} if code else {}),
                "model": self.simulator.model,
                "url": self.simulator.display_url, "temperature": self.temperature,
                "seed": self.seed}
        return hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()[:16]


def plan_simulate(req: SimulateRequest) -> SimulatePlan:
    """Everything checked before a call: bad input is an error naming where."""
    if req.concurrency < 1:
        raise ConfigError(f"--concurrency must be at least 1, got {req.concurrency}")
    lenient = Leniency(strict=req.strict, encoding=req.encoding)
    scenarios = load_scenarios(Path(req.scenarios), lenient)
    judges, cfgs = resolve_llm([c for spec in req.config for c in load_configs(spec)],
                               req.llm_flags)
    _check_names(cfgs)
    table = cfgs[0].simulator
    if any(c.simulator != table for c in cfgs):
        raise ConfigError("the configs have different [simulator] tables; configs compared "
                          "together are played by one simulated user: give the same table")
    settings = simulator_settings(judges, table, req.simulator)
    temperature = req.temperature if req.temperature is not None else float(
        (table.values() if table else {}).get("temperature", 0.0))
    fail_under = parse_thresholds(req.fail_under, "--fail-under", known=METRICS)
    scored = turn_metrics(req.metrics)
    check_names(fail_under, [c.name for c in cfgs], "--fail-under")
    output = None if req.output is None else check_output(req.output, "--output")
    history = None if req.no_history else check_output(history_path(req.history),
                                                        "--history")
    systems = tuple(_simulated(c, req, lenient, len(cfgs) > 1) for c in cfgs)
    check_endpoint(settings, "the simulated user's endpoint")
    if judges is not None and judges.base_url != settings.base_url:
        check_endpoint(judges, "the judges' endpoint")
    for sim in systems:
        if isinstance(sim.system, OwnTurns) and sim.system.llm_settings is not None:
            check_endpoint(sim.system.llm_settings, "the system's LLM generator endpoint")
    assert judges is not None  # simulator_settings refused none
    return SimulatePlan(tuple(scenarios), systems, settings, judges, req.concurrency,
                        temperature, req.seed, req.fresh, tuple(lenient.messages()),
                        output, tuple(fail_under), history, Path(req.scenarios).stem,
                        scored)


def _check_names(cfgs: list[RunConfig]) -> None:
    names = [c.name for c in cfgs]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ConfigError(f"--config: two configs are named {twice[0]!r}; each config's "
                          "conversations are written under its name: rename one")


def _simulated(cfg: RunConfig, req: SimulateRequest, lenient: Leniency, several: bool
               ) -> Simulated:
    """One config's system and paths (checked writable): with several configs, each
    config's name is put before the suffix (talks.jsonl -> talks.NAME.jsonl)."""
    def named(path: str, option: str) -> Path:
        p = Path(path)
        if several:
            slug = re.sub(r"[^A-Za-z0-9._-]+", "_", cfg.name).strip("._") or "config"
            p = p.with_name(f"{p.stem}.{slug}{p.suffix}")
        return check_output(p, option)

    out = named(req.transcripts, "--transcripts")
    check_output(out.with_name(out.name + ".journal"), "--transcripts (its journal)")
    messages = None if req.messages is None else named(req.messages, "--messages")
    return Simulated(cfg.name, _system(cfg, req, lenient), out, messages)


def simulator_settings(judges: LLMSettings | None, table: SimulatorTable | None,
                       flag: str | None) -> LLMSettings:
    """The simulated user's endpoint: the judges' (``--llm-*``, ``[llm]``,
    ``RAGMARK_LLM_*``), the config's ``[simulator]`` fields over it, ``--simulator
    MODEL[@URL]`` over both."""
    if judges is None:
        raise ConfigError("the simulated user is an LLM at the judges' endpoint (unless "
                          "--simulator MODEL@URL or a [simulator] table says otherwise): "
                          f"give --llm-base-url and --llm-model, or {SET_ENDPOINT}")
    got = judges.model_copy(update=table.values()) if table is not None else judges
    return got.model_copy(update=model_at(flag, "--simulator")) if flag else got


def _system(cfg: RunConfig, req: SimulateRequest, lenient: Leniency
            ) -> PythonPipelineConfig | HttpPipelineConfig | OwnTurns:
    """What is simulated against: the config's [pipeline], or ragmark's own pipeline
    (retriever, reranker, generator) over --corpus."""
    if cfg.pipeline is not None:
        if req.corpus is not None:
            raise ConfigError(f"--corpus is what ragmark's own pipeline retrieves from; "
                              f"config {cfg.name!r} has a [pipeline], which retrieves by "
                              "itself: leave --corpus out")
        return cfg.pipeline
    if req.corpus is None:
        raise ConfigError(f"config {cfg.name!r} has no [pipeline], so simulate asks "
                          "ragmark's own pipeline: give --corpus, the documents it "
                          "retrieves from (or a config with a [pipeline] table: python, "
                          "langchain, llamaindex or http)")
    corpus, chunker = open_corpus(req.corpus, lenient)
    dataset = Dataset(Path(req.corpus).name, str(req.corpus), "corpus", (), corpus, chunker)
    return OwnTurns(dataset, cfg)


def system_json(system: PythonPipelineConfig | HttpPipelineConfig | OwnTurns
                ) -> dict[str, Any]:
    """The system as a simulation's key holds it: a [pipeline], or ragmark's own
    pipeline's config with its corpus's fingerprint."""
    if isinstance(system, OwnTurns):
        return {"own": system.describe(), "corpus": dataset_hash(system.dataset)}
    return pipeline_json(system)


def execute_simulate(plan: SimulatePlan, progress: Progress) -> dict[str, Any]:
    """Simulate each config (resuming its journal), write its transcripts, then pair the
    configs by scenario and check the gates; the report."""
    # every config's journal is opened (and one of another simulation refused) before
    # any conversation is played
    opened = [_open(plan, sim) for sim in plan.systems]
    done = [_simulate_one(plan, sim, system, journal, progress)
            for sim, (system, journal) in zip(plan.systems, opened, strict=True)]
    values = {r["system"]: values_of(played, scores) for r, played, scores in done}
    systems = {s.name: system_json(s.system) for s in plan.systems}
    report: dict[str, Any] = {
        "envelope": envelope(SIMULATION, scenarios_hash(plan.scenarios), systems),
        "configs": [r for r, _, _ in done], "scenarios": len(plan.scenarios)}
    if len(done) > 1:
        report["comparison"] = paired_rows(values, [s.id for s in plan.scenarios])
    report["gates"] = gate_results(values, plan.fail_under)
    if plan.history is not None:
        report["history_id"] = record_simulation(
            plan.history, plan.scenarios, plan.name, systems, report, plan.output)
    if plan.output is not None:
        plan.output.parent.mkdir(parents=True, exist_ok=True)
        tmp = plan.output.with_name(plan.output.name + ".tmp")
        tmp.write_text(json.dumps(report, indent=1, ensure_ascii=False), encoding="utf-8")
        tmp.replace(plan.output)
    return report


def _open(plan: SimulatePlan, sim: Simulated) -> tuple[Any, Journal]:
    """One config's system (a Python one imported: its code is part of the journal's
    key) and its journal."""
    system = sim.system if isinstance(sim.system, OwnTurns) else build(sim.system)
    return system, Journal(sim.journal, plan.key(sim), fresh=plan.fresh)


def _simulate_one(plan: SimulatePlan, sim: Simulated, system: Any, journal: Journal,
                  progress: Progress
                  ) -> tuple[dict[str, Any], list[Played], list[dict[str, Score]]]:
    """One config: play every scenario, judge every conversation, write the transcripts."""
    if isinstance(system, OwnTurns):
        system.prepare(progress)

    async def main() -> Any:
        async with direct_client(plan.simulator) as client, system:
            return await play_all(plan.scenarios, system, client, journal, plan.concurrency,
                                  advance, temperature=plan.temperature, seed=plan.seed)

    n = len(plan.scenarios)
    with progress.task(f"simulating {n} conversations with {visible(sim.name)}",
                       n) as advance:
        played, counts = run_sync(main())

    async def judged() -> Any:
        async with direct_client(plan.judges) as client:
            return await judge_conversations(plan.scenarios, played, client,
                                             plan.concurrency, advance)

    with progress.task(f"judging {n} conversations with {visible(sim.name)}",
                       n) as advance:
        scores, judge_counts = run_sync(judged())
    lines = [conversation_line(s, p, {m: score_json(v) for m, v in got.items()})
             for s, p, got in zip(plan.scenarios, played, scores, strict=True)]
    _write_lines(sim.transcripts, [x for x in lines if x is not None])
    if sim.messages is not None:
        _write_lines(sim.messages, [{"conversation_id": p.scenario,
                                     "messages": chat_messages(p)} for p in played])
    turns: dict[str, Any] = {}
    scored: dict[str, Any] = {}
    if plan.turn_metrics and any(p.turns for p in played):  # as run --outputs would
        scored, turns = score_turns(sim.transcripts, plan.turn_metrics, plan.judges,
                                    progress)
    closing = [len(journal.closing_breaks(p.scenario)) for p in played]
    report = {"system": sim.name, "simulator": plan.simulator.model,
              "judges": plan.judges.model, "summary": summary(played, closing),
              "conversation_metrics": score_summary(played, scores),
              "conversations": [{"id": p.scenario, "scenario": s.scenario,
                                 "outcome": p.outcome, "turns": len(p.turns),
                                 **({"reason": p.reason} if p.reason else {}),
                                 "metrics": {m: score_json(v) for m, v in got.items()},
                                 "transcript": shown_turns(p, turns)}
                                for s, p, got in zip(plan.scenarios, played, scores,
                                                     strict=True)],
              "transcripts": str(sim.transcripts), "journal": str(sim.journal),
              "left_out": [p.scenario for p in played if not p.turns],
              "resumed_lines_dropped": journal.dropped,
              "simulator_calls": {"asked": counts.asked, "reasked": counts.reasked,
                                  "failed": counts.failed},
              "judge_calls": {"asked": judge_counts.asked, "reasked": judge_counts.reasked,
                              "failed": judge_counts.failed},
              **({"turn_metrics": scored} if scored else {})}
    return report, played, scores


def _write_lines(path: Path, rows: list[dict[str, Any]]) -> None:
    """``rows`` as JSON Lines, whole or not at all (written beside, then moved)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                   encoding="utf-8")
    tmp.replace(path)
