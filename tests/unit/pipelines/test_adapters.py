"""LangChain and LlamaIndex objects as the pipeline (issue 24, item 2), with the real
libraries offline: an in-memory vector store with the fake embeddings and LLMs the
libraries ship for tests. The ranking ragmark records is the one the library returns
(the test asks the library itself for it), the answer the fake LLM's."""

from __future__ import annotations

import json
import sys
import textwrap

import pytest
from support.cli import run_cli

pytest.importorskip("langchain_core")
pytest.importorskip("llama_index.core")

P1 = "BM25 ranks documents by term frequency and inverse document frequency."
P2 = "A reranker reorders the candidate passages with a stronger cross-encoder model."
P3 = "Dense retrievers embed queries and passages into the same vector space."
QUESTIONS = {"q1": "What does BM25 rank documents by?", "q2": "What does a reranker reorder?"}
GOLD = {"q1": P1, "q2": P2}

MODULE = f'''
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.language_models import FakeListLLM
from langchain_core.runnables import RunnableLambda
from langchain_core.vectorstores import InMemoryVectorStore

store = InMemoryVectorStore(embedding=DeterministicFakeEmbedding(size=32))
store.add_documents([Document(page_content={P1!r}, id="d1", metadata={{"source": "bm25.txt"}}),
                     Document(page_content={P2!r}, id="d2"),
                     Document(page_content={P3!r}, id="d3")])
retriever = store.as_retriever(search_kwargs={{"k": 2}})
llm = FakeListLLM(responses=["first answer", "second answer"] * 10)


def _answer(question):
    docs = retriever.invoke(question)
    return {{"input": question, "context": docs, "answer": llm.invoke(question)}}


chain = RunnableLambda(_answer)


def engine():
    from llama_index.core import Document as LDoc, VectorStoreIndex
    from llama_index.core.embeddings import MockEmbedding
    from llama_index.core.llms import MockLLM

    index = VectorStoreIndex.from_documents(
        [LDoc(text={P1!r}, doc_id="d1"), LDoc(text={P2!r}, doc_id="d2"),
         LDoc(text={P3!r}, doc_id="d3")], embed_model=MockEmbedding(embed_dim=8))
    return index.as_query_engine(llm=MockLLM(max_tokens=4), similarity_top_k=2)


not_a_retriever = 42
'''


@pytest.fixture
def setup(tmp_path, monkeypatch):
    name = "lc_" + tmp_path.name.replace("-", "_")
    (tmp_path / "svc").mkdir()
    (tmp_path / "svc" / f"{name}.py").write_text(textwrap.dedent(MODULE))
    monkeypatch.setattr(sys, "path", [str(tmp_path / "svc"), *sys.path])
    ds = tmp_path / "set.json"
    ds.write_text(json.dumps([{"id": q, "question": t, "ground_truth_contexts": [GOLD[q]]}
                              for q, t in QUESTIONS.items()]))
    yield name, ds
    sys.modules.pop(name, None)


def _run(tmp_path, capsys, name, ds, kind, target, *extra):
    cfg = tmp_path / f"{kind}-{target}.toml"
    cfg.write_text(f'name = "{target}"\n[pipeline]\nkind = "{kind}"\n'
                   f'target = "{name}:{target}"\npython_path = ["svc"]\n')
    out = tmp_path / f"{target}.json"
    code, stdout, err = run_cli(["run", "--dataset", str(ds), "--config", str(cfg),
                                 "--metrics", "mrr", "--output", str(out),
                                 "--include-details", "--no-history", "--quiet", *extra],
                                capsys)
    return code, err, (json.loads(out.read_text()) if code == 0 else None)


def _mrr(ranking: list[str], gold: str) -> float:
    return next((1 / r for r, text in enumerate(ranking, start=1) if text == gold), 0.0)


def test_a_langchain_retriever_and_chain(setup, tmp_path, capsys):
    import importlib

    name, ds = setup
    mod = importlib.import_module(name)
    expected = {q: [d.page_content for d in mod.retriever.invoke(t)]
                for q, t in QUESTIONS.items()}  # the library's own ranking
    for target in ("retriever", "chain"):
        code, err, data = _run(tmp_path, capsys, name, ds, "langchain", target)
        assert code == 0, err
        queries = {q["id"]: q for q in data["queries"]}
        for q in QUESTIONS:
            assert queries[q]["contexts"] == expected[q]
            assert data["per_query"][q]["mrr"] == _mrr(expected[q], GOLD[q])
            ids = [r["id"] for r in queries[q]["retrieved"]]
            assert set(ids) <= {"d1", "d2", "d3"}  # the documents' own ids
        if target == "chain":
            assert {q["answer"] for q in queries.values()} <= {"first answer",
                                                                 "second answer"}
    code, err, _ = _run(tmp_path, capsys, name, ds, "langchain", "not_a_retriever")
    assert code == 2 and "expected a LangChain retriever or runnable" in err


