"""Human review of a judge: export a sample of answers (or of the passages ``ragmark
label`` labelled) for people to label, then measure how often they agree with the judge
(raw agreement and Cohen's kappa).

Labels in the ``human`` and ``judge`` columns are read alike: yes/no words (see
:data:`YES` and :data:`NO`, any case) or numbers. A number between 0 and 1 is a score and
counts as positive when it is at least the threshold (default 0.5), so a faithfulness of
0.5 (half the claims supported) is positive and 0.4 is not. Rows whose human cell is
empty are skipped and counted, as are rows without a judge value.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ragmark.analysis.inspection import Results, is_label_file, results_from
from ragmark.config_judges import remember
from ragmark.data.files import quote, read_text
from ragmark.errors import ConfigError, DataError
from ragmark.metrics.names import ask_of
from ragmark.passage_labels import label_from_json
from ragmark.results import read_results
from ragmark.stats import cohen_kappa
from ragmark.text import article
from ragmark.types import Score

COLUMNS = ("id", "question", "answer", "contexts", "expected_answer", "metric", "judge",
           "human")
JUDGE_PREFERENCE = ("faithfulness", "answer_correctness", "answer_relevance",
                    "context_relevance")
"""The judge metric exported when none is named: the first one the file has values of."""
LABEL_METRIC = "relevance_label"
"""The judge column's name for the passage labels of ``ragmark label``."""
THRESHOLD = 0.5
LABEL_ASK = "can an answer to the question be derived from the passage?"
"""What an annotator answers about a passage's relevance label (``ragmark label``)."""


def ask(metric: str) -> str:
    """What an annotator answers yes or no to about ``metric``: its catalogue entry's
    question (:func:`ragmark.metrics.names.ask_of`), or the passage label's."""
    return LABEL_ASK if metric == LABEL_METRIC else ask_of(metric)
YES = frozenset({"yes", "y", "true", "pass", "correct", "supported", "relevant", "good"})
NO = frozenset({"no", "n", "false", "fail", "incorrect", "unsupported", "irrelevant", "bad"})


@dataclass(frozen=True, slots=True)
class ReviewRow:
    """One answer to review, with the judge's value of ``metric``."""

    id: str
    question: str
    answer: str
    contexts: tuple[str, ...]
    metric: str
    judge: float | None
    """None: no judge has seen it (logged outputs, ``ragmark annotate``)."""
    expected_answer: str = ""
    claim: str = ""
    """One claim of the answer, when the row is of a claim (``annotate --per-claim``)."""


@dataclass(frozen=True, slots=True)
class Sampled:
    """The exported rows and how they were drawn."""

    rows: list[ReviewRow]
    metric: str
    eligible: int
    left_out: dict[str, int]
    source: str = ""
    unit: str = "answers"


def export_sample(results: Results, n: int, seed: int = 0,
                  metric: str | None = None, flag: str = "--metric") -> Sampled:
    """``n`` questions drawn without replacement (numpy, ``seed``) among those with an
    answer and a value of ``metric`` (default: the first judge metric of
    :data:`JUDGE_PREFERENCE` the file has values of), kept in file order."""
    if not results.detailed:
        raise DataError("a comparison file keeps no questions or answers; export from the "
                        f"JSON of `ragmark run --config {results.config} --include-details`",
                        file=results.path)
    names = list(dict.fromkeys(m for q in results.queries for m in q.metrics))
    if metric is None:
        metric = next((m for m in JUDGE_PREFERENCE if any(
            q.metrics.get(m) and q.metrics[m].value is not None for q in results.queries)),
            None)
        if metric is None:
            raise ConfigError(f"{results.path} has no judge metric with values (judge with "
                              f"--judge-metrics); choose one with {flag}: "
                              f"{', '.join(names)}")
    elif metric not in names:
        raise ConfigError(f"no metric {metric!r} in {results.path}; it has {', '.join(names)}")
    pool: list[ReviewRow] = []
    left_out: dict[str, int] = {}
    for q in results.queries:
        m = q.metrics.get(metric)
        # the verdict the judge wrote (people label yes or no; a value weighted by the
        # judge's probabilities would rarely reach faithfulness's 1.0)
        value = None if m is None else m.hard
        if q.answer is None or not q.answer.strip() or value is None:
            why = ("no answer" if q.answer is None else "an empty answer"
                   if not q.answer.strip() else f"{metric} missing")
            left_out[why] = left_out.get(why, 0) + 1
            continue
        expected = (q.ground_truth or {}).get("expected_answer")
        pool.append(ReviewRow(q.id, q.question or "", q.answer, tuple(q.contexts), metric, value,
                              expected if isinstance(expected, str) else ""))
    if not pool:
        raise DataError(f"no question has both an answer and {article(metric)} value",
                        file=results.path)
    return Sampled(_draw(pool, n, seed), metric, len(pool), left_out, results.describe())


