"""``ragmark simulate`` against ragmark's own pipeline: a config without a [pipeline]
over --corpus, indexed once, each turn retrieved with BM25 from its own message and
answered by the LLM generator with the conversation so far (the generator and the
simulated user are one scripted server, told apart by their prompts)."""

from __future__ import annotations

import json

from support.cli import run_cli
from support.fake_llm_server import chat_reply
from test_play import _user

from ragmark.generation.llm import PLAIN

CORPUS = [
    {"_id": "d1", "title": "BM25", "text": "BM25 ranks documents by term weights."},
    {"_id": "d2", "title": "Rerankers", "text": "A reranker reorders the candidate passages."},
    {"_id": "d3", "title": "Chunking", "text": "Chunking splits long documents into passages."},
]
SCENARIO = {"id": "goal", "scenario": "Learn what BM25 ranks.",
            "expected_outcome": "The assistant says BM25 ranks documents.",
            "ground_truth_contexts": ["BM25 ranks documents by term weights."]}


def _both(body):
    """The generator (its instruction first) says how many earlier turns it was shown and
    the first words of its first passage; anything else is the simulated user."""
    messages = body["messages"]
    if messages[0]["content"].startswith(PLAIN[:40]):
        earlier = len(messages) - 2
        passage = messages[-1]["content"].split("\n")[1]
        return chat_reply(f"{earlier} earlier messages; first passage: {passage}")
    return _user(body)


def _files(tmp_path):
    (tmp_path / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in CORPUS))
    (tmp_path / "scenarios.jsonl").write_text(json.dumps(SCENARIO) + "\n")
    return tmp_path / "scenarios.jsonl", tmp_path / "corpus.jsonl"


def _config(tmp_path, server, generator):
    cfg = tmp_path / "own.toml"
    gen = (f'[generator]\nname = "llm"\nbase_url = "{server.url}"\nmodel = "gen"\n'
           if generator == "llm" else '[generator]\nname = "top1"\n')
    cfg.write_text(f'name = "own"\ntop_k = 3\ntop_n = 1\n[retriever]\nname = "bm25"\n{gen}')
    return cfg


def test_own_pipeline_indexes_once_and_answers_each_turn_with_the_conversation(
        server, tmp_path, capsys):
    server.rule = _both
    scenarios, corpus = _files(tmp_path)
    cfg = _config(tmp_path, server, "llm")
    out = tmp_path / "t.jsonl"
    code, said, err = run_cli(["simulate", str(scenarios), "--config", str(cfg), "--corpus",
                               str(corpus), "--transcripts", str(out), "--llm-base-url",
                               server.url, "--llm-model", "sim"], capsys)
    assert code == 0, err
    turns = json.loads(out.read_text())["turns"]
    # turn 1: "what does bm25 do?" retrieves d1 first; the generator saw no earlier turn.
    # turn 2: "ranks what exactly?" retrieves by its own words (d1 again: "ranks"), and
    # the generator saw turn 1's question and answer (2 messages) before it
    assert [t["question"] for t in turns] == ["what does bm25 do?", "ranks what exactly?"]
    d1 = {"text": "BM25 ranks documents by term weights.", "id": "d1#0", "doc_id": "d1"}
    assert [t["contexts"] for t in turns] == [[d1], [d1]]  # top_n = 1
    assert [t["answer"] for t in turns] == [
        "0 earlier messages; first passage: BM25 ranks documents by term weights.",
        "2 earlier messages; first passage: BM25 ranks documents by term weights."]
    gen_calls = [r for r in server.requests if r.body and r.body["messages"][0][
        "content"].startswith(PLAIN[:40])]
    assert len(gen_calls) == 2
    assert [m["role"] for m in gen_calls[1].body["messages"]] == [
        "system", "user", "assistant", "user"]
    assert gen_calls[1].body["messages"][1]["content"] == "what does bm25 do?"
    # the transcripts score as any log: the scenario's passage is each turn's truth
    code, _, err = run_cli(["run", "--outputs", str(out), "--metrics", "hit@1",
                            "--output", str(tmp_path / "r.json"), "--quiet",
                            "--no-history"], capsys)
    assert code == 0, err
    assert json.loads((tmp_path / "r.json").read_text())["metrics"]["hit@1"] == 1.0


def test_own_pipeline_needs_a_corpus_and_a_pipeline_refuses_one(server, tmp_path, capsys):
    server.rule = _both
    scenarios, corpus = _files(tmp_path)
    cfg = _config(tmp_path, server, "top1")
    base = ["simulate", str(scenarios), "--config", str(cfg), "--transcripts",
            str(tmp_path / "t.jsonl"), "--llm-base-url", server.url, "--llm-model", "sim"]
    code, _, err = run_cli(base, capsys)
    assert code == 2 and err == (
        "error: config 'own' has no [pipeline], so simulate asks ragmark's own pipeline: "
        "give --corpus, the documents it retrieves from (or a config with a [pipeline] "
        "table: python, langchain, llamaindex or http)\n")
    piped = tmp_path / "piped.toml"
    piped.write_text('name = "piped"\n[pipeline]\nkind = "http"\nurl = "http://127.0.0.1:9/a"\n')
    code, _, err = run_cli(["simulate", str(scenarios), "--config", str(piped), "--corpus",
                            str(corpus), *base[4:]], capsys)
    assert code == 2 and "config 'piped' has a [pipeline], which retrieves by itself" in err
    assert not server.requests
    # an extractive generator answers from the turn's passage alone
    code, _, err = run_cli([*base, "--corpus", str(corpus)], capsys)
    assert code == 0, err
    turns = json.loads((tmp_path / "t.jsonl").read_text())["turns"]
    assert turns[0]["answer"] == "BM25 ranks documents by term weights."


def test_the_simulated_user_is_the_judges_endpoint_unless_told_otherwise(server, tmp_path,
                                                                       capsys):
    server.rule = _both
    scenarios, corpus = _files(tmp_path)
    cfg = _config(tmp_path, server, "llm")
    base = ["simulate", str(scenarios), "--config", str(cfg), "--corpus", str(corpus),
            "--llm-base-url", server.url, "--llm-model", "judge"]

    def user_calls(*more, out="t.jsonl"):
        server.requests.clear()
        code, _, err = run_cli([*base, "--transcripts", str(tmp_path / out), *more], capsys)
        assert code == 0, err
        return [(r.body["model"], r.body.get("temperature")) for r in server.requests
                if r.body and not r.body["messages"][0]["content"].startswith(PLAIN[:40])
                and r.body.get("max_tokens") != 1]  # not the endpoint checks

    assert set(user_calls()) == {("judge", 0.0)}
    cfg.write_text(cfg.read_text() + '[simulator]\nmodel = "user"\ntemperature = 0.3\n')
    assert set(user_calls(out="t2.jsonl")) == {("user", 0.3)}
    assert set(user_calls("--simulator", f"other@{server.url}", "--simulator-temperature",
                          "0.5", out="t3.jsonl")) == {("other", 0.5)}
    code, _, err = run_cli([*base, "--transcripts", str(tmp_path / "t4.jsonl"),
                            "--simulator", "@nothing"], capsys)
    assert code == 2 and err == ("error: --simulator '@nothing': expected MODEL or "
                                 "MODEL@BASE_URL\n")
