"""`ragmark testset` against a real local HTTP server whose rule writes questions from the
documents in each request: the set round-trips through `ragmark run`, bad candidates are
rejected and counted by reason, types are balanced, reruns are served from the cache."""

from __future__ import annotations

import json
import socket

from support.cli import run_cli
from support.fake_llm_server import Reply
from testset_support import DOCS, chat, is_reask, request_documents, write_corpus, writer

from ragmark.data import load_dataset


def cmd(corpus, out, server, *extra):
    return ["testset", "--corpus", str(corpus), "--output", str(out), "--llm-base-url",
            server.url, "--llm-model", "test-model", "--quiet", *extra]


def read(path):
    return json.loads(path.read_text())


def test_a_generated_set_validates_and_round_trips_through_run(corpus, tmp_path, capsys,
                                                               server):
    server.rule = writer()
    out = tmp_path / "testset.json"
    code, stdout, _ = run_cli(cmd(corpus, out, server, "--size", "4", "--types",
                                      "factual,comparative"), capsys)
    assert code == 0
    items = read(out)
    assert [i["id"] for i in items] == ["q1", "q2", "q3", "q4"]
    assert sorted(i["type"] for i in items) == ["comparative", "comparative", "factual",
                                                "factual"]
    for item in items:
        n = 2 if item["type"] == "comparative" else 1
        assert len(item["source_ids"]) == len(set(item["source_ids"])) == n
        assert item["difficulty"] == ("medium" if n == 2 else "easy")
        # the model's lower-cased quotes come back as the documents' own text
        for quote, doc in zip(item["ground_truth_contexts"], item["source_ids"], strict=True):
            assert quote[0].isupper() and quote in DOCS[doc]
        assert set(item) == {"id", "question", "ground_truth_contexts", "expected_answer",
                             "type", "difficulty", "source_ids"}
    ds = load_dataset(out, corpus)
    assert ds.format == "context" and len(ds.samples) == 4
    assert dict(ds.samples[0].extra) == {k: items[0][k] for k in
                                         ("type", "difficulty", "source_ids")}
    report = read(tmp_path / "testset.report.json")
    assert (report["generated"], report["kept"], report["rejected"]) == (4, 4, 0)
    assert report["output"] == str(out) and report["chunker"] == "fixed"
    assert len(server.requests) == 4
    assert report["kept_by_difficulty"] == {"easy": 2, "medium": 2}
    assert f"Wrote 4 questions to {out} (factual 2, comparative 2; easy 2, medium 2)" in stdout
    assert "Candidates: 4 generated, 4 kept, 0 rejected" in stdout

    results = tmp_path / "results.json"
    code, _, _ = run_cli(["run", "--dataset", str(out), "--corpus", str(corpus), "--output",
                          str(results), "--include-details", "--quiet"], capsys)
    assert code == 0
    data = read(results)
    for metric in ("recall@10", "mrr@10", "ndcg@10", "hit@5"):
        assert data["counts"][metric] == {"n": 4, "missing": 0}
    # 8 one-chunk documents, top 10: every quote is matched by the chunk it came from
    assert data["metrics"]["recall@10"] == 1.0
    assert all(any(r["grade"] for r in q["retrieved"]) for q in data["queries"])


def test_a_rerun_makes_no_request_and_writes_the_same_file(corpus, tmp_path, capsys, server):
    server.rule = writer()
    out = tmp_path / "t.json"
    args = cmd(corpus, out, server, "--size", "8")
    assert run_cli(args, capsys)[0] == 0
    first, posts, gets = out.read_bytes(), len(server.requests), len(server.gets)
    assert posts == 8 and gets == 1  # one probe, then the calls
    # an existing test set is never replaced silently
    code, _, err = run_cli(args, capsys)
    assert code == 2 and err == (f"error: --output {out}: the file exists; choose another path "
                                 "or pass --overwrite\n")
    code, stdout, _ = run_cli([*args, "--overwrite"], capsys)
    assert code == 0 and out.read_bytes() == first
    assert (len(server.requests), len(server.gets)) == (8, 1)
    assert read(tmp_path / "t.report.json")["llm"]["cache_hits"] == 8
    assert "LLM testset (test-model): 0 calls, 8 cache hits" in stdout
    # another seed draws other passages
    assert run_cli(cmd(corpus, tmp_path / "s1.json", server, "--size", "8", "--seed",
                           "1"), capsys)[0] == 0
    assert [i["source_ids"] for i in read(tmp_path / "s1.json")] != [
        i["source_ids"] for i in read(out)]


