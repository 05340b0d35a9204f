"""TREC RAG's answer files as logged outputs: one answer a line, as the track's
participants submit them (and castorini's Ragnarök writes them):

``{"run_id", "topic_id", "topic"?, "references": [segment ids], "answer": [{"text",
"citations": [indices into references]}], "response_length"?}`` (TREC 2024), or with
``{"metadata": {"team_id", "run_id", "narrative_id", "narrative", ...}}`` in place of
the run and topic fields and citations given as indices or as segment ids (TREC 2025's
two formats; a cited segment outside ``references`` is added to the contexts).

Each line becomes a logged output of its topic: the answer, its sentences (the answer
objects) a line each, each followed by its citations as ``[n]`` markers (n counted from
1); the contexts, the referenced segments' texts from the dataset's corpus (the TREC RAG
folder); and the answer objects with their citations as they were
(``answer_sentences``), which the support judge takes as the answer's sentences, as the
track does (an object may hold more than one sentence), and the nugget judge joins with
a space, as nuggetizer does; the line's ``response_length`` is kept for the assignments
ragmark writes in nuggetizer's layout.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ragmark.data._fields import as_object, check_id, check_string
from ragmark.data.files import Where, describe, quote
from ragmark.data.formats import ItemsFormat
from ragmark.data.leniency import Leniency
from ragmark.errors import DataError
from ragmark.types import Corpus, Dataset

NEEDS_CORPUS = ("TREC RAG answers cite segments by id: give --dataset, the TREC RAG folder "
                "whose corpus.jsonl holds the segments (and whose topics name the questions)")


def is_trec_answers(items: list[tuple[Where, Any]]) -> bool:
    """True when the items are TREC RAG answers (``topic_id``, or TREC 2025's
    ``metadata``, and a list ``answer``)."""
    return any(isinstance(v, dict) and isinstance(v.get("answer"), list) and (
        "topic_id" in v or isinstance(v.get("metadata"), dict)) for _, v in items)


def _field(obj: dict[str, Any], name: str, of_2025: str) -> tuple[Any, str]:
    """A field of TREC 2024's layout, else its TREC 2025 counterpart in ``metadata``,
    with the name to put in an error."""
    meta = obj.get("metadata")
    if name not in obj and isinstance(meta, dict) and of_2025 in meta:
        return meta[of_2025], f"metadata.{of_2025}"
    return obj.get(name), name


def _cited(c: Any, refs: list[Any], where: Where, at: str, into: str) -> int:
    """The reference index of one citation: an index into references, or a segment id
    (added to references when it is not among them)."""
    if isinstance(c, str) and c.strip():
        if c not in refs:
            refs.append(c)
        return refs.index(c)
    if isinstance(c, bool) or not isinstance(c, int) or not 0 <= c < len(refs):
        raise where.error(f"expected an index into {into} (0 to {len(refs) - 1}) or a "
                          f"segment id, got {describe(c)}", at)
    return c


def _segment(docs: Mapping[str, Any], ref: Any, where: Where, at: str, source: str
             ) -> dict[str, str]:
    doc = docs.get(ref) if isinstance(ref, str) else None
    if doc is None:
        raise where.error(f"segment {quote(str(ref))} is not in the corpus {source}", at)
    return {"id": ref, "text": doc.text}


def answer_objects(value: Any, where: Where, refs: list[Any], field: str = "answer",
                   into: str = "references") -> list[tuple[str, list[int]]]:
    """The answer objects ``[{"text", "citations"}]`` of ``field``, each (text, indices
    into ``refs`` -- called ``into`` in errors --, once each); a citation may be a
    reference id, added to ``refs`` when it is not among them. A bad object is an error
    naming the line and the field."""
    if not isinstance(value, list):
        raise where.error(f"expected a list of {{text, citations}} objects, got "
                          f"{describe(value)}", field)
    out = []
    for i, raw in enumerate(value):
        at = f"{field}[{i}]"
        obj = raw if isinstance(raw, dict) else None
        if obj is None:
            raise where.error(f"expected an object {{text, citations}}, got {describe(raw)}", at)
        text = check_string(obj.get("text"), where, f"{at}.text", allow_empty=True)
        cites = obj.get("citations") or []
        if not isinstance(cites, list):
            raise where.error(f"expected a list of reference indices, got {describe(cites)}",
                              f"{at}.citations")
        got = [_cited(c, refs, where, f"{at}.citations[{j}]", into)
               for j, c in enumerate(cites)]
        out.append((text.strip(), list(dict.fromkeys(got))))
    return out


def trec_answer_rows(items: list[tuple[Where, Any]], corpus: Corpus | None,
                     questions: Mapping[str, str], lenient: Leniency | None = None
                     ) -> list[tuple[Where, dict[str, Any]]]:
    """The items as ragmark's logged-output rows (see the module); a reference the
    corpus lacks, a citation out of range or a topic without a text is an error naming
    the line and the field."""
    lenient = lenient or Leniency()
    if corpus is None:
        raise DataError(NEEDS_CORPUS, file=items[0][0].file)
    docs = corpus.by_id()
    rows = []
    for where, value in items:
        obj = as_object(value, where)
        raw_topic, topic_field = _field(obj, "topic_id", "narrative_id")
        topic = check_id(raw_topic, where, topic_field, lenient)
        refs = obj.get("references") or []
        if not isinstance(refs, list):
            raise where.error(f"expected a list of segment ids, got {describe(refs)}",
                              "references")
        refs = list(refs)
        given = len(refs)
        contexts = [_segment(docs, ref, where, f"references[{i}]", corpus.source)
                    for i, ref in enumerate(refs)]
        sentences = answer_objects(obj.get("answer"), where, refs)  # may cite more segments
        contexts += [_segment(docs, ref, where, "answer", corpus.source)
                     for ref in refs[given:]]
        question = _field(obj, "topic", "narrative")[0] or questions.get(topic)
        if not isinstance(question, str) or not question.strip():
            raise where.error(f"topic {quote(topic)} has no text: not among the dataset's "
                              "topics, and the line gives no 'topic'", topic_field)
        run = _field(obj, "run_id", "run_id")[0]
        answer = "\n".join(t + "".join(f" [{c + 1}]" for c in cites)
                           for t, cites in sentences if t)
        length = obj.get("response_length")
        rows.append((where, {
            "id": topic, "question": question, "answer": answer, "contexts": contexts,
            "answer_sentences": [{"text": t, "citations": c} for t, c in sentences],
            **({"run_id": run} if isinstance(run, str) and run.strip() else {}),
            **({"response_length": length} if isinstance(length, int)
               and not isinstance(length, bool) and length >= 0 else {})}))
    return rows


def _rows(items: list[tuple[Where, Any]], against: Dataset | None, lenient: Leniency
          ) -> list[tuple[Where, dict[str, Any]]]:
    return trec_answer_rows(items, None if against is None else against.corpus,
                            {} if against is None else {s.id: s.question
                                                        for s in against.samples}, lenient)


FORMAT = ItemsFormat("trec_rag_answers", "TREC RAG answers ({topic_id or metadata, "
                     "references, answer: [{text, citations}]})", is_trec_answers, _rows,
                     order=20)
