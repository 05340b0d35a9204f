"""Support of cited sentences as TREC RAG assesses it (issue 38, item 2): the three scores
on the paper's own worked example and hand-worked cases (Thakur et al., arXiv 2504.15205,
section 3.4), the sentences and what they cite read from [n] markers, one call per cited
passage through the scripted server, and every missing score with its reason."""

from __future__ import annotations

import re

import pytest
from judges_support import as_json, reply, run

from ragmark.case import Case
from ragmark.judges.support import LABELS, METRICS, NOTHING_CITED, judge, support_scores
from ragmark.text import citing_sentences

BLOCK = re.compile(r'<data name="(\w+)"(?: index="\d+")?>\n(.*?)\n</data>', re.S)


def values(got):
    return {m: s.value for m, s in got.items()}


def test_the_papers_worked_example():
    # section 3.4: a1 partially supported by p1, a2 fully by p2, a3 cites nothing ->
    # weighted precision (0.5 + 1) / 2 = 0.75, weighted recall (0.5 + 1) / 3 = 0.5;
    # strictly, one of the two cited sentences is fully supported
    got = support_scores(["partial_support", "full_support", None])
    assert values(got) == {"support_full": 0.5, "support_partial": 0.75,
                           "support_recall": 0.5}


def test_hand_worked_scores():
    # full, partial, none, uncited: full 1/3, partial (1 + 0.5)/3, recall 1.5/4
    got = support_scores(["full_support", "partial_support", "no_support", None])
    assert values(got) == pytest.approx({"support_full": 1 / 3, "support_partial": 0.5,
                                         "support_recall": 0.375})
    # every sentence cites: the weighted precision and recall are equal
    got = support_scores(["full_support", "no_support"])
    assert got["support_partial"].value == got["support_recall"].value == 0.5


def test_an_uncited_answer_is_uncited_not_unsupported():
    got = support_scores([None, None])
    assert got["support_full"].value is None and got["support_full"].reason == NOTHING_CITED
    assert got["support_partial"].reason == NOTHING_CITED
    assert got["support_recall"].value == 0.0  # two sentences, none supported by a citation
    assert {s.reason for s in support_scores([]).values()} == {"the answer has no sentence"}


def test_sentences_and_citations_from_markers():
    answer = ("The tower was built by Eiffel's company [1]. It opened in 1889 [2][1]. "
              "It is in Paris. It is 330 metres tall [9].\nA list item [1]")
    assert citing_sentences(answer) == [
        ("The tower was built by Eiffel's company.", (1,)), ("It opened in 1889.", (2, 1)),
        ("It is in Paris.", ()), ("It is 330 metres tall.", (9,)), ("A list item", (1,))]


# ---------------------------------------------------------------- through the scripted server

PASSAGES = ["The tower was built by the company of Gustave Eiffel.",
            "The tower opened to the public in 1889 for the World's Fair."]


def blocks(body):
    user = [m["content"] for m in body["messages"] if m["role"] == "user"][-1]
    return BLOCK.findall(user)


def scripted(body):
    """Full support when the passage has every word of the statement, partial when it has
    some, none when it has none."""
    got = blocks(body)
    passage = set(re.findall(r"\w+", dict(got)["passage"].lower()))
    verdicts = []
    for i, text in enumerate((t for n, t in got if n == "statement"), start=1):
        words = set(re.findall(r"\w+", text.lower()))
        share = len(words & passage) / len(words)
        verdicts.append({"statement": i, "support": "full_support" if share == 1 else
                         "partial_support" if share > 0.5 else "no_support"})
    return as_json({"verdicts": verdicts})


