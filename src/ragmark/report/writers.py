"""Writers: a results file in one format each, registered like other components.

A writer is a callable ``writer(out: Written) -> list[Path]`` that writes what
``out.result`` (a RunReport, Comparison or LabelRun) holds, in its format, next to
``out.stem``, and returns the paths written. Built-ins: ``json``, ``md``, ``trec``,
``csv``, ``html`` (one self-contained page, :mod:`ragmark.report.html`); a plugin adds
one with an entry point in the group ``ragmark.writer``.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragmark.errors import ConfigError
from ragmark.passage_labels import label_markdown
from ragmark.registry import registry
from ragmark.report.html import render
from ragmark.report.json_writer import write_json, write_markdown
from ragmark.report.markdown import comparison_markdown, run_markdown
from ragmark.report.trec_run import write_trec_run
from ragmark.results.codec import compare_to_json as comparison_json
from ragmark.results.codec import queries_json
from ragmark.running.tournament import verdicts_for

DEFAULTS = {"run": ("json",), "compare": ("json", "md"), "label": ("json", "md")}
SUFFIX = {"json": ".json", "md": ".md", "trec": ".trec", "csv": ".csv", "html": ".html"}


@dataclass(frozen=True)
class Written:
    """What a writer gets: the kind (run, compare, label), the result, its JSON form (the
    envelope included), and the stem its files are named after (``results/eval`` ->
    ``results/eval.json``, ``results/eval.md``)."""

    kind: str
    result: Any
    data: dict[str, Any]
    stem: Path
    markdown_extra: str = ""
    """Appended to the Markdown (the regression gate's table)."""


def parse_formats(text: str | None, kind: str) -> list[str]:
    """``json,md`` -> names checked against the registry (default: the kind's)."""
    if not text:
        return list(DEFAULTS[kind])
    names = [n.strip().lower() for n in text.split(",") if n.strip()]
    reg = registry("writer")
    for n in names:
        reg.factory(n)  # an unknown name lists the known ones
    if kind == "label" and "trec" in names:
        raise ConfigError("--format trec: a label file has no ranking of its own to write")
    return list(dict.fromkeys(names))


def paths_of(formats: Sequence[str], stem: Path) -> list[Path]:
    """The files the built-in formats will write (checked before any work); a plugin's
    files are its own business."""
    return [stem.with_name(stem.name + SUFFIX[f]) for f in formats if f in SUFFIX]


def write_all(formats: Sequence[str], out: Written) -> list[Path]:
    reg = registry("writer")
    written: list[Path] = []
    for f in formats:
        written += reg.create(f)(out)
    return written


def _file(out: Written, suffix: str) -> Path:
    p = out.stem.with_name(out.stem.name + suffix)
    p.parent.mkdir(parents=True, exist_ok=True)
    return p


def json_writer() -> Any:
    def write(out: Written) -> list[Path]:
        return [write_json(out.data, _file(out, ".json"))]

    return write


def markdown_writer() -> Any:
    def write(out: Written) -> list[Path]:
        render: dict[str, Callable[[Any], str]] = {
            "run": run_markdown, "compare": comparison_markdown, "label": label_markdown}
        text = render[out.kind](out.result) + out.markdown_extra

        return [write_markdown(text, _file(out, ".md"))]

    return write


def trec_writer() -> Any:
    def write(out: Written) -> list[Path]:
        if out.kind == "run":
            return [write_trec_run(out.result, _file(out, ".trec"))]
        return [write_trec_run(r, _file(out, f".{name}.trec"), tag=name)
                for name, r in out.result.reports.items()]

    return write


def html_writer() -> Any:
    def write(out: Written) -> list[Path]:
        p = _file(out, ".html")
        p.write_text(render(detailed_json(out)), encoding="utf-8")
        return [p]

    return write


def detailed_json(out: Written) -> dict[str, Any]:
    """The results in their JSON form (gates and trend included) with every question's
    details (the HTML page shows them whether or not the JSON file has them)."""
    if out.kind == "run":
        return {**out.data, "queries": queries_json(out.result)}
    if out.kind == "compare":
        return {**out.data, "configs": comparison_json(out.result, True)["configs"]}
    return out.data


def csv_writer() -> Any:
    def write(out: Written) -> list[Path]:
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["config", "question_id", "metric", "value", "reason"])
        for config, queries in _per_question(out):
            for qid, metric, value, reason in queries:
                w.writerow([config, qid, metric, "" if value is None else repr(value),
                            reason or ""])
        p = _file(out, ".csv")
        p.write_text(buf.getvalue(), encoding="utf-8")
        return [p]

    return write


def _per_question(out: Written) -> list[tuple[str, list[tuple[str, str, float | None,
                                                                  str | None]]]]:
    if out.kind == "label":
        return [(name, [(q.id, m, s.value, s.reason) for q in c.queries
                        for m, s in q.metrics.items()])
                for name, c in out.result.configs.items()]
    reports = out.result.reports if out.kind == "compare" else {
        str(out.result.config.get("name")): out.result}
    pairwise = getattr(out.result, "pairwise", None) if out.kind == "compare" else None
    return [(name, [(q.id, m, s.value, s.reason) for q in r.queries
                    for m, s in q.metrics.items()] + _pairwise_rows(pairwise, name))
            for name, r in reports.items()]


def _pairwise_rows(report: Any, name: str) -> list[tuple[str, str, float | None, str | None]]:
    """A config's pairwise verdicts as CSV rows: metric ``pairwise:CRITERION vs OTHER``,
    its score (1 won, 0.5 tie, 0 lost; none without a verdict, with why)."""
    if not report:
        return []

    ids = [v["id"] for m in report["matches"] for vs in m["verdicts"].values() for v in vs]
    score = {"won": 1.0, "tie": 0.5, "lost": 0.0}
    return [(qid, f"pairwise:{v['criterion']} vs {v['other']}", score.get(v["outcome"] or ""),
             None if v["outcome"] else v.get("failure", "no verdict"))
            for qid in dict.fromkeys(ids) for v in verdicts_for(report, name, qid)]
