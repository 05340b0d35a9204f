"""Evaluate like TREC RAG on public data (issue 38): a small TREC RAG-shaped set built
from BEIR SciFact (Wadden et al. 2020, via BEIR; CC BY-NC 2.0 per its dataset card, the
copy beside the project; nothing committed) — six test claims as the topics, their
relevant abstracts and twenty others as the segments (MS MARCO v2.1's layout), SciFact's
qrels — and three runs' answers in TREC RAG's format: one quotes and cites each topic's
relevant abstract, one quotes and cites an unrelated abstract, one quotes the relevant
abstract but cites the unrelated one. No nuggets are given: the judge (the scripted
server, which reads what it is shown) creates them from each topic's relevant segments
once, and every run is scored against the same ones; each cited sentence is judged
against the segment it cites. The nugget scores tell the runs that answer from those
that do not, the support scores the runs that cite what they say from the one that does
not; the ranking is compared with a published table, and the track's files are
written."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest
from support.cli import run_cli
from support.fake_llm_server import chat_reply

TOPICS = 6
BLOCK = re.compile(r'<data name="(\w+)"(?: index="\d+")?>\n(.*?)\n</data>', re.S)
WORDS = re.compile(r"[a-z0-9]{4,}")


def _held(text: str, where: str) -> str:
    """How much of ``text``'s words of 4+ letters ``where`` holds: all, some or none."""
    words = set(WORDS.findall(text.lower()))
    held = len(words & set(WORDS.findall(where.lower()))) / max(len(words), 1)
    return "all" if held == 1 else "some" if held > 0 else "none"


def _judge(body):
    """Creation: the first eight words of each passage's first sentence; labels: the
    first vital; assignment: support when the answer holds every word of 4+ letters of
    the nugget, partial when some, not_support when none; support of a cited sentence
    likewise, from the words of the passage it cites."""
    system = body["messages"][0]["content"]
    user = [m["content"] for m in body["messages"] if m["role"] == "user"][-1]
    blocks = BLOCK.findall(user)
    if system.startswith("Each numbered statement cites the passage"):
        said = {"all": "full_support", "some": "partial_support", "none": "no_support"}
        return chat_reply(json.dumps({"verdicts": [
            {"statement": i, "support": said[_held(t, dict(blocks)["passage"])]}
            for i, t in enumerate((t for n, t in blocks if n == "statement"), start=1)]}))
    nuggets = [t for n, t in blocks if n == "nugget" and t != "(none)"]
    if system.startswith("List the nuggets"):
        made = [" ".join(t.split(". ")[0].split()[:8]) for n, t in blocks if n == "passage"]
        return chat_reply(json.dumps({"nuggets": list(dict.fromkeys(nuggets + made))}))
    if system.startswith("Label each numbered nugget"):
        return chat_reply(json.dumps({"labels": [
            {"nugget": i, "importance": "vital" if i == 1 else "okay"}
            for i in range(1, len(nuggets) + 1)]}))
    said = {"all": "support", "some": "partial_support", "none": "not_support"}
    return chat_reply(json.dumps({"verdicts": [
        {"nugget": i, "assignment": said[_held(t, dict(blocks)["answer"])]}
        for i, t in enumerate(nuggets, start=1)]}))


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


