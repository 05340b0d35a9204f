"""External pipelines end to end through `ragmark run` and `ragmark compare`: one config a
Python module in the test's folder, one an HTTP service on 127.0.0.1 that times out on
some questions."""

from __future__ import annotations

import json
import sys

import pytest
from support.cli import run_cli
from support.fake_llm_server import Reply

GT = {
    "bm25": "BM25 ranks documents using term frequency and inverse document frequency.",
    "rerank": "A reranker reorders the candidate passages with a stronger model.",
    "dense": "Dense retrieval embeds questions and passages into the same vector space.",
    "hybrid": "Hybrid search fuses the rankings of a sparse and a dense retriever.",
}
OTHER = "Tokenisers split text into subword units before embedding."
ITEMS = [
    {"id": "q1", "question": "What does BM25 rank?", "ground_truth_contexts": [GT["bm25"]],
     "expected_answer": "documents"},
    {"id": "q2", "question": "What does a reranker do?", "ground_truth_contexts": [GT["rerank"]],
     "expected_answer": "It reorders the candidate passages"},
    {"id": "q3", "question": "Slow: what is dense retrieval?",
     "ground_truth_contexts": [GT["dense"]]},
    {"id": "q4", "question": "Slow: what is hybrid search?",
     "ground_truth_contexts": [GT["hybrid"]]},
]
TOPIC = {"q1": "bm25", "q2": "rerank", "q3": "dense", "q4": "hybrid"}
BY_QUESTION = {i["question"]: TOPIC[i["id"]] for i in ITEMS}

MODULE = '''
GT = {gt!r}
OTHER = {other!r}
BY_QUESTION = {by_question!r}

def answer(question):
    topic = BY_QUESTION[question]
    if topic == "dense":  # the passage second
        return {{"answer": "Dense retrieval embeds text", "contexts": [OTHER, GT[topic]]}}
    return (GT[topic].split(" using")[0], [{{"text": GT[topic], "id": topic}}])
'''


def service(body):
    """The HTTP service: the reranker passage comes second; 'Slow' questions take 1.5 s."""
    topic = BY_QUESTION[body["query"]]
    sources = [GT[topic]] if topic != "rerank" else [OTHER, GT[topic]]
    answer = "BM25 ranks documents" if topic == "bm25" else "It reorders the candidate passages"
    reply = {"result": {"text": answer, "sources": [{"content": s} for s in sources]}}
    return Reply(body=reply, delay=1.5 if body["query"].startswith("Slow") else 0.0)


@pytest.fixture
def setup(tmp_path, server, monkeypatch):
    monkeypatch.setattr(sys, "path", list(sys.path))
    module = "ragsvc_" + tmp_path.name.replace("-", "_")
    (tmp_path / f"{module}.py").write_text(MODULE.format(gt=GT, other=OTHER,
                                                         by_question=BY_QUESTION))
    (tmp_path / "set.json").write_text(json.dumps(ITEMS))
    (tmp_path / "py.toml").write_text(
        f'name = "in-process"\n[pipeline]\nkind = "python"\ntarget = "{module}:answer"\n'
        'python_path = ["."]\n')
    (tmp_path / "http.toml").write_text(
        f'name = "my-service"\n[pipeline]\nkind = "http"\nurl = "{server.url}/ask"\n'
        'question_field = "query"\nanswer_path = "result.text"\n'
        'contexts_path = "result.sources[*].content"\ntimeout = 0.4\nconcurrency = 4\n')
    server.rule = service
    yield tmp_path
    sys.modules.pop(module, None)


def test_run_an_http_pipeline_with_timeouts(setup, server, capsys):
    out = setup / "r.json"
    code, stdout, _ = run_cli(["run", "--dataset", str(setup / "set.json"), "--config",
                               str(setup / "http.toml"), "--output", str(out),
                               "--include-details", "--quiet"], capsys)
    assert code == 0
    data = json.loads(out.read_text())
    timed_out = f"timed out: no answer from {server.url}/ask within 0.4 s"
    assert data["metrics"]["mrr"] == (1 + 1 / 2) / 2  # q1 rank 1, q2 rank 2
    assert data["counts"]["mrr"] == {"n": 2, "missing": 2, "reasons": {timed_out: 2}}
    assert data["counts"]["groundedness"] == {"n": 2, "missing": 2, "reasons": {timed_out: 2}}
    assert data["metrics"]["exact_match"] == 1 / 2  # q2 exact, q1 not
    q = {x["id"]: x for x in data["queries"]}
    assert q["q3"]["metrics"]["recall@5"] == {"value": None, "reason": timed_out}
    assert q["q3"]["answer"] is None and q["q3"]["retrieved"] == []
    assert q["q2"]["answer"] == "It reorders the candidate passages"
    assert [r["grade"] for r in q["q2"]["retrieved"]] == [0, 1]
    assert q["q2"]["contexts"] == [OTHER, GT["rerank"]]
    assert data["notes"] == [
        f"pipeline {server.url}/ask: 2 of 4 questions failed ({timed_out} (2 questions)); "
        "their metrics are missing with the reason",
        "fewer contexts than a cutoff: @3 for 2 of 2 questions, @5 for 2 of 2 questions, @10 "
        "for 2 of 2 questions; places past the end of a ranking count as not relevant (as in "
        "trec_eval)"]
    assert data["short_rankings"] == {"3": 2, "5": 2, "10": 2}
    assert data["config"]["pipeline"]["kind"] == "http"
    t = data["timings"]
    assert t["pipeline_s"] >= 0.4 and 0 < t["latency_p50_ms"] <= t["latency_p95_ms"] < 400
    assert {r.body["query"] for r in server.requests} == {i["question"] for i in ITEMS}
    assert "pipeline per question p50" in stdout