def test_each_sentence_judged_against_its_first_cited_passage(client, server):
    server.rule = scripted
    answer = ("The tower was built by the company of Gustave Eiffel [1]. "
              "The tower opened in 1887 [2][1]. It is in Paris. "
              "It is 330 metres tall [9]. Eiffel painted it red [1].")
    got = run(client, judge(client, Case.of("Who built it?", answer, PASSAGES)))
    # one call a passage cited first: passage 1 with its two sentences, passage 2 with one
    assert len(server.requests) == 2
    by_passage = {dict(blocks(r.body))["passage"]: [t for n, t in blocks(r.body)
                                                   if n == "statement"]
                  for r in server.requests}
    assert by_passage == {
        PASSAGES[0]: ["The tower was built by the company of Gustave Eiffel.",
                      "Eiffel painted it red."],
        PASSAGES[1]: ["The tower opened in 1887."]}
    for r in server.requests:  # exactly one verdict per statement, numbered 1..n
        n = sum(name == "statement" for name, _ in blocks(r.body))
        verdicts = r.body["response_format"]["json_schema"]["schema"]["properties"]["verdicts"]
        assert verdicts["minItems"] == verdicts["maxItems"] == n
        assert verdicts["items"]["properties"]["statement"]["enum"] == list(range(1, n + 1))
    details = got["support_partial"].details
    assert [(s["passage"], s["support"]) for s in details["sentences"]] == [
        (1, "full_support"), (2, "partial_support"), (None, None), (None, None),
        (1, "no_support")]
    assert details["cited"] == 3 and details["uncited"] == 2 and details["calls"] == 2
    assert details["sentences"][3] == {"text": "It is 330 metres tall.", "cites": [9],
                                       "passage": None, "support": None}
    # full, partial, none of three cited; five sentences: full 1/3, partial 1.5/3,
    # recall 1.5/5
    assert values(got) == pytest.approx({"support_full": 1 / 3, "support_partial": 0.5,
                                         "support_recall": 0.3})


def test_the_three_scores_share_one_judgement(client, server):
    from ragmark.judges.support import SPECS

    server.rule = scripted
    case = Case.of("Who built it?", "The tower was built by the company of Gustave "
                     "Eiffel [1].", PASSAGES)

    from ragmark.running.judging import by_judge

    # one judge gives the three: a run asks it once a case for all of them
    assert by_judge([s.name for s in SPECS]) == [tuple(s.name for s in SPECS)]
    got = run(client, SPECS[0].compute(client, case, None))
    assert [got[s.name].value for s in SPECS] == [1.0, 1.0, 1.0]
    assert len(server.requests) == 1


def test_missing_scores_keep_their_reasons(client, server):
    got = run(client, judge(client, Case.of("Q?", "  ", PASSAGES)))
    assert {s.reason for s in got.values()} == {"empty answer"}
    got = run(client, judge(client, Case.of("Q?", "No citation here. None here.", PASSAGES)))
    assert got["support_partial"].reason == NOTHING_CITED and got["support_recall"].value == 0
    assert not server.requests
    server.queue.extend([reply("no idea"), reply("still no idea")])
    got = run(client, judge(client, Case.of("Q?", "Built by Eiffel [1].", PASSAGES)))
    assert got["support_full"].reason.startswith("support: unusable judge output after a "
                                                 "re-ask")
    assert all(s.value is None for s in got.values()) and set(got) == set(METRICS)


# ---------------------------------------------------------------- from the command line

