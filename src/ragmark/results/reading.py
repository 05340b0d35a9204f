"""Reading the per-question parts of a results file strictly: a malformed one is a
DataError naming the file, the question (``queries[3]``) or the config
(``configs.sparse``), the field and what was expected. :mod:`ragmark.results.codec`
reads results files with these, so every reader of results (inspect, review, report,
diff) gets the same errors."""

from __future__ import annotations

from typing import Any

from ragmark.data.files import Where, describe
from ragmark.results.model import HopRecord, QueryRecord, RetrievedRecord
from ragmark.types import Score


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def score_of(value: Any, where: Where, name: str) -> Score:
    """A question's metric as a results file writes it: a number, null (missing, its
    reason not recorded: ``reason`` None), or ``{"value", "reason"?, details...}``."""
    if value is None:
        return Score(None)
    if _number(value):
        return Score(float(value))
    if isinstance(value, dict) and "value" in value:
        v = value["value"]
        if v is not None and not _number(v):
            raise where.error(f"expected a number or null, got {describe(v)}",
                              field=f"{name}.value")
        reason = value.get("reason")
        details = {k: x for k, x in value.items() if k not in ("value", "reason")}
        if v is None:
            return Score(None, reason if isinstance(reason, str) else None, details)
        return Score(float(v), details=details)
    raise where.error(f"expected a number, null or an object with 'value', got "
                      f"{describe(value)}", field=name)


def field_of(obj: dict[str, Any], key: str, kind: type | tuple[type, ...], where: Where,
             name: str, expected: str, optional: bool = False) -> Any:
    """``obj[key]`` when it is a ``kind`` (None when ``optional`` and absent); else an
    error saying what was ``expected``."""
    value = obj.get(key)
    if value is None and optional:
        return None
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        raise where.error(f"expected {expected}, got {describe(value)}", field=name)
    return value


def query_of(file: str, i: int, q: Any) -> QueryRecord:
    """The ``i``-th entry of a results file's ``queries``."""
    where = Where(file, item=f"queries[{i}]")
    if not isinstance(q, dict):
        raise where.error(f"expected an object, got {describe(q)}")
    qid = field_of(q, "id", str, where, "id", "a string")
    question = field_of(q, "question", str, where, "question", "a string")
    truth = field_of(q, "ground_truth", dict, where, "ground_truth", "an object",
                     optional=True)
    items = field_of(q, "retrieved", list, where, "retrieved", "a list")
    retrieved = [retrieved_of(it, where, f"retrieved[{j}]") for j, it in enumerate(items)]
    answer = field_of(q, "answer", str, where, "answer", "a string or null", optional=True)
    contexts = field_of(q, "contexts", list, where, "contexts", "a list", optional=True) or []
    for j, c in enumerate(contexts):
        if not isinstance(c, str):
            raise where.error(f"expected a string, got {describe(c)}", field=f"contexts[{j}]")
    metrics = field_of(q, "metrics", dict, where, "metrics", "an object")
    hops = field_of(q, "hops", list, where, "hops", "a list", optional=True) or []
    talk = field_of(q, "conversation", dict, where, "conversation", "an object",
                    optional=True)
    steps = field_of(q, "trajectory", list, where, "trajectory", "a list", optional=True)
    recorded = field_of(q, "recorded", dict, where, "recorded", "an object", optional=True)
    return QueryRecord(qid, question, retrieved, answer,
                       {m: score_of(v, where, f"metrics.{m}") for m, v in metrics.items()},
                       list(contexts), ground_truth=truth,
                       hops=tuple(hop_of(h, where, f"hops[{j}]") for j, h in enumerate(hops)),
                       conversation=talk, trajectory=steps, recorded=recorded or {})


def hop_of(h: Any, where: Where, name: str) -> HopRecord:
    """One retrieval step of a question."""
    if not isinstance(h, dict):
        raise where.error(f"expected an object, got {describe(h)}", field=name)
    for key in ("recall", "hit", "mrr"):
        if h.get(key) is not None and not _number(h[key]):
            raise where.error(f"expected a number or null, got {describe(h[key])}",
                              field=f"{name}.{key}")
    found = field_of(h, "found", list, where, f"{name}.found", "a list", optional=True) or []
    return HopRecord(field_of(h, "name", str, where, f"{name}.name", "a string"),
                     field_of(h, "size", int, where, f"{name}.size", "an integer"),
                     h.get("recall"), h.get("hit"), h.get("mrr"), tuple(map(str, found)))


def _score(v: Any) -> float | None:
    return None if v is None else float(v)


def retrieved_of(it: Any, where: Where, name: str) -> RetrievedRecord:
    """One retrieved item of a question."""
    if not isinstance(it, dict):
        raise where.error(f"expected an object, got {describe(it)}", field=name)
    targets = field_of(it, "targets", list, where, f"{name}.targets", "a list", optional=True)
    rule = field_of(it, "rule", str, where, f"{name}.rule", "a string or null", optional=True)
    return RetrievedRecord(
        rank=field_of(it, "rank", int, where, f"{name}.rank", "an integer"),
        id=field_of(it, "id", str, where, f"{name}.id", "a string"),
        doc_id=field_of(it, "doc_id", str, where, f"{name}.doc_id", "a string"),
        score=_score(field_of(it, "score", (int, float), where, f"{name}.score",
                              "a number or null", optional=True)),
        grade=field_of(it, "grade", int, where, f"{name}.grade", "an integer"),
        targets=tuple(str(t) for t in targets or ()),
        rule=rule,
    )


def per_query_of(block: Any, where: Where) -> list[QueryRecord]:
    """The questions of a ``per_query`` block (question id -> metric -> value): their
    values only."""
    if not isinstance(block, dict):
        raise where.error(f"expected an object of per-query metric values, got "
                          f"{describe(block)}", field="per_query")
    out = []
    for qid, values in block.items():
        if not isinstance(values, dict):
            raise where.error(f"expected an object, got {describe(values)}",
                              field=f"per_query.{qid}")
        out.append(QueryRecord(qid, "", [], None, {
            m: score_of(v, where, f"per_query.{qid}.{m}") for m, v in values.items()}))
    return out
