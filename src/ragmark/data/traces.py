"""Traces in: OTLP JSON files (as OpenTelemetry's exporters and the Collector's file
exporter write them: one export request a line, or one document; ``.gz`` too; a file or a
folder of them) read as a system's logged outputs, one question a trace.

The spans are read with the OpenInference conventions, and with OpenTelemetry's GenAI
conventions where those are what a span carries:

- the root: the span without a parent, else one whose parent is remote (a service's
  entry span behind an instrumented gateway), else the earliest orphan (with a warning);
- the question: the root span's ``input.value`` (GenAI: the last user message of its
  ``gen_ai.input.messages``, else the first retrieval span's
  ``gen_ai.retrieval.query.text``); the answer: the root's ``output.value`` (GenAI: its
  ``gen_ai.output.messages``), else the last LLM span's; a trace whose root is a
  retriever and that has no LLM span has no answer (its answer metrics are missing);
- each RETRIEVER span's ``retrieval.documents.N.document.id|content|score`` (a
  RERANKER's ``reranker.output_documents.N...``; GenAI: a ``retrieval`` operation's
  ``gen_ai.retrieval.documents``) is a hop; the hops in span order are the ranking, and
  each is judged on its own too. A retriever span inside another one (an ensemble, a
  multi-query or compression retriever calling its children; LlamaIndex's ``_retrieve``
  inside ``retrieve``) is part of that retrieval, not a hop: the outermost span's
  documents are what was retrieved. A document without ``document.id`` is named by its
  ``document.metadata`` (LangChain's and LlamaIndex's keys, :data:`ID_KEYS`), the
  document it came from by :data:`DOC_KEYS` (LlamaIndex's ``file_name``), its score by
  :data:`SCORE_KEYS`;
- an empty retrieval: the outermost retriever span's, when it records no documents and
  says it returned none (``retrieval.documents`` an empty list, an output of no
  documents): no context, however many its inner retrievers found;
- an LLM span inside a retriever (a multi-query retriever writing its queries) is part
  of the retrieval: never the answer, its time retrieval's, not generation's;
- latency: the root span's duration; retrieval and generation: the time covered by the
  retriever/reranker spans and by the LLM spans outside them (overlaps counted once);
- tokens (``llm.token_count.*``; GenAI ``gen_ai.usage.*``) and cost (``llm.cost.*``)
  summed over the LLM spans (an LLM span inside one that records them is not counted
  again);
- the user's feedback: the first span attribute named as :data:`FEEDBACK` lists (or
  ``--trace-attribute feedback=NAME``), else an event of that name with a ``score`` or
  ``value``; a thumb reads as 1 or 0, a score as given;
- the question's id: the trace id, or the root's ``ragmark.sample_id`` (or
  ``--trace-attribute id=NAME``), which then joins a ``--dataset`` by id.

A span received twice (an exporter's retry, a spool file copied) is counted once, and
how many were dropped is said. A trace that is not a question (an index build's
chunking and embedding spans: neither a retriever nor an LLM span, or an embedding
root) is left out, counted; of several traces of one question without an id attribute,
a retrieval-only one is left out when another has the answer.

Odd data loads with counted warnings (a line that is not JSON, a span without ids, a
trace without a root or without a question, feedback that is neither a thumb nor a
number); ``--strict`` makes them errors.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ragmark.case import NO_ANSWER, RECORDED
from ragmark.data.leniency import Leniency
from ragmark.data.logged import Context, Output, thumb
from ragmark.data.otlp import Span, warn
from ragmark.data.outputs import ODD_FEEDBACK, OutputsSet, contexts_corpus
from ragmark.data.trace_spans import (  # noqa: F401 (the traces' names for them)
    DOCUMENTS,
    DUPLICATE_SPANS,
    Trace,
    TraceKeys,
    covered,
    gather,
    message_text,
    read_traces,
    says_empty,
)
from ragmark.data.trace_steps import (
    asked_of,
    generated_text,
    said,
    span_cost,
    span_tokens,
    tool_name,
    trajectory_of_trace,
)
from ragmark.data.trajectories import searched
from ragmark.errors import DataError
from ragmark.types import Dataset, GroundTruth, Sample


def _text_of(span: Span, value: str, messages: str, role: str) -> str | None:
    v = span.attributes.get(value)
    if isinstance(v, str):  # an agent's conversation: its last message of the role (none:
        return said(v, "user" if role == "user" else "ai", v)  # the next place says)
    return message_text(span.attributes.get(messages), role)


def _is_step(span: Span) -> bool:
    """Whether a span is one step of an agent (smolagents' ``Step N``, its input the
    step's memory): the root of a partial trace, which says neither question nor answer."""
    v = span.attributes.get("input.value")
    return isinstance(v, str) and v.lstrip().startswith('{"memory_step"')


def _question(trace: Trace, root: Span, hops: Sequence[tuple[Span, list[Context]]]
              ) -> str | None:
    """The root's input; else a retrieval's query; else the first LLM span's user
    message (a partial trace whose root is an agent's step: smolagents' ``Step N``, whose
    input is its memory, not the question)."""
    q = None if _is_step(root) else _text_of(root, "input.value", "gen_ai.input.messages",
                                                 "user")
    if q is None:
        asked = [s.attributes.get("gen_ai.retrieval.query.text") for s, _ in hops]
        q = next((a for a in asked if isinstance(a, str)), None)
    if q is None:
        llms = sorted((s for s in trace.spans if s.kind == "LLM"), key=lambda s: s.start)
        q = next((t for s in llms if (t := asked_of(s)) is not None), None)
    return q


NOT_ANSWERS = ("RETRIEVER", "RERANKER", "EMBEDDING")
"""Root span kinds whose output is not an answer (documents, vectors)."""


def _answer(trace: Trace, root: Span) -> str | None:
    """The root's output, else the last LLM span's that is not part of a retrieval;
    None when neither gives one (a retriever's output is its documents, not an answer;
    an LLM call inside a retriever, as a multi-query retriever's that writes its
    queries, is part of the retrieval)."""
    if _is_step(root):  # an agent's step: its output is what it observed; the
        from ragmark.data.trajectories import final_answer  # agent's last turn answers

        steps = trajectory_of_trace(trace)
        return None if steps is None else final_answer(steps)
    if root.kind not in NOT_ANSWERS:
        out = _text_of(root, "output.value", "gen_ai.output.messages", "assistant")
        if out is not None:
            return out
        if root.error is not None:  # the run failed: an LLM span's output is no answer
            return None
    for s in sorted(trace.spans, key=lambda s: s.end, reverse=True):
        if s.kind == "LLM" and not trace.in_retrieval(s):
            text = _text_of(s, "output.value", "gen_ai.output.messages", "assistant")
            text = text if text is not None else s.attributes.get("gen_ai.completion")
            if isinstance(text, str):
                return generated_text(text)
    return None


def _why_no_answer(trace: Trace, root: Span) -> str:
    """Why a trace gives no answer, in the words the answer metrics show."""
    if root.error is not None:
        return f"{RECORDED}: the run failed ({root.error})"
    if root.kind in NOT_ANSWERS and not any(s.kind == "LLM" for s in trace.spans):
        return NO_ANSWER
    return (f"{RECORDED}: neither the root span ({root.name}) nor an LLM span outside "
            "the retrieval has an output")


def _usage(trace: Trace) -> dict[str, float]:
    """Tokens and cost summed over the LLM spans that record them, each once: an LLM
    span inside one that records them (LlamaIndex's ``complete`` inside ``predict``) is
    part of that call."""
    llm = {s.span_id: s for s in trace.spans if s.kind == "LLM"}
    counts = {sid for sid, s in llm.items() if any(k.startswith(("llm.token_count.",
              "gen_ai.usage.", "llm.cost.")) for k in s.attributes)}
    tokens, cost = [], []
    for s in llm.values():
        if any(a in counts for a in trace.above(s)):
            continue
        if (total := span_tokens(s.attributes)) is not None:
            tokens.append(total)
        if (c := span_cost(s.attributes)) is not None:
            cost.append(c)
    return ({"tokens": sum(tokens)} if tokens else {}) | ({"cost_usd": sum(cost)} if cost
                                                          else {})


def _feedback(trace: Trace, root: Span, keys: TraceKeys) -> tuple[bool, float | None]:
    """(found, value) of the user's feedback: an attribute of that name on a span (the
    root first), else an event of that name (its ``score``, ``value`` or the name
    itself), else a GenAI evaluation event of that name."""
    spans = [root, *sorted((s for s in trace.spans if s is not root), key=lambda s: s.start)]
    for s in spans:
        for k in keys.feedback:
            if k in s.attributes:
                return True, thumb(s.attributes[k])
    for s in spans:
        for name, attrs in s.events:
            if name in keys.feedback:
                got = next((attrs[k] for k in ("score", "value", *keys.feedback)
                            if k in attrs), None)
                return True, thumb(got)
            if name == "gen_ai.evaluation.result" and attrs.get(
                    "gen_ai.evaluation.name") in keys.feedback:
                got = attrs.get("gen_ai.evaluation.score.value",
                                attrs.get("gen_ai.evaluation.score.label"))
                return True, thumb(got)
    return False, None


def feedback_of(trace: Trace, keys: TraceKeys) -> float | None:
    """The user's feedback in a trace's spans (a thumb as 1 or 0, a score as given), or
    None: what ``monitor`` reads of spans that came after their trace was evaluated."""
    root = trace.root()
    return None if root is None else _feedback(trace, root, keys)[1]


def _facts(trace: Trace, root: Span, keys: TraceKeys, lenient: Leniency) -> dict[str, float]:
    facts = _usage(trace)
    retrieval = covered([s for s in trace.spans if s.kind in DOCUMENTS])
    if retrieval is None:  # an agent's search tool (--search-tool) is its retrieval
        retrieval = covered([s for s in trace.spans
                             if s.kind == "TOOL" and tool_name(s) in keys.search_tools])
    generation = covered([s for s in trace.spans
                          if s.kind == "LLM" and not trace.in_retrieval(s)])
    if retrieval is not None:
        facts["retrieval_latency_s"] = retrieval
    if generation is not None:
        facts["generation_latency_s"] = generation
    found, fb = _feedback(trace, root, keys)
    if found and fb is None:
        warn(lenient, ODD_FEEDBACK,
              f"trace {trace.trace_id}", "feedback that is neither a thumb nor a number")
    elif fb is not None:
        facts["feedback"] = fb
    return facts


def _sample_id(trace: Trace, root: Span, keys: TraceKeys) -> str | None:
    for k in keys.id:
        v = root.attributes.get(k)
        if isinstance(v, str | int) and not isinstance(v, bool) and str(v).strip():
            return str(v)
    return None


NO_QUESTION = "no question on the root span (input.value or gen_ai.input.messages)"


NOT_QUESTIONS = ("traces that are not questions (no retriever, LLM or tool span and no "
                 "agent root, or an embedding root: an index build, an embedding batch): "
                 "left out")
FILTERED = "traces whose root is not the one --root-name/--root-kind chose: left out"
RETRIEVAL_ONLY = ("retrieval-only traces of a question another trace answers (a bare "
                  "retriever call): left out")


def _is_question(trace: Trace, root: Span, hops: Sequence[Any], keys: TraceKeys) -> str | None:
    """None when the trace is a question; else the kind of note that leaves it out. With
    --root-name/--root-kind the root must be one they name; without, a trace of an
    instrumented process (its spans have kinds) with no retriever, LLM or tool span and
    whose root is not an agent's run, or whose root is an embedding span, is not a
    question. A trace without any kind is
    taken as it is (nothing tells)."""
    if keys.root_name or keys.root_kind:
        named = not keys.root_name or root.name in keys.root_name
        kinded = not keys.root_kind or root.kind in keys.root_kind
        return None if named and kinded else FILTERED
    if root.kind == "EMBEDDING":
        return NOT_QUESTIONS
    if not hops and any(s.kind for s in trace.spans) and not any(
            s.kind in ("LLM", "TOOL") for s in trace.spans) and root.kind != "AGENT":
        return NOT_QUESTIONS  # an agent's run (a GenAI invoke_agent root) is a question
    return None


@dataclass
class _Read:
    trace: Trace
    root: Span
    question: str
    hops: list[tuple[Span, list[Context]]]
    answer: str | None
    sid: str | None


def _answered_only(found: list[_Read], lenient: Leniency) -> list[_Read]:
    """Of the traces of one question (its id attribute, else its text), the
    retrieval-only ones are left out, counted, when another one has the answer."""
    answered = {(r.sid or r.question) for r in found if r.answer is not None}
    kept = []
    for r in found:
        if r.answer is None and (r.sid or r.question) in answered:
            lenient.note(RETRIEVAL_ONLY, f"trace {r.trace.trace_id}")
        else:
            kept.append(r)
    return kept


def outputs_of(traces: Sequence[Trace], lenient: Leniency, keys: TraceKeys
               ) -> tuple[list[Sample], dict[str, Output], set[str]]:
    """Each trace with a question as a sample and its logged output (by id), and the ids
    an id attribute gave; a trace without a root span or a question, or that is not a
    question, is left out, counted."""
    found: list[_Read] = []
    for trace in traces:
        root = trace.root()
        if root is not None and root.parent_id and not root.remote_parent:
            warn(lenient, "traces whose root span is missing (orphan spans): the earliest "
                  "orphan taken as the root", f"trace {trace.trace_id}",
                  "the root span is missing")
        hops = trace.hops(keys)
        question = None if root is None else _question(trace, root, hops)
        if root is None or not isinstance(question, str) or not question.strip():
            warn(lenient, f"traces without a question ({NO_QUESTION}): left out",
                  f"trace {trace.trace_id}", NO_QUESTION)
            continue
        why = _is_question(trace, root, hops, keys)
        if why is not None:
            lenient.note(why, f"trace {trace.trace_id}")
            continue
        found.append(_Read(trace, root, question, hops, _answer(trace, root),
                           _sample_id(trace, root, keys)))
    samples: list[Sample] = []
    outputs: dict[str, Output] = {}
    given: set[str] = set()
    starts: dict[str, int] = {}
    for r in _answered_only(found, lenient):
        trace, root, hops, sid = r.trace, r.root, r.hops, r.sid
        if any(not docs and not says_empty(s) for s, docs in hops):
            warn(lenient, "retriever spans without documents", f"trace {trace.trace_id}",
                  "a retriever span without documents")
        if sid is not None and sid in outputs:
            warn(lenient, "traces whose id attribute repeats an earlier trace's: the "
                  "trace id taken instead", f"trace {trace.trace_id}",
                  f"the id {sid!r} repeats an earlier trace's")
            sid = None
        qid = sid if sid is not None else trace.trace_id
        if sid is not None:
            given.add(sid)
        contexts = tuple(c for _, docs in hops for c in docs)
        latency = (root.end - root.start) / 1e9 if root.end > root.start else None
        extra = {k: root.attributes[k] for k in ("session.id", "user.id")
                 if isinstance(root.attributes.get(k), str)}
        samples.append(Sample(qid, r.question, GroundTruth(), extra=extra))
        starts[qid] = root.start
        outputs[qid] = Output(r.answer, contexts, latency,
                              hops=tuple((s.name, len(docs)) for s, docs in hops),
                              facts=_facts(trace, root, keys, lenient),
                              trajectory=trajectory_of_trace(trace),
                              no_answer=None if r.answer is not None else
                              _why_no_answer(trace, root))
        if not hops:  # a search tool's calls are the retrieval of a trace without one
            outputs[qid] = searched(outputs[qid], keys.search_tools)
    for qid, o in outputs.items():  # counted (said once): they cannot be judged by id
        bare = sum(1 for c in o.contexts if c.id is None)
        if bare:
            lenient.note(NO_DOC_ID, f"question {qid} ({bare} of {len(o.contexts)})")
    return _sessions(samples, outputs, starts), outputs, given


NO_DOC_ID = ("questions with retrieved documents without an id (no document.id, and no "
             "id, doc_id, ref_doc_id, source or file_name in their document.metadata): "
             "named by rank (ctx1, ctx2, ...), without a score where none was given; "
             "--trace-attribute document_id=KEY names the metadata key that holds one")


def _sessions(samples: list[Sample], outputs: Mapping[str, Output],
              starts: Mapping[str, int]) -> list[Sample]:
    """The traces of one ``session.id`` as the turns of a conversation, in the order
    their roots started: each gets ``conversation_id``, ``turn`` and ``history`` (the
    earlier turns' questions and answers), as a conversation set's turns do."""
    sessions: dict[str, list[Sample]] = {}
    for s in samples:
        if "session.id" in s.extra:
            sessions.setdefault(str(s.extra["session.id"]), []).append(s)
    turns: dict[str, dict[str, Any]] = {}
    for sid, group in sessions.items():
        history: list[dict[str, Any]] = []
        for n, s in enumerate(sorted(group, key=lambda x: starts[x.id]), start=1):
            turns[s.id] = {"conversation_id": sid, "turn": n, "history": list(history)}
            history.append({"question": s.question, "answer": outputs[s.id].answer})
    return [replace(s, extra={**s.extra, **turns[s.id]}) if s.id in turns else s
            for s in samples]


def load_traces(path: str | Path, lenient: Leniency | None = None,
                keys: TraceKeys | None = None) -> OutputsSet:
    """The traces of ``path`` as a system's logged outputs: one question a trace (its id
    the root's id attribute, else the trace id), its answer, its contexts (every hop's
    documents in span order, with the hops), its latency and what its spans recorded
    (:data:`~ragmark.metrics.production.FACTS`). A trace without a root span or without a
    question is left out, counted."""
    lenient = lenient or Leniency()
    samples, outputs, given = outputs_of(read_traces(path, lenient), lenient,
                                         keys or TraceKeys())
    if not samples:
        reasons = "; ".join(lenient.messages()) or "the files hold no span"
        raise DataError(f"no trace with a question ({NO_QUESTION}); what was read: "
                        f"{reasons}", file=str(path))
    return traces_set(samples, outputs, given, path, lenient)


def traces_set(samples: Sequence[Sample], outputs: dict[str, Output], given: set[str],
               path: str | Path, lenient: Leniency) -> OutputsSet:
    """The traces' questions and outputs as an outputs set named after ``path``."""
    corpus = contexts_corpus(outputs.values(), path)
    name = Path(path).name.split(".")[0] or "traces"
    dataset = Dataset(name, str(path), "traces", tuple(samples), corpus, "whole",
                      warnings=tuple(lenient.messages()))
    return OutputsSet(dataset, outputs, frozenset(given))