BAD = {"lighthouse.txt", "coffee.txt", "glacier.txt", "honey.txt"}


def test_a_quote_not_in_its_document_is_rejected_and_counted(corpus, tmp_path, capsys,
                                                            server):
    def invent(body, answer):
        if any(d.strip() == DOCS[name] for d in request_documents(body) for name in BAD):
            answer["quotes"] = ["This sentence appears in none of the documents."]
        return answer

    server.rule = writer(invent)
    out = tmp_path / "t.json"
    code, stdout, _ = run_cli(cmd(corpus, out, server, "--size", "4", "--types",
                                      "factual"), capsys)
    assert code == 0
    report = read(tmp_path / "t.report.json")
    # 4 good documents of 8: the first round (4 + 1) draws at least one bad one
    bad = report["rejections"]
    assert bad and {r["reason"] for r in bad} == {"quote_not_in_source"}
    assert all(r["source_ids"][0] in BAD for r in bad)
    assert report["rejected_by_reason"] == {"quote_not_in_source": len(bad)}
    assert report["kept"] == 4 and report["generated"] == 4 + len(bad)
    assert sorted(i["source_ids"][0] for i in read(out)) == sorted(set(DOCS) - BAD)
    assert f"{len(bad)} rejected (quote not found in its source {len(bad)})" in stdout


def test_duplicate_questions_are_dropped_and_counted(corpus, tmp_path, capsys, server):
    def same(body, answer):
        first = request_documents(body)[0]
        answer["question"] = ("What does the record say about the harbour?"
                              if "a" in first[:3] else "what does the OLD record say "
                              "about the harbour")
        return answer

    server.rule = writer(same)
    out = tmp_path / "t.json"
    code, stdout, _ = run_cli(cmd(corpus, out, server, "--size", "3", "--types",
                                      "factual"), capsys)
    assert code == 0
    report = read(tmp_path / "t.report.json")
    assert (report["generated"], report["kept"]) == (6, 1)  # the cap: 2 x 3
    assert report["rejected_by_reason"] == {"duplicate_question": 5}
    assert len(read(out)) == 1
    assert report["notes"] == ["only 1 of 3 items (factual 1 of 3): the candidate limit (6) "
                               "was reached"]
    assert "5 rejected (near-duplicate question 5)" in stdout
    assert "Note: only 1 of 3 items" in stdout


def test_types_are_balanced_and_a_full_quota_rejects(corpus, tmp_path, capsys, server):
    server.rule = writer()
    out = tmp_path / "t.json"
    assert run_cli(cmd(corpus, out, server, "--size", "8"), capsys)[0] == 0
    report = read(tmp_path / "t.report.json")
    assert report["kept_by_type"] == {"factual": 2, "comparative": 2, "reasoning": 2,
                                      "summarization": 2}
    assert [i["type"] for i in read(out)] == ["factual", "comparative", "reasoning",
                                              "summarization"] * 2

    def all_factual(body, answer):  # a model that calls every one-document question factual
        if answer["type"] in ("reasoning", "summarization"):
            answer["type"] = "factual"
        return answer

    server.rule = writer(all_factual)
    out = tmp_path / "f.json"  # another model: nothing from the cache of the first run
    code, stdout, _ = run_cli(cmd(corpus, out, server, "--size", "8", "--llm-model",
                                  "other-model", "--words-only"), capsys)
    assert code == 0
    report = read(tmp_path / "f.report.json")
    # each question counts as the type it was asked for; the model's label is counted
    assert report["kept_by_type"] == {"factual": 2, "comparative": 2, "reasoning": 2,
                                      "summarization": 2}
    assert [i["type"] for i in read(out)] == ["factual", "comparative", "reasoning",
                                              "summarization"] * 2
    assert report["labelled_otherwise"] == {"reasoning as factual": 2,
                                            "summarization as factual": 2}
    assert report["generated"] == 8 and report["rejected_by_reason"] == {}
    assert ("labelled otherwise by the model: reasoning as factual 2, summarization as "
            "factual 2") in stdout


