"""Traces in: OTLP JSON files (as OpenTelemetry's exporters and the Collector's file
exporter write them: one export request a line, or one document; ``.gz`` too; a file or a
folder of them) read as a system's logged outputs, one question a trace.

The spans are read with the OpenInference conventions, and with OpenTelemetry's GenAI
conventions where those are what a span carries:

- the question: the root span's ``input.value`` (GenAI: the last user message of its
  ``gen_ai.input.messages``, else the first retrieval span's
  ``gen_ai.retrieval.query.text``); the answer: the root's ``output.value`` (GenAI: its
  ``gen_ai.output.messages``), else the last LLM span's;
- each RETRIEVER span's ``retrieval.documents.N.document.id|content|score`` (a
  RERANKER's ``reranker.output_documents.N...``; GenAI: a ``retrieval`` operation's
  ``gen_ai.retrieval.documents``) is a hop; the hops in span order are the ranking, and
  each is judged on its own too;
- latency: the root span's duration; retrieval and generation: the time covered by the
  retriever/reranker spans and by the LLM spans (overlaps counted once);
- tokens (``llm.token_count.*``; GenAI ``gen_ai.usage.*``) and cost (``llm.cost.*``)
  summed over the LLM spans;
- the user's feedback: the first span attribute named as :data:`FEEDBACK` lists (or
  ``--trace-attribute feedback=NAME``), else an event of that name with a ``score`` or
  ``value``; a thumb reads as 1 or 0, a score as given;
- the question's id: the trace id, or the root's ``ragmark.sample_id`` (or
  ``--trace-attribute id=NAME``), which then joins a ``--dataset`` by id.

Odd data loads with counted warnings (a line that is not JSON, a span without ids, a
trace without a root or without a question, feedback that is neither a thumb nor a
number); ``--strict`` makes them errors.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ragmark.data.leniency import Leniency
from ragmark.data.logged import Context, Output, number, thumb
from ragmark.data.otlp import Span, file_requests, no_gc, warn
from ragmark.data.outputs import ODD_FEEDBACK, OutputsSet, contexts_corpus
from ragmark.errors import ConfigError, DataError
from ragmark.types import Dataset, GroundTruth, Sample

DOCUMENTS = {"RETRIEVER": "retrieval.documents", "RERANKER": "reranker.output_documents"}
SAMPLE_ID = ("ragmark.sample_id",)
"""The root-span attributes that name the question's id (default)."""
FEEDBACK = ("feedback", "user.feedback", "feedback.score")
"""The span attributes (and event names) that carry the user's feedback (default)."""



@dataclass(frozen=True)
class TraceKeys:
    """Which attributes name a question's id and carry the user's feedback
    (``--trace-attribute id=NAME``, ``--trace-attribute feedback=NAME``)."""

    id: tuple[str, ...] = SAMPLE_ID
    feedback: tuple[str, ...] = FEEDBACK

    @classmethod
    def parse(cls, given: Sequence[str]) -> TraceKeys:
        """``ROLE=NAME`` pairs (role: id or feedback); a role given replaces its default."""
        chosen: dict[str, list[str]] = {}
        for g in given:
            role, _, name = g.partition("=")
            if role.strip() not in ("id", "feedback") or not name.strip():
                raise ConfigError(f"--trace-attribute {g!r}: expected id=NAME or "
                                  "feedback=NAME (the attribute that names the question's "
                                  "id, or that carries the user's feedback)")
            chosen.setdefault(role.strip(), []).append(name.strip())
        return cls(tuple(chosen.get("id", SAMPLE_ID)),
                   tuple(chosen.get("feedback", FEEDBACK)))


def _files(path: Path) -> list[Path]:
    if path.is_dir():
        found = sorted(p for p in path.rglob("*") if p.is_file() and (
            p.name.endswith((".json", ".jsonl", ".json.gz", ".jsonl.gz"))))
        if not found:
            raise DataError("no OTLP JSON file (.json, .jsonl, .gz) in the folder",
                            file=str(path))
        return found
    if not path.exists():
        raise DataError("no such file or folder", file=str(path))
    return [path]


