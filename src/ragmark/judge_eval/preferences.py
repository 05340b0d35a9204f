"""People's preferences between two answers, and how a pairwise judge agrees with them
(``ragmark judge-eval --metric pairwise:CRITERION``).

The input: a JSONL file of ``{"id"?, "question", "answer_a", "answer_b", "contexts"? (or
"contexts_a"/"contexts_b"), "expected_answer"?, "preferred", "annotator"?}`` objects, the
export of an ``annotate`` queue of a pairwise task, or the queue itself
(``store:QUEUE``). ``preferred`` is A, B or tie (any case; also ``model_a``, ``model_b``
and ``tie (bothbad)`` as Chatbot Arena and MT-Bench's human judgements write them, and 1,
0, 0.5 as the label store keeps them). Several people's preferences of one pair are
taken by majority (a pair they split evenly is left out, counted), and their agreement
(Krippendorff's alpha, nominal) is the ceiling.

The judge's agreement: the share of the pairs people did not call a tie on which the
judge preferred the same answer (its ties count as disagreeing), and Cohen's kappa over
the three classes A, B, tie on every pair; both with bootstrap intervals over pairs.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ragmark.annotate.queue import PREFERRED_VALUE
from ragmark.data.files import Where, iter_jsonl
from ragmark.errors import ConfigError, DataError
from ragmark.judges.pairwise import CRITERIA
from ragmark.stats import cohen_kappa
from ragmark.stats.reliability import krippendorff_alpha
from ragmark.stats.resample import percentile_interval, resample_rows

PREFERRED = {"a": "A", "model_a": "A", "1": "A", "1.0": "A", "b": "B", "model_b": "B",
             "0": "B", "0.0": "B", "tie": "tie", "tie (bothbad)": "tie", "0.5": "tie"}
"""How a preference may be written -> A, B or tie."""
STORED = PREFERRED_VALUE


@dataclass(frozen=True, slots=True)
class Preference:
    """One pair of answers to a question and the answer a person preferred."""

    id: str
    question: str
    answer_a: str
    answer_b: str
    contexts_a: tuple[str, ...]
    contexts_b: tuple[str, ...]
    expected_answer: str | None
    preferred: str
    """A, B or tie."""
    annotator: str = ""


def preferred_of(value: Any) -> str | None:
    """A, B or tie from any way :data:`PREFERRED` knows; None otherwise."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        value = f"{float(value):g}" if float(value) != 0.5 else "0.5"
    return PREFERRED.get(str(value).strip().lower()) if isinstance(value, str) else None


def _texts(value: Any, field: str, where: Where) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise where.error("expected a text or a list of texts", field=field)


def read_preferences(path: str | Path) -> list[Preference]:
    """The preferences of a JSONL file (see the module docstring); a bad line is a
    DataError naming it."""
    out = []
    for where, obj in iter_jsonl(Path(path)):
        if not isinstance(obj, dict):
            raise where.error("expected a JSON object")
        for key in ("question", "answer_a", "answer_b"):
            if not isinstance(obj.get(key), str):
                raise where.error("expected a text (a preference needs the question and "
                                  "both answers)", field=key)
        given = obj.get("preferred", obj.get("winner"))
        got = preferred_of(given)
        if got is None:
            raise where.error(f"expected A, B or tie, got {given!r}", field="preferred")
        shared = _texts(obj.get("contexts", obj.get("context")), "contexts", where)
        out.append(Preference(
            str(obj.get("id", where.line)), obj["question"], obj["answer_a"], obj["answer_b"],
            _texts(obj.get("contexts_a"), "contexts_a", where) or shared,
            _texts(obj.get("contexts_b"), "contexts_b", where) or shared,
            obj.get("expected_answer") if isinstance(obj.get("expected_answer"), str)
            else None, got, str(obj.get("annotator") or "")))
    if not out:
        raise DataError("no preference in the file", file=str(path))
    return out


def from_rows(rows: Sequence[dict[str, Any]]) -> list[Preference]:
    """The preferences of an annotate queue's label rows (a pairwise task)."""
    out = []
    for r in rows:
        got = preferred_of(r["human"])
        if got is None:
            continue
        out.append(Preference(r["id"], r["question"], r["answer"], r["answer_b"],
                              tuple(r["contexts"]), tuple(r.get("contexts_b") or ()),
                              r.get("expected_answer") or None, got, r["annotator"]))
    return out


