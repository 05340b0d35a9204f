"""Claim-level diagnostics (RAGChecker's definitions): the same numbers as RAGChecker's
own example output from its claims and verdicts; a hand-worked question through the
scripted server (calls, exact-count schemas, values, blame); missing reasons; the dry
run's count of calls."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from judges_support import as_json, reply, run

from ragmark.case import Case
from ragmark.judges.claim_scores import METRICS, Checked, blame, claim_scores
from ragmark.judges.claims import claims_of
from ragmark.judges.reference import NO_REFERENCE

HERE = Path(__file__).parent
OURS = {  # RAGChecker's name -> ours
    "precision": "claim_precision", "recall": "claim_recall", "f1": "claim_f1",
    "claim_recall": "claim_context_recall", "context_precision": "claim_context_precision",
    "context_utilization": "context_utilization",
    "noise_sensitivity_in_relevant": "noise_sensitivity_relevant",
    "noise_sensitivity_in_irrelevant": "noise_sensitivity_irrelevant",
    "hallucination": "hallucination", "self_knowledge": "self_knowledge",
    "faithfulness": "claim_faithfulness"}


def _flags(text: str) -> list[bool]:
    return [ch == "E" for ch in text]


def _checked(r: dict) -> Checked:
    return Checked(
        [f"a{j}" for j in range(r["response_claims"])],
        [f"e{i}" for i in range(r["gt_answer_claims"])], r["chunks"],
        [_flags(row) for row in r["retrieved2response"]],
        [_flags(row) for row in r["retrieved2answer"]],
        _flags(r["answer2response"]), _flags(r["response2answer"]))


def test_same_numbers_as_ragchecker_on_its_example_output():
    example = json.loads((HERE / "ragchecker" / "example_verdicts.json").read_text())
    per_metric: dict[str, list[float]] = {}
    for r in example["results"]:
        scores = claim_scores(_checked(r))
        assert set(scores) == set(METRICS) == set(OURS.values())
        for theirs, value in r["metrics"].items():
            got = scores[OURS[theirs]].value
            assert got == pytest.approx(value, abs=1e-12), (r["query_id"], theirs)
            per_metric.setdefault(theirs, []).append(got)
    # RAGChecker's aggregate: the mean over questions, in percent, rounded to 0.1
    for theirs, value in example["aggregate_percent"].items():
        vals = per_metric[theirs]
        assert round(sum(vals) / len(vals) * 100, 1) == value, theirs


# A hand-worked question: 3 answer claims, 2 expected claims, 3 chunks.
QUESTION = "Who built the Eiffel Tower and when?"
EXPECTED = "Gustave Eiffel's company built the Eiffel Tower. It was finished in 1889."
ANSWER = "Gustave Eiffel's company built the tower in Paris. It opened in 1925."
A = ["Gustave Eiffel's company built the Eiffel Tower.", "The Eiffel Tower is in Paris.",
     "The Eiffel Tower opened in 1925."]
E = ["Gustave Eiffel's company built the Eiffel Tower.",
     "The Eiffel Tower was finished in 1889."]
CHUNKS = ["Gustave Eiffel's engineering company designed and built the tower in Paris.",
          "The tower was finished in 1889.", "Paris hosts many tourists."]
# passage -> verdict letters for the claims sent (answer claims, then expected claims)
VERDICTS = {CHUNKS[0]: "EENEN", CHUNKS[1]: "NNCNE", CHUNKS[2]: "NENNN",
            EXPECTED: "ENC", ANSWER: "EN"}
WORD = {"E": "entailment", "N": "neutral", "C": "contradiction"}
BLOCK = re.compile(r'<data name="(\w+)"(?: index="\d+")?>\n(.*?)\n</data>', re.S)


def _user_blocks(body) -> list[tuple[str, str]]:
    user = [m["content"] for m in body["messages"] if m["role"] == "user"][-1]
    return BLOCK.findall(user)


def scripted(body):
    system = body["messages"][0]["content"]
    blocks = _user_blocks(body)
    if system.startswith("Break the answer into its factual claims"):
        text = dict(blocks)["answer"]
        return as_json({"claims": A if text == ANSWER else E})
    if "what the passage makes of it" in system:
        passage = dict(blocks)["passage"]
        claims = [t for name, t in blocks if name == "claim"]
        letters = VERDICTS[passage][:len(claims)]  # without expected claims: the answer's
        return as_json({"verdicts": [{"claim": i, "verdict": WORD[x]}
                                     for i, x in enumerate(letters, start=1)]})
    return reply("?")


def test_a_hand_worked_question_through_the_scripted_server(client, server):
    server.rule = scripted
    got = run(client, claims_of(client, Case.of(QUESTION, ANSWER, CHUNKS, EXPECTED), None))
    # 2 extractions + one call per chunk + 2 cross-checks
    assert len(server.requests) == 2 + 3 + 2
    checks = [r.body for r in server.requests
              if "what the passage makes of it" in r.body["messages"][0]["content"]]
    for body in checks:  # the schema holds the verdict count exactly
        n = sum(1 for name, _ in _user_blocks(body) if name == "claim")
        schema = body["response_format"]["json_schema"]["schema"]["properties"]["verdicts"]
        assert schema["minItems"] == schema["maxItems"] == n
    assert sorted(len([1 for name, _ in _user_blocks(b) if name == "claim"])
                  for b in checks) == [2, 3, 5, 5, 5]
    v = {n: s.value for n, s in got.items()}
    assert v["claim_precision"] == pytest.approx(1 / 3)
    assert v["claim_recall"] == pytest.approx(1 / 2)
    assert v["claim_f1"] == pytest.approx(0.4)  # 2 * 1/3 * 1/2 / (1/3 + 1/2)
    assert v["claim_context_recall"] == 1.0
    assert v["claim_context_precision"] == pytest.approx(2 / 3)
    assert v["context_utilization"] == pytest.approx(1 / 2)
    assert v["claim_faithfulness"] == pytest.approx(2 / 3)
    assert v["hallucination"] == pytest.approx(1 / 3)  # 1925: no chunk, not expected
    assert v["self_knowledge"] == 0.0
    assert v["noise_sensitivity_relevant"] == pytest.approx(1 / 3)  # Paris, from chunk 1
    assert v["noise_sensitivity_irrelevant"] == 0.0  # chunk 3 too, but chunk 1 is relevant
    told = got["claim_f1"].details["blame"]
    assert told["label"] == "generator_ignored"
    assert told["says"] == "the generator ignored retrieved evidence"
    assert {p["label"]: p["claims"] for p in told["problems"]} == {
        "generator_ignored": [E[1]], "generator_unsupported": [A[2]],
        "generator_noise": [A[1]]}
    assert got["hallucination"].details["hallucinated"] == [A[2]]
    assert got["claim_context_precision"].details["irrelevant_passages"] == [3]
    assert got["claim_precision"].details["calls"] == 7


def test_without_an_expected_answer_only_faithfulness_is_computed(client, server):
    server.rule = scripted
    got = run(client, claims_of(client, Case.of(QUESTION, ANSWER, CHUNKS, None), None))
    assert len(server.requests) == 1 + 3  # the answer's claims, then each chunk
    assert got["claim_faithfulness"].value == pytest.approx(2 / 3)
    for name in set(METRICS) - {"claim_faithfulness"}:
        assert got[name].value is None and got[name].reason == NO_REFERENCE, name
    assert "blame" not in got["claim_faithfulness"].details


def test_missing_reasons_never_zero():
    empty = Checked([], ["e"], 1, [], [[True]], [], [True])
    s = claim_scores(empty)
    assert s["claim_precision"].reason == "the judge found no claims in the answer"
    assert s["claim_recall"].value == 1.0 and s["claim_f1"].value is None
    assert s["claim_context_recall"].value == 1.0
    nothing = Checked(["a"], ["e"], 0, [[]], [[]], [True], [True])
    s = claim_scores(nothing)
    assert s["claim_context_recall"].reason == "no retrieved context"
    assert s["claim_faithfulness"].reason == "no retrieved context"
    assert s["claim_f1"].value == 1.0
    unrecalled = Checked(["a"], ["e"], 1, [[False]], [[False]], [False], [False])
    s = claim_scores(unrecalled)
    assert s["context_utilization"].reason == ("no claim of the expected answer is in the "
                                               "retrieved contexts")
    assert s["claim_context_recall"].value == 0.0 and s["hallucination"].value == 1.0
    assert blame(unrecalled)["label"] == "retrieval_missed"
    assert blame(Checked(["a"], ["e"], 1, [[True]], [[True]], [True], [True])) == {
        "label": "fine", "says": "fine", "problems": []}


def test_a_failed_chunk_check_leaves_the_chunk_metrics_missing(client, server):
    def rule(body):
        if any(f'<data name="passage">\n{CHUNKS[1]}\n</data>' in m["content"]
               for m in body["messages"]):
            return reply("no idea")  # and again when re-asked
        return scripted(body)

    server.rule = rule
    got = run(client, claims_of(client, Case.of(QUESTION, ANSWER, CHUNKS, EXPECTED), None))
    assert got["claim_precision"].value == pytest.approx(1 / 3)  # cross-checks held
    assert got["claim_f1"].value == pytest.approx(0.4)
    bad = got["claim_faithfulness"]
    assert bad.value is None and bad.reason.startswith("claims.check: unusable judge output")
    assert bad.details["raw"] == "no idea"
    assert "blame" not in bad.details


def test_the_dry_run_counts_the_calls_per_question(server):
    from ragmark.case import Case
    from ragmark.llm import LLMSettings
    from ragmark.running.judging import estimate

    settings = LLMSettings(base_url=server.url, model="test-model")
    cases = [Case.of(QUESTION, ANSWER, CHUNKS, EXPECTED),
             Case.of(QUESTION, "It opened in 1925.", CHUNKS[:2], EXPECTED)]
    got = estimate(cases, ["claim_f1", "hallucination", "faithfulness"], settings)
    assert not server.requests  # nothing called
    # per question: 2 extractions + a call per chunk + 2 cross-checks, each of which may
    # be re-asked once; faithfulness adds its check of the claims (its extraction is
    # the same call as the claim metrics', counted once); the expected answer's claims
    # are the same call for both questions (counted once, then served as cached)
    claims = (2 + 3 + 2) + (1 + 2 + 2)
    assert got["calls"] == claims + 2 and got["cached"] >= 1
    assert got["at_most"] == 2 * claims + 2 * 2


WORDS = re.compile(r"[a-z0-9]{4,}")


def generic(body):
    """Claims are the sentences of a text; a passage entails a claim when it has every
    word of 4+ letters of the claim; any other prompt (the generator) gets one answer."""
    system = body["messages"][0]["content"]
    blocks = _user_blocks(body)
    if system.startswith("Break the answer into its factual claims"):
        text = dict(blocks)["answer"]
        return as_json({"claims": [s.strip() + "." for s in text.split(".") if s.strip()]})
    if "what the passage makes of it" in system:
        passage = set(WORDS.findall(dict(blocks)["passage"].lower()))
        claims = [t for name, t in blocks if name == "claim"]
        return as_json({"verdicts": [
            {"claim": i, "verdict": "entailment" if set(WORDS.findall(c.lower())) <= passage
             else "neutral"} for i, c in enumerate(claims, start=1)]})
    return reply("A retriever finds passages. Bananas are purple.")


def test_from_the_command_line_run_inspect_report_and_dry_run(server, tmp_path, capsys):
    from support.cli import run_cli

    server.rule = generic
    ds = tmp_path / "set.json"
    ds.write_text(json.dumps([{
        "id": "q1", "question": "What are the two main components of a RAG pipeline?",
        "expected_answer": "A retriever finds passages. A generator writes the answer.",
        "ground_truth_contexts": ["The retriever and the generator are the two main "
                                  "components"]}]))
    demo = Path(__file__).resolve().parents[3] / "src" / "ragmark" / "demo" / "corpus"
    base = ["--dataset", str(ds), "--corpus", str(demo), "--metrics", "mrr,claims",
            "--top-k", "3", "--llm-base-url", server.url, "--llm-model", "test-model"]
    code, out, err = run_cli(["run", *base, "--dry-run"], capsys)
    assert code == 0, err
    assert not server.requests
    assert "claim" in out.lower() or "call" in out.lower()
    result = tmp_path / "r.json"
    code, _, err = run_cli(["run", *base, "--output", str(result), "--include-details",
                            "--quiet"], capsys)
    assert code == 0, err
    data = json.loads(result.read_text())
    for name in METRICS:
        assert name in data["metrics"], name
    code, out, err = run_cli(["inspect", str(result), "--failures"], capsys)
    assert code == 0, err
    assert "blamed by the claim diagnostics" in out
    code, out, err = run_cli(["inspect", str(result), "q1"], capsys)
    assert code == 0, err
    assert "Claim diagnostics:" in out
    html = tmp_path / "r.html"
    code, _, err = run_cli(["report", str(result), "--output", str(html)], capsys)
    assert code == 0, err
    assert "Claim diagnostics:" in html.read_text()


def test_every_judge_is_told_the_language_of_the_data(server, tmp_path, capsys):
    """A config's language = "de": every judge prompt says the texts are in German (the
    relevance, correctness, reference-based, claim and refusal judges alike), and the
    claim extraction of faithfulness and of the claim diagnostics asks for the claims in
    German; a run without a language sends the prompts it always sent."""
    from support.cli import run_cli

    server.rule = generic
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "haus.txt").write_text("Die alten Häuser stehen am Fluss. Der Fluss ist breit.")
    ds = tmp_path / "set.json"
    ds.write_text(json.dumps([{"id": "q1", "question": "Wo stehen die Häuser?",
                               "expected_answer": "Die Häuser stehen am Fluss.",
                               "ground_truth_contexts": ["Die alten Häuser stehen am Fluss"]}]))
    for lang in (None, "de"):
        cfg = tmp_path / f"{lang}.toml"
        cfg.write_text(f'name = "x"\n{"" if lang is None else "language = " + repr(lang)}\n')
        server.requests.clear()
        code, _, err = run_cli(["run", "--dataset", str(ds), "--corpus", str(corpus),
                                "--config", str(cfg), "--metrics", ",".join(JUDGES),
                                "--refusal-judge", "--llm-base-url", server.url,
                                "--llm-model", "test-model", "--no-history", "--quiet",
                                "--allow-missing"], capsys)
        assert code == 0, err
        every = [r.body["messages"][0]["content"] for r in server.requests
                 if r.body.get("messages")]
        told = {s.split(".")[0]: "The texts are in German: judge them as they are" in s
                for s in every}
        assert len(told) >= 9  # the distinct prompts (one a judge, two for claims; context
        # recall asks faithfulness's two)
        assert all(told.values()) if lang == "de" else not any(told.values())
        systems = [s for s in every if s.startswith("Break the answer")]
        assert systems
        said = ["Write the claims in German" in s for s in systems]
        assert all(said) if lang == "de" else not any(said)


JUDGES = ("faithfulness", "claim_f1", "answer_relevance", "context_relevance",
          "answer_correctness", "context_recall", "context_entity_recall",
          "context_precision", "citation_correctness")
