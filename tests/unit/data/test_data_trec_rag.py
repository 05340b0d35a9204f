"""TREC RAG's files as a dataset (issue 38): the segmented corpus (MS MARCO v2.1's
layout: docid, segment), the topics (qid TAB query), the nuggets and the qrels in a
BEIR-shaped folder; bad lines refused with the place."""

from __future__ import annotations

import json

import pytest
from support.trec_rag import ANSWER, SEGMENTS, answers_file, trec_folder

from ragmark.data import load_dataset
from ragmark.errors import DataError
from ragmark.types import Nugget


def test_a_trec_rag_folder_loads_topics_segments_nuggets_and_qrels(tmp_path):
    ds = load_dataset(trec_folder(tmp_path))
    assert ds.format == "trec-rag"
    # the judged topics first, then those with nuggets only; an unjudged topic without
    # nuggets is not a question
    assert [s.id for s in ds.samples] == ["2024-1", "2024-2"]
    first, second = ds.samples
    assert first.question == "who built the eiffel tower"
    assert dict(first.truth.doc_grades) == {"msmarco_v2.1_doc_01#0_10": 3,
                                            "msmarco_v2.1_doc_01#1_200": 1}
    assert first.nuggets == (Nugget("Gustave Eiffel's company built it", "vital"),
                             Nugget("finished in 1889", "okay"))
    assert second.nuggets == (Nugget("every two hours", "vital"),)
    assert not second.truth.doc_grades
    doc = ds.corpus.by_id()["msmarco_v2.1_doc_02#0_0"]
    assert doc.text.startswith("Take a toddler") and doc.title == "Potty training"


def test_without_qrels_the_nuggets_name_the_questions(tmp_path):
    ds = load_dataset(trec_folder(tmp_path, qrels=False))
    assert [s.id for s in ds.samples] == ["2024-2", "2024-1"]


def test_bad_trec_files_are_refused_with_the_place(tmp_path):
    folder = trec_folder(tmp_path)
    (folder / "topics.tsv").write_text("2024-1\twho built it\n2024-2 no tab here\n")
    with pytest.raises(DataError, match="expected a topic id, a tab and the topic's text") as e:
        load_dataset(folder)
    assert e.value.line == 2
    (folder / "topics.tsv").write_text("2024-1\twho built it\n")
    with pytest.raises(DataError, match="nuggets of unknown topic '2024-2'|nuggets of unknown "
                                        "topic \"2024-2\""):
        load_dataset(folder)


def test_nuggets_of_a_trec_rag_folder_through_a_run(tmp_path, server, capsys):
    """ragmark's own pipeline on the segments (BM25, the extractive generator), the
    folder's nuggets assigned by the judge: recall@2 from the qrels, the nugget scores
    from the nuggets, no creation call."""
    from support.cli import run_cli
    from support.fake_llm_server import chat_reply

    def assign(body):
        user = [m["content"] for m in body["messages"] if m["role"] == "user"][-1]
        n = user.count('<data name="nugget"')
        return chat_reply(json.dumps({"verdicts": [
            {"nugget": i, "assignment": "support"} for i in range(1, n + 1)]}))

    server.rule = assign
    out = tmp_path / "r.json"
    code, _, err = run_cli(["run", "--dataset", str(trec_folder(tmp_path)), "--metrics",
                            "recall@2,nuggets", "--top-k", "2", "--llm-base-url", server.url,
                            "--llm-model", "test-model", "--output", str(out), "--quiet",
                            "--no-history"], capsys)
    assert code == 0, err
    data = json.loads(out.read_text())
    assert len(server.requests) == 2  # one assignment an answer
    assert data["metrics"]["nugget_all"] == 1.0 and data["metrics"]["recall@2"] == 1.0
    assert data["counts"]["recall@2"]["n"] == 1  # the topic without qrels has no target


