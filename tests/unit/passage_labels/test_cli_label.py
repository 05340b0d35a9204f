"""`ragmark label` end to end on the demo set, against a real local HTTP server whose
judge says YES when the passage contains a known word."""

from __future__ import annotations

import json
import re
import socket
import sys
import xml.etree.ElementTree as ET

import pytest
from support.cli import run_cli
from support.fake_llm_server import Reply

from ragmark.demo import demo_path

PASSAGE = re.compile(r'<data name="passage">\n(.*)\n</data>', re.DOTALL)
GARBAGE = "Chunking decides"  # the passages the judge cannot label
WHOLE = '[chunker]\nname = "whole"\n\n[retriever]\nname = "bm25"\n'


def chat(text):
    return Reply(body={"id": "x", "object": "chat.completion",
                       "choices": [{"index": 0, "message": {"role": "assistant",
                                                            "content": text}}],
                       "usage": {"prompt_tokens": 40, "completion_tokens": 1}})


def passage_of(body):
    """The passage of the item being labelled (the last user message that has one; a
    re-ask repeats the item before its complaint)."""
    users = [m["content"] for m in body["messages"] if m["role"] == "user"]
    return PASSAGE.search(next(u for u in reversed(users) if PASSAGE.search(u))).group(1)


def judge_rule(word, garbage=None):
    def rule(body):
        p = passage_of(body)
        if garbage and garbage in p:
            return chat("Hard to say, it depends on the reader.")
        return chat("YES" if word in p.lower() else "NO")
    return rule


@pytest.fixture
def demo_args(tmp_path, monkeypatch):
    for var in ("RAGMARK_LLM_BASE_URL", "RAGMARK_LLM_MODEL", "RAGMARK_LLM_API_KEY_ENV"):
        monkeypatch.delenv(var, raising=False)
    whole = tmp_path / "whole.toml"
    whole.write_text(WHOLE)
    return ["label", "--dataset", str(demo_path() / "questions.json"), "--corpus",
            str(demo_path() / "corpus"), "--configs", "sparse", str(whole), "--top-k", "3",
            "--quiet"]


def llm(server):
    return ["--llm-base-url", server.url, "--llm-model", "test-model"]