def _json_value(v: Any) -> Any:
    """A structured GenAI attribute: as recorded (a list or object), or a JSON string."""
    if isinstance(v, str):
        try:
            return json.loads(v)
        except json.JSONDecodeError:
            return None
    return v


def _genai_documents(span: Span) -> list[Context]:
    docs = _json_value(span.attributes.get("gen_ai.retrieval.documents"))
    out = []
    for d in docs if isinstance(docs, list) else []:
        if isinstance(d, dict):
            text = d.get("content") or d.get("text") or ""
            out.append(Context(str(text), None if d.get("id") is None else str(d["id"]),
                               None, number(d.get("score"))))
    return out


def message_text(value: Any, role: str) -> str | None:
    """The text of the last message of ``role`` in GenAI messages (``parts`` of type
    text, or an older ``content`` string)."""
    messages = _json_value(value)
    if not isinstance(messages, list):
        return None
    for m in reversed(messages):
        if not isinstance(m, dict) or m.get("role", role) != role:
            continue
        if isinstance(m.get("content"), str):
            return str(m["content"])
        texts = [str(p.get("content")) for p in m.get("parts") or []
                 if isinstance(p, dict) and p.get("type", "text") == "text"
                 and isinstance(p.get("content"), str)]
        if texts:
            return "".join(texts)
    return None


def _documents(span: Span) -> list[Context]:
    """A retriever's (or reranker's) documents in rank order."""
    if "gen_ai.retrieval.documents" in span.attributes:
        return _genai_documents(span)
    prefix = DOCUMENTS.get(span.kind, "") + "."
    n = len(prefix)
    docs: dict[str, dict[str, Any]] = {}
    for k, v in span.attributes.items():  # string tests, not a regex: hundreds a span
        if k.startswith(prefix):
            at = k.find(".document.", n)
            if at > n:
                docs.setdefault(k[n:at], {})[k[at + 10:]] = v
    out = []
    for index in sorted((x for x in docs if x.isdigit()), key=int):
        d = docs[index]
        score = d.get("score")
        out.append(Context(str(d.get("content") or ""), None if d.get("id") is None
                           else str(d["id"]), None,
                           float(score) if isinstance(score, int | float) else None))
    return out


@dataclass
class Trace:
    """One trace's spans, its root, and what they say of the question."""

    trace_id: str
    spans: list[Span]

    def root(self) -> Span | None:
        ids = {s.span_id for s in self.spans}
        roots = [s for s in self.spans if not s.parent_id or s.parent_id not in ids]
        return min(roots, key=lambda s: s.start) if roots else None

    def hops(self) -> list[tuple[Span, list[Context]]]:
        """The retriever (or reranker) spans in start order, each with its documents."""
        return [(s, _documents(s)) for s in sorted(self.spans, key=lambda s: s.start)
                if s.kind in DOCUMENTS]


def read_traces(path: str | Path, lenient: Leniency) -> list[Trace]:
    """Every trace of the file or folder, in order of first appearance."""
    by_id: dict[str, list[Span]] = {}
    with no_gc():
        for f in _files(Path(path)):
            for spans, _ in file_requests(f, lenient):
                for span in spans:
                    by_id.setdefault(span.trace_id, []).append(span)
    return [Trace(t, spans) for t, spans in by_id.items()]


def _text_of(span: Span, value: str, messages: str, role: str) -> str | None:
    v = span.attributes.get(value)
    if isinstance(v, str):
        return v
    return message_text(span.attributes.get(messages), role)


def _question(trace: Trace, root: Span) -> str | None:
    q = _text_of(root, "input.value", "gen_ai.input.messages", "user")
    if q is None:
        asked = [s.attributes.get("gen_ai.retrieval.query.text") for s, _ in trace.hops()]
        q = next((a for a in asked if isinstance(a, str)), None)
    return q