def test_compare_a_python_and_an_http_pipeline(setup, server, capsys):
    code, stdout, _ = run_cli(["compare", "--dataset", str(setup / "set.json"), "--configs",
                               str(setup / "py.toml"), str(setup / "http.toml"),
                               "--output", str(setup / "cmp"), "--quiet"], capsys)
    assert code == 0
    data = json.loads((setup / "cmp.json").read_text())
    py, http = data["configs"]["in-process"], data["configs"]["my-service"]
    assert [py["per_query"][q]["mrr"] for q in ("q1", "q2", "q3", "q4")] == [1.0, 1.0, 0.5, 1.0]
    assert py["metrics"]["mrr"] == (1 + 1 + 1 / 2 + 1) / 4
    assert py["counts"]["mrr"] == {"n": 4, "missing": 0}
    assert [http["per_query"][q]["mrr"] for q in ("q1", "q2", "q3", "q4")] == [1.0, 0.5, None,
                                                                              None]
    assert http["counts"]["mrr"]["missing"] == 2
    row = next(c for c in data["comparisons"] if c["metric"] == "mrr")
    assert (row["config"], row["baseline"], row["n"]) == ("my-service", "in-process", 2)
    assert "latency_p50_ms" in py["timings"] and "latency_p50_ms" in http["timings"]
    md = (setup / "cmp.md").read_text()
    assert "| in-process (baseline) | 1.0000 |" not in md  # 0.875, not 1
    assert md.count("| in-process (baseline) | 0.8750 |") == 1
    assert "| my-service | 0.7500 (n=2/4)" in md
    assert "Note: pipeline " in md and "2 of 4 questions failed" in md
    assert "my-service: MRR" in stdout


def test_paths_that_fit_no_response_stop_the_run_naming_path_and_response(setup, server, capsys):
    bad = setup / "bad.toml"
    bad.write_text((setup / "http.toml").read_text().replace('"result.text"', '"data.answer"')
                   .replace('"my-service"', '"bad-paths"'))
    code, _, err = run_cli(["run", "--dataset", str(setup / "set.json"), "--config", str(bad),
                            "--quiet"], capsys)
    assert code == 2 and "Traceback" not in err
    assert err.startswith(
        f"error: config 'bad-paths': no question got a usable answer from {server.url}/ask; "
        "the first: answer_path 'data.answer': did not resolve: no key 'data' at the top level "
        "(keys there: 'result'); the response: {\"result\": {\"text\": ")


def test_dry_run_does_not_call_a_pipeline(setup, server, capsys):
    code, _, err = run_cli(["run", "--dataset", str(setup / "set.json"), "--config",
                            str(setup / "http.toml"), "--judge-metrics", "answer_relevance",
                            "--dry-run", "--quiet"], capsys)
    assert code == 2
    assert err == ("error: --dry-run cannot estimate config 'my-service': its answers come "
                   "from its pipeline, which would have to be called\n")
    assert server.requests == []


def test_an_http_pipeline_returning_retrieval_steps(setup, server, capsys):
    """hops_path: the service's steps; q2's first step [OTHER] misses, its second
    [rerank passage] finds it: per-hop recall 0 then 1, merged MRR 1/2."""
    def steps(body):
        topic = BY_QUESTION[body["query"]]
        first = [GT[topic]] if topic != "rerank" else [OTHER]
        second = [GT[topic]] if topic == "rerank" else []
        return Reply(body={"text": "answer", "steps": [
            {"name": "sparse", "contexts": first}, {"name": "rerank", "contexts": second}]})

    server.rule = steps
    (setup / "hops.toml").write_text(
        f'name = "stepped"\n[pipeline]\nkind = "http"\nurl = "{server.url}/ask"\n'
        'question_field = "query"\nanswer_path = "text"\nhops_path = "steps"\n')
    out = setup / "h.json"
    code, _, err = run_cli(["run", "--dataset", str(setup / "set.json"), "--config",
                            str(setup / "hops.toml"), "--metrics", "mrr", "--output",
                            str(out), "--include-details", "--quiet"], capsys)
    assert code == 0, err
    data = json.loads(out.read_text())
    q = {x["id"]: x for x in data["queries"]}
    assert [(h["name"], h["recall"]) for h in q["q2"]["hops"]] == [("sparse", 0.0),
                                                                  ("rerank", 1.0)]
    assert data["per_query"]["q2"]["mrr"] == 0.5 and data["per_query"]["q1"]["mrr"] == 1.0
    assert data["config"]["pipeline"]["hops_path"] == "steps"