def test_label_two_configs_exact_values_files_plot_and_a_cached_rerun(
    demo_args, tmp_path, capsys, server
):
    server.rule = judge_rule("generator")
    out = tmp_path / "res" / "lab"
    args = [*demo_args, "--max-queries", "3", "--output", str(out), "--plot", *llm(server)]
    code, stdout, _ = run_cli(args, capsys)
    assert code == 0
    # 3 questions x 3 passages x 2 configs, all distinct (chunks of 500 chars vs whole files)
    assert len(server.requests) == 18 and len(server.gets) == 1  # the probe
    data = json.loads((tmp_path / "res" / "lab.json").read_text())
    assert data["top_k"] == 3 and list(data["configs"]) == ["sparse", "whole"]
    assert data["dataset"]["queries"] == 3 and "chunks" not in data["dataset"]
    assert [c["chunks"] for c in data["configs"].values()] == [18, 5]
    # Labels (YES = the passage mentions "generator"), then the ground truth (grade > 0):
    # sparse q1 Y Y N / rel - -   q2 Y N N / rel - rel   q3 N Y Y / rel - rel
    # whole  q1 Y N Y / rel - -   q2 Y N Y / rel - -     q3 Y Y Y / rel - -
    expected = {
        "sparse": {"judged_precision": [2 / 3, 2 / 3, 5 / 9], "relative_recall": [1 / 2, 5 / 6, 1],
                   "accuracy": [2 / 3, 2 / 3, 5 / 9], "num_relevant": [2 / 3, 4 / 3, 5 / 3],
                   "answer_presence": [2 / 3, 1, 1], "agreement": [2 / 3, 1 / 2, 5 / 9]},
        "whole": {"judged_precision": [1, 2 / 3, 7 / 9], "relative_recall": [4 / 9, 5 / 9, 1],
                  "accuracy": [1, 2 / 3, 7 / 9], "num_relevant": [1, 4 / 3, 7 / 3],
                  "answer_presence": [1, 1, 1], "agreement": [1, 5 / 6, 5 / 9]},
    }
    for name, metrics in expected.items():
        got = data["configs"][name]
        for m, vals in metrics.items():
            assert [got["metrics"][f"{m}@{k}"] for k in (1, 2, 3)] == pytest.approx(vals), \
                (name, m)
            assert got["counts"][f"{m}@3"] == {"n": 3, "missing": 0}
    sparse = data["configs"]["sparse"]
    assert sparse["labels"] == {"passages": 9, "relevant": 5, "not_relevant": 4, "failed": 0}
    # sparse: tp 3, fp 2, fn 2, tn 2 -> kappa 0.1; whole: tp 3, fp 4, fn 0, tn 2 -> 0.25
    assert sparse["agreement"] == pytest.approx(
        {"n": 9, "agreement": 5 / 9, "kappa": 0.1, "tp": 3, "fp": 2, "fn": 2, "tn": 2})
    assert data["configs"]["whole"]["agreement"]["kappa"] == pytest.approx(0.25)
    assert data["agreement"] == pytest.approx(
        {"n": 18, "agreement": 5 / 9, "kappa": 1 / 7, "tp": 6, "fp": 6, "fn": 2, "tn": 4})
    q1 = sparse["queries"][0]
    assert q1["id"] == "q1" and q1["metrics"]["judged_precision@3"] == pytest.approx(2 / 3)
    assert [(p["rank"], p["doc_id"], p["grade"], p["label"]) for p in q1["passages"]] == [
        (1, "rag_pipeline.txt", 1, 1), (2, "retrieval_metrics.txt", 0, 1),
        (3, "chunking.txt", 0, 0)]
    assert q1["passages"][2]["text"].startswith("Choosing how to chunk documents")
    assert data["llm"]["calls"] == 18 and data["llm"]["cache_hits"] == 0
    assert data["llm"]["prompt_tokens"] == 18 * 40 and data["llm"]["judge_failures"] == 0

    md = (tmp_path / "res" / "lab.md").read_text()
    assert md in stdout
    assert "| k | sparse | whole |\n|---:|---:|---:|\n| 1 | 0.6667 | 1.0000 |" in md
    assert "| 3 | 0.5556 | 1.0000 | 0.5556 | 1.67 | 1.0000 | 0.5556 |" in md  # sparse, k=3
    assert "- sparse: 5 relevant, 4 not relevant, 0 failed" in md
    assert "- whole: 0.556 of 9 passages (Cohen's κ 0.250; judge YES and relevant 3" in md
    png = (tmp_path / "res" / "lab.png").read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 1000
    svg = ET.parse(tmp_path / "res" / "lab.svg").getroot()
    assert svg.tag == "{http://www.w3.org/2000/svg}svg"
    texts = "".join(svg.itertext())
    assert "sparse" in texts and "whole" in texts and "answer presence@k" in texts
    assert "Results written to" in stdout and "lab.svg" in stdout

    # a rerun: every label from the cache, the server sees no new chat request
    code, _, _ = run_cli(args, capsys)
    assert code == 0 and len(server.requests) == 18
    again = json.loads((tmp_path / "res" / "lab.json").read_text())
    assert again["llm"]["calls"] == 0 and again["llm"]["cache_hits"] == 18
    assert again["configs"] == data["configs"]


def test_no_label_at_all_exits_1_after_writing_the_results(demo_args, tmp_path, capsys,
                                                            server):
    server.rule = lambda body: chat("Hard to say.")  # never a usable answer
    out = tmp_path / "lab"
    code, _, err = run_cli([*demo_args, "--max-queries", "1", "--output", str(out),
                            *llm(server)], capsys)
    assert code == 1 and (tmp_path / "lab.json").exists()
    assert err.splitlines()[0] == ("gate failed: config 'sparse': no question got a label: "
                                   "every label in the top 3 failed (1 question)")
    assert len(err.splitlines()) == 2  # and config 'whole'
    code, _, _ = run_cli([*demo_args, "--max-queries", "1", "--output", str(out),
                          "--allow-missing", *llm(server)], capsys)
    assert code == 0