def _draw(pool: Sequence[ReviewRow], n: int, seed: int) -> list[ReviewRow]:
    """``n`` rows drawn without replacement with numpy's generator seeded ``seed``, in
    the order of ``pool``."""
    if n < 1:
        raise ConfigError(f"--sample must be at least 1, got {n}")
    rng = np.random.default_rng(seed)
    picked = sorted(rng.choice(len(pool), size=min(n, len(pool)), replace=False).tolist())
    return [pool[i] for i in picked]


def label_sample(file: str, data: dict[str, Any], n: int, seed: int = 0,
                 config: str | None = None) -> Sampled:
    """``n`` passages of one config of a ``ragmark label`` file (default: its first),
    drawn as :func:`export_sample` draws answers; the judge column is the passage's
    relevance label (1: an answer can be derived from it), ids are ``question@rank``."""
    got = data.get("configs")
    configs: dict[str, Any] = got if isinstance(got, dict) else {}
    name = config or next(iter(configs), None)
    if name not in configs:
        raise ConfigError(f"no configuration {name!r} in {file}; it has {', '.join(configs)}")
    run = label_from_json(data, file)
    pool: list[ReviewRow] = []
    left_out: dict[str, int] = {}
    for q in run.configs[str(name)].queries:
        for it in q.items:
            if it.label.value is None:
                left_out["label failed"] = left_out.get("label failed", 0) + 1
                continue
            pool.append(ReviewRow(f"{q.id}@{it.rank}", q.question, "", (it.text,),
                                  LABEL_METRIC, float(it.label.value)))
    if not pool:
        raise DataError(f"configuration {name!r} has no labelled passage", file=file)
    return Sampled(_draw(pool, n, seed), LABEL_METRIC, len(pool), left_out,
                   f"relevance labels of config {name!r}", "passages")


def sample_for_review(path: str | Path, n: int, seed: int = 0, metric: str | None = None,
                      config: str | None = None, flag: str = "--metric") -> Sampled:
    """The rows to review from a results file of ``ragmark run --include-details`` (its
    answers) or of ``ragmark label`` (its labelled passages)."""
    file = str(path)
    kind, data = read_results(path)
    remember(data, file)  # its criteria: people are asked them
    if kind == "label" or is_label_file(data):
        if metric not in (None, LABEL_METRIC):
            raise ConfigError(f"{file} is a `ragmark label` file: its judge column is the "
                              f"relevance label, not {metric!r}")
        return label_sample(file, data, n, seed, config)
    return export_sample(results_from(file, data, config), n, seed, metric, flag)


def join_contexts(contexts: Sequence[str]) -> str:
    """Each context on one line (white space collapsed) as ``[1] text``, separated by a
    blank line."""
    return "\n\n".join(f"[{i}] {' '.join(c.split())}" for i, c in enumerate(contexts, start=1))


def write_review_csv(rows: Sequence[ReviewRow], path: str | Path) -> Path:
    """The annotators' CSV (UTF-8, one row per answer, ``human`` left empty)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    with p.open("w", encoding="utf-8", newline="") as f:
        w = csv.writer(f)
        w.writerow(COLUMNS)
        for r in rows:
            w.writerow([r.id, r.question, r.answer, join_contexts(r.contexts),
                        r.expected_answer, r.metric,
                        "" if r.judge is None else f"{r.judge:.6g}", ""])
    return p


def kappa_band(kappa: float) -> str:
    """Landis and Koch's (1977) words for a kappa value."""
    if kappa < 0:
        return "poor"
    for upper, word in ((0.2, "slight"), (0.4, "fair"), (0.6, "moderate"),
                        (0.8, "substantial")):
        if kappa <= upper:
            return word
    return "almost perfect"


