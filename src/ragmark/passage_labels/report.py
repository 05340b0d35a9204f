"""What ``ragmark label`` writes: the JSON a program reads and the Markdown tables a
person reads. Pure: text and dicts, no files."""

from __future__ import annotations

from typing import Any

from ragmark.data._fields import as_object, check_int, check_string, get_string
from ragmark.data.files import Where, describe
from ragmark.errors import DataError
from ragmark.passage_labels.metrics import LABELS, METRICS, Agreement, current_name
from ragmark.passage_labels.tops import ConfigLabels, LabelledItem, LabelledQuery, LabelRun
from ragmark.results import envelope
from ragmark.results.model import Aggregate
from ragmark.types import Score

DEFAULT_PROMPT = "default: can an answer to the question be derived from the passage? YES/NO"


def curve(c: ConfigLabels, metric: str, top_k: int) -> list[float | None]:
    """The mean of ``metric`` at k = 1..top_k (None where no query has a value)."""
    return [c.metrics[f"{metric}@{k}"].value for k in range(1, top_k + 1)]


def _num(v: float | None) -> float | None:
    return None if v is None else round(v, 10)


def _label_json(s: Score) -> int | dict[str, Any]:
    if s.value is not None:
        return int(s.value)
    return {"value": None, "reason": s.reason, **dict(s.details)}


def _config_json(c: ConfigLabels) -> dict[str, Any]:
    return {
        "config": c.config,
        "chunks": c.chunks,
        "metrics": {k: _num(a.value) for k, a in c.metrics.items()},
        "counts": {k: a.to_json() for k, a in c.metrics.items()},
        "labels": {"passages": sum(len(q.items) for q in c.queries),
                   "relevant": c.count(1.0), "not_relevant": c.count(0.0),
                   "failed": c.count(None)},
        "agreement": None if c.agreement is None else c.agreement.to_json(),
        "queries": [
            {"id": q.id, "question": q.question,
             **({"failure": q.failure} if q.failure is not None else {}),
             "metrics": {k: (s.value if s.ok else {"value": None, "reason": s.reason})
                         for k, s in q.metrics.items()},
             "passages": [{"rank": it.rank, "id": it.id, "doc_id": it.doc_id,
                           "grade": it.grade, "label": _label_json(it.label),
                           "text": it.text} for it in q.items]}
            for q in c.queries
        ],
    }


def label_json(r: LabelRun, versions: dict[str, str] | None = None) -> dict[str, Any]:
    """``top_k``, ``dataset``, ``prompt``, ``configs`` (name -> ``metrics`` ``name@k`` ->
    mean, ``counts`` -> queries covered and missing with reasons, ``labels`` counts,
    ``agreement`` with the ground truth, ``queries`` with every passage's label),
    ``agreement`` over all configs, ``llm`` accounting."""
    out: dict[str, Any] = {
        "envelope": r.envelope or envelope("label", str(r.dataset.get("hash", "")),
                                           {name: c.config for name, c in r.configs.items()}),
        "top_k": r.top_k,
        "dataset": r.dataset,
        "prompt": {"template": r.template} if r.template is not None else {
            "template": None, "note": DEFAULT_PROMPT},
        "metric_names": list(METRICS),
        "configs": {name: _config_json(c) for name, c in r.configs.items()},
        "agreement": None if r.agreement is None else r.agreement.to_json(),
        "llm": r.llm,
        "notes": list(r.notes),
    }
    if r.versions is not None or versions is not None:
        out["versions"] = r.versions if r.versions is not None else versions
    if r.executor:
        out["executor"] = r.executor
    return out


def label_from_json(data: Any, file: str = "results") -> LabelRun:
    """The label run a ``ragmark label`` results file (:func:`label_json`'s JSON) holds;
    JSON -> run -> JSON gives the same JSON (tests/unit/passage_labels/)."""
    try:
        prompt = data.get("prompt") or {}
        return LabelRun(
            top_k=int(data["top_k"]), dataset=dict(data.get("dataset") or {}),
            configs={name: _config_from_json(name, c, file)
                     for name, c in data["configs"].items()},
            agreement=_agreement(data.get("agreement")), llm=dict(data.get("llm") or {}),
            template=prompt.get("template"), executor=dict(data.get("executor") or {}),
            notes=list(data.get("notes") or []),
            envelope=dict(data["envelope"]) if "envelope" in data else None,
            versions=dict(data["versions"]) if "versions" in data else None)
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise DataError(f"not a label run's results as ragmark writes them "
                        f"({type(e).__name__}: {e})", file=file) from None


def _score(v: Any) -> Score:
    if isinstance(v, dict):
        rest = {k: x for k, x in v.items() if k not in ("value", "reason")}
        return Score(None, v.get("reason"), rest) if v.get("value") is None else Score(
            float(v["value"]), details=rest)
    return Score(None) if v is None else Score(float(v))


def _agreement(block: Any) -> Agreement | None:
    return None if block is None else Agreement(block["tp"], block["fp"], block["fn"],
                                                block["tn"])