def test_a_label_the_judge_cannot_give_is_missing_counted_and_left_out(
    demo_args, tmp_path, capsys, server
):
    server.rule = judge_rule("generator", garbage=GARBAGE)
    out = tmp_path / "lab"
    code, stdout, _ = run_cli([*demo_args, "--max-queries", "1", "--output", str(out),
                               *llm(server)], capsys)
    assert code == 0
    # q1: sparse Y Y (failed); whole Y (failed) Y. Each failing passage: asked, re-asked.
    assert len(server.requests) == 4 + 2 * 2
    data = json.loads((tmp_path / "lab.json").read_text())
    sparse, whole = data["configs"]["sparse"], data["configs"]["whole"]
    assert sparse["labels"]["failed"] == 1 and whole["labels"]["failed"] == 1
    failed = sparse["queries"][0]["passages"][2]["label"]
    assert failed["value"] is None and failed["reason"].startswith(
        "relevance_label: unusable judge output after a re-ask: no YES or NO found")
    assert failed["raw"] == "Hard to say, it depends on the reader."
    # sparse k=3: 2 relevant of 2 labelled -> precision 1 (not 2/3)
    assert [sparse["metrics"][f"judged_precision@{k}"] for k in (1, 2, 3)] == [1, 1, 1]
    assert [whole["metrics"][f"judged_precision@{k}"] for k in (1, 2, 3)] == [1, 1, 1]
    assert [whole["metrics"][f"relative_recall@{k}"] for k in (1, 2, 3)] == [0.5, 0.5, 1]
    assert [whole["metrics"][f"num_relevant@{k}"] for k in (1, 2, 3)] == [1, 1, 2]
    assert sparse["metrics"]["agreement@3"] == 0.5 and whole["metrics"]["agreement@3"] == 0.5
    assert data["llm"]["judge_failures"] == 2 and data["llm"]["judge_reasks"] == 2
    assert "- whole: 2 relevant, 0 not relevant, 1 failed (left out of the metrics)" in stdout
    assert "2 without a verdict" in stdout


def test_dry_run_counts_label_calls_and_calls_nothing(demo_args, tmp_path, capsys, server):
    out = tmp_path / "lab"
    args = [*demo_args, "--max-queries", "2", "--output", str(out), "--llm-prices", "1,2",
            "--dry-run", *llm(server)]
    code, stdout, _ = run_cli(args, capsys)
    assert code == 0 and server.requests == [] and server.gets == []
    assert not (tmp_path / "lab.json").exists()
    assert stdout.startswith("dry run: 12 label calls (at most 24 with re-asks) to "
                             "test-model at http://127.0.0.1:")
    assert ", 0 more served from the cache" in stdout and "estimated cost $0.0" in stdout
    # label the first question for real; the dry run then counts its 6 passages as cached
    server.rule = judge_rule("generator")
    code, _, _ = run_cli([*demo_args, "--max-queries", "1", "--output", str(out),
                          *llm(server)], capsys)
    assert code == 0 and len(server.requests) == 6
    code, stdout, _ = run_cli(args, capsys)
    assert code == 0 and len(server.requests) == 6
    assert stdout.startswith("dry run: 6 label calls (at most 12 with re-asks)")
    assert ", 6 more served from the cache" in stdout


def test_a_custom_template_is_sent_and_checked(demo_args, tmp_path, capsys, server):
    server.rule = judge_rule("generator")
    tpl = tmp_path / "tpl.txt"
    tpl.write_text("Question: {query}; Retrieved Passage: {document}\nYES or NO?")
    code, _, _ = run_cli([*demo_args, "--max-queries", "1", "--prompt-template", str(tpl),
                          "--output", str(tmp_path / "lab"), *llm(server)], capsys)
    assert code == 0
    last = server.requests[0].body["messages"][-1]["content"]
    assert last.startswith('Question: <data name="question">\nWhat are the two main')
    assert last.endswith("</data>\nYES or NO?")
    data = json.loads((tmp_path / "lab.json").read_text())
    assert data["prompt"]["template"] == tpl.read_text()
    bad = tmp_path / "bad.txt"
    bad.write_text("Is {question} answered?")
    code, _, err = run_cli([*demo_args, "--prompt-template", str(bad), *llm(server)], capsys)
    assert code == 2 and f"--prompt-template {bad}: prompt template for relevance_label " \
        "lacks the placeholder(s) {passage}" in err


def test_without_a_working_endpoint_label_is_an_error(demo_args, capsys):
    code, _, err = run_cli(demo_args, capsys)
    assert code == 2 and "error: ragmark label needs an LLM endpoint" in err
    assert "Traceback" not in err
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    code, _, err = run_cli([*demo_args, "--max-queries", "1", "--llm-base-url", dead,
                            "--llm-model", "m"], capsys)
    assert code == 2 and "error: the LLM endpoint did not answer: cannot reach" in err