def _answer(trace: Trace, root: Span) -> str | None:
    out = _text_of(root, "output.value", "gen_ai.output.messages", "assistant")
    if out is not None:
        return out
    for s in sorted(trace.spans, key=lambda s: s.end, reverse=True):
        if s.kind == "LLM":
            text = _text_of(s, "output.value", "gen_ai.output.messages", "assistant")
            text = text if text is not None else s.attributes.get("gen_ai.completion")
            if isinstance(text, str):
                return text
    return None


def covered(spans: Sequence[Span]) -> float | None:
    """Seconds covered by the spans' intervals (overlaps once); None without spans."""
    if not spans:
        return None
    total, end = 0, None
    for a, b in sorted((s.start, s.end) for s in spans if s.end >= s.start):
        if end is None or a > end:
            total += b - a
            end = b
        elif b > end:
            total += b - end
            end = b
    return total / 1e9


def _first(attrs: Mapping[str, Any], *keys: str) -> float | None:
    return next((v for v in (number(attrs.get(k)) for k in keys) if v is not None), None)


def _usage(llm: Sequence[Span]) -> dict[str, float]:
    """Tokens and cost summed over the LLM spans that record them."""
    tokens, cost = [], []
    for s in llm:
        a = s.attributes
        total = _first(a, "llm.token_count.total")
        if total is None:
            parts = [_first(a, "llm.token_count.prompt", "gen_ai.usage.input_tokens",
                            "gen_ai.usage.prompt_tokens"),
                     _first(a, "llm.token_count.completion", "gen_ai.usage.output_tokens",
                            "gen_ai.usage.completion_tokens")]
            total = sum(p for p in parts if p is not None) if any(
                p is not None for p in parts) else None
        if total is not None:
            tokens.append(total)
        c = _first(a, "llm.cost.total")
        if c is None:
            parts = [_first(a, "llm.cost.prompt"), _first(a, "llm.cost.completion")]
            c = sum(p for p in parts if p is not None) if any(
                p is not None for p in parts) else None
        if c is not None:
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


def _facts(trace: Trace, root: Span, keys: TraceKeys, lenient: Leniency) -> dict[str, float]:
    facts = _usage([s for s in trace.spans if s.kind == "LLM"])
    retrieval = covered([s for s in trace.spans if s.kind in DOCUMENTS])
    generation = covered([s for s in trace.spans if s.kind == "LLM"])
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


def outputs_of(traces: Sequence[Trace], lenient: Leniency, keys: TraceKeys
               ) -> tuple[list[Sample], dict[str, Output], set[str]]:
    """Each trace with a question as a sample and its logged output (by id), and the ids
    an id attribute gave; a trace without a root span or a question is left out,
    counted."""
    samples: list[Sample] = []
    outputs: dict[str, Output] = {}
    given: set[str] = set()
    starts: dict[str, int] = {}
    for trace in traces:
        root = trace.root()
        if root is not None and root.parent_id:  # its parent is not in the trace
            warn(lenient, "traces whose root span is missing (orphan spans): the earliest "
                  "orphan taken as the root", f"trace {trace.trace_id}",
                  "the root span is missing")
        question = None if root is None else _question(trace, root)
        if root is None or not isinstance(question, str) or not question.strip():
            warn(lenient, f"traces without a question ({NO_QUESTION}): left out",
                  f"trace {trace.trace_id}", NO_QUESTION)
            continue
        hops = trace.hops()
        if any(not docs for _, docs in hops):
            warn(lenient, "retriever spans without documents", f"trace {trace.trace_id}",
                  "a retriever span without documents")
        sid = _sample_id(trace, root, keys)
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
        samples.append(Sample(qid, question, GroundTruth(), extra=extra))
        starts[qid] = root.start
        outputs[qid] = Output(_answer(trace, root), contexts, latency,
                              hops=tuple((s.name, len(docs)) for s, docs in hops),
                              facts=_facts(trace, root, keys, lenient))
    return _sessions(samples, outputs, starts), outputs, given


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
