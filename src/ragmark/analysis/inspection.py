"""Looking inside a results file: one question in full, or every failing question with a
one-line diagnosis.

Reads the JSON of ``ragmark run --include-details`` (per-query records: ground truth,
retrieved items and why they matched, answer, contexts, metrics with the reason for any
missing one) and the JSON of ``ragmark compare`` (per config, the metric values of every
question, without texts and without the reasons of missing values).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragmark.data._read import Where, describe, quote, read_json
from ragmark.errors import ConfigError, DataError

GROUNDED_THRESHOLD = 0.10
"""Used when the file does not record the run's ``grounded_threshold``."""

DETAILS_HINT = "rerun `ragmark run ... --include-details` to keep them"

RULES = {
    "id": "its document is a ground-truth document",
    "section": "it lies in a ground-truth section",
    "text": "its text and a ground-truth passage contain one another "
            "(lower-cased, spaces collapsed, at least 20 characters)",
}
"""What each relevance rule of :mod:`ragmark.relevance` means, for people."""


@dataclass(frozen=True, slots=True)
class Metric:
    """One metric of one question: a value, or None with the reason (None when the
    file does not record it); ``details`` holds the extras (``ungrounded``, claims, ...)."""

    value: float | None
    reason: str | None = None
    details: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Item:
    """One retrieved item as the results file records it."""

    rank: int
    id: str
    doc_id: str
    score: float
    grade: int
    targets: tuple[str, ...]
    rule: str | None


@dataclass(frozen=True, slots=True)
class QueryResult:
    """One question. ``question`` and ``retrieved`` are None when the file (a comparison)
    does not record them; ``ground_truth`` is None in files written before it was kept."""

    id: str
    question: str | None
    ground_truth: Mapping[str, Any] | None
    retrieved: tuple[Item, ...] | None
    answer: str | None
    contexts: tuple[str, ...]
    metrics: Mapping[str, Metric]

    def first_relevant(self, depth: int | None = None) -> int | None:
        """Rank of the first relevant retrieved item (within ``depth``), else None."""
        for it in self.retrieved or ():
            if it.grade > 0 and (depth is None or it.rank <= depth):
                return it.rank
        return None


@dataclass(frozen=True, slots=True)
class Results:
    """The questions of one configuration in a results file."""

    path: str
    kind: str  # "run" | "compare"
    config: str
    configs: tuple[str, ...]
    baseline: str | None
    settings: Mapping[str, Any]
    queries: tuple[QueryResult, ...]
    notes: tuple[str, ...] = ()
    details: bool | None = None
    """Whether the questions carry their texts and rankings (a run file, or a compare
    file written with --include-details); None: as the kind says."""
    empty: Mapping[str, str] | None = None
    """Question id -> why its ranking is empty, for the questions that retrieved nothing
    (the file's ``empty_rankings``); None when the file does not record them."""

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

    def query(self, query_id: str) -> QueryResult:
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
    return results_from(str(path), read_json(Path(path)), config)


def is_label_file(data: Any) -> bool:
    """Whether ``data`` is the JSON that ``ragmark label`` writes."""
    return (isinstance(data, dict) and "metric_names" in data and "prompt" in data
            and isinstance(data.get("configs"), dict))


def results_from(file: str, data: Any, config: str | None = None) -> Results:
    """The :class:`Results` of the parsed JSON ``data`` of ``file``."""
    from ragmark.results import kind_of_results

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