def test_trec_rag_answers_are_logged_outputs_of_its_topics(tmp_path, server, capsys):
    """A TREC RAG answer file scored against its folder: each answer's sentences with
    their citations as [n] markers, the referenced segments as its contexts, the
    folder's nuggets assigned to it; a topic the file does not answer is missing."""
    from support.cli import run_cli
    from support.fake_llm_server import chat_reply

    seen = []

    def assign(body):
        user = [m["content"] for m in body["messages"] if m["role"] == "user"][-1]
        seen.append(user)
        n = user.count('<data name="nugget"')
        return chat_reply(json.dumps({"verdicts": [
            {"nugget": i, "assignment": "support" if i == 1 else "not_support"}
            for i in range(1, n + 1)]}))

    server.rule = assign
    folder = trec_folder(tmp_path)
    out = tmp_path / "r.json"
    code, _, err = run_cli(["run", "--dataset", str(folder), "--outputs",
                            str(answers_file(tmp_path, [ANSWER])), "--metrics", "nuggets",
                            "--llm-base-url", server.url, "--llm-model", "test-model",
                            "--output", str(out), "--include-details", "--quiet",
                            "--no-history", "--allow-missing"], capsys)
    assert code == 0, err
    data = json.loads(out.read_text())
    q = {x["id"]: x for x in data["queries"]}
    assert q["2024-1"]["answer"] == ("Gustave Eiffel's company built it. [1]\nIt is 330 "
                                     "metres tall. [2] [1]\nIt is in Paris.")
    assert q["2024-1"]["contexts"] == [SEGMENTS[0]["segment"], SEGMENTS[1]["segment"]]
    assert q["2024-1"]["metrics"]["nugget_all"]["value"] == 0.5
    assert q["2024-1"]["metrics"]["nugget_vital_strict"]["value"] == 1.0
    assert q["2024-2"]["metrics"]["nugget_all"]["reason"] == (
        "the log has no output for this question")
    # the judge sees the answer as nuggetizer shows it (issue 48, item 16): the
    # sentence texts joined by a space, no citation markers
    joined = "Gustave Eiffel's company built it. It is 330 metres tall. It is in Paris."
    assert len(seen) == 1 and f"{joined}\n</data>" in seen[0] and "[2]" not in seen[0]
    assert data["config"]["name"] == "ragnarok"  # the run's run_id names the system
    row = json.loads((tmp_path / "r.assignments.jsonl").read_text().splitlines()[0])
    assert row["run_id"] == "ragnarok"
    # and the assignments are written as nuggetizer writes them: that text, and the
    # answer file's response_length (17), not the words of the marked answer (16)
    assert row["answer_text"] == joined
    assert row["response_length"] == ANSWER["response_length"] == 17


@pytest.mark.parametrize(("change", "says"), [
    ({"references": ["msmarco_v2.1_doc_99#0_0"]},
     "field 'references[0]': segment 'msmarco_v2.1_doc_99#0_0' is not in the corpus"),
    ({"answer": [{"text": "x.", "citations": [2]}]},
     "field 'answer[0].citations[0]': expected an index into references (0 to 1) or a "
     "segment id, got 2"),
    ({"topic_id": "2024-9", "topic": None},
     "field 'topic_id': topic '2024-9' has no text"),
])
def test_bad_trec_answers_exit_2_naming_the_line_and_field(tmp_path, capsys, change, says):
    from support.cli import run_cli

    path = answers_file(tmp_path, [ANSWER, {**ANSWER, **change}])
    code, _, err = run_cli(["run", "--dataset", str(trec_folder(tmp_path)), "--outputs",
                            str(path), "--metrics", "nuggets", "--quiet"], capsys)
    assert code == 2 and "Traceback" not in err
    flat = " ".join(err.split()).replace('"', "'")
    assert "line 2" in flat and says in flat, flat
    code, _, err = run_cli(["run", "--outputs", str(answers_file(tmp_path, [ANSWER])),
                            "--metrics", "nuggets", "--quiet"], capsys)
    assert code == 2 and "TREC RAG answers cite segments by id: give --dataset" in err


