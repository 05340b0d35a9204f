"""Spans grouped into traces, and what a trace's spans say of its retrieval: the root,
the retrieval steps with their documents (a retriever inside another is part of it), and
which attributes and metadata keys name things (:class:`TraceKeys`). Each span is
counted once: one received twice (an exporter's retry, a copied spool file) is dropped,
counted. :mod:`ragmark.data.traces` reads the questions and answers from them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

from ragmark.data.leniency import Leniency
from ragmark.data.logged import Context, number
from ragmark.data.otlp import Span, file_requests, no_gc
from ragmark.errors import ConfigError, DataError

DOCUMENTS = {"RETRIEVER": "retrieval.documents", "RERANKER": "reranker.output_documents"}
SAMPLE_ID = ("ragmark.sample_id",)
"""The root-span attributes that name the question's id (default)."""
FEEDBACK = ("feedback", "user.feedback", "feedback.score")
"""The span attributes (and event names) that carry the user's feedback (default)."""
ID_KEYS = ("id", "doc_id", "ref_doc_id", "source", "file_name")
"""The keys of a retrieved document's ``document.metadata`` that name it when the span
gives no ``document.id`` (LangChain writes only ``document.content`` and
``document.metadata``), the first present."""
DOC_KEYS = ("doc_id", "ref_doc_id", "file_name")
"""The metadata keys that name the document a retrieved chunk came from (LlamaIndex:
``file_name``; a parent document's ``doc_id``), the first present (default; the
document's own id otherwise)."""
SCORE_KEYS = ("score", "relevance_score")
"""The metadata keys of a retrieved document's score when the span gives no
``document.score`` (default)."""
ROLES = {"id": "the attribute that names the question's id",
         "feedback": "the attribute that carries the user's feedback",
         "document_id": "the document metadata key that names a retrieved chunk's document",
         "document_score": "the document metadata key that holds its score"}


@dataclass(frozen=True)
class TraceKeys:
    """Which attributes name a question's id and carry the user's feedback, and which
    document metadata keys name a retrieved document and its score
    (``--trace-attribute id=NAME``, ``feedback=NAME``, ``document_id=KEY``,
    ``document_score=KEY``)."""

    id: tuple[str, ...] = SAMPLE_ID
    feedback: tuple[str, ...] = FEEDBACK
    document_id: tuple[str, ...] = DOC_KEYS
    document_score: tuple[str, ...] = SCORE_KEYS
    root_name: tuple[str, ...] = ()
    """``--root-name``: only traces whose root span has one of these names are questions."""
    root_kind: tuple[str, ...] = ()
    """``--root-kind``: only traces whose root span is of one of these OpenInference kinds
    (CHAIN, AGENT, LLM, ...) are questions."""
    root_wait: float | None = None
    """``monitor --root-wait``: seconds after a trace's last span ended that its earliest
    orphan is taken as the root, when no span without a parent (or with a remote one)
    came; None: wait for it."""
    search_tools: tuple[str, ...] = ()
    """``--search-tool``: the tools whose calls are a trace's retrieval when it has no
    retriever span."""

    @classmethod
    def parse(cls, given: Sequence[str]) -> TraceKeys:
        """``ROLE=NAME`` pairs (:data:`ROLES`); a role given replaces its default."""
        chosen: dict[str, list[str]] = {}
        for g in given:
            role, _, name = g.partition("=")
            if role.strip() not in ROLES or not name.strip():
                said = "; ".join(f"{r}=NAME: {what}" for r, what in ROLES.items())
                raise ConfigError(f"--trace-attribute {g!r}: expected ROLE=NAME ({said})")
            chosen.setdefault(role.strip(), []).append(name.strip())
        roles: dict[str, Any] = {r: tuple(names) for r, names in chosen.items()}
        return replace(cls(), **roles)

    def rooted(self, names: Sequence[str] = (), kinds: Sequence[str] = (),
               wait: float | None = None) -> TraceKeys:
        """These keys with the traces that are questions chosen by their root's name or
        kind (``--root-name``, ``--root-kind``), and the wait for a missing root."""
        return replace(self, root_name=tuple(names),
                       root_kind=tuple(k.strip().upper() for k in kinds), root_wait=wait)


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


def _ident(v: Any) -> str | None:
    """A metadata value that can name a document: a non-empty string or an integer."""
    if isinstance(v, str) and v.strip():
        return v
    if isinstance(v, int) and not isinstance(v, bool):
        return str(v)
    return None


def _document(d: Mapping[str, Any], keys: TraceKeys) -> Context:
    """One retrieved document from its ``document.*`` attributes: its id, the document
    it came from and its score, from the metadata where the span does not give them."""
    meta = d.get("metadata")
    meta = _json_value(meta) if isinstance(meta, str) else meta
    meta = meta if isinstance(meta, dict) else {}
    cid = _ident(d.get("id"))
    if cid is None:
        cid = next((v for k in (*keys.document_id, *ID_KEYS) if (v := _ident(meta.get(k)))),
                   None)
    doc = next((v for k in keys.document_id if (v := _ident(meta.get(k)))), None)
    score = number(d.get("score"))
    if score is None:
        score = next((x for k in keys.document_score if (x := number(meta.get(k))) is not None),
                     None)
    return Context(str(d.get("content") or d.get("text") or ""), cid,
                   doc if doc != cid else None, score)