def test_a_llamaindex_query_engine(setup, tmp_path, capsys):
    name, ds = setup
    code, err, data = _run(tmp_path, capsys, name, ds, "llamaindex", "engine")
    assert code == 0, err
    for q in data["queries"]:
        assert q["answer"] == "text text text text"  # MockLLM's answer
        assert len(q["contexts"]) == 2 and set(q["contexts"]) <= {P1, P2, P3}
        assert {r["doc_id"] for r in q["retrieved"]} <= {"d1", "d2", "d3"}
        assert data["per_query"][q["id"]]["mrr"] == _mrr(q["contexts"], GOLD[q["id"]])
    code, err, _ = _run(tmp_path, capsys, name, ds, "llamaindex", "not_a_retriever")
    assert code == 2 and "expected a LlamaIndex query engine or retriever" in err


def test_the_python_api_takes_the_objects_themselves(setup, tmp_path):
    import importlib

    import ragmark

    name, ds = setup
    mod = importlib.import_module(name)
    report = ragmark.evaluate_pipeline(mod.chain, str(ds), metrics=["mrr"], history=False)
    expected = {q: [d.page_content for d in mod.retriever.invoke(t)]
                for q, t in QUESTIONS.items()}
    for q in report.queries:
        assert q.contexts == expected[q.id]
        assert q.metrics["mrr"].value == _mrr(expected[q.id], GOLD[q.id])
    result = ragmark.compare_pipelines({"lc": mod.retriever, "li": mod.engine()}, str(ds),
                                       metrics=["mrr"], history=False)
    assert set(result.reports) == {"lc", "li"}
    assert all(len(q.contexts) == 2 for q in result.reports["li"].queries)


def test_the_frameworks_scores_are_recorded_never_invented(tmp_path, capsys):
    """Issue 33, item 6: the score a LangChain document's metadata or a LlamaIndex node
    carries is the score recorded (details and results file), not one made from the
    rank; the TREC run file, which needs one a line and orders by it, makes them from the
    rank where the framework's would reorder the ranking, and says so; a document that
    comes twice in one ranking is folded at document unit with a note."""
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever
    from llama_index.core import Document as LDoc
    from llama_index.core import VectorStoreIndex
    from llama_index.core.embeddings import MockEmbedding

    import ragmark

    class Scored(BaseRetriever):
        def _get_relevant_documents(self, query, *, run_manager):
            # an ensemble's interleaving: scores that do not fall with the order
            return [Document(page_content=P1, id="d1", metadata={"score": 0.9}),
                    Document(page_content=P3, id="d3", metadata={"relevance_score": 0.7}),
                    Document(page_content=P2, id="d2", metadata={"score": 0.8})]

    ds = tmp_path / "set.json"
    ds.write_text(json.dumps([{"id": q, "question": t, "ground_truth_contexts": [GOLD[q]]}
                              for q, t in QUESTIONS.items()]))
    report = ragmark.evaluate_pipeline(Scored(), ds, metrics=["mrr"], history=False)
    for q in report.queries:
        assert [(r.id, r.score) for r in q.retrieved] == [
            ("d1", 0.9), ("d3", 0.7), ("d2", 0.8)]
    from ragmark.report.trec_run import trec_lines, trec_note

    assert trec_lines(report)[:3] == ["q1 Q0 d1 1 3 Scored", "q1 Q0 d3 2 2 Scored",
                                      "q1 Q0 d2 3 1 Scored"]
    assert "scores made from the rank" in trec_note(report)

    index = VectorStoreIndex.from_documents(
        [LDoc(text=P1, doc_id="d1"), LDoc(text=P2, doc_id="d2"), LDoc(text=P3, doc_id="d3")],
        embed_model=MockEmbedding(embed_dim=8))
    retriever = index.as_retriever(similarity_top_k=3)
    nodes = {t: [n.score for n in retriever.retrieve(t)] for t in QUESTIONS.values()}
    report = ragmark.evaluate_pipeline(retriever, ds, metrics=["mrr"], history=False)
    for q in report.queries:
        assert [r.score for r in q.retrieved] == nodes[q.question]  # the nodes' own scores
        assert all(r.score is not None and r.score <= 1.0 for r in q.retrieved)

    # a log whose contexts give no score: none recorded; one document twice: folded, said
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps({"question": QUESTIONS["q1"], "answer": "tf-idf",
                               "contexts": [{"text": P1, "doc_id": "bm25.txt"},
                                            {"text": P2, "doc_id": "bm25.txt"},
                                            {"text": P3, "doc_id": "dense.txt"}]}) + "\n")
    out = tmp_path / "r.json"
    code, _, err = run_cli(["run", "--outputs", str(log), "--metrics", "groundedness",
                            "--output", str(out), "--include-details", "--no-history",
                            "--quiet", "--format", "json,trec"], capsys)
    assert code == 0, err
    data = json.loads(out.read_text())
    assert all(r["score"] is None for r in data["queries"][0]["retrieved"])
    assert any("1 document came more than once" in n for n in data["notes"])
    assert any("TREC run file gives 1 question scores made from the rank" in n
               for n in data["notes"])