def test_compare_two_trec_rag_runs_on_the_same_nuggets(tmp_path, server, capsys):
    """`compare --outputs A --outputs B`: two TREC RAG runs on the folder's topics, each
    named by its run_id, their nugget scores with intervals against the same nuggets, a
    test between them, and each run's assignments and per-topic scores written."""
    from support.cli import run_cli
    from support.fake_llm_server import chat_reply

    def assign(body):  # support a nugget when the answer holds its last word
        user = [m["content"] for m in body["messages"] if m["role"] == "user"][-1]
        import re
        blocks = re.findall(r'<data name="(\w+)"(?: index="\d+")?>\n(.*?)\n</data>', user, re.S)
        answer = dict(blocks)["answer"].lower()
        nuggets = [t for n, t in blocks if n == "nugget"]
        return chat_reply(json.dumps({"verdicts": [
            {"nugget": i, "assignment": "support" if t.split()[-1].lower() in answer
             else "not_support"} for i, t in enumerate(nuggets, start=1)]}))

    server.rule = assign
    folder = trec_folder(tmp_path)
    potty = {"topic_id": "2024-2", "references": ["msmarco_v2.1_doc_02#0_0"],
             "answer": [{"text": "Every two hours.", "citations": [0]}]}
    a = answers_file(tmp_path, [ANSWER, {**potty, "run_id": "ragnarok"}])
    b = tmp_path / "other.jsonl"
    b.write_text("".join(json.dumps(x) + "\n" for x in [
        {**ANSWER, "run_id": "baseline", "answer": [{"text": "It was finished in 1889.",
                                                      "citations": [0]}]},
        {**potty, "run_id": "baseline", "answer": [{"text": "Often.", "citations": []}]}]))
    base = ["compare", "--dataset", str(folder), "--outputs", str(a), "--outputs", str(b),
            "--metrics", "nuggets", "--llm-base-url", server.url, "--llm-model",
            "test-model", "--quiet", "--no-history"]
    code, out, err = run_cli([*base, "--dry-run"], capsys)
    assert code == 0, err
    assert not server.requests and "judge calls" in out
    published = tmp_path / "published.tsv"
    published.write_text("run\tscore\nragnarok\t0.41\nbaseline\t0.62\nthird\t0.10\n")
    code, out, err = run_cli([*base, "--output", str(tmp_path / "c"), "--rank-against",
                              str(published)], capsys)
    assert code == 0, err
    data = json.loads((tmp_path / "c.json").read_text())
    # the published table ranks baseline first, ragmark's nugget_all ragnarok first
    agree = data["ranking_agreement"]
    assert agree["against"] == "published.tsv"
    assert agree["metrics"]["nugget_all"]["tau"] == -1.0
    assert agree["metrics"]["nugget_all"]["n"] == 2
    assert agree["metrics"]["nugget_all"]["only_there"] == ["third"]
    assert agree["metrics"]["nugget_all"]["reason"] == "an interval needs 5 systems or more"
    flat = " ".join(out.split())
    assert "Ranking agreement with published.tsv" in flat
    assert "nugget_all: Kendall's tau -1.000 (no interval: an interval needs 5 systems" in flat
    page = tmp_path / "c.html"
    code, _, err = run_cli(["report", str(tmp_path / "c.json"), "--output", str(page)],
                           capsys)
    assert code == 0, err
    html = page.read_text()
    assert "<h2>Ranking agreement with published.tsv</h2>" in html
    assert "<td>nugget_all</td><td>-1.000</td><td>an interval needs 5 systems or more</td>" in html
    assert list(data["configs"]) == ["ragnarok", "baseline"]
    # ragnarok: topic 1 holds "it" (nugget 1) and not "1889"; topic 2 holds "hours"
    #   -> nugget_all (1/2 + 1/1) / 2 = 0.75; baseline: topic 1 "it" and "1889" (2/2),
    #   topic 2 nothing (0) -> 0.5
    assert data["configs"]["ragnarok"]["metrics"]["nugget_all"] == 0.75
    assert data["configs"]["baseline"]["metrics"]["nugget_all"] == 0.5
    assert data["configs"]["ragnarok"]["intervals"]["nugget_all"]["n"] == 2
    row = next(r for r in data["comparisons"] if r["metric"] == "nugget_all")
    assert row["config"] == "baseline" and row["baseline"] == "ragnarok" and row["n"] == 2
    for run in ("ragnarok", "baseline"):
        rows = [json.loads(t) for t in (tmp_path / f"c.{run}.assignments.jsonl")
                .read_text().splitlines()]
        assert [r["run_id"] for r in rows] == [run, run]
        assert [len(r["nuggets"]) for r in rows] == [2, 1]  # the folder's nuggets
    assert len(server.requests) == 4  # one assignment an answer, no creation
    b2 = tmp_path / "again.jsonl"
    b2.write_text(a.read_text())
    code, _, err = run_cli(["compare", "--dataset", str(folder), "--outputs", str(a),
                            "--outputs", str(b2), "--metrics", "nuggets", "--quiet"], capsys)
    assert code == 2 and "both hold the system 'ragnarok'" in err