def test_support_of_a_trec_rag_answer_file_from_the_command_line(tmp_path, server, capsys):
    """TREC RAG's answers scored for support: each object a sentence with its citations,
    judged against its first cited segment (one call a segment); the dry run counts the
    calls; inspect and the HTML view list each sentence with its verdict; an object of two
    sentences is one unit, as the track judges it."""
    import json

    from support.cli import run_cli
    from support.trec_rag import ANSWER, SEGMENTS, answers_file, trec_folder

    server.rule = scripted
    two = {**ANSWER, "topic_id": "2024-2", "topic": "how often to take a toddler",
           "references": ["msmarco_v2.1_doc_02#0_0"],
           "answer": [{"text": "Take a toddler to the potty every two hours. Praise them.",
                       "citations": [0]}]}
    base = ["run", "--dataset", str(trec_folder(tmp_path)), "--outputs",
            str(answers_file(tmp_path, [ANSWER, two])), "--metrics", "support",
            "--llm-base-url", server.url, "--llm-model", "test-model", "--no-history",
            "--allow-missing"]
    code, out, err = run_cli([*base, "--dry-run"], capsys)
    assert code == 0, err
    assert not server.requests
    assert "dry run: 3 judge calls (at most 6 with re-asks)" in out
    result = tmp_path / "r.json"
    code, out, err = run_cli([*base, "--output", str(result), "--include-details"], capsys)
    assert code == 0, err
    assert len(server.requests) == 3  # 2024-1 cites two segments first, 2024-2 one
    per = {q["id"]: q["metrics"] for q in json.loads(result.read_text())["queries"]}
    # 2024-1: built by Eiffel's company (segment 1 lacks "it": partly), 330 metres tall
    # (segment 2 lacks "it": partly), in Paris (uncited): none fully supported, 2 x 0.5
    # over the 2 cited sentences, over all 3
    first = per["2024-1"]
    assert [(s["passage"], s["support"]) for s in first["support_full"]["sentences"]] == [
        (1, "partial_support"), (2, "partial_support"), (None, None)]
    assert (first["support_full"]["value"], first["support_partial"]["value"],
            first["support_recall"]["value"]) == pytest.approx((0.0, 0.5, 1 / 3))
    # 2024-2: one object of two sentences, judged whole: "Praise them." is not in the
    # segment, the rest is -- partly supported
    second = per["2024-2"]
    assert second["support_full"]["sentences"] == [{
        "text": "Take a toddler to the potty every two hours. Praise them.", "cites": [1],
        "passage": 1, "support": "partial_support"}]
    assert (second["support_full"]["value"], second["support_partial"]["value"]) == (0.0, 0.5)
    code, out, err = run_cli(["inspect", str(result), "2024-1"], capsys)
    assert code == 0, err
    flat = " ".join(out.split())
    assert ("Support of cited sentences (2 of 3 cite a passage; each judged against the "
            "first it cites)") in flat
    assert "1. [1] partly supported: Gustave Eiffel's company built it." in flat
    assert "3. uncited: It is in Paris." in flat
    assert "0 of 2 cited sentences fully supported" in flat
    html = tmp_path / "r.html"
    code, _, err = run_cli(["report", str(result), "--output", str(html)], capsys)
    assert code == 0, err
    assert "<li>[2] partly supported: It is 330 metres tall.</li>" in html.read_text()
    assert SEGMENTS[1]["segment"] in [dict(blocks(r.body))["passage"]
                                      for r in server.requests]


def test_a_logs_own_sentences_are_checked(tmp_path):
    """``answer_sentences`` (how TREC RAG's answer objects are read; a log may give them)
    must cite contexts the line has: else an error naming the line and the field."""
    import json

    from ragmark.data.outputs import load_outputs
    from ragmark.errors import DataError

    log = tmp_path / "log.jsonl"
    good = {"question": "Who?", "answer": "Eiffel. His firm.", "contexts": ["Eiffel built it."],
            "answer_sentences": [{"text": "Eiffel. His firm.", "citations": [0]}]}
    log.write_text(json.dumps(good) + "\n")
    out = next(iter(load_outputs(log).outputs.values()))
    assert out.sentences == (("Eiffel. His firm.", (1,)),)
    log.write_text(json.dumps({**good, "answer_sentences": [{"text": "x", "citations": [1]}]})
                   + "\n")
    with pytest.raises(DataError, match=r"index into contexts \(0 to 0\)") as e:
        load_outputs(log)
    assert e.value.line == 1 and e.value.field == "answer_sentences[0].citations[0]"
    log.write_text(json.dumps({**good, "answer_sentences": [{"text": "x", "citations": ["a"]}]})
                   + "\n")
    with pytest.raises(DataError, match=r"indices into contexts \(0 to 0\), got \"a\""):
        load_outputs(log)