def _documents(span: Span, keys: TraceKeys) -> list[Context]:
    """A retriever's (or reranker's) documents in rank order."""
    if "gen_ai.retrieval.documents" in span.attributes:
        given = _json_value(span.attributes.get("gen_ai.retrieval.documents"))
        return [_document(d, keys) for d in (given if isinstance(given, list) else [])
                if isinstance(d, dict)]
    prefix = DOCUMENTS.get(span.kind, "") + "."
    n = len(prefix)
    docs: dict[str, dict[str, Any]] = {}
    for k, v in span.attributes.items():  # string tests, not a regex: hundreds a span
        if k.startswith(prefix):
            at = k.find(".document.", n)
            if at > n:
                docs.setdefault(k[n:at], {})[k[at + 10:]] = v
    return [_document(docs[i], keys) for i in sorted((x for x in docs if x.isdigit()), key=int)]


def says_empty(span: Span) -> bool:
    """Whether a retriever (or reranker) span says it returned no document: its
    documents attribute recorded as an empty list (OpenInference's LangChain instrumentor
    writes ``retrieval.documents = []``), or an output of no documents
    (``{"documents": []}``, ``[]``). A span that records nothing of its documents does
    not say so."""
    for key in (DOCUMENTS.get(span.kind), "gen_ai.retrieval.documents"):
        if key and key in span.attributes:
            given = _json_value(span.attributes[key])
            if isinstance(given, list | tuple) and not given:
                return True
    out = span.attributes.get("output.value")
    if isinstance(out, str) and out.strip()[:1] in ("{", "["):
        got = _json_value(out)
        if isinstance(got, dict) and "documents" in got:
            got = got["documents"]
        return isinstance(got, list) and not got
    return False


@dataclass
class Trace:
    """One trace's spans, its root, and what they say of the question."""

    trace_id: str
    spans: list[Span]
    _parent: dict[str, str] = field(default_factory=dict, repr=False)
    _retrievers: set[str] = field(default_factory=set, repr=False)

    def root(self) -> Span | None:
        """The span without a parent; else the one whose parent is remote (this process's
        entry span: its caller's span is exported elsewhere, or never); else the earliest
        orphan (its parent never arrived)."""
        ids = {s.span_id for s in self.spans}
        roots = [s for s in self.spans if not s.parent_id or s.parent_id not in ids]
        return min(roots, key=lambda s: (bool(s.parent_id), not s.remote_parent, s.start)
                   ) if roots else None

    def above(self, span: Span) -> Iterator[str]:
        """The ids of the span's ancestors in the trace, nearest first."""
        if not self._parent:
            self._parent.update((s.span_id, s.parent_id) for s in self.spans)
        seen = {span.span_id}
        p = span.parent_id
        while p and p in self._parent and p not in seen:
            seen.add(p)
            yield p
            p = self._parent[p]

    def hops(self, keys: TraceKeys | None = None) -> list[tuple[Span, list[Context]]]:
        """The retrieval steps in start order, each with its documents: the retriever
        (or reranker) spans that are not inside another one that returned something.
        A span returned something when it recorded documents or said it returned none
        (:func:`says_empty`): the outermost retriever's result is what was retrieved,
        also when it is empty (a compressor that kept nothing of its inner retrievers'
        documents). A span that says nothing of its documents, inside one or around
        ones that returned something, is no step either."""
        keys = keys or TraceKeys()
        found = {s.span_id: (s, _documents(s, keys)) for s in self.spans
                 if s.kind in DOCUMENTS}
        if len(found) < 2:
            return sorted(found.values(), key=lambda h: h[0].start)
        returned = {sid for sid, (s, docs) in found.items() if docs or says_empty(s)}
        inside = {sid: [a for a in self.above(s) if a in found]
                  for sid, (s, _) in found.items()}
        around = {a for sid in returned for a in inside[sid]}
        steps = [(s, docs) for sid, (s, docs) in found.items()
                 if (sid in returned and not any(a in returned for a in inside[sid]))
                 or (sid not in returned and not inside[sid] and sid not in around)]
        return sorted(steps, key=lambda h: h[0].start)

    def in_retrieval(self, span: Span) -> bool:
        """Whether the span is inside a retriever or reranker span (a multi-query
        retriever's LLM call that writes its queries): part of the retrieval."""
        if not self._retrievers:
            self._retrievers.update(s.span_id for s in self.spans if s.kind in DOCUMENTS)
        return any(a in self._retrievers for a in self.above(span))


DUPLICATE_SPANS = ("spans received more than once (an exporter's retry, a spool file "
                   "copied): counted once")


W = TypeVar("W")


def gather(requests: Iterable[tuple[list[Span], W]], lenient: Leniency,
           on_span: Callable[[Span, W], None] | None = None) -> list[Trace]:
    """The traces of export requests (spans, where they were read), in order of first
    appearance; a span whose (trace id, span id) came before is dropped, counted."""
    by_id: dict[str, list[Span]] = {}
    keys: set[tuple[str, str]] = set()
    for spans, where in requests:
        for span in spans:
            key = (span.trace_id, span.span_id)
            if key in keys:
                lenient.note(DUPLICATE_SPANS, str(where))
                continue
            keys.add(key)
            by_id.setdefault(span.trace_id, []).append(span)
            if on_span is not None:
                on_span(span, where)
    return [Trace(t, spans) for t, spans in by_id.items()]


def read_traces(path: str | Path, lenient: Leniency) -> list[Trace]:
    """Every trace of the file or folder, in order of first appearance (each span once)."""
    with no_gc():
        return gather((r for f in _files(Path(path)) for r in file_requests(f, lenient)),
                      lenient)


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