def test_a_published_score_table_is_read_with_its_errors_placed(tmp_path):
    from ragmark.data.run_scores import read_run_scores

    path = tmp_path / "scores.csv"
    path.write_text("run_id,all_score\nr1, 0.5\nr2,0.25\n")
    assert read_run_scores(path) == {"r1": 0.5, "r2": 0.25}
    path.write_text("r1 0.5\nr2 high\n")
    with pytest.raises(DataError, match="expected a number") as e:
        read_run_scores(path)
    assert e.value.line == 2
    path.write_text("r1 0.5\nr1 0.6\n")
    with pytest.raises(DataError, match="again"):
        read_run_scores(path)
    path.write_text("r1 0.5 extra\n")
    with pytest.raises(DataError, match="expected a run id and its score, got 3 fields"):
        read_run_scores(path)


def test_the_relevant_segments_are_what_nuggets_are_created_from(tmp_path, server):
    """A TREC RAG folder without nuggets: the judge creates them from each topic's
    relevant segments (the qrels' documents, best grade first); the folder's nuggets
    are part of the dataset's fingerprint, so results over other nuggets are other
    data."""
    import asyncio
    import re

    from support.fake_llm_server import chat_reply

    from ragmark.case import Case
    from ragmark.data.fingerprint import dataset_hash
    from ragmark.judges import JudgeCounts
    from ragmark.llm import LLMClient, LLMSettings
    from ragmark.running.judging import judge_metric

    folder = trec_folder(tmp_path)
    with_nuggets = load_dataset(folder)
    (folder / "nuggets.jsonl").unlink()
    ds = load_dataset(folder)
    assert dataset_hash(ds) != dataset_hash(with_nuggets)
    (topic,) = ds.samples
    assert topic.relevant_texts == (SEGMENTS[0]["segment"], SEGMENTS[1]["segment"])
    seen = []

    def rule(body):
        user = [m["content"] for m in body["messages"] if m["role"] == "user"][-1]
        seen.append(re.findall(r'<data name="passage" index="\d+">\n(.*?)\n</data>', user,
                               re.S))
        if "List the nuggets" in body["messages"][0]["content"]:
            return chat_reply(json.dumps({"nuggets": ["Gustave Eiffel's company built it"]}))
        return chat_reply(json.dumps({"labels": [{"nugget": 1, "importance": "vital"}]}))

    server.rule = rule
    client = LLMClient(LLMSettings(base_url=server.url, model="m"), use_cache=False)

    async def judged():
        try:
            return await judge_metric(client, "nugget_all", Case(topic), JudgeCounts())
        finally:
            await client.aclose()

    got = asyncio.run(judged())
    assert seen[0] == [SEGMENTS[0]["segment"], SEGMENTS[1]["segment"]]
    assert got.value == 0.0 and got.details["source"] == "judge"


