"""Conversations (issue 23, item 1, first step): a conversation set or a log of
conversations, each turn a question with its own ground truth and contexts; metrics per
turn, then per turn position and per conversation (mean, last turn, first failing turn),
hand-worked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli import run_cli

P1 = "BM25 ranks documents by term frequency and inverse document frequency."
P2 = "A reranker reorders the candidate passages with a stronger cross-encoder model."
P3 = "Dense retrievers embed queries and passages into the same vector space."

LOG = [
    {"conversation_id": "c1", "turns": [
        {"question": "What does BM25 rank?", "ground_truth_contexts": [P1],
         "answer": "documents", "contexts": [P1]},
        {"question": "And what reorders them afterwards?", "ground_truth_contexts": [P2],
         "answer": "a reranker", "contexts": [P3, P2]}]},
    {"conversation_id": "c2", "turns": [
        {"question": "What reorders candidate passages?", "ground_truth_contexts": [P2],
         "answer": "dense retrievers", "contexts": [P3]}]},
]


def test_a_log_of_conversations_is_scored_per_turn_and_per_conversation(tmp_path, capsys):
    """recall@1 / MRR per turn: c1#1 1 / 1 (P1 first), c1#2 0 / 0.5 (P2 second), c2#1
    0 / 0. By turn: turn 1 (c1, c2) recall@1 1/2, MRR 1/2; turn 2 (c1) 0 and 0.5. Per
    conversation: c1 recall@1 mean 0.5, last 0, first failing turn 2; MRR mean 0.75,
    last 0.5, never under 0.5; c2 all 0, failing at turn 1. Over the conversations:
    recall@1 mean of means 0.25, last turns 0, 2 failing, first failing turn 1.5 on
    average; MRR 0.375, 0.25, 1 failing at turn 1."""
    log = tmp_path / "chats.jsonl"
    log.write_text("\n".join(json.dumps(c) for c in LOG) + "\n", encoding="utf-8")
    out = tmp_path / "r.json"
    code, stdout, err = run_cli(["run", "--outputs", str(log), "--metrics", "recall@1,mrr",
                                 "--output", str(out), "--include-details", "--no-history"],
                                capsys)
    assert code == 0, err
    data = json.loads(out.read_text())
    assert data["per_query"] == {"c1#1": {"recall@1": 1.0, "mrr": 1.0},
                                 "c1#2": {"recall@1": 0.0, "mrr": 0.5},
                                 "c2#1": {"recall@1": 0.0, "mrr": 0.0}}
    conv = data["conversations"]
    assert conv["conversations"] == 2
    by_turn = {t["turn"]: t for t in conv["by_turn"]}
    assert by_turn[1]["questions"] == 2 and by_turn[2]["questions"] == 1
    assert by_turn[1]["metrics"]["recall@1"] == {"mean": 0.5, "n": 2}
    assert by_turn[2]["metrics"]["mrr"] == {"mean": 0.5, "n": 1}
    rows = {r["conversation_id"]: r["metrics"] for r in conv["by_conversation"]}
    assert rows["c1"]["recall@1"] == {"mean": 0.5, "last": 0.0, "first_failing_turn": 2}
    assert rows["c1"]["mrr"] == {"mean": 0.75, "last": 0.5, "first_failing_turn": None}
    assert rows["c2"]["mrr"] == {"mean": 0.0, "last": 0.0, "first_failing_turn": 1}
    assert conv["overall"]["recall@1"] == {
        "mean_of_conversations": 0.25, "n": 2, "last_turn": 0.0, "n_last": 2,
        "failing_when": "< 0.5", "failing_conversations": 2, "mean_first_failing_turn": 1.5}
    assert conv["overall"]["mrr"]["mean_of_conversations"] == pytest.approx(0.375)
    assert conv["overall"]["mrr"]["failing_conversations"] == 1
    assert "2 conversations, by turn" in stdout
    # each turn knows the conversation it is in and what was said before it
    (second,) = [q for q in data["queries"] if q["id"] == "c1#2"]
    assert second["question"] == "And what reorders them afterwards?"
    from ragmark.data.outputs import load_outputs

    sample = {s.id: s for s in load_outputs(log).dataset.samples}["c1#2"]
    assert sample.extra["conversation_id"] == "c1" and sample.extra["turn"] == 2
    assert sample.extra["history"] == [{"question": "What does BM25 rank?",
                                        "answer": "documents"}]


def test_failing_follows_each_metric_s_direction(tmp_path, capsys):
    """Refusal 0 and latency 0.055 s are no failure (issue 33, item 14): refusal fails a
    turn above 0.5 (lower is better), latency (seconds, its own scale) has no failing
    turn; groundedness fails under 0.5. c1: turn 2 refuses ("I don't know"), so refusal
    fails at turn 2; c2 never refuses."""
    rows = [{"conversation_id": "c1", "turns": [
                {"question": "What does BM25 rank?", "answer": "documents", "contexts": [P1],
                 "latency_ms": 55},
                {"question": "And then?", "answer": "I don't know.", "contexts": [P2],
                 "latency_ms": 60}]},
            {"conversation_id": "c2", "turns": [
                {"question": "What reorders passages?", "answer": "a reranker",
                 "contexts": [P2], "latency_ms": 50}]}]
    log = tmp_path / "chats.jsonl"
    log.write_text("\n".join(json.dumps(c) for c in rows) + "\n", encoding="utf-8")
    out = tmp_path / "r.json"
    code, stdout, err = run_cli(["run", "--outputs", str(log), "--metrics",
                                 "refusal,latency_s", "--output", str(out), "--no-history",
                                 "--quiet"], capsys)
    assert code == 0, err
    o = json.loads(out.read_text())["conversations"]["overall"]
    assert (o["refusal"]["failing_when"], o["refusal"]["failing_conversations"]) == ("> 0.5", 1)
    assert o["refusal"]["mean_first_failing_turn"] == 2.0
    assert (o["latency_s"]["failing_when"], o["latency_s"]["failing_conversations"]) == (
        None, None)
    assert "1 (> 0.5)" in stdout


def test_a_conversation_set_runs_on_ragmark_s_own_pipeline(tmp_path, capsys):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i, text in enumerate([P1, P2, P3], start=1):
        (corpus / f"p{i}.txt").write_text(text, encoding="utf-8")
    conv = [{"conversation_id": c["conversation_id"], "turns": [
        {k: v for k, v in t.items() if k not in ("answer", "contexts")} for t in c["turns"]]}
        for c in LOG]
    conv[0]["turns"].append({"question": "Thanks!"})  # a turn with nothing to retrieve
    ds = tmp_path / "chats.jsonl"
    ds.write_text("\n".join(json.dumps(c) for c in conv) + "\n", encoding="utf-8")
    out = tmp_path / "r.json"
    code, _, err = run_cli(["run", "--dataset", str(ds), "--corpus", str(corpus),
                            "--metrics", "recall@3", "--output", str(out), "--no-history",
                            "--quiet"], capsys)
    assert code == 0, err
    data = json.loads(out.read_text())
    assert list(data["per_query"]) == ["c1#1", "c1#2", "c1#3", "c2#1"]
    assert data["per_query"]["c1#3"]["recall@3"] is None  # no ground truth for "Thanks!"
    assert data["conversations"]["by_turn"][2]["questions"] == 1


@pytest.mark.parametrize(("conv", "message"), [
    ({"conversation_id": "c1", "turns": []}, "non-empty list of turns"),
    ({"conversation_id": "c1", "turns": ["hi"]}, "turns[0]"),
    ({"conversation_id": "c1", "turns": [{"id": "x", "question": "q?", "answer": "a",
                                          "contexts": []}]}, "takes no 'id'"),
])
def test_bad_conversations_are_errors_naming_the_place(tmp_path, capsys, conv, message):
    log = tmp_path / "bad.jsonl"
    log.write_text(json.dumps(conv) + "\n", encoding="utf-8")
    code, _, err = run_cli(["run", "--outputs", str(log), "--no-history"], capsys)
    assert code == 2 and message in err and "line 1" in err and "Traceback" not in err


def test_a_repeated_conversation_id_is_an_error(tmp_path, capsys):
    log = tmp_path / "twice.jsonl"
    log.write_text("\n".join(json.dumps(c) for c in [LOG[0], LOG[0]]) + "\n",
                   encoding="utf-8")
    code, _, err = run_cli(["run", "--outputs", str(log), "--no-history"], capsys)
    assert code == 2 and "duplicate conversation id" in err and "line 2" in err


CHAT_MODULE = f'''
SEEN = []

def answer(question, history=None):
    SEEN.append((question, history))
    if "BM25" in question:
        return {{"answer": "BM25 ranks documents", "contexts": [{P1!r}]}}
    said = history[-1]["answer"] if history else "nothing"
    return {{"answer": "after " + said + ": a reranker", "contexts": [{P2!r}]}}

def alone(question):
    return {{"answer": "no memory", "contexts": [{P3!r}]}}
'''

CHATS = [{"conversation_id": "c1", "turns": [
             {"question": "What does BM25 rank?", "ground_truth_contexts": [P1]},
             {"question": "And what reorders them afterwards?",
              "ground_truth_contexts": [P2]}]},
         {"conversation_id": "c2", "turns": [
             {"question": "What reorders candidate passages?",
              "ground_truth_contexts": [P2]}]}]


def _chat_module(tmp_path, monkeypatch):
    import sys

    name = "chat_" + tmp_path.name.replace("-", "_")
    (tmp_path / "svc").mkdir()
    (tmp_path / "svc" / f"{name}.py").write_text(CHAT_MODULE)
    monkeypatch.setattr(sys, "path", [str(tmp_path / "svc"), *sys.path])
    return name


def test_a_python_pipeline_gets_the_earlier_turns_in_order(tmp_path, capsys, monkeypatch):
    import importlib

    name = _chat_module(tmp_path, monkeypatch)
    ds = tmp_path / "chats.jsonl"
    ds.write_text("\n".join(json.dumps(c) for c in CHATS) + "\n", encoding="utf-8")
    for fn in ("answer", "alone"):
        cfg = tmp_path / f"{fn}.toml"
        cfg.write_text(f'name = "{fn}"\n[pipeline]\nkind = "python"\n'
                       f'target = "{name}:{fn}"\npython_path = ["svc"]\nconcurrency = 4\n')
        out = tmp_path / f"{fn}.json"
        code, stdout, err = run_cli(["run", "--dataset", str(ds), "--config", str(cfg),
                                     "--metrics", "mrr", "--output", str(out),
                                     "--include-details", "--no-history"], capsys)
        assert code == 0, err
        answers = {q["id"]: q["answer"] for q in json.loads(out.read_text())["queries"]}
        if fn == "answer":
            seen = dict(importlib.import_module(name).SEEN)
            # the first turn alone; the second after it, with its answer
            assert seen["What does BM25 rank?"] == []
            assert seen["And what reorders them afterwards?"] == [
                {"question": "What does BM25 rank?", "answer": "BM25 ranks documents"}]
            assert seen["What reorders candidate passages?"] == []
            assert answers["c1#2"] == "after BM25 ranks documents: a reranker"
            assert "takes no history" not in stdout + err
        else:  # a function without history: each turn on its own, and the run says so
            assert answers["c1#2"] == "no memory"
            assert "takes no history argument" in stdout


def test_an_http_pipeline_gets_the_conversation_as_chat_messages(server):
    from support.fake_llm_server import Reply

    from ragmark.pipelines.config import HttpPipelineConfig
    from ragmark.running.source import ask_all

    server.rule = lambda body: Reply(body={"answer": f"a{len(body.get('talk', []))}",
                                           "contexts": ["c"]})
    cfg = HttpPipelineConfig(kind="http", url=server.url + "/rag", messages_field="talk")
    outs, _ = ask_all(cfg, ["q1", "q2", "q3", "alone"], places=[
        ("c", 1), ("c", 2), ("c", 3), None])
    assert [o.answer for o in outs] == ["a1", "a3", "a5", "a0"]
    bodies = {r.body["question"]: r.body for r in server.requests}
    assert "talk" not in bodies["alone"]
    assert bodies["q3"]["talk"] == [
        {"role": "user", "content": "q1"}, {"role": "assistant", "content": "a1"},
        {"role": "user", "content": "q2"}, {"role": "assistant", "content": "a3"},
        {"role": "user", "content": "q3"}]
    assert all("session" not in b for b in bodies.values())  # no id unless asked for
    # a service with its own memory per session is sent the conversation's id too
    server.requests.clear()
    cfg = HttpPipelineConfig(kind="http", url=server.url + "/rag", messages_field="talk",
                             conversation_field="session")
    ask_all(cfg, ["q1", "q2", "alone"], places=[("c", 1), ("c", 2), None])
    bodies = {r.body["question"]: r.body for r in server.requests}
    assert (bodies["q1"]["session"], bodies["q2"]["session"]) == ("c", "c")
    assert "session" not in bodies["alone"]


WORDS = __import__("re").compile(r"[a-z0-9]{4,}")
BLOCK = __import__("re").compile(r'<data name="(\w+)"(?: index="\d+")?>\n(.*?)\n</data>',
                                 __import__("re").S)


def reading_judge(body):
    """A judge that reads what it is given: claims are the answer's sentences; a claim is
    supported when every word of 4+ letters of it is in the passages or, in a
    conversation, the earlier turns it was shown."""
    from support.fake_llm_server import chat_reply

    system = body["messages"][0]["content"]
    user = [m["content"] for m in body["messages"] if m["role"] == "user"][-1]
    blocks = BLOCK.findall(user)
    if "factual claims" in system:
        answer = dict(blocks)["answer"]
        return chat_reply(json.dumps({"claims": [s.strip() + "." for s in answer.split(".")
                                                 if s.strip()]}))
    seen = set()
    for name, text in blocks:
        if name in ("context", "conversation"):
            seen |= set(WORDS.findall(text.lower()))
    claims = [t for name, t in blocks if name == "claim"]
    return chat_reply(json.dumps({"verdicts": [
        {"claim": i, "supported": set(WORDS.findall(c.lower())) <= seen, "reason": ""}
        for i, c in enumerate(claims, start=1)]}))


def test_the_judge_sees_the_earlier_turns(server, tmp_path, capsys):
    """Turn 2 answers 'Bram Stoker wrote Dracula. Dracula was published in 1897.' from a
    passage that says only the second; the first was established in turn 1. In the
    conversation faithfulness is 2/2 = 1; the same turn logged alone is 1/2 = 0.5."""
    server.rule = reading_judge
    turn1 = {"question": "Who wrote Dracula?", "answer": "Bram Stoker wrote Dracula.",
             "contexts": ["Bram Stoker wrote the novel Dracula."]}
    turn2 = {"question": "When was it published?",
             "answer": "Bram Stoker wrote Dracula. Dracula was published in 1897.",
             "contexts": ["Dracula was published in 1897."]}
    log = tmp_path / "chat.jsonl"
    log.write_text(json.dumps({"conversation_id": "c", "turns": [turn1, turn2]}) + "\n")
    alone = tmp_path / "alone.jsonl"
    alone.write_text(json.dumps({"id": "t2", **turn2}) + "\n")
    got = {}
    for path in (log, alone):
        out = tmp_path / f"{path.stem}.json"
        code, _, err = run_cli(["run", "--outputs", str(path), "--metrics", "faithfulness",
                                "--llm-base-url", server.url, "--llm-model", "test-model",
                                "--output", str(out), "--no-history"], capsys)
        assert code == 0, err
        got[path.stem] = json.loads(out.read_text())["per_query"]
    assert got["chat"]["c#1"]["faithfulness"] == 1.0
    assert got["chat"]["c#2"]["faithfulness"] == 1.0
    assert got["alone"]["t2"]["faithfulness"] == 0.5
    conversation = [r.body for r in server.requests
                    if "earlier turns of the conversation" in r.body["messages"][0]["content"]]
    assert conversation and "user: Who wrote Dracula?\nassistant: Bram Stoker wrote Dracula." \
        in conversation[-1]["messages"][-1]["content"]


def test_conversations_in_compare_report_inspect_and_diff(tmp_path, capsys, monkeypatch):
    """Two pipelines on the conversation set: MRR per turn c1#1 1, c1#2 1, c2#1 1 for
    'answer' (each answers from the right passage); 'alone' gives P3 for every turn: 0.
    By turn: 'answer' 1.0 at turns 1 and 2; 'alone' 0.0."""
    name = _chat_module(tmp_path, monkeypatch)
    ds = tmp_path / "chats.jsonl"
    ds.write_text("\n".join(json.dumps(c) for c in CHATS) + "\n", encoding="utf-8")
    cfgs = []
    for fn in ("answer", "alone"):
        cfg = tmp_path / f"{fn}.toml"
        cfg.write_text(f'name = "{fn}"\n[pipeline]\nkind = "python"\n'
                       f'target = "{name}:{fn}"\npython_path = ["svc"]\n')
        cfgs.append(str(cfg))
    out = tmp_path / "cmp"
    code, stdout, err = run_cli(["compare", "--dataset", str(ds), "--configs", *cfgs,
                                 "--metrics", "mrr", "--output", str(out),
                                 "--include-details", "--no-history"], capsys)
    assert code == 0, err
    data = json.loads((tmp_path / "cmp.json").read_text())
    for cfg, value in (("answer", 1.0), ("alone", 0.0)):
        conv = data["configs"][cfg]["conversations"]
        assert conv["conversations"] == 2
        assert [t["metrics"]["mrr"]["mean"] for t in conv["by_turn"]] == [value, value]
    md = (tmp_path / "cmp.md").read_text()
    assert "Conversations (answer): 2, each metric by turn:" in md
    assert "| 2 | 1 | 1.0000 |" in md and "| 2 | 1 | 0.0000 |" in md
    # the question view knows the turn and what the pipeline answered before it
    (turn,) = [q for q in data["configs"]["answer"]["queries"] if q["id"] == "c1#2"]
    assert turn["conversation"] == {"id": "c1", "turn": 2, "history": [
        {"question": "What does BM25 rank?", "answer": "BM25 ranks documents"}]}
    html = tmp_path / "cmp.html"
    code, _, err = run_cli(["report", str(tmp_path / "cmp.json"), "--output", str(html)],
                           capsys)
    assert code == 0, err
    page = html.read_text()
    assert "answer: 2 conversations, by turn" in page and "alone: 2 conversations" in page
    assert "<b>Conversation</b> c1, turn 2" in page
    # a run file: inspect shows the turn; diff pairs the turns of two runs by their ids
    runs = {}
    for cfg in cfgs:
        r = tmp_path / f"{Path(cfg).stem}-run.json"
        code, _, err = run_cli(["run", "--dataset", str(ds), "--config", cfg, "--metrics",
                                "mrr", "--output", str(r), "--include-details",
                                "--no-history"], capsys)
        assert code == 0, err
        runs[Path(cfg).stem] = r
    code, text, err = run_cli(["inspect", str(runs["answer"]), "c1#2"], capsys)
    assert code == 0, err
    assert "Conversation c1, turn 2 (after 1 earlier turn)" in text
    assert "assistant: BM25 ranks documents" in text
    code, text, err = run_cli(["diff", str(runs["alone"]), str(runs["answer"]),
                               "--metrics", "mrr"], capsys)
    assert code == 0, err
    assert "c1#2" in text
