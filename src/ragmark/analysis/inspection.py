"""Looking inside a results file: one question in full, or every failing question with a
one-line diagnosis.

Reads the JSON of ``ragmark run --include-details`` (per-query records: ground truth,
retrieved items and why they matched, answer, contexts, metrics with the reason for any
missing one) and the JSON of ``ragmark compare`` (per config, the metric values of every
question, without texts and without the reasons of missing values).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragmark.analysis.items import question_over_configs
from ragmark.data.files import Where, describe, quote, read_json
from ragmark.errors import ConfigError, DataError
from ragmark.results import kind_of_results
from ragmark.results.codec import compare_from_json, run_from_json
from ragmark.results.model import QueryRecord, RunReport
from ragmark.results.reading import per_query_of
from ragmark.types import Score

GROUNDED_THRESHOLD = 0.10
"""Used when the file does not record the run's ``grounded_threshold``."""

DETAILS_HINT = "rerun `ragmark run ... --include-details` to keep them"

RULES = {
    "id": "its document is a ground-truth document",
    "section": "it lies in a ground-truth section",
    "text": "its text and a ground-truth passage contain one another "
            "(lower-cased, spaces collapsed, at least 20 characters)",
}
"""What each relevance rule of :mod:`ragmark.matching` means, for people."""


def first_relevant(q: QueryRecord, depth: int | None = None) -> int | None:
    """Rank of the first relevant retrieved item of ``q`` (within ``depth``), else None."""
    for it in q.retrieved:
        if it.grade > 0 and (depth is None or it.rank <= depth):
            return it.rank
    return None


@dataclass(frozen=True, slots=True)
class Results:
    """One configuration's report in a results file (read through the results model,
    :mod:`ragmark.results.codec`), and where it stands in the file: the file, its kind,
    the configuration's name, every configuration's and the baseline's."""

    path: str
    kind: str  # "run" | "compare"
    config: str
    configs: tuple[str, ...]
    baseline: str | None
    report: RunReport
    details: bool | None = None
    """Whether the questions carry their texts and rankings (a run file, or a compare
    file written with --include-details); None: as the kind says."""
    pairwise: dict[str, Any] | None = None
    """A compare's pairwise verdicts (``--pairwise``: the round robin's report)."""

    @property
    def queries(self) -> list[QueryRecord]:
        return self.report.queries

    @property
    def settings(self) -> dict[str, Any]:
        """The configuration as the file records it."""
        return self.report.config

    @property
    def notes(self) -> list[str]:
        return self.report.notes

    @property
    def empty(self) -> dict[str, str] | None:
        """Question id -> why its ranking is empty, for the questions that retrieved
        nothing (the file's ``empty_rankings``); None when the file does not record
        them."""
        e = self.report.empty
        return None if e is None else {q: e.cause or "unknown" for q in e.ids}

    @property
    def detailed(self) -> bool:
        return self.kind == "run" if self.details is None else self.details

    @property
    def grounded_threshold(self) -> float:
        t = self.settings.get("grounded_threshold")
        return float(t) if isinstance(t, int | float) else GROUNDED_THRESHOLD

    def describe(self) -> str:
        """``run of config 'sparse'`` or ``config 'hybrid' of a comparison (...)``."""
        if self.kind == "run":
            return f"run of config {self.config!r}"
        names = ", ".join(f"{n} (baseline)" if n == self.baseline else n for n in self.configs)
        return f"config {self.config!r} of a comparison of {names}"

    def query(self, query_id: str) -> QueryRecord:
        for q in self.queries:
            if q.id == query_id:
                return q
        ids = [q.id for q in self.queries]
        shown = ", ".join(ids[:10]) + (f" ... ({len(ids)} in all)" if len(ids) > 10 else "")
        raise DataError(f"no question with id {quote(query_id)}; the file has {shown}",
                        file=self.path)


def load_results(path: str | Path, config: str | None = None) -> Results:
    """Read a results file of ``ragmark run`` or ``ragmark compare``. ``config`` picks a
    configuration of a comparison (default: its baseline); a DataError names the place
    of anything malformed."""
    return results_from(str(path), results_json(path), config)


def results_json(path: str | Path) -> Any:
    """The parsed JSON of a results file (read once by a command that looks at it in
    several ways); a DataError names the place of malformed JSON."""
    return read_json(Path(path))


def over_configs(results: Results, data: Any, qid: str) -> dict[str, Any] | None:
    """A compare's question over every config of ``data``, the parsed file ``results``
    came from: each metric's values, the question's difficulty and discrimination
    (:func:`~ragmark.analysis.items.question_over_configs`); None for a run file."""
    if results.kind != "compare" or len(results.configs) < 2:
        return None
    table = {c: {r.id: {m: s.value for m, s in r.metrics.items()}
                 for r in results_from(results.path, data, c).queries}
             for c in results.configs}
    return question_over_configs(table, qid)


def is_label_file(data: Any) -> bool:
    """Whether ``data`` is the JSON that ``ragmark label`` writes."""
    return (isinstance(data, dict) and "metric_names" in data and "prompt" in data
            and isinstance(data.get("configs"), dict))