def test_invalid_output_twice_and_failed_calls_are_counted(corpus, tmp_path, capsys, server):
    def flaky(body, answer):
        docs = request_documents(body)
        if docs[0].strip() == DOCS["honey.txt"]:
            return "I would rather not answer in JSON."  # first ask and re-ask
        if docs[0].strip() == DOCS["tides.txt"] and not is_reask(body):
            return "Here you go: {question: tides"  # the re-ask then succeeds
        if docs[0].strip() == DOCS["bridge.txt"]:
            return Reply(status=400, body={"error": {"message": "context too long"}})
        return answer

    server.rule = writer(flaky)
    out = tmp_path / "t.json"
    code, stdout, _ = run_cli(cmd(corpus, out, server, "--size", "8", "--types",
                                      "factual"), capsys)
    assert code == 0
    report = read(tmp_path / "t.report.json")
    assert report["rejected_by_reason"] == {"call_failed": 1, "invalid_output": 1}
    assert (report["generated"], report["kept"]) == (8, 6)
    assert report["llm"]["judge_reasks"] == 2 and report["llm"]["failures"] == 1
    assert report["llm"]["judge_failures"] == 2  # the invalid one and the failed call
    assert len(server.requests) == 8 + 2  # two re-asks
    kept = {i["source_ids"][0] for i in read(out)}
    assert "tides.txt" in kept and not kept & {"honey.txt", "bridge.txt"}
    why = {r["reason"]: r["detail"] for r in report["rejections"]}
    assert "HTTP 400" in why["call_failed"]
    assert "unusable judge output after a re-ask" in why["invalid_output"]
    assert ("the corpus has no more passages for factual" in report["notes"][0])
    assert "(the call failed 1, invalid output after a re-ask 1)" in stdout
    assert "1 failed calls, 2 candidates without a usable answer; tokens" in stdout


def test_dry_run_counts_calls_and_calls_nothing(corpus, tmp_path, capsys, server):
    out = tmp_path / "t.json"
    args = cmd(corpus, out, server, "--size", "8", "--llm-prices", "1.0,2.0")
    code, stdout, _ = run_cli([*args, "--dry-run"], capsys)
    assert code == 0
    assert server.requests == [] and server.gets == [] and not out.exists()
    assert stdout.startswith("dry run: 8 generation calls to test-model at http://127.0.0.1:")
    assert "(0 already cached)" in stdout and "estimated cost $0.00" in stdout
    assert "up to 16 candidates" in stdout and "Nothing was called" in stdout
    server.rule = writer()
    assert run_cli(args, capsys)[0] == 0
    code, stdout, _ = run_cli([*args, "--dry-run"], capsys)
    assert stdout.startswith("dry run: 0 generation calls") and "(8 already cached)" in stdout


