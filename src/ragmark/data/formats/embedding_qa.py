"""LlamaIndex's ``EmbeddingQAFinetuneDataset``, a JSON document that is a whole dataset:
``{"queries": {id: text}, "corpus": {id: text}, "relevant_docs": {query id: [corpus
ids]}}``: relevance by id, its corpus the corpus (so ``--corpus`` is refused)."""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType
from typing import Any, TypeGuard

from ragmark.data.files import Where, describe
from ragmark.data.formats import DocumentFormat
from ragmark.data.leniency import Leniency
from ragmark.data.sets import set_name
from ragmark.errors import DataError
from ragmark.types import Corpus, Dataset, Document, GroundTruth, Sample


def is_embedding_qa(data: Any) -> TypeGuard[dict[str, Any]]:
    """True for LlamaIndex's EmbeddingQAFinetuneDataset document."""
    return isinstance(data, dict) and {"queries", "corpus", "relevant_docs"} <= set(data)


def load_embedding_qa(path: Path, data: dict[str, Any], lenient: Leniency) -> Dataset:
    """An EmbeddingQAFinetuneDataset as a dataset judged by id: each query with its
    relevant corpus ids (grade 1), the corpus its ``corpus``. A query without relevant
    ids is left out with a counted warning; an id that is not in the corpus is an
    error."""

    where = Where(str(path))
    for key in ("queries", "corpus", "relevant_docs"):
        if not isinstance(data[key], dict):
            raise where.error(f"expected an object (id -> ...), got {describe(data[key])}", key)
    docs = []
    for did, text in data["corpus"].items():
        if not isinstance(text, str):
            raise where.error(f"expected a string, got {describe(text)}", f"corpus.{did}")
        docs.append(Document(id=str(did), text=text))
    known = {d.id for d in docs}
    samples = []
    for qid, text in data["queries"].items():
        if not isinstance(text, str):
            raise where.error(f"expected a string, got {describe(text)}", f"queries.{qid}")
        ids = data["relevant_docs"].get(qid) or []
        if not isinstance(ids, list):
            raise where.error(f"expected a list of corpus ids, got {describe(ids)}",
                              f"relevant_docs.{qid}")
        unknown = [i for i in ids if str(i) not in known]
        if unknown:
            raise where.error(f"{unknown[0]!r} is not an id of the corpus",
                              f"relevant_docs.{qid}")
        if not ids:
            lenient.warn(NO_RELEVANT, str(qid), where.error(
                "a query without relevant documents", f"relevant_docs.{qid}"))
            continue
        samples.append(Sample(id=str(qid), question=text, truth=GroundTruth(
            doc_grades=MappingProxyType({str(i): 1 for i in ids}))))
    if not samples:
        raise DataError("no query has a relevant document", file=str(path))
    return Dataset(name=set_name(path), path=str(path), format="llamaindex",
                   samples=tuple(samples), corpus=Corpus(tuple(docs), str(path)),
                   default_chunker="whole")


NO_RELEVANT = "queries without relevant documents, left out"


def _load(path: Path, data: Any, corpus: str | Path | None, lenient: Leniency) -> Dataset:
    if corpus is not None:
        raise DataError("an EmbeddingQAFinetuneDataset has its own corpus; leave out "
                        "--corpus", file=str(path))
    return load_embedding_qa(path, data, lenient)


FORMAT = DocumentFormat("embedding-qa", "a LlamaIndex EmbeddingQAFinetuneDataset (.json: "
                        "queries, corpus, relevant_docs)", is_embedding_qa, _load)