def results_from(file: str, data: Any, config: str | None = None) -> Results:
    """The :class:`Results` of the parsed JSON ``data`` of ``file``."""
    try:
        kind = kind_of_results(data, file)
    except DataError:
        raise DataError("not a ragmark results file: expected the JSON that `ragmark run` "
                        "writes (keys metrics, config, queries) or that `ragmark compare` "
                        "writes (keys configs, run)", file=file) from None
    if kind == "label" or is_label_file(data):
        raise DataError("a `ragmark label` file holds passage labels, not per-question "
                        "results; `ragmark review export` reads it", file=file)
    if kind == "compare" or isinstance(data.get("configs"), dict):
        return _compare(file, data, config)
    if "config" not in data:
        raise DataError("not a ragmark results file: a run file needs its 'config'",
                        file=file)
    return _run(file, data, config)


def _run(file: str, data: dict[str, Any], config: str | None) -> Results:
    settings = data["config"]
    if not isinstance(settings, dict):
        raise Where(file).error(f"expected an object, got {describe(settings)}",
                                field="config")
    name = str(settings.get("name", "?"))
    if config is not None and config != name:
        raise ConfigError(f"--config-name picks a configuration of a comparison file; {file} is "
                          f"a run of config {name!r}")
    if data.get("queries") is None:
        raise DataError(f"has no per-query details (questions, retrieved items, answers); "
                        f"{DETAILS_HINT}", file=file)
    if not isinstance(data["queries"], list):
        raise Where(file).error(f"expected a list, got {describe(data['queries'])}",
                                field="queries")
    _empty_block(data.get("empty_rankings"), Where(file))
    return Results(file, "run", name, (name,), None, run_from_json(data, file))


def _empty_block(block: Any, where: Where) -> None:
    """An ``empty_rankings`` block that is there must hold a list of ``questions``."""
    if block is not None and (not isinstance(block, dict)
                              or not isinstance(block.get("questions"), list)):
        raise where.error(f"expected an object with a list 'questions', got "
                          f"{describe(block)}", field="empty_rankings")


def _compare(file: str, data: dict[str, Any], config: str | None) -> Results:
    configs: dict[str, Any] = data["configs"]
    if not configs:
        raise Where(file).error("expected at least one configuration", field="configs")
    run = data.get("run")
    baseline = run.get("baseline") if isinstance(run, dict) else None
    baseline = baseline if isinstance(baseline, str) else None
    name = config or (baseline if baseline in configs else next(iter(configs)))
    if name not in configs:
        raise ConfigError(f"no configuration {name!r} in {file}; it has "
                          f"{', '.join(configs)}")
    where = Where(file, item=f"configs.{name}")
    entry = configs[name]
    if not isinstance(entry, dict):
        raise where.error(f"expected an object, got {describe(entry)}", field="(config)")
    _empty_block(entry.get("empty_rankings"), where)
    details = isinstance(entry.get("queries"), list)
    if not details:
        per_query_of(entry.get("per_query"), where)  # its errors name this config
    report = compare_from_json(data, file).reports[name]
    pairwise = data.get("pairwise")
    return Results(file, "compare", name, tuple(configs), baseline, report,
                   details=True if details else None,
                   pairwise=pairwise if isinstance(pairwise, dict) else None)


def target_ranks(q: QueryRecord) -> dict[str, int | None]:
    """Each ground-truth target -> the rank where it was first retrieved (None: not
    retrieved). Empty without a recorded ground truth."""
    targets = (q.ground_truth or {}).get("targets")
    if not isinstance(targets, dict):
        return {}
    found: dict[str, int | None] = {t: None for t in targets}
    for it in q.retrieved:
        for t in it.targets:
            if t in found and found[t] is None:
                found[t] = it.rank
    return found


def metric_json(m: Score) -> Any:
    """A metric as the results file writes it (a number, or value + reason + details)."""
    if m.value is not None and not m.details:
        return m.value
    out: dict[str, Any] = {"value": m.value}
    if m.value is None:
        out["reason"] = m.reason
    out.update(m.details)
    return out


def query_json(results: Results, q: QueryRecord) -> dict[str, Any]:
    """One question in full, for ``ragmark inspect --json``."""
    out: dict[str, Any] = {"file": results.path, "source": results.describe(), "id": q.id}
    if results.detailed:
        ranks = target_ranks(q)
        out.update({
            "question": q.question,
            "ground_truth": None if q.ground_truth is None else {
                **q.ground_truth, "found_at_rank": ranks},
            "retrieved": [
                {"rank": it.rank, "id": it.id, "doc_id": it.doc_id, "score": it.score,
                 "relevant": it.grade > 0, "grade": it.grade, "targets": list(it.targets),
                 "rule": it.rule, "why": RULES.get(it.rule or "", it.rule)}
                for it in q.retrieved
            ],
            "answer": q.answer,
            "contexts": list(q.contexts),
        })
    else:
        out["note"] = (f"a comparison file keeps only metric values per question; "
                       f"{DETAILS_HINT} (with --config {results.config})")
    out["metrics"] = {k: metric_json(m) for k, m in q.metrics.items()}
    if results.pairwise is not None:
        from ragmark.running.tournament import verdicts_for

        out["pairwise"] = verdicts_for(results.pairwise, results.config, q.id)
    return out