@dataclass(slots=True)
class Agreement:
    """How a person's labels compare to the judge's on the rows both labelled."""

    path: str
    threshold: float
    metrics: list[str]
    n: int = 0
    agree: int = 0
    kappa: Score = field(default_factory=lambda: Score.missing("no item has both labels"))
    skipped_no_human: int = 0
    skipped_no_judge: int = 0
    confusion: dict[str, dict[str, int]] = field(default_factory=dict)

    @property
    def raw(self) -> float | None:
        return self.agree / self.n if self.n else None

    def to_json(self) -> dict[str, Any]:
        k = self.kappa
        return {
            "file": self.path, "metrics": self.metrics, "threshold": self.threshold,
            "rows": self.n, "agree": self.agree, "raw_agreement": self.raw,
            "kappa": k.value if k.ok else None,
            **({"kappa_band": kappa_band(k.value)} if k.value is not None else
               {"kappa_missing": k.reason}),
            "skipped": {"no_human_label": self.skipped_no_human,
                        "no_judge_value": self.skipped_no_judge},
            "confusion": self.confusion,
        }


def parse_label(cell: str, threshold: float) -> bool | None:
    """A cell as a binary label (None when empty); ValueError says what was expected."""
    value = parse_value(cell)
    return None if value is None else value >= threshold


def parse_value(cell: str) -> float | None:
    """A cell as a number in [0, 1]: yes = 1, no = 0, or the score itself (None when
    empty); ValueError says what was expected."""
    text = cell.strip()
    if not text:
        return None
    low = text.lower()
    if low in YES:
        return 1.0
    if low in NO:
        return 0.0
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if math.isfinite(value) and 0.0 <= value <= 1.0:
        return value
    raise ValueError(f"expected yes/no ({', '.join(sorted(YES))} or {', '.join(sorted(NO))})"
                     f" or a score between 0 and 1, got {quote(text)}")


def review_rows(path: str | Path, needed: Sequence[str]
                ) -> Iterator[tuple[int, int, dict[str, str]]]:
    """Each non-empty row of a review CSV as ``(row number, line, cells by column)``;
    DataError (file, line, column) when a ``needed`` column is missing, a row has the
    wrong number of cells, or the CSV is malformed."""
    file = str(path)
    reader = csv.reader(io.StringIO(read_text(Path(path)), newline=""), strict=True)
    try:
        header = next(reader, None)
        if header is None:
            raise DataError("the file is empty; expected a CSV with a header row", file=file)
        header = [h.strip() for h in header]
        for col in needed:
            if col not in header:
                raise DataError(f"no {col!r} column; expected a CSV with the columns "
                                f"{', '.join(COLUMNS)} (as `ragmark review export` writes)",
                                file=file, line=1, field=col)
        line = reader.line_num
        for row_no, row in enumerate(reader, start=1):
            start, line = line + 1, reader.line_num
            if not any(c.strip() for c in row):
                continue
            if len(row) != len(header):
                raise DataError(f"row {row_no} has {len(row)} cells, the header has "
                                f"{len(header)}", file=file, line=start)
            yield row_no, start, dict(zip(header, row, strict=True))
    except csv.Error as e:
        raise DataError(f"not a valid CSV: {e}", file=file, line=reader.line_num) from None


def cell_error(path: str | Path, row_no: int, start: int, cells: dict[str, str], col: str,
               e: ValueError) -> DataError:
    rid = f" (id {quote(cells['id'])})" if cells.get("id") else ""
    return DataError(f"row {row_no}{rid}: {e}", file=str(path), line=start, field=col)


def read_agreement(path: str | Path, threshold: float = THRESHOLD) -> Agreement:
    """Agreement of the ``human`` and ``judge`` columns of a review CSV."""
    if not 0.0 <= threshold <= 1.0:
        raise ConfigError(f"the threshold must be between 0 and 1, got {threshold}")
    out = Agreement(str(path), threshold, [])
    human: list[str] = []
    judge: list[str] = []
    for row_no, start, cells in review_rows(path, ("human", "judge")):
        labels = []
        for col in ("human", "judge"):
            try:
                labels.append(parse_label(cells[col], threshold))
            except ValueError as e:
                raise cell_error(path, row_no, start, cells, col, e) from None
        if labels[0] is None:
            out.skipped_no_human += 1
        elif labels[1] is None:
            out.skipped_no_judge += 1
        else:
            human.append("yes" if labels[0] else "no")
            judge.append("yes" if labels[1] else "no")
            if cells.get("metric") and cells["metric"] not in out.metrics:
                out.metrics.append(cells["metric"])
    out.n = len(human)
    out.agree = sum(h == j for h, j in zip(human, judge, strict=True))
    out.kappa = cohen_kappa(human, judge)
    for h, j in zip(human, judge, strict=True):
        row_counts = out.confusion.setdefault(f"human {h}", {})
        row_counts[f"judge {j}"] = row_counts.get(f"judge {j}", 0) + 1
    return out