def test_three_runs_on_a_scifact_trec_set_against_the_same_nuggets(scifact, tmp_path,
                                                                    server, capsys):
    server.rule = _judge
    folder, plan = _trec_folder(scifact, tmp_path)
    segs = {json.loads(s)["segment"]: json.loads(s)["docid"]
            for s in (folder / "corpus.jsonl").read_text().splitlines()}
    cites = _run(tmp_path / "cites.jsonl", "cites-evidence",
                 [(q, segs[rel], rel) for q, rel, _ in plan])
    other = _run(tmp_path / "other.jsonl", "cites-other",
                 [(q, segs[unrel], unrel) for q, _, unrel in plan])
    miscites = _run(tmp_path / "miscites.jsonl", "miscites",
                    [(q, segs[unrel], rel) for q, rel, unrel in plan])
    published = tmp_path / "published.txt"
    published.write_text("run score\ncites-evidence 0.61\nmiscites 0.35\ncites-other 0.12\n")
    code, out, err = run_cli([
        "compare", "--dataset", str(folder), "--outputs", str(cites), "--outputs",
        str(other), "--outputs", str(miscites), "--metrics", "nuggets,support",
        "--rank-against", str(published),
        "--llm-base-url", server.url, "--llm-model", "test-model", "--output",
        str(tmp_path / "c"), "--include-details", "--quiet", "--no-history"], capsys)
    assert code == 0, err
    data = json.loads((tmp_path / "c.json").read_text())
    kinds = [r.body["messages"][0]["content"].split()[0:2] for r in server.requests]
    # one creation and one labelling a topic (the other runs' from the same task or the
    # call cache), one assignment an answer (the miscited answers say what the first run's
    # say: the call cache has theirs), one support call an answer (it cites one segment)
    assert sum(k == ["List", "the"] for k in kinds) == TOPICS
    assert sum(k == ["Label", "each"] for k in kinds) == TOPICS
    assert sum(k == ["For", "each"] for k in kinds) == 2 * TOPICS
    assert sum(k == ["Each", "numbered"] for k in kinds) == 3 * TOPICS
    evidence = data["configs"]["cites-evidence"]
    unrelated = data["configs"]["cites-other"]
    wrong = data["configs"]["miscites"]
    # each topic's one nugget opens its relevant abstract, which the first run quotes
    assert evidence["metrics"]["nugget_vital_strict"] == 1.0
    assert unrelated["metrics"]["nugget_all"] < 0.5 < evidence["metrics"]["nugget_all"]
    assert evidence["counts"]["nugget_all"]["n"] == unrelated["counts"]["nugget_all"]["n"] == (
        TOPICS)
    assert evidence["intervals"]["nugget_all"]["n"] == TOPICS
    # six paired differences of -1: the exact sign-flip test gives 2 / 2^6
    row = next(r for r in data["comparisons"] if r["metric"] == "nugget_all"
               and r["config"] == "cites-other")
    assert row["p_value"] == 2 / 2 ** TOPICS
    # Holm over the two runs compared with the first on the metric (the other p is 1):
    # 2 x 2/64 = 1/16, above 0.05 -- six topics are few
    assert row["p_adjusted"] == 2 * 2 / 2 ** TOPICS and row["significant"] is False
    # the run that quotes the evidence but cites another abstract holds the nuggets as
    # well as the first; the segments it cites do not support its sentences (each quotes
    # what it cites in the other two runs: fully supported, though one answers nothing)
    assert wrong["metrics"]["nugget_all"] == evidence["metrics"]["nugget_all"]
    for name in ("support_full", "support_partial", "support_recall"):
        assert evidence["metrics"][name] == unrelated["metrics"][name] == 1.0
        assert wrong["metrics"][name] < 0.5
        assert wrong["intervals"][name]["n"] == TOPICS
    sentences = wrong["queries"][0]["metrics"]["support_partial"]["sentences"]
    assert len(sentences) == 2 and {s["passage"] for s in sentences} == {1}
    used = {name: [[n["text"] for n in q["metrics"]["nugget_all"]["nuggets"]]
                   for q in cfg["queries"]] for name, cfg in data["configs"].items()}
    assert used["cites-evidence"] == used["cites-other"]  # the same nuggets for both
    # against the published order (evidence, miscites, other): nugget_all ties the first
    # two and orders the rest alike -- tau-b = (2 - 0) / sqrt((3 - 1) x 3) = 0.8165
    agree = data["ranking_agreement"]["metrics"]["nugget_all"]
    assert agree["tau"] == pytest.approx(2 / 6 ** 0.5) and agree["n"] == 3
    written = (tmp_path / "c.nuggets.jsonl").read_text().splitlines()
    assert len(written) == TOPICS
    scores = (tmp_path / "c.cites-evidence.nugget_scores.jsonl").read_text().splitlines()
    assert json.loads(scores[-1])["qid"] == "all" and len(scores) == TOPICS + 1
    assert "Ranking agreement with published.txt" in " ".join(out.split())