def _config_from_json(name: str, c: Any, file: str) -> ConfigLabels:
    counts = c.get("counts") or {}
    return ConfigLabels(
        name=name, config=dict(c["config"]), chunks=c.get("chunks"),
        queries=_queries_from_json(name, c.get("queries"), file),
        metrics={current_name(k): Aggregate(v, counts[k]["n"], counts[k]["missing"],
                                            dict(counts[k].get("reasons") or {}))
                 for k, v in c["metrics"].items()},
        agreement=_agreement(c.get("agreement")))


def _queries_from_json(name: str, queries: Any, file: str) -> list[LabelledQuery]:
    """A config's labelled questions, read strictly: a malformed one is an error naming
    the file, the question and the field."""
    if not isinstance(queries, list):
        raise Where(file, item=f"configs.{name}").error(
            f"expected a list, got {describe(queries)}", field="queries")
    out = []
    for i, q in enumerate(queries):
        where = Where(file, item=f"configs.{name}.queries[{i}]")
        obj = as_object(q, where)
        passages = obj.get("passages")
        if not isinstance(passages, list):
            raise where.error(f"expected a list, got {describe(passages)}", field="passages")
        items = []
        for j, item in enumerate(passages):
            p = as_object(item, where)
            label = p.get("label")
            failed = isinstance(label, dict) and label.get("value") is None
            if not failed and (label not in (0, 1) or isinstance(label, bool)):
                raise where.error(f"expected 0, 1 or an object with value null, got "
                                  f"{describe(label)}", field=f"passages[{j}].label")
            items.append(LabelledItem(
                check_int(p.get("rank"), where, f"passages[{j}].rank"), p["id"], p["doc_id"],
                check_string(p.get("text"), where, f"passages[{j}].text", allow_empty=True),
                _score(label), p["grade"]))
        out.append(LabelledQuery(get_string(obj, "id", where), get_string(obj, "question", where),
                                 items, {current_name(k): _score(v)
                                         for k, v in obj["metrics"].items()},
                                 obj.get("failure")))
    return out


def _cell(a: Aggregate, digits: int = 4) -> str:
    if a.value is None:
        return "—"
    text = f"{a.value:.{digits}f}"
    if a.missing:
        text += f" (n={a.n}/{a.n + a.missing})"
    return text


def _agreement_line(name: str, a: Agreement | None) -> str:
    if a is None:
        return f"- {name}: no labelled passage with ground truth"
    kappa = "undefined" if a.kappa is None else f"{a.kappa:.3f}"
    return (f"- {name}: {a.rate or 0.0:.3f} of {a.n} passages (Cohen's κ {kappa}; judge YES "
            f"and relevant {a.tp}, YES and not relevant {a.fp}, NO and relevant {a.fn}, "
            f"NO and not relevant {a.tn})")


def label_markdown(r: LabelRun) -> str:
    """Answer presence at every k with one column per config, then every metric per
    config, the label counts, and the judge's agreement with the ground truth."""
    ks = range(1, r.top_k + 1)
    names = list(r.configs)
    ds = r.dataset
    lines = [
        f"## ragmark label: {ds.get('name')} ({ds.get('queries')} questions, top {r.top_k} "
        f"labelled by {r.llm.get('model')})",
        "",
        "### Answer presence@k",
        "",
        "| k | " + " | ".join(names) + " |",
        "|---:|" + "---:|" * len(names),
    ]
    for k in ks:
        cells = [_cell(r.configs[n].metrics[f"answer_presence@{k}"]) for n in names]
        lines.append(f"| {k} | " + " | ".join(cells) + " |")
    shown = [m for m in METRICS if m != "agreement" or r.agreement is not None]
    for name, c in r.configs.items():
        lines += ["", f"### {name}", "",
                  "| k | " + " | ".join(LABELS[m] for m in shown) + " |",
                  "|---:|" + "---:|" * len(shown)]
        for k in ks:
            cells = [_cell(c.metrics[f"{m}@{k}"], 2 if m == "num_relevant" else 4)
                     for m in shown]
            lines.append(f"| {k} | " + " | ".join(cells) + " |")
    lines += ["", "### Labels", ""]
    lines += [f"Note: {n}" for n in r.notes] + ([""] if r.notes else [])
    for name, c in r.configs.items():
        failed = sum(1 for q in c.queries if q.failure is not None)
        lines.append(f"- {name}: {c.count(1.0)} relevant, {c.count(0.0)} not relevant, "
                     f"{c.count(None)} failed (left out of the metrics)"
                     + (f"; the pipeline failed on {failed} of {len(c.queries)} questions"
                        if failed else ""))
    if r.agreement is not None:
        lines += ["", "### Agreement of the judge with the ground truth (grade > 0)", ""]
        lines += [_agreement_line(n, c.agreement) for n, c in r.configs.items()]
        lines.append(_agreement_line("all configs (distinct passages)", r.agreement))
    lines += [
        "",
        "Means over the questions; `(n=a/b)` when only a of b questions have a value. "
        "Judged precision counts the passages the judge labelled relevant (not the "
        "dataset's targets); relative recall is relative to the passages judged relevant "
        f"in the labelled top {r.top_k}; accuracy is TP / k (equal to judged precision, "
        "kept for the tables that report it); a failed label is left out of its "
        "question's values.",
    ]
    return "\n".join(lines) + "\n"
