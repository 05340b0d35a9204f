"""Outputs sets: a system's logged answers and contexts, scored without running anything.

The expected values below are worked out by hand from the definitions (SPEC sections 3
and 4); each is written as the fraction it comes from.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest
from support.fake_llm_server import Reply

from ragmark.cli import main
from ragmark.config import RunConfig
from ragmark.data.outputs import load_outputs
from ragmark.errors import DataError
from ragmark.running.runner import run

GT_BM25 = "BM25 ranks documents using term frequency and inverse document frequency."
GT_OKAPI = "Okapi BM25 was developed at City University London."
GT_RERANK = "A reranker reorders the candidate passages with a stronger model."

LINES = [
    {   # q1: the second context contains passage 1; "Okapi BM25" is inside passage 2 but
        # under 20 characters, so it does not match
        "id": "q1", "question": "What does BM25 rank?",
        "answer": "BM25 ranks documents by term frequency",
        "contexts": ["Dense retrievers embed queries and passages into vectors.",
                     GT_BM25 + " It is a sparse method.", "Okapi BM25"],
        "ground_truth_contexts": [GT_BM25, GT_OKAPI],
        "expected_answer": "documents by term frequency",
    },
    {   # q2: no ground truth at all; keywords only
        "id": "q2", "question": "What is a reranker?",
        "answer": "A reranker reorders passages",
        "contexts": ["A cross-encoder reranker reorders the candidate passages."],
        "expected_keywords": ["reranker", "cross-encoder"],
        "source": "prod-log-17",
    },
    {   # q3: the first context is shorter than the passage and inside it (case and white
        # space differ), as an object with an id
        "id": "q3", "question": "What does a reranker do?",
        "answer": "It reorders candidates",
        "contexts": [{"text": "Reorders the   candidate passages", "id": "doc-9", "score": 0.1},
                     "Unrelated text about tokenisers and vocabularies."],
        "ground_truth_contexts": [GT_RERANK],
        "expected_answer": "It reorders the candidate passages.",
    },
]

NDCG_Q1 = (1 / math.log2(3)) / (1 + 1 / math.log2(3))  # hit at rank 2 of 2 targets


def write_jsonl(path, items):
    path.write_text("\n".join(json.dumps(i) for i in items) + "\n", encoding="utf-8")
    return path


def values(report, qid):
    q = next(q for q in report.queries if q.id == qid)
    return {k: (s.value if s.ok else s.reason) for k, s in q.metrics.items()}


def test_every_metric_is_computed_from_the_logged_outputs(tmp_path):
    oset = load_outputs(write_jsonl(tmp_path / "logged.jsonl", LINES))
    assert oset.dataset.format == "outputs"
    assert oset.dataset.samples[1].extra == {"source": "prod-log-17"}
    report = run(oset.dataset, RunConfig(name="logged"), outputs=oset.outputs)

    q1 = values(report, "q1")
    assert q1["recall@3"] == 1 / 2
    assert q1["precision@5"] == 1 / 5
    assert q1["hit@5"] == 1.0
    assert q1["mrr"] == 1 / 2
    assert q1["ndcg@10"] == pytest.approx(NDCG_Q1, abs=1e-12)
    assert q1["map"] == (1 / 2) / 2
    assert q1["exact_match"] == 0.0
    assert q1["token_f1"] == pytest.approx(0.8)  # p = 4/6, r = 4/4
    assert q1["context_overlap"] == pytest.approx(5 / 6)  # "by" is not in the passages
    assert q1["groundedness"] == 1.0  # 5 content tokens, all retrieved
    assert q1["keyword_coverage"] == "no expected keywords"

    q2 = values(report, "q2")
    for m in ("recall@3", "recall@5", "recall@10", "precision@5", "hit@5", "mrr", "ndcg@10",
              "map"):
        assert q2[m] == "no ground truth"
    assert q2["keyword_coverage"] == 1 / 2  # "reranker" found, "cross-encoder" not
    assert q2["context_overlap"] == "no gold context"
    # no question has both keywords and a gold context: combined_score is no default
    assert "combined_score" not in q2
    assert q2["groundedness"] == 1.0  # reranker, reorders, passages
    assert q2["token_f1"] == "no expected answer"

    q3 = values(report, "q3")
    assert (q3["recall@3"], q3["mrr"], q3["map"], q3["precision@5"]) == (1.0, 1.0, 1.0, 0.2)
    assert q3["token_f1"] == pytest.approx(4 / 7)  # p = 2/3, r = 2/4
    assert q3["context_overlap"] == pytest.approx(1 / 3)  # only "reorders"
    assert q3["groundedness"] == 1 / 2  # "reorders" yes, "candidates" no

    agg = report.metrics
    assert agg["recall@3"].value == (1 / 2 + 1) / 2
    assert (agg["recall@3"].n, agg["recall@3"].missing) == (2, 1)
    assert agg["recall@3"].reasons == {"no ground truth": 1}
    assert agg["mrr"].value == (1 / 2 + 1) / 2
    assert agg["map"].value == (1 / 4 + 1) / 2
    assert agg["ndcg@10"].value == pytest.approx((NDCG_Q1 + 1) / 2, abs=1e-12)
    assert agg["token_f1"].value == pytest.approx((0.8 + 4 / 7) / 2)
    assert agg["groundedness"].value == pytest.approx((1 + 1 + 0.5) / 3)
    assert agg["keyword_coverage"].n == 1 and agg["keyword_coverage"].missing == 2

    first = report.queries[0].retrieved
    assert [(r.rank, r.grade, r.targets, r.rule) for r in first] == [
        (1, 0, (), None), (2, 1, ("passage 1",), "text"), (3, 0, (), None)]
    third = report.queries[2]
    assert third.retrieved[0].id == "doc-9" and third.retrieved[0].targets == ("passage 1",)
    assert third.contexts == ["Reorders the   candidate passages",
                              "Unrelated text about tokenisers and vocabularies."]
    assert third.answer == "It reorders candidates"
    assert report.dataset["format"] == "outputs" and report.dataset["chunks"] == 6
    assert report.config == {"name": "logged", "source": "outputs", "unit": "chunk"}


def run_cli(args, capsys):
    with pytest.raises(SystemExit) as e:
        main(args)
    out = capsys.readouterr()
    return e.value.code, out.out, out.err


def test_ragmark_run_outputs_writes_the_same_values(tmp_path, capsys):
    src = write_jsonl(tmp_path / "logged.jsonl", LINES)
    out_path = tmp_path / "r.json"
    code, out, _ = run_cli(["run", "--outputs", str(src), "--output", str(out_path),
                            "--include-details", "--quiet"], capsys)
    assert code == 0
    data = json.loads(out_path.read_text())
    assert data["metrics"]["mrr"] == 0.75
    assert data["metrics"]["map"] == 0.625
    assert data["counts"]["recall@5"] == {"n": 2, "missing": 1,
                                          "reasons": {"no ground truth": 1}}
    assert data["queries"][1]["metrics"]["mrr"] == {"value": None, "reason": "no ground truth"}
    assert data["queries"][0]["answer"] == "BM25 ranks documents by term frequency"
    assert "MRR" in out and "0.7500" in out


@pytest.mark.parametrize("answer", ["", None])
def test_an_empty_or_null_answer_and_no_contexts_are_counted_not_zero(tmp_path, capsys,
                                                                      answer):
    src = write_jsonl(tmp_path / "o.jsonl", [
        {"question": "q one?", "answer": answer, "contexts": [],
         "ground_truth_contexts": [GT_BM25], "expected_answer": "x"},
        {"question": "q two?", "answer": "x", "contexts": [GT_BM25],
         "ground_truth_contexts": [GT_BM25], "expected_answer": "x"}])
    out_path = tmp_path / "r.json"
    code, _, err = run_cli(["run", "--outputs", str(src), "--output", str(out_path),
                            "--include-details", "--quiet"], capsys)
    assert code == 0
    data = json.loads(out_path.read_text())
    assert data["queries"][0]["metrics"]["recall@5"] == 0.0  # nothing retrieved: a real 0
    assert data["counts"]["token_f1"] == {"n": 1, "missing": 1,
                                          "reasons": {"empty answer": 1}}
    assert data["metrics"]["token_f1"] == 1.0
    if answer is None:  # loaded with a counted warning, kept in the report
        warning = ("null answers, scored as empty answers (their answer metrics are "
                   "missing): 1 (o.jsonl line 1)")
        assert err == f"warning: {warning}\n"
        assert data["dataset"]["warnings"] == [warning]
        code, _, err = run_cli(["run", "--outputs", str(src), "--output", str(out_path),
                                "--strict", "--quiet"], capsys)
        assert code == 2 and err == (f"error: {src}, line 1, field 'answer': expected a "
                                     "string, got null (an error because of --strict)\n")


def test_a_line_whose_system_failed_has_its_metrics_missing_with_the_reason(tmp_path,
                                                                         capsys):
    src = write_jsonl(tmp_path / "o.jsonl", [
        {"question": "q one?", "error": "timeout after 30 s", "answer": "",
         "contexts": [GT_BM25], "ground_truth_contexts": [GT_BM25], "expected_answer": "x"},
        {"question": "q two?", "answer": "x", "contexts": [GT_BM25],
         "ground_truth_contexts": [GT_BM25], "expected_answer": "x"}])
    out_path = tmp_path / "r.json"
    code, _, err = run_cli(["run", "--outputs", str(src), "--output", str(out_path),
                            "--metrics", "mrr,token_f1,refusal", "--include-details",
                            "--quiet"], capsys)
    assert code == 0, err
    data = json.loads(out_path.read_text())
    # neither its empty answer (a refusal, 1) nor its contexts (mrr 1) are read
    for m in ("mrr", "token_f1", "refusal"):
        assert data["queries"][0]["metrics"][m] == {"value": None,
                                                    "reason": "timeout after 30 s"}
        assert data["counts"][m] == {"n": 1, "missing": 1,
                                     "reasons": {"timeout after 30 s": 1}}
    assert data["metrics"]["refusal"] == 0.0 and data["metrics"]["mrr"] == 1.0


def test_no_answer_at_all_fails_the_implicit_gate(tmp_path, capsys):
    src = write_jsonl(tmp_path / "o.jsonl", [
        {"question": "q one?", "answer": "", "contexts": [],
         "ground_truth_contexts": [GT_BM25], "expected_answer": "x"}])
    out_path = tmp_path / "r.json"
    code, _, err = run_cli(["run", "--outputs", str(src), "--output", str(out_path),
                            "--metrics", "mrr,token_f1", "--quiet"], capsys)
    assert code == 1 and out_path.exists()
    assert err == ("gate failed: token_f1 got no value for any of 1 questions: empty answer "
                   "(1 question)\n")
    assert run_cli(["run", "--outputs", str(src), "--output", str(out_path), "--metrics",
                    "mrr,token_f1", "--allow-missing", "--quiet"], capsys)[0] == 0


@pytest.mark.parametrize(("line", "field", "message"), [
    ({"question": "q?", "contexts": ["some context text"]}, "answer",
     "missing; expected a string (the system's answer)"),
    ({"question": "q?", "answer": "a"}, "contexts", "missing; expected a list of the contexts"),
    ({"question": "q?", "answer": "a", "contexts": "one context"}, "contexts",
     "expected a list of contexts, got a string"),
    ({"question": "q?", "answer": "a", "contexts": ["ok context", 3]}, "contexts[1]",
     "expected a non-empty string or an object with a non-empty string 'text', got a number"),
    ({"question": "q?", "answer": "a", "contexts": [{"id": "d1"}]}, "contexts[0]",
     "an object context needs a 'text'; its keys: 'id'"),
    ({"question": "q?", "answer": 42, "contexts": []}, "answer", "expected a string, got 42"),
    ({"answer": "a", "contexts": []}, "question", "missing; expected a non-empty string"),
    ({"question": "q?", "answer": "a", "contexts": [], "ground_truth_contexts": []},
     "ground_truth_contexts", "expected a non-empty list of non-empty strings, got an empty list"),
    ({"question": "q?", "error": ""}, "error", "expected a non-empty string"),
    # issue 61 item 31: the last of the two was kept silently
    ({"question": "q?", "answer": "a", "contexts": [], "latency_ms": 120, "latency_s": 2},
     "latency_s", "both latency_ms and latency_s are given: give one"),
])
def test_a_bad_line_names_the_file_line_and_field(tmp_path, capsys, line, field, message):
    good = {"question": "fine?", "answer": "yes", "contexts": []}
    src = write_jsonl(tmp_path / "o.jsonl", [good, line])
    with pytest.raises(DataError) as e:
        load_outputs(src)
    assert (e.value.line, e.value.field) == (2, field)
    code, _, err = run_cli(["run", "--outputs", str(src), "--quiet"], capsys)
    assert code == 2
    assert err.startswith(f"error: {src}, line 2, field '{field}': {message}")


def test_a_bad_outputs_file_exits_2_without_a_traceback(tmp_path):
    src = write_jsonl(tmp_path / "o.jsonl", [{"question": "q?", "contexts": []}])
    p = subprocess.run([sys.executable, "-m", "ragmark", "run", "--outputs", str(src)],
                       capture_output=True, text=True, cwd=tmp_path)
    assert p.returncode == 2
    assert "Traceback" not in p.stderr
    assert p.stderr == (f"error: {src}, line 1, field 'answer': missing; expected a string "
                        "(the system's answer)\n")


def test_outputs_excludes_config_and_one_of_them_is_needed(tmp_path, capsys):
    src = write_jsonl(tmp_path / "o.jsonl", LINES)
    code, _, err = run_cli(["run", "--outputs", str(src), "--dataset", str(src),
                            "--config", "sparse", "--top-k", "3"], capsys)
    assert code == 2  # with --dataset, the dataset's ground truth scores the log
    assert err == ("error: --outputs scores logged answers and contexts as they are; it "
                   "cannot be combined with --config, --top-k (a config given with it sets "
                   "only how it is judged: llm, judges, language, refusal_patterns, "
                   "refusal_judge, context_match, grounded_threshold)\n")
    code, _, err = run_cli(["run", "--outputs", str(src), "--corpus", str(src)], capsys)
    assert code == 2 and "--corpus without --dataset" in err
    code, _, err = run_cli(["run", "--quiet"], capsys)
    assert code == 2
    assert err.startswith("error: give --dataset PATH (a dataset to run a config on) or "
                          "--outputs FILE")


def test_duplicate_ids_are_rejected(tmp_path):
    src = write_jsonl(tmp_path / "o.jsonl", [LINES[0], LINES[0]])
    with pytest.raises(DataError) as e:
        load_outputs(src)
    assert str(e.value) == f'{src}, line 2, field \'id\': duplicate id "q1" (first at line 1)'


def test_judge_metrics_judge_the_logged_answers(tmp_path, capsys, server, monkeypatch):
    for var in ("RAGMARK_LLM_BASE_URL", "RAGMARK_LLM_MODEL", "RAGMARK_LLM_API_KEY_ENV"):
        monkeypatch.delenv(var, raising=False)
    server.rule = lambda body: Reply(body={
        "id": "x", "object": "chat.completion", "usage": {"prompt_tokens": 9,
                                                          "completion_tokens": 3},
        "choices": [{"index": 0, "message": {"role": "assistant",
                                             "content": '{"rating": 4, "reason": "ok"}'}}]})
    src = write_jsonl(tmp_path / "logged.jsonl", LINES)
    out_path = tmp_path / "r.json"
    code, _, _ = run_cli(["run", "--outputs", str(src), "--judge-metrics", "answer_relevance",
                          "--llm-base-url", server.url, "--llm-model", "test-model",
                          "--output", str(out_path), "--quiet"], capsys)
    assert code == 0
    data = json.loads(out_path.read_text())
    assert data["metrics"]["answer_relevance"] == 0.75  # rating 4 of 1-5, all three lines
    assert data["counts"]["answer_relevance"] == {"n": 3, "missing": 0}
    prompts = [json.dumps(r.body["messages"]) for r in server.requests]
    assert len(prompts) == 3
    assert sum("BM25 ranks documents by term frequency" in p for p in prompts) == 1


def test_the_join_note_counts_lines_joined_by_text_once(tmp_path):
    """Issue 48, item 6: eleven lines, two of them asking again a question an earlier
    line joined: 9 joined, 9 of them by text (it said 11 by text)."""
    from ragmark.data import load_dataset
    from ragmark.data.outputs import join_outputs, load_outputs

    questions = [f"What is item {i}?" for i in range(9)]
    (tmp_path / "set.json").write_text(json.dumps(
        [{"question": q, "ground_truth_contexts": [f"Item {i} is a thing."]}
         for i, q in enumerate(questions)]))
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps({"question": q, "answer": "a", "contexts": ["c"]})
                           + "\n" for q in [*questions, questions[0], questions[1]]))
    joined, notes = join_outputs(load_outputs(log), load_dataset(tmp_path / "set.json"))
    assert len(joined) == 9 and sorted(joined.lines) == sorted(joined)
    assert notes[0] == ("9 of 11 logged outputs joined the dataset's questions (by their "
                        "question text); the dataset's ground truth scores them")
    assert notes[-1].startswith("2 logged outputs are left out: 2 join a question an "
                                "earlier line joined")


def test_what_a_joined_log_adds_stays_with_its_questions(tmp_path, capsys):
    """Issue 61 item 33: compare --outputs dropped the logs' extra fields on the
    questions (run kept them); a logged expected_answer was dropped when the log was
    joined to a dataset that has none (a BEIR set), so token_f1 and the reference judges
    went missing."""
    beir = tmp_path / "beir"
    (beir / "qrels").mkdir(parents=True)
    (beir / "corpus.jsonl").write_text(json.dumps({"_id": "d1", "text": "Paris is the "
                                                   "capital of France."}) + "\n")
    (beir / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "Capital of "
                                                    "France?"}) + "\n")
    (beir / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    logs = []
    for name, said in (("a", "Paris"), ("b", "Lyon")):
        logs.append(write_jsonl(tmp_path / f"{name}.jsonl", [{
            "id": "q1", "question": "Capital of France?", "answer": said,
            "contexts": [{"id": "d1", "text": "Paris is the capital of France."}],
            "expected_answer": "Paris", "ticket": f"T-{name}"}]))
    out = tmp_path / "r.json"
    code, _, err = run_cli(["run", "--dataset", str(beir), "--outputs", str(logs[0]),
                            "--metrics", "token_f1", "--output", str(out),
                            "--include-details", "--no-history", "--quiet"], capsys)
    assert code == 0, err
    data = json.loads(out.read_text())
    assert data["metrics"]["token_f1"] == 1.0
    code, _, err = run_cli(["compare", "--dataset", str(beir), "--outputs", str(logs[0]),
                            "--outputs", str(logs[1]), "--metrics", "token_f1",
                            "--output", str(tmp_path / "c"), "--include-details",
                            "--no-history", "--quiet"], capsys)
    assert code == 0, err
    got = json.loads((tmp_path / "c.json").read_text())
    assert {n: c["metrics"]["token_f1"] for n, c in got["configs"].items()} == {
        "a": 1.0, "b": 0.0}
    # the questions compare scores keep what the first log's line adds, as run's do
    from types import SimpleNamespace

    from ragmark.data import load_dataset
    from ragmark.plan.sources import logged_systems

    req = SimpleNamespace(configs=(), outputs=[str(p) for p in logs], search_tools=(),
                          strict=False, encoding=None, input_format=None)
    _, _, ds = logged_systems(req, load_dataset(beir), [])
    assert ds.samples[0].extra["ticket"] == "T-a"
    assert ds.samples[0].expected_answer == "Paris"