def test_bad_use_is_an_error_without_a_traceback(corpus, tmp_path, capsys, server):
    out = tmp_path / "t.json"
    code, _, err = run_cli(["testset", "--corpus", str(corpus), "--size", "2", "--output",
                            str(out)], capsys)
    assert code == 2 and "ragmark testset needs an LLM endpoint: give --llm-base-url" in err
    code, _, err = run_cli(cmd(corpus, out, server, "--size", "2", "--types", "trivia"),
                           capsys)
    assert code == 2 and "--types: unknown question type 'trivia'; known: factual" in err
    code, _, err = run_cli(cmd(corpus, tmp_path / "t.jsonl", server, "--size", "2"),
                           capsys)
    assert code == 2 and "give a name ending in .json" in err
    one = write_corpus(tmp_path / "one", {"a.txt": DOCS["vasa.txt"]})
    code, _, err = run_cli(cmd(one, out, server, "--size", "2"), capsys)
    assert code == 2 and "comparative questions draw on two documents, but the corpus" in err
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    code, _, err = run_cli(["testset", "--corpus", str(corpus), "--size", "2", "--output",
                            str(out), "--llm-base-url", dead, "--llm-model", "m", "--quiet"],
                           capsys)
    assert code == 2 and "error: the LLM endpoint did not answer: cannot reach" in err
    assert "Traceback" not in err and not out.exists() and server.requests == []


def test_nothing_kept_writes_the_report_only_and_fails(corpus, tmp_path, capsys, server):
    server.rule = lambda body: chat("no idea")
    out = tmp_path / "t.json"
    code, stdout, err = run_cli(cmd(corpus, out, server, "--size", "1", "--types",
                                        "factual"), capsys)
    assert code == 2 and not out.exists()
    report = read(tmp_path / "t.report.json")
    assert report["output"] is None and report["rejected_by_reason"] == {"invalid_output": 2}
    assert "error: no question passed the checks" in err


def test_passages_are_cut_by_the_configs_chunker_so_run_with_it_finds_every_quote(
    corpus, tmp_path, capsys, server
):
    long = write_corpus(tmp_path / "long", {
        "lakes.txt": " ".join(DOCS[k] for k in ("baikal.txt", "tides.txt", "glacier.txt")),
        "ships.txt": " ".join(DOCS[k] for k in ("vasa.txt", "lighthouse.txt", "bridge.txt")),
        "food.txt": " ".join(DOCS[k] for k in ("honey.txt", "coffee.txt"))})
    small = tmp_path / "small.toml"
    small.write_text('name = "small"\n[chunker]\nname = "fixed"\nsize = 160\noverlap = 0\n')
    server.rule = writer()
    out = tmp_path / "t.json"
    code, _, _ = run_cli(cmd(long, out, server, "--size", "4", "--types", "factual",
                             "--config", str(small)), capsys)
    assert code == 0
    items = read(out)
    assert len(items) == 4
    from ragmark.chunking import FixedChunker
    from ragmark.data.corpus import load_corpus

    chunks = [c.text for d in load_corpus(long).documents
              for c in FixedChunker(size=160, overlap=0).chunk(d)]
    for item in items:
        assert any(item["ground_truth_contexts"][0] in c for c in chunks)
    results = tmp_path / "r.json"
    code, _, _ = run_cli(["run", "--dataset", str(out), "--corpus", str(long), "--config",
                          str(small), "--top-k", "50", "--metrics", "recall@50",
                          "--skip-generation", "--output", str(results), "--quiet"], capsys)
    assert code == 0
    data = read(results)
    assert data["metrics"]["recall@50"] == 1.0
    assert data["counts"]["recall@50"] == {"n": 4, "missing": 0}
    # whole documents instead: one passage per document, the report says so
    code, _, _ = run_cli(cmd(long, tmp_path / "d.json", server, "--size", "2", "--types",
                             "factual", "--unit", "document"), capsys)
    assert code == 0 and read(tmp_path / "d.report.json")["chunker"] == "whole"


def test_a_provider_batch_writes_the_same_set(corpus, tmp_path, capsys, server, monkeypatch):
    server.rule = writer()
    code, _, _ = run_cli(cmd(corpus, tmp_path / "i.json", server, "--size", "6"), capsys)
    assert code == 0
    asked = len(server.requests)
    monkeypatch.setenv("RAGMARK_HOME", str(tmp_path / "batch-home"))
    monkeypatch.setenv("RAGMARK_LLM_BATCH_POLL", "0.01")
    code, _, err = run_cli(cmd(corpus, tmp_path / "b.json", server, "--size", "6",
                               "--llm-batch"), capsys)
    assert code == 0, err
    assert [r.path for r in server.requests[asked:]] == ["/v1/files", "/v1/batches"]
    assert (tmp_path / "b.json").read_bytes() == (tmp_path / "i.json").read_bytes()
    assert read(tmp_path / "b.report.json")["llm"]["batch_calls"] == asked