@dataclass(frozen=True)
class Consensus:
    """The pairs with the people's majority preference, the pairs they split evenly
    (left out), and each pair's people's preferences when several gave one."""

    pairs: list[Preference]
    split: int
    by_pair: dict[str, dict[str, str]]


def consensus(prefs: Sequence[Preference]) -> Consensus:
    """One preference per pair: the majority of its people's (a pair they split evenly
    is left out and counted)."""
    groups: dict[str, list[Preference]] = defaultdict(list)
    for p in prefs:
        groups[p.id].append(p)
    pairs, split = [], 0
    for g in groups.values():
        counts = Counter(p.preferred for p in g).most_common()
        if len(counts) > 1 and counts[0][1] == counts[1][1]:
            split += 1
            continue
        pairs.append(g[0] if g[0].preferred == counts[0][0] else next(
            p for p in g if p.preferred == counts[0][0]))
    by_pair = {i: {p.annotator or f"person {k + 1}": p.preferred for k, p in enumerate(g)}
               for i, g in groups.items() if len(g) >= 2}
    return Consensus(pairs, split, by_pair)


def people_agreement(c: Consensus, n_resamples: int, seed: int) -> dict[str, Any] | None:
    """Krippendorff's alpha (nominal) of the people over the pairs two or more of them
    judged; None when none was."""
    if not c.by_pair:
        return None

    names = sorted({a for by in c.by_pair.values() for a in by})
    rows = [[None if a not in by else STORED[by[a]] for a in names]
            for by in c.by_pair.values()]
    return {"annotators": names, "pairs": len(rows), "split": c.split,
            "alpha": krippendorff_alpha(rows, "nominal", n_resamples=n_resamples, seed=seed)}


def agreement(people: Sequence[str], judge: Sequence[str | None], *, n_resamples: int = 2000,
              seed: int = 0) -> dict[str, Any]:
    """The judge's agreement with people's preferences (A, B, tie) over the pairs it
    gave a verdict: accuracy on the pairs people did not call a tie, Cohen's kappa over
    the three classes, the confusion counts; each with a 95% bootstrap interval over
    pairs."""
    both = [(p, j) for p, j in zip(people, judge, strict=True) if j is not None]
    out: dict[str, Any] = {"pairs": len(people), "judged": len(both),
                           "without_verdict": len(people) - len(both),
                           "confusion": {f"people {p}, judge {j}": n for (p, j), n in sorted(
                               Counter(both).items())}}
    decided = [(p, j) for p, j in both if p != "tie"]
    hits = np.array([p == j for p, j in decided], dtype=np.float64)
    out["accuracy"] = {"value": float(hits.mean()) if len(hits) else None,
                       "n": len(decided), "ci_low": None, "ci_high": None}
    if len(hits):
        got = [float(hits[rows].mean()) for block in resample_rows(
            len(hits), n_resamples, seed, 500) for rows in block]
        ci = percentile_interval(got, 0.95)
        if ci is not None:
            out["accuracy"].update(ci_low=ci[0], ci_high=ci[1])
    k = cohen_kappa([p for p, _ in both], [j for _, j in both])
    out["kappa"] = {"value": k.value, "n": len(both), "ci_low": None, "ci_high": None,
                    **({"reason": k.reason} if k.value is None else {})}
    if k.value is not None:
        boot = []
        for block in resample_rows(len(both), n_resamples, seed, 500):
            for rows in block:
                s = cohen_kappa([both[i][0] for i in rows], [both[i][1] for i in rows])
                boot.append(np.nan if s.value is None else s.value)
        ci = percentile_interval(boot, 0.95)
        if ci is not None:
            out["kappa"].update(ci_low=ci[0], ci_high=ci[1])
    return out


def check_task(metric: str) -> str:
    """The criterion of ``pairwise:CRITERION``."""
    criterion = metric.partition(":")[2]
    if criterion not in CRITERIA:
        raise ConfigError(f"--metric {metric}: the pairwise criteria are "
                          f"{', '.join(CRITERIA)}")
    return criterion