def test_a_question_an_external_pipeline_failed_on_is_missing_not_zero(
    demo_args, tmp_path, capsys, server, monkeypatch
):
    server.rule = judge_rule("generator")
    (tmp_path / "labelpipe_x1.py").write_text(
        "def answer(question):\n"
        "    if 'MRR' in question:\n"
        "        raise RuntimeError('service down')\n"
        "    return {'answer': 'a', 'contexts': ['The generator writes.', 'Nothing.']}\n")
    ext = tmp_path / "ext.toml"
    ext.write_text('[pipeline]\nkind = "python"\ntarget = "labelpipe_x1:answer"\n'
                   'python_path = ["."]\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    args = [a for a in demo_args if a != str(tmp_path / "whole.toml")]
    code, stdout, err = run_cli([*args, str(ext), "--max-queries", "3", "--output",
                                 str(tmp_path / "lab"), *llm(server)], capsys)
    assert code == 0, stdout + err
    ext_json = json.loads((tmp_path / "lab.json").read_text())["configs"]["ext"]
    q1, q2, q3 = ext_json["queries"]
    assert [p["label"] for p in q1["passages"]] == [1, 0] and q1["metrics"][
        "judged_precision@3"] == pytest.approx(1 / 3)
    assert q2["passages"] == [] and "RuntimeError" in q2["failure"]
    assert q2["metrics"]["answer_presence@1"] == {"value": None, "reason": q2["failure"]}
    assert ext_json["metrics"]["answer_presence@1"] == 1.0
    assert ext_json["counts"]["answer_presence@1"] == {
        "n": 2, "missing": 1, "reasons": {q2["failure"]: 1}}
    assert "- ext: 2 relevant, 2 not relevant, 0 failed (left out of the metrics); the " \
        "pipeline failed on 1 of 3 questions" in stdout


def test_config_names_must_be_distinct(demo_args, capsys, server):
    code, _, err = run_cli([*demo_args, "sparse", *llm(server)], capsys)
    assert code == 2 and "config names must be distinct; repeated: sparse" in err
    assert server.requests == []


def test_plot_without_matplotlib_names_the_extra_before_any_work(demo_args, tmp_path, capsys,
                                                                 server, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import fails
    code, _, err = run_cli([*demo_args, "--plot", "--output", str(tmp_path / "lab"),
                            *llm(server)], capsys)
    assert code == 2
    assert "needs the optional package 'matplotlib': pip install 'ragmark-eval[plot]'" in err
    assert server.requests == [] and not (tmp_path / "lab.json").exists()


def test_labels_from_a_provider_batch_equal_the_interactive_ones(demo_args, tmp_path, capsys,
                                                                  server, monkeypatch):
    server.rule = judge_rule("rank", garbage=GARBAGE)
    args = [*demo_args, "--max-queries", "3", *llm(server)]
    code, _, err = run_cli([*args, "--output", str(tmp_path / "i")], capsys)
    assert code == 0, err
    asked = len(server.requests)
    monkeypatch.setenv("RAGMARK_HOME", str(tmp_path / "batch-home"))
    monkeypatch.setenv("RAGMARK_LLM_BATCH_POLL", "0.01")
    code, _, err = run_cli([*args, "--llm-batch", "--output", str(tmp_path / "b")], capsys)
    assert code == 0, err
    chats = [r for r in server.requests[asked:] if r.path.endswith("/chat/completions")]
    assert chats == [] and len(server.batches.created) == 2  # the labels, then re-asks
    lines = sum(len(server.batches.jobs[b].lines) for b in server.batches.created)
    assert lines == asked  # the same calls (GETs are not in server.requests)
    i, b = (json.loads((tmp_path / f"{n}.json").read_text())["configs"] for n in "ib")
    for name in ("sparse", "whole"):  # the same labels; the config records the batch mode
        assert b[name]["config"].pop("llm") == {**i[name]["config"].pop("llm"), "batch": True}
    assert b == i


def test_two_label_judges_side_by_side(demo_args, tmp_path, capsys, server):
    def rule(body):
        word = "rank" if body["model"] == "judge-a" else "chunk"
        return judge_rule(word)(body)

    server.rule = rule
    args = [*demo_args, "--max-queries", "3", "--llm-base-url", server.url,
            "--judge-model", "judge-a", "--judge-model", "judge-b"]
    code, out, err = run_cli([*args, "--output", str(tmp_path / "lab")], capsys)
    assert code == 0, err
    summary = json.loads((tmp_path / "lab.judges.json").read_text())
    assert summary["judges"] == ["judge-a", "judge-b"]
    a = json.loads((tmp_path / "lab.judge-a.json").read_text())
    b = json.loads((tmp_path / "lab.judge-b.json").read_text())
    # each judge's file is an ordinary label file, with its own labels
    for name in ("sparse", "whole"):
        cell = summary["configs"][name]
        assert cell["judge-a"]["answer_presence@3"] == pytest.approx(
            a["configs"][name]["metrics"]["answer_presence@3"], abs=1e-9)
        assert cell["judge-b"]["judged_precision@3"] == pytest.approx(
            b["configs"][name]["metrics"]["judged_precision@3"], abs=1e-9)
    (pair,) = summary["pairs"]
    label_a = {(q["id"], p["text"]): p["label"] for c in a["configs"].values()
               for q in c["queries"] for p in q["passages"]}
    label_b = {(q["id"], p["text"]): p["label"] for c in b["configs"].values()
               for q in c["queries"] for p in q["passages"]}
    same = sum(label_a[k] == label_b[k] for k in label_a) / len(label_a)
    assert pair["passages"] == len({(q, t) for q, t in label_a})
    assert pair["raw_agreement"] == pytest.approx(same)
    assert "judge-a vs judge-b on" in out and "kappa" in out
    models = {r.body["model"] for r in server.requests}
    assert models == {"judge-a", "judge-b"}


def test_a_label_file_reads_back_into_the_model_exactly(demo_args, tmp_path, capsys, server):
    """One results model for the three kinds (issue 21): a ``ragmark label`` file (with a
    failed label, a missing metric and the agreement) -> LabelRun -> the same JSON."""
    from ragmark.errors import DataError
    from ragmark.passage_labels import label_from_json, label_json

    server.rule = judge_rule("generator", garbage=GARBAGE)
    out = tmp_path / "lab"
    code, _, _ = run_cli([*demo_args, "--max-queries", "2", "--output", str(out),
                          *llm(server)], capsys)
    assert code == 0
    data = json.loads((tmp_path / "lab.json").read_text())
    run = label_from_json(data, "lab.json")
    assert list(run.configs) == ["sparse", "whole"] and run.top_k == 3
    sparse = run.configs["sparse"]
    assert sparse.count(None) == data["configs"]["sparse"]["labels"]["failed"] == 1
    assert sparse.queries[0].items[2].label.reason == data["configs"]["sparse"][
        "queries"][0]["passages"][2]["label"]["reason"]
    assert json.loads(json.dumps(label_json(run))) == data
    with pytest.raises(DataError, match="lab.json: not a label run's results"):
        label_from_json({"configs": {}}, "lab.json")
    data["configs"]["whole"]["queries"][1]["passages"][0]["label"] = 2
    with pytest.raises(DataError) as e:
        label_from_json(data, "lab.json")
    assert str(e.value) == ("lab.json, item configs.whole.queries[1], field "
                            "'passages[0].label': expected 0, 1 or an object with value "
                            "null, got 2")


def test_an_older_label_file_reads_back_under_the_new_metric_names(demo_args, tmp_path,
                                                                   capsys, server):
    """Issue 34: the label metrics that are not the retrieval metrics of the same name
    are judged_precision@k and relative_recall@k; a label file written with the old
    names (precision@k, recall@k) reads back under the new ones, values unchanged."""
    from ragmark.passage_labels import label_from_json, label_json

    server.rule = judge_rule("generator")
    out, history = tmp_path / "lab", str(tmp_path / "h.sqlite")
    code, _, _ = run_cli([*demo_args, "--max-queries", "2", "--output", str(out),
                          "--history", history, *llm(server)], capsys)
    assert code == 0
    new = json.loads((tmp_path / "lab.json").read_text())
    trend = ["history", "--history", history, "trend", "--config-name", "sparse", "--metric"]
    code, shown, _ = run_cli([*trend, "judged_precision@3"], capsys)
    assert code == 0 and f"{new['configs']['sparse']['metrics']['judged_precision@3']:.4f}" \
        in shown
    code, _, err = run_cli([*trend, "precision@3"], capsys)
    assert code == 2 and "Label runs call their precision judged_precision@3: try --metric "\
        "judged_precision@3" in " ".join(err.split())
    sparse = new["configs"]["sparse"]
    assert "precision@3" not in sparse["metrics"] and "recall@3" not in sparse["metrics"]
    old_names = {"judged_precision": "precision", "relative_recall": "recall"}

    def renamed(block):
        return {next((f"{o}@{k.split('@')[1]}" for n, o in old_names.items()
                      if k.startswith(n + "@")), k): v for k, v in block.items()}

    old = json.loads(json.dumps(new))
    for c in old["configs"].values():
        c["metrics"], c["counts"] = renamed(c["metrics"]), renamed(c["counts"])
        for q in c["queries"]:
            q["metrics"] = renamed(q["metrics"])
    assert old["configs"]["sparse"]["metrics"]["precision@3"] == sparse["metrics"][
        "judged_precision@3"]
    assert json.loads(json.dumps(label_json(label_from_json(old, "old.json")))) == new