def test_support_of_ragmarks_own_llm_generators_answers(tmp_path, server, capsys):
    """ragmark's LLM generator cites its contexts as [n]: each cited sentence judged
    against the context it cites first, the uncited one counted, on the demo corpus."""
    import json
    from pathlib import Path

    from support.cli import run_cli

    from ragmark.generation.llm import INSTRUCTION

    def rule(body):
        if body["messages"][0]["content"].startswith(INSTRUCTION[:40]):
            return reply("A retriever finds the passages [1]. It is quick. "
                         "The generator writes the answer [2][1].")
        return scripted(body)

    server.rule = rule
    ds = tmp_path / "set.json"
    ds.write_text(json.dumps([{"question": "What is a RAG pipeline made of?",
                               "ground_truth_contexts": ["a retriever finds the passages"]}]))
    cfg = tmp_path / "llm.toml"
    cfg.write_text(f'name = "gen"\ntop_n = 2\n[generator]\nname = "llm"\n[llm]\n'
                   f'base_url = "{server.url}"\nmodel = "test-model"\n')
    demo = Path(__file__).resolve().parents[3] / "src" / "ragmark" / "demo" / "corpus"
    out = tmp_path / "r.json"
    code, _, err = run_cli(["run", "--config", str(cfg), "--dataset", str(ds), "--corpus",
                            str(demo), "--metrics", "support", "--output", str(out),
                            "--include-details", "--quiet", "--no-history"], capsys)
    assert code == 0, err
    q = json.loads(out.read_text())["queries"][0]
    m = q["metrics"]
    sentences = m["support_recall"]["sentences"]
    assert [(s["text"], s["passage"]) for s in sentences] == [
        ("A retriever finds the passages.", 1), ("It is quick.", None),
        ("The generator writes the answer.", 2)]
    assert all(s["support"] in LABELS for s in (sentences[0], sentences[2]))
    again = support_scores([s["support"] for s in sentences])
    assert {n: m[n]["value"] for n in METRICS} == {n: s.value for n, s in again.items()}
    judged = [r for r in server.requests if "Each numbered statement" in
              r.body["messages"][0]["content"]]
    # one call for each context cited first (contexts 1 and 2), in either order
    assert sorted(dict(blocks(r.body))["passage"] for r in judged) == sorted(q["contexts"][:2])


def test_sentences_the_source_gives_are_the_units(client, server):
    """Given sentences (TREC RAG's answer objects) are judged as they are, whole, even of
    two sentences, against their first cited context; a blank one is no sentence."""
    server.rule = scripted
    given = (("The tower was built by the company of Gustave Eiffel. It opened in 1889.",
              (1, 2)), ("", (1,)), ("Nothing cited here", ()))
    case = Case.of("Who built it?", "ignored [2]. Text [1].", PASSAGES, sentences=given)
    got = run(client, judge(client, case))
    assert len(server.requests) == 1
    assert [t for n, t in blocks(server.requests[0].body) if n == "statement"] == [given[0][0]]
    assert [(s["passage"], s["support"]) for s in got["support_full"].details["sentences"]] == [
        (1, "partial_support"), (None, None)]
    assert values(got) == {"support_full": 0.0, "support_partial": 0.5, "support_recall": 0.25}


def test_names_and_reasons_with_brackets_print_as_they_are(tmp_path, server, capsys,
                                                           monkeypatch):
    """A missing reason holds "[n]" and a file name brackets: the run's verbose lines,
    the history's list and its run view print them as they are, not as rich markup
    (which ate "[n]" and would stop on a closing tag)."""
    import json

    from support.cli import run_cli

    monkeypatch.setenv("RAGMARK_HISTORY", str(tmp_path / "h.sqlite"))
    server.rule = scripted
    log = tmp_path / "log[x].jsonl"
    log.write_text(json.dumps({"id": "q[/b]1", "question": "Who?", "answer": "No cite.",
                               "contexts": PASSAGES}) + "\n")
    code, out, err = run_cli(["run", "--outputs", str(log), "--metrics", "support",
                              "--llm-base-url", server.url, "--llm-model", "m", "--verbose",
                              "--allow-missing"], capsys)
    assert code == 0, err
    flat = " ".join(out.split())
    assert "q[/b]1: " in flat and f"support_full=missing ({NOTHING_CITED})" in flat
    code, out, err = run_cli(["history"], capsys)
    assert code == 0, err
    assert "log[x]" in " ".join(out.split())
    code, out, err = run_cli(["history", "show", "1"], capsys)
    assert code == 0, err
    assert "([n])" in " ".join(out.split())
