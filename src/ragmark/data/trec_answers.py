"""TREC RAG's answer files as logged outputs: one answer a line, as the track's
participants submit them (and castorini's Ragnarök writes them):

``{"run_id", "topic_id", "topic"?, "references": [segment ids], "answer": [{"text",
"citations": [indices into references]}], "response_length"?}``

Each line becomes a logged output of its topic: the answer, its sentences joined, each
followed by its citations as ``[n]`` markers (n counted from 1, so ragmark's citation
judges read them); the contexts, the referenced segments' texts from the dataset's
corpus (the TREC RAG folder); and the sentences with their citations kept as they were
(``Sample.extra["answer_sentences"]``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ragmark.data._fields import as_object, check_id, check_string
from ragmark.data.files import Where, describe, quote
from ragmark.data.leniency import Leniency
from ragmark.errors import DataError
from ragmark.types import Corpus

NEEDS_CORPUS = ("TREC RAG answers cite segments by id: give --dataset, the TREC RAG folder "
                "whose corpus.jsonl holds the segments (and whose topics name the questions)")


def is_trec_answers(items: list[tuple[Where, Any]]) -> bool:
    """True when the items are TREC RAG answers (``topic_id`` and a list ``answer``)."""
    return any(isinstance(v, dict) and "topic_id" in v and isinstance(v.get("answer"), list)
               for _, v in items)


def _sentences(value: Any, where: Where, n_refs: int) -> list[tuple[str, list[int]]]:
    if not isinstance(value, list):
        raise where.error(f"expected a list of {{text, citations}} objects, got "
                          f"{describe(value)}", "answer")
    out = []
    for i, raw in enumerate(value):
        at = f"answer[{i}]"
        obj = raw if isinstance(raw, dict) else None
        if obj is None:
            raise where.error(f"expected an object {{text, citations}}, got {describe(raw)}", at)
        text = check_string(obj.get("text"), where, f"{at}.text", allow_empty=True)
        cites = obj.get("citations") or []
        if not isinstance(cites, list):
            raise where.error(f"expected a list of reference indices, got {describe(cites)}",
                              f"{at}.citations")
        for j, c in enumerate(cites):
            if isinstance(c, bool) or not isinstance(c, int) or not 0 <= c < n_refs:
                raise where.error(f"expected an index into references (0 to {n_refs - 1}), "
                                  f"got {describe(c)}", f"{at}.citations[{j}]")
        out.append((text.strip(), list(dict.fromkeys(cites))))
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
        topic = check_id(obj.get("topic_id"), where, "topic_id", lenient)
        refs = obj.get("references") or []
        if not isinstance(refs, list):
            raise where.error(f"expected a list of segment ids, got {describe(refs)}",
                              "references")
        contexts = []
        for i, ref in enumerate(refs):
            doc = docs.get(ref) if isinstance(ref, str) else None
            if doc is None:
                raise where.error(f"segment {quote(str(ref))} is not in the corpus "
                                  f"{corpus.source}", f"references[{i}]")
            contexts.append({"id": ref, "text": doc.text})
        sentences = _sentences(obj.get("answer"), where, len(refs))
        question = obj.get("topic") or questions.get(topic)
        if not isinstance(question, str) or not question.strip():
            raise where.error(f"topic {quote(topic)} has no text: not among the dataset's "
                              "topics, and the line gives no 'topic'", "topic_id")
        answer = " ".join(t + "".join(f" [{c + 1}]" for c in cites)
                          for t, cites in sentences if t)
        rows.append((where, {
            "id": topic, "question": question, "answer": answer, "contexts": contexts,
            "answer_sentences": [{"text": t, "citations": c} for t, c in sentences],
            **({"run_id": obj["run_id"]} if isinstance(obj.get("run_id"), str) else {})}))
    return rows
