"""Outputs sets ("bring your own outputs"): what a RAG system answered, scored without
running any retriever or generator.

One object a line (JSONL; a JSON list works too)::

    {"id": "q1", "question": "...", "answer": "...", "contexts": ["...", "..."],
     "ground_truth_contexts": ["..."], "expected_answer": "...", "expected_keywords": [...]}

``question``, ``answer`` (a string; empty is an empty answer) and ``contexts`` (a list,
possibly empty, in rank order; each a string or ``{"text", "id"?, "doc_id"?,
"score"?}``) are required; ``hops`` (``[{"name"?, "contexts"}, ...]``: retrieval in
steps, merged in step order, each judged on its own too) may stand for ``contexts``.
``ground_truth_contexts`` makes the retrieval metrics (a context matches a passage by
normalised containment, as in a context set); a line without it has them missing.
``expected_answer`` and ``expected_keywords`` make the answer metrics that need them.
``latency_ms`` (or ``latency_s``), ``tokens``, ``cost_usd`` and ``feedback`` (a thumb or
a score) are the production measures of the line; ``confidence`` (a number) the
system's confidence (the risk-coverage curve); ``answerable``/``is_impossible`` mark a
question the corpus cannot answer. ``answer_sentences`` (``[{"text", "citations":
[indices into contexts, from 0]}]``, as TREC RAG's answer files are read) gives the
answer's sentences as units for the support judge. ``error`` (a string) says the system
failed on the question: its metrics are missing with that reason. Other fields are kept
in ``Sample.extra``.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragmark.data._fields import get_optional_string, get_optional_strings, get_string
from ragmark.data.files import Where, base_suffix, describe, missing_error
from ragmark.data.foreign import is_arrow, read_rows
from ragmark.data.formats import shape_of
from ragmark.data.formats.trec_answers import answer_objects
from ragmark.data.leniency import Leniency
from ragmark.data.logged import (
    Logged,
    Output,
    ShapeError,
    contexts_or_hops,
    parse_confidence,
    thumb,
)
from ragmark.data.sets import _samples, answerable_of, set_name
from ragmark.data.trajectories import (
    EXPECTED_FIELDS,
    TRAJECTORY_FIELDS,
    checked_calls,
    final_answer,
    searched,
    trajectory_of,
)
from ragmark.errors import DataError
from ragmark.types import Corpus, Dataset, Document, GroundTruth, Sentences

OUTPUT_FIELDS = frozenset({"id", "question", "answer", "contexts", "ground_truth_contexts",
                           "expected_answer", "expected_keywords", "latency_ms", "latency_s",
                           "tokens", "cost_usd", "feedback", "hops", "confidence",
                           "nuggets", "answer_sentences", "error"}) | EXPECTED_FIELDS | (
                               TRAJECTORY_FIELDS)
MEASURED = {"latency_ms": 0.001, "latency_s": 1.0, "tokens": 1.0, "cost_usd": 1.0}
"""A line's optional measured fields (non-negative numbers) and their scale to the
production measures' units (``latency_ms`` is read as seconds)."""


@dataclass(frozen=True, slots=True)
class OutputsSet:
    """The questions with their ground truth (``dataset``; its corpus is the distinct
    contexts given) and each question's logged output, by sample id."""

    dataset: Dataset
    outputs: dict[str, Output]
    given_ids: frozenset[str] = frozenset()
    """The ids the file gave (the others are positional: q1, q2, ...)."""


NULL_ANSWERS = "null answers, scored as empty answers (their answer metrics are missing)"


