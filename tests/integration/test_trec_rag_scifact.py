"""Evaluate like TREC RAG on public data (issue 38): a small TREC RAG-shaped set built
from BEIR SciFact (Wadden et al. 2020, via BEIR; CC BY-NC 2.0 per its dataset card, the
copy beside the project; nothing committed) — six test claims as the topics, their
relevant abstracts and twenty others as the segments (MS MARCO v2.1's layout), SciFact's
qrels — and two runs' answers in TREC RAG's format: one quotes and cites each topic's
relevant abstract, the other an unrelated one. No nuggets are given: the judge (the
scripted server, which reads what it is shown) creates them from each topic's relevant
segments once, and both runs are scored against the same ones. The run that cites the
evidence scores higher, its ranking agrees with a published table, and the track's
files are written."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

from support.cli import run_cli
from support.fake_llm_server import chat_reply

TOPICS = 6
BLOCK = re.compile(r'<data name="(\w+)"(?: index="\d+")?>\n(.*?)\n</data>', re.S)
WORDS = re.compile(r"[a-z0-9]{4,}")


def _judge(body):
    """Creation: the first eight words of each passage's first sentence; labels: the
    first vital; assignment: support when the answer holds every word of 4+ letters of
    the nugget, partial when some, not_support when none."""
    system = body["messages"][0]["content"]
    user = [m["content"] for m in body["messages"] if m["role"] == "user"][-1]
    blocks = BLOCK.findall(user)
    nuggets = [t for n, t in blocks if n == "nugget" and t != "(none)"]
    if system.startswith("List the nuggets"):
        made = [" ".join(t.split(". ")[0].split()[:8]) for n, t in blocks if n == "passage"]
        return chat_reply(json.dumps({"nuggets": list(dict.fromkeys(nuggets + made))}))
    if system.startswith("Label each numbered nugget"):
        return chat_reply(json.dumps({"labels": [
            {"nugget": i, "importance": "vital" if i == 1 else "okay"}
            for i in range(1, len(nuggets) + 1)]}))
    answer = set(WORDS.findall(dict(blocks)["answer"].lower()))
    verdicts = []
    for i, text in enumerate(nuggets, start=1):
        words = set(WORDS.findall(text.lower()))
        held = len(words & answer) / max(len(words), 1)
        verdicts.append({"nugget": i, "assignment": "support" if held == 1 else
                         "partial_support" if held > 0 else "not_support"})
    return chat_reply(json.dumps({"verdicts": verdicts}))


def _trec_folder(scifact: Path, root: Path) -> tuple[Path, list[tuple[str, str, str]]]:
    """The folder, and (topic, relevant doc, unrelated doc) for each topic."""
    corpus = {}
    with (scifact / "corpus.jsonl").open(encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            corpus[d["_id"]] = d
    queries = {}
    with (scifact / "queries.jsonl").open(encoding="utf-8") as f:
        for line in f:
            q = json.loads(line)
            queries[q["_id"]] = q["text"]
    with (scifact / "qrels" / "test.tsv").open(encoding="utf-8") as f:
        rows = list(csv.reader(f, delimiter="\t"))[1:]
    first: dict[str, str] = {}
    for qid, doc, _ in rows:
        first.setdefault(qid, doc)
    topics = list(first.items())[:TOPICS]
    others = [d for d in corpus if d not in {doc for _, doc in topics}][:20]
    plan = [(qid, doc, others[i]) for i, (qid, doc) in enumerate(topics)]
    folder = root / "scifact-trec"
    (folder / "qrels").mkdir(parents=True)
    docs = [doc for _, doc, _ in plan] + others
    (folder / "corpus.jsonl").write_text("".join(json.dumps({
        "docid": f"scifact_{d}#0_0", "title": corpus[d]["title"],
        "segment": corpus[d]["text"], "url": "", "headings": ""}) + "\n" for d in docs))
    (folder / "topics.tsv").write_text("".join(f"{q}\t{queries[q]}\n" for q, _, _ in plan))
    (folder / "qrels" / "test.txt").write_text("".join(
        f"{q} 0 scifact_{d}#0_0 1\n" for q, d, _ in plan))
    return folder, [(q, corpus[d]["text"], corpus[o]["text"]) for q, d, o in plan]


def _run(path: Path, run_id: str, answers: list[tuple[str, str, str]]) -> Path:
    """A run in TREC RAG's format: each topic answered by the first two sentences of a
    text, each sentence citing the one segment of ``references``."""
    path.write_text("".join(json.dumps({
        "run_id": run_id, "topic_id": q, "references": [segment],
        "answer": [{"text": s.strip().rstrip(".") + ".", "citations": [0]}
                   for s in text.split(". ")[:2] if s.strip()]}) + "\n"
        for q, segment, text in answers))
    return path


def test_two_runs_on_a_scifact_trec_set_against_the_same_nuggets(scifact, tmp_path,
                                                                  server, capsys):
    server.rule = _judge
    folder, plan = _trec_folder(scifact, tmp_path)
    segs = {json.loads(s)["segment"]: json.loads(s)["docid"]
            for s in (folder / "corpus.jsonl").read_text().splitlines()}
    cites = _run(tmp_path / "cites.jsonl", "cites-evidence",
                 [(q, segs[rel], rel) for q, rel, _ in plan])
    other = _run(tmp_path / "other.jsonl", "cites-other",
                 [(q, segs[unrel], unrel) for q, _, unrel in plan])
    published = tmp_path / "published.txt"
    published.write_text("run score\ncites-evidence 0.61\ncites-other 0.12\n")
    code, out, err = run_cli([
        "compare", "--dataset", str(folder), "--outputs", str(cites), "--outputs",
        str(other), "--metrics", "nuggets", "--rank-against", str(published),
        "--llm-base-url", server.url, "--llm-model", "test-model", "--output",
        str(tmp_path / "c"), "--include-details", "--quiet", "--no-history"], capsys)
    assert code == 0, err
    data = json.loads((tmp_path / "c.json").read_text())
    kinds = [r.body["messages"][0]["content"].split()[0:2] for r in server.requests]
    # one creation and one labelling a topic (the second run's from the same task or the
    # call cache), one assignment an answer
    assert sum(k == ["List", "the"] for k in kinds) == TOPICS
    assert sum(k == ["Label", "each"] for k in kinds) == TOPICS
    assert sum(k == ["For", "each"] for k in kinds) == 2 * TOPICS
    evidence = data["configs"]["cites-evidence"]
    unrelated = data["configs"]["cites-other"]
    # each topic's one nugget opens its relevant abstract, which the first run quotes
    assert evidence["metrics"]["nugget_vital_strict"] == 1.0
    assert unrelated["metrics"]["nugget_all"] < 0.5 < evidence["metrics"]["nugget_all"]
    assert evidence["counts"]["nugget_all"]["n"] == unrelated["counts"]["nugget_all"]["n"] == (
        TOPICS)
    assert evidence["intervals"]["nugget_all"]["n"] == TOPICS
    # six paired differences of -1: the exact sign-flip test gives 2 / 2^6
    row = next(r for r in data["comparisons"] if r["metric"] == "nugget_all")
    assert row["config"] == "cites-other" and row["p_value"] == 2 / 2 ** TOPICS
    assert row["significant"] is True
    used = {name: [[n["text"] for n in q["metrics"]["nugget_all"]["nuggets"]]
                   for q in cfg["queries"]] for name, cfg in data["configs"].items()}
    assert used["cites-evidence"] == used["cites-other"]  # the same nuggets for both
    agree = data["ranking_agreement"]["metrics"]["nugget_all"]
    assert agree["tau"] == 1.0 and agree["n"] == 2
    written = (tmp_path / "c.nuggets.jsonl").read_text().splitlines()
    assert len(written) == TOPICS
    scores = (tmp_path / "c.cites-evidence.nugget_scores.jsonl").read_text().splitlines()
    assert json.loads(scores[-1])["qid"] == "all" and len(scores) == TOPICS + 1
    assert "Ranking agreement with published.txt" in " ".join(out.split())