def test_trec_2025_topics_and_answers_with_metadata_and_segment_ids(tmp_path, server, capsys):
    """TREC RAG 2025's files: topics as JSONL {id, title}; answers with the run and topic
    in ``metadata`` and citations given as segment ids (one outside references)."""
    from support.cli import run_cli
    from support.fake_llm_server import chat_reply

    server.rule = lambda body: chat_reply(json.dumps({"verdicts": [
        {"nugget": i, "assignment": "support"} for i in range(
            1, [m["content"] for m in body["messages"] if m["role"] == "user"][-1]
            .count('<data name="nugget"') + 1)]}))
    folder = trec_folder(tmp_path)
    (folder / "topics.tsv").unlink()
    (folder / "topics.jsonl").write_text(
        json.dumps({"id": "2024-1", "title": "who built the eiffel tower"}) + "\n"
        + json.dumps({"id": "2024-2", "title": "how often to take a toddler to the potty"})
        + "\n")
    assert [s.question for s in load_dataset(folder).samples] == [
        "who built the eiffel tower", "how often to take a toddler to the potty"]
    run = tmp_path / "run25.jsonl"
    run.write_text(json.dumps({
        "metadata": {"team_id": "t", "run_id": "run25", "type": "automatic",
                     "narrative_id": "2024-1", "narrative": "who built the eiffel tower"},
        "references": ["msmarco_v2.1_doc_01#0_10"],
        "answer": [{"text": "Gustave Eiffel's company built it.",
                    "citations": ["msmarco_v2.1_doc_01#0_10", "msmarco_v2.1_doc_01#1_200"]}]})
        + "\n")
    out = tmp_path / "r.json"
    code, _, err = run_cli(["run", "--dataset", str(folder), "--outputs", str(run),
                            "--metrics", "nuggets", "--llm-base-url", server.url,
                            "--llm-model", "m", "--output", str(out), "--include-details",
                            "--quiet", "--no-history", "--allow-missing"], capsys)
    assert code == 0, err
    data = json.loads(out.read_text())
    assert data["config"]["name"] == "run25"
    q = data["queries"][0]
    assert q["answer"] == "Gustave Eiffel's company built it. [1] [2]"
    assert q["contexts"] == [SEGMENTS[0]["segment"], SEGMENTS[1]["segment"]]
    assert q["metrics"]["nugget_all"]["value"] == 1.0


def test_assignments_without_a_response_length_count_as_ragnarok_does(tmp_path, server,
                                                                     capsys):
    """Issue 48, item 16: an answer line without response_length gets Ragnarok's count
    of its sentence texts (commas and semicolons split words: 'Paris,France' is two);
    the text the judge saw and the text written are the sentences joined by a space."""
    from support.cli import run_cli
    from support.fake_llm_server import chat_reply

    from ragmark.results.nuggetizer_files import ragnarok_length

    assert ragnarok_length("a,b; c  d.") == 4
    server.rule = lambda body: chat_reply(json.dumps({"verdicts": [
        {"nugget": i, "assignment": "support"} for i in (1, 2)]}))
    line = {k: v for k, v in ANSWER.items() if k != "response_length"}
    line["answer"] = [{"text": "Gustave Eiffel's company built it,in 1889.", "citations": [0]},
                      {"text": "It stands in Paris;France.", "citations": []}]
    out = tmp_path / "r.json"
    code, _, err = run_cli(["run", "--dataset", str(trec_folder(tmp_path)), "--outputs",
                            str(answers_file(tmp_path, [line])), "--metrics", "nuggets",
                            "--llm-base-url", server.url, "--llm-model", "test-model",
                            "--output", str(out), "--quiet", "--no-history",
                            "--allow-missing"], capsys)
    assert code == 0, err
    row = json.loads((tmp_path / "r.assignments.jsonl").read_text().splitlines()[0])
    assert row["answer_text"] == ("Gustave Eiffel's company built it,in 1889. It stands in "
                                  "Paris;France.")
    assert row["response_length"] == 12  # 7 + 5; whitespace alone would say 10