def _output(obj: dict[str, Any], where: Where, lenient: Leniency) -> Output:
    if obj.get("error") is not None:  # the system failed: nothing else of it is read
        return Output.failed(get_string(obj, "error", where))
    trajectory = checked_calls(trajectory_of(obj, where), where, lenient)
    if "answer" not in obj and trajectory is not None:  # the agent's last word, if any
        obj = {**obj, "answer": final_answer(trajectory) or ""}
    if "answer" not in obj:
        raise where.error("missing; expected a string (the system's answer)", field="answer")
    if obj["answer"] is None:
        lenient.warn(NULL_ANSWERS, where.short(), where.error(
            "expected a string, got null", "answer"))
        answer = ""
    else:
        answer = get_string(obj, "answer", where, allow_empty=True)
    if trajectory is not None and "contexts" not in obj and obj.get("hops") is None:
        obj = {**obj, "contexts": []}  # an agent's: its search calls may be its retrieval
    if "contexts" not in obj and obj.get("hops") is None:
        raise where.error("missing; expected a list of the contexts the system retrieved, "
                          "best first (strings or objects with 'text'), or 'hops' (its "
                          "retrieval steps: [{\"name\", \"contexts\"}, ...])",
                          field="contexts")
    try:
        contexts, hops = contexts_or_hops(obj)
    except ShapeError as e:
        raise where.error(e.message, field=e.field) from None
    facts: dict[str, float] = {}
    if obj.get("latency_ms") is not None and obj.get("latency_s") is not None:
        raise where.error("both latency_ms and latency_s are given: give one (they are the "
                          "same measure in two units)", "latency_s")
    for key, scale in MEASURED.items():
        v = obj.get(key)
        if v is None:
            continue
        if isinstance(v, bool) or not isinstance(v, int | float) or v < 0:
            raise where.error(f"expected a non-negative number, got {describe(v)}", key)
        facts["latency_s" if key.startswith("latency") else key] = float(v) * scale
    if obj.get("feedback") is not None:
        fb = thumb(obj["feedback"])
        if fb is None:
            lenient.warn(ODD_FEEDBACK, where.short(), where.error(
                f"expected a thumb (true, up, down, ...) or a number, got "
                f"{describe(obj['feedback'])}", "feedback"))
        else:
            facts["feedback"] = fb
    try:
        facts |= parse_confidence(obj)
    except ShapeError as e:
        raise where.error(e.message, field=e.field) from None
    latency = facts.pop("latency_s", None)
    return Output(answer, contexts, latency, hops=hops, facts=facts,
                  sentences=_given_sentences(obj, where, len(contexts)),
                  trajectory=trajectory)


def _given_sentences(obj: dict[str, Any], where: Where, n: int) -> Sentences | None:
    """``answer_sentences`` (``[{"text", "citations": [indices into contexts, from
    0]}]``, as TREC RAG's answer objects are read) as the answer's sentences with the
    contexts each cites numbered from 1; None when the line does not give them."""
    if obj.get("answer_sentences") is None:
        return None
    refs: list[Any] = list(range(n))
    got = answer_objects(obj["answer_sentences"], where, refs, "answer_sentences", "contexts")
    if len(refs) > n:
        raise where.error(f"expected citations as indices into contexts (0 to {n - 1}), "
                          f"got {describe(refs[n])}", "answer_sentences")
    return tuple((text, tuple(c + 1 for c in cites)) for text, cites in got)


ODD_FEEDBACK = "feedback that is neither a thumb nor a number: left out"


def load_outputs(path: str | Path, lenient: Leniency | None = None,
                 against: Dataset | None = None, search: Collection[str] = ()
                 ) -> OutputsSet:
    """Read and check an outputs set; any bad line is a DataError naming the file, the
    line (or item) and the field. ``"answer": null`` is an empty answer, with a warning
    (``dataset.warnings``). TREC RAG's answer files are read too
    (:mod:`ragmark.data.formats.trec_answers`), their segments and topics from ``against``, the
    dataset they are scored against. ``search``: the search tools whose calls are the
    retrieval of a line with a trajectory (``--search-tool``)."""
    path = Path(path)
    lenient = lenient or Leniency()
    if not path.exists():
        raise missing_error(path, "file")
    if base_suffix(path) not in (".json", ".jsonl", ".csv") and not is_arrow(path):
        raise DataError("an outputs set is a .jsonl file (one object a line) or a .json list "
                        "(or a RAGAS, DeepEval or LlamaIndex file: .json, .jsonl, .csv)",
                        file=str(path))
    items, _ = read_rows(path, lenient)  # RAGAS's and DeepEval's rows as ragmark's
    shape = shape_of(items)  # logged conversations (each turn an output), TREC answers
    if shape is not None:
        items = shape.rows(items, against, lenient)  # type: ignore[assignment]
    return outputs_of_items(items, path, lenient, search=search)