def _settings(value: Any, where: Where, name: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise where.error(f"expected an object, got {describe(value)}", field=name)
    return value


def _run(file: str, data: dict[str, Any], config: str | None) -> Results:
    settings = _settings(data["config"], Where(file), "config")
    name = str(settings.get("name", "?"))
    if config is not None and config != name:
        raise ConfigError(f"--config picks a configuration of a comparison file; {file} is "
                          f"a run of config {name!r}")
    if data.get("queries") is None:
        raise DataError(f"has no per-query details (questions, retrieved items, answers); "
                        f"{DETAILS_HINT}", file=file)
    queries = data["queries"]
    if not isinstance(queries, list):
        raise Where(file).error(f"expected a list, got {describe(queries)}", field="queries")
    parsed = tuple(_query(file, i, q) for i, q in enumerate(queries))
    notes = data.get("notes") or []
    return Results(file, "run", name, (name,), None, settings, parsed,
                   tuple(str(n) for n in notes) if isinstance(notes, list) else (),
                   empty=_empty(data.get("empty_rankings"), Where(file)))


def _empty(block: Any, where: Where) -> dict[str, str] | None:
    """The ``empty_rankings`` block as question id -> cause (None when absent)."""
    if block is None:
        return None
    if not isinstance(block, dict) or not isinstance(block.get("questions"), list):
        raise where.error(f"expected an object with a list 'questions', got "
                          f"{describe(block)}", field="empty_rankings")
    cause = block.get("cause")
    return {str(q): cause if isinstance(cause, str) else "unknown"
            for q in block["questions"]}


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
    entry = _settings(configs[name], where, "(config)")
    settings = entry.get("config") if isinstance(entry.get("config"), dict) else {}
    notes = entry.get("notes") if isinstance(entry.get("notes"), list) else []
    details = entry.get("queries")
    empty = _empty(entry.get("empty_rankings"), where)
    if isinstance(details, list):  # compare --include-details: as full as a run's
        parsed = tuple(_query(file, i, q) for i, q in enumerate(details))
        return Results(file, "compare", name, tuple(configs), baseline, settings or {},
                       parsed, tuple(str(n) for n in notes or []), details=True,
                       empty=empty)
    per_query = entry.get("per_query")
    if not isinstance(per_query, dict):
        raise where.error(f"expected an object of per-query metric values, got "
                          f"{describe(per_query)}", field="per_query")
    queries = []
    for qid, values in per_query.items():
        if not isinstance(values, dict):
            raise where.error(f"expected an object, got {describe(values)}",
                              field=f"per_query.{qid}")
        metrics = {m: _metric(v, where, f"per_query.{qid}.{m}") for m, v in values.items()}
        queries.append(QueryResult(qid, None, None, None, None, (), metrics))
    settings = entry.get("config") if isinstance(entry.get("config"), dict) else {}
    notes = entry.get("notes") if isinstance(entry.get("notes"), list) else []
    return Results(file, "compare", name, tuple(configs), baseline, settings or {},
                   tuple(queries), tuple(str(n) for n in notes or []), empty=empty)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _metric(value: Any, where: Where, name: str) -> Metric:
    if value is None:
        return Metric(None)
    if _number(value):
        return Metric(float(value))
    if isinstance(value, dict) and "value" in value:
        v = value["value"]
        if v is not None and not _number(v):
            raise where.error(f"expected a number or null, got {describe(v)}",
                              field=f"{name}.value")
        reason = value.get("reason")
        details = {k: x for k, x in value.items() if k not in ("value", "reason")}
        return Metric(None if v is None else float(v),
                      reason if isinstance(reason, str) else None, details)
    raise where.error(f"expected a number, null or an object with 'value', got "
                      f"{describe(value)}", field=name)


def _field(obj: dict[str, Any], key: str, kind: type | tuple[type, ...], where: Where,
           name: str, expected: str, optional: bool = False) -> Any:
    value = obj.get(key)
    if value is None and optional:
        return None
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        raise where.error(f"expected {expected}, got {describe(value)}", field=name)
    return value


def _query(file: str, i: int, q: Any) -> QueryResult:
    where = Where(file, item=f"queries[{i}]")
    if not isinstance(q, dict):
        raise where.error(f"expected an object, got {describe(q)}")
    qid = _field(q, "id", str, where, "id", "a string")
    question = _field(q, "question", str, where, "question", "a string")
    truth = _field(q, "ground_truth", dict, where, "ground_truth", "an object", optional=True)
    items = _field(q, "retrieved", list, where, "retrieved", "a list")
    retrieved = tuple(_item(it, where, f"retrieved[{j}]") for j, it in enumerate(items))
    answer = _field(q, "answer", str, where, "answer", "a string or null", optional=True)
    contexts = _field(q, "contexts", list, where, "contexts", "a list", optional=True) or []
    for j, c in enumerate(contexts):
        if not isinstance(c, str):
            raise where.error(f"expected a string, got {describe(c)}", field=f"contexts[{j}]")
    metrics = _field(q, "metrics", dict, where, "metrics", "an object")
    return QueryResult(
        qid, question, truth, retrieved, answer, tuple(contexts),
        {m: _metric(v, where, f"metrics.{m}") for m, v in metrics.items()},
    )


def _item(it: Any, where: Where, name: str) -> Item:
    if not isinstance(it, dict):
        raise where.error(f"expected an object, got {describe(it)}", field=name)
    targets = _field(it, "targets", list, where, f"{name}.targets", "a list", optional=True)
    rule = _field(it, "rule", str, where, f"{name}.rule", "a string or null", optional=True)
    return Item(
        rank=_field(it, "rank", int, where, f"{name}.rank", "an integer"),
        id=_field(it, "id", str, where, f"{name}.id", "a string"),
        doc_id=_field(it, "doc_id", str, where, f"{name}.doc_id", "a string"),
        score=float(_field(it, "score", (int, float), where, f"{name}.score", "a number")),
        grade=_field(it, "grade", int, where, f"{name}.grade", "an integer"),
        targets=tuple(str(t) for t in targets or ()),
        rule=rule,
    )


def target_ranks(q: QueryResult) -> dict[str, int | None]:
    """Each ground-truth target -> the rank where it was first retrieved (None: not
    retrieved). Empty without a recorded ground truth."""
    targets = (q.ground_truth or {}).get("targets")
    if not isinstance(targets, dict):
        return {}
    found: dict[str, int | None] = {t: None for t in targets}
    for it in q.retrieved or ():
        for t in it.targets:
            if t in found and found[t] is None:
                found[t] = it.rank
    return found


def metric_json(m: Metric) -> Any:
    """A metric as the results file writes it (a number, or value + reason + details)."""
    if m.value is not None and not m.details:
        return m.value
    out: dict[str, Any] = {"value": m.value}
    if m.value is None:
        out["reason"] = m.reason
    out.update(m.details)
    return out


def query_json(results: Results, q: QueryResult) -> dict[str, Any]:
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
                for it in q.retrieved or ()
            ],
            "answer": q.answer,
            "contexts": list(q.contexts),
        })
    else:
        out["note"] = (f"a comparison file keeps only metric values per question; "
                       f"{DETAILS_HINT} (with --config {results.config})")
    out["metrics"] = {k: metric_json(m) for k, m in q.metrics.items()}
    return out