def test_a_small_context_window_is_fitted(corpus, tmp_path, capsys, server):
    """Issue 25 item 8: testset's calls fit the model's window (here learnt from the
    server's refusal) instead of being refused."""
    server.rule = writer()
    server.n_ctx = 1400
    out = tmp_path / "testset.json"
    code, _, err = run_cli(cmd(corpus, out, server, "--size", "4", "--types", "factual"),
                           capsys)
    assert code == 0, err
    assert len(read(out)) == 4
    assert server.refused >= 1  # the first call taught the window
    fitted = [r for r in server.requests if r.body and r.body.get("max_tokens")
              and sum(len(str(m["content"])) for m in r.body["messages"]) // 4
              + r.body["max_tokens"] <= 1400]
    assert len(fitted) == len(server.requests) - server.refused
    assert {r.body["max_tokens"] for r in fitted} != {1024}


def test_each_format_reads_back_as_the_same_questions(corpus, tmp_path, capsys, server):
    """The same generation (the calls come from the cache after the first) written as
    ragmark's JSON, RAGAS JSON Lines, a LlamaIndex rag_dataset.json and DeepEval goldens;
    each read back with --dataset gives the same questions, answers and passages."""
    server.rule = writer()
    got = {}
    for fmt, name in (("ragmark", "s.json"), ("ragas", "s.jsonl"),
                      ("llamaindex", "rag_dataset.json"), ("deepeval", "goldens.json")):
        out = tmp_path / fmt / name
        code, _, err = run_cli(cmd(corpus, out, server, "--size", "4", "--output-format", fmt),
                               capsys)
        assert code == 0, err
        ds = load_dataset(out, corpus)
        assert ds.format == ("context" if fmt == "ragmark" else fmt)
        got[fmt] = [(s.question, s.expected_answer, tuple(s.truth.passages))
                    for s in ds.samples]
    assert len(got["ragmark"]) == 4
    assert got["ragas"] == got["llamaindex"] == got["deepeval"] == got["ragmark"]
    first = read(tmp_path / "llamaindex" / "rag_dataset.json")["examples"][0]
    assert first["query_by"] == {"model_name": "test-model", "type": "ai"}
    lines = (tmp_path / "ragas" / "s.jsonl").read_text().splitlines()
    assert set(json.loads(lines[0])) == {"user_input", "reference_contexts", "reference"}
    code, _, err = run_cli(cmd(corpus, tmp_path / "x.json", server, "--size", "1",
                               "--output-format", "ragas"), capsys)
    assert code == 2 and "give a name ending in .jsonl" in err
    # the former name of --output-format, for one release
    code, _, err = run_cli(cmd(corpus, tmp_path / "x.json", server, "--size", "1",
                               "--format", "ragas"), capsys)
    assert code == 2 and "give a name ending in .jsonl" in err
    assert "warning: --format is renamed --output-format" in err


def test_the_language_is_asked_for(corpus, tmp_path, capsys, server):
    server.rule = writer()
    out = tmp_path / "de.json"
    code, _, err = run_cli(cmd(corpus, out, server, "--size", "2", "--language", "de"),
                           capsys)
    assert code == 0, err
    systems = [r.body["messages"][0]["content"] for r in server.requests]
    assert systems and all("Write the question and the answer in German" in s
                           for s in systems)
    code, _, err = run_cli(cmd(corpus, tmp_path / "x.json", server, "--size", "1",
                               "--language", "klingon"), capsys)
    assert code == 2 and "--language: unknown language 'klingon'" in err
