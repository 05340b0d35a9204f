"""`ragmark label --pool` and `run --qrels-extra`: the unjudged documents of every
config's top k are judged by the LLM and written as extended qrels (originals kept and
marked); a run with them sees every top-k document judged; a dry run calls nothing; a
bad file is exit 2 naming the line."""

from __future__ import annotations

import json
import re

from support.beir import beir_folder
from support.cli import run_cli
from support.fake_llm_server import chat_reply

PASSAGE = re.compile(r'<data name="passage">\n(.*?)\n</data>', re.DOTALL)


def yes_for_omega(body):
    users = [m["content"] for m in body["messages"] if m["role"] == "user"]
    text = next(PASSAGE.search(u).group(1) for u in reversed(users) if PASSAGE.search(u))
    return chat_reply("YES" if "omega omega" in text else "NO")


def llm(server):
    return ["--llm-base-url", server.url, "--llm-model", "test-model"]


def test_pool_then_run_with_the_extended_qrels(server, tmp_path, capsys):
    server.rule = yes_for_omega
    folder, qrels = beir_folder(tmp_path / "set")
    base = ["--dataset", str(folder), "--quiet"]
    # which documents of sparse's top 5 the qrels do not judge
    code, _, err = run_cli(["run", *base, "--top-k", "5", "--metrics", "judged@5",
                            "--skip-generation", "--include-details", "--output",
                            str(tmp_path / "before.json")], capsys)
    assert code == 0, err
    before = json.loads((tmp_path / "before.json").read_text())
    unjudged = {(q["id"], r["doc_id"]) for q in before["queries"] for r in q["retrieved"]
                if r["doc_id"] not in qrels[q["id"]]}
    assert unjudged and before["metrics"]["judged@5"] < 1.0

    code, out, err = run_cli(["label", *base, "--configs", "sparse", "--top-k", "5",
                              "--pool", "--dry-run", *llm(server)], capsys)
    assert code == 0, err
    assert f"{len(unjudged):,} unjudged documents in the top 5 of 1 configs" in out
    assert server.requests == []

    code, out, err = run_cli(["label", *base, "--configs", "sparse", "--top-k", "5",
                              "--pool", "--output", str(tmp_path / "pool"), *llm(server)],
                             capsys)
    assert code == 0, err
    path = tmp_path / "pool.qrels.tsv"
    rows = [line.split("\t") for line in path.read_text().splitlines()]
    assert rows[0] == ["query-id", "corpus-id", "score", "source"]
    originals = {(q, d): int(g) for q, d, g, s in rows[1:] if s == "qrels"}
    assert originals == {(q, d): g for q, j in qrels.items() for d, g in j.items()}
    pooled = {(q, d): int(g) for q, d, g, s in rows[1:] if s == "llm:test-model"}
    assert set(pooled) == unjudged and len(server.requests) == len(unjudged)
    docs = {json.loads(x)["_id"]: json.loads(x)["text"]
            for x in (folder / "corpus.jsonl").read_text().splitlines()}
    assert all(g == int("omega omega" in docs[d]) for (_, d), g in pooled.items())
    assert f"Pooled {len(unjudged):,} unjudged documents" in out

    code, _, err = run_cli(["run", *base, "--top-k", "5", "--metrics", "judged@5,bpref",
                            "--skip-generation", "--qrels-extra", str(path), "--output",
                            str(tmp_path / "after.json")], capsys)
    assert code == 0, err
    after = json.loads((tmp_path / "after.json").read_text())
    assert after["metrics"]["judged@5"] == 1.0
    assert after["dataset"]["qrels_extra"] == {
        "file": str(path), "judgments_added": len(unjudged),
        "relevant_added": sum(pooled.values())}
    assert after["dataset"]["hash"] != before["dataset"]["hash"]


def test_a_bad_extended_qrels_file_is_exit_2(tmp_path, capsys):
    folder, _ = beir_folder(tmp_path / "set")
    bad = tmp_path / "bad.tsv"
    bad.write_text("query-id\tcorpus-id\tscore\tsource\nq1\td1\tyes\tllm:m\n")
    code, _, err = run_cli(["run", "--dataset", str(folder), "--qrels-extra", str(bad),
                            "--output", str(tmp_path / "r.json"), "--quiet"], capsys)
    assert code == 2 and "line 2" in err and "score must be an integer" in err