def outputs_of_items(items: list[tuple[Where, Any]], path: str | Path, lenient: Leniency,
                     first: int = 0, search: Collection[str] = ()) -> OutputsSet:
    """The outputs set of items already read (each with its place); an item without an
    id is ``q<first + position>`` (``first``: the items read before, as ``ragmark
    monitor`` reads a growing log a slice at a time)."""
    outputs: list[Output] = []
    given: list[bool] = []

    def make(obj: dict[str, Any], where: Where) -> tuple[str, GroundTruth, dict[str, Any]]:
        question = get_string(obj, "question", where)
        outputs.append(searched(_output(obj, where, lenient), search))
        given.append(obj.get("id") is not None)
        # an unanswerable question has no passage to find: none, or an empty list
        passages = (() if obj.get("ground_truth_contexts") == [] and not answerable_of(
            obj, where) else get_optional_strings(obj, "ground_truth_contexts", where))
        optional = {
            "expected_answer": get_optional_string(obj, "expected_answer", where),
            "expected_keywords": get_optional_strings(obj, "expected_keywords", where),
        }
        return question, GroundTruth(passages=passages or ()), optional

    samples = _samples(items, OUTPUT_FIELDS, make, lenient, first)
    path = Path(path)
    corpus = contexts_corpus(outputs, path)
    dataset = Dataset(set_name(path), str(path), "outputs", samples, corpus, "whole",
                      warnings=tuple(lenient.messages()))
    return OutputsSet(dataset, {s.id: o for s, o in zip(samples, outputs, strict=True)},
                      frozenset(s.id for s, g in zip(samples, given, strict=True) if g))


def contexts_corpus(outputs: Iterable[Output], path: str | Path) -> Corpus:
    """The "corpus" of a system's logged outputs: the distinct contexts they gave, in
    order of first appearance."""
    texts = dict.fromkeys(c.text for o in outputs for c in o.contexts)
    return Corpus(tuple(Document(id=f"c{i}", text=t) for i, t in enumerate(texts, start=1)),
                  source=f"contexts of {path}")


NO_OUTPUT = "the log has no output for this question"


def _question_key(text: str) -> str:
    return " ".join(text.casefold().split()).rstrip("?.! ")


def join_outputs(oset: OutputsSet, dataset: Dataset) -> tuple[Logged, list[str]]:
    """The logged outputs of ``oset`` as outputs of ``dataset``'s questions, whose ground
    truth then scores them (``--outputs LOG --dataset SET``), and the notes that say how
    they were joined. A line joins the question with its id when the file gave one that
    the dataset has, else the question of the same text (case and white space aside; a
    text two questions share joins neither). A question without a line has its metrics
    missing with :data:`NO_OUTPUT`; lines that join no question are left out, counted; a
    DataError when none joins."""
    ids = {s.id for s in dataset.samples}
    texts: dict[str, list[str]] = {}
    for s in dataset.samples:
        texts.setdefault(_question_key(s.question), []).append(s.id)
    joined: dict[str, Output] = {}
    lines: dict[str, str] = {}
    by_text = unmatched = twice = shared = 0
    for s in oset.dataset.samples:
        textual = not (s.id in oset.given_ids and s.id in ids)
        if not textual:
            target: str | None = s.id
        else:
            found = texts.get(_question_key(s.question), [])
            target = found[0] if len(found) == 1 else None
            shared += len(found) > 1
        if target is None:
            unmatched += 1
        elif target in joined:
            twice += 1
        else:
            joined[target] = oset.outputs[s.id]
            lines[target] = s.id
            by_text += textual  # counted as joined, not as matched
    if not joined:
        raise DataError(
            f"no line of the log joins a question of the dataset {dataset.name!r}: a line "
            "joins by its 'id' when the dataset has it, else by the text of its 'question' "
            f"(the dataset's first question: {dataset.samples[0].question[:80]!r}; the "
            f"log's: {oset.dataset.samples[0].question[:80]!r})", file=oset.dataset.path)
    lacking = [s.id for s in dataset.samples if s.id not in joined]
    out = {s.id: joined.get(s.id) or Output.failed(NO_OUTPUT) for s in dataset.samples}
    n = len(oset.dataset.samples)
    how = ("by their question text" if by_text == len(joined) else
           f"{by_text} by their question text, the rest by id" if by_text else "by id")
    notes = [f"{len(joined)} of {n} logged outputs joined the dataset's questions ({how}); "
             "the dataset's ground truth scores them"]
    if lacking:
        notes.append(f"{len(lacking)} of {len(dataset.samples)} questions of the dataset have "
                     f"no logged output (the first: {lacking[0]!r}): their metrics are "
                     f"missing ({NO_OUTPUT})")
    if unmatched or twice:
        parts = ([f"{unmatched} join no question of the dataset"] if unmatched else []) + (
            [f"{twice} join a question an earlier line joined (the first is scored)"]
            if twice else [])
        left = unmatched + twice
        notes.append(f"{left} logged output{' is' if left == 1 else 's are'} left out: "
                     + "; ".join(parts)
                     + (f" ({shared} of them by a question text the dataset has more than "
                        "once: give the lines ids)" if shared else ""))
    logged = Logged(out, source="outputs")
    logged.lines = lines
    return logged, notes
