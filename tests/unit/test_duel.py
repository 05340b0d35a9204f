"""`ragmark duel A.json B.json` (issue 36, step 3) against the scripted server: two results
files of the same questions judged pair by pair in both orders; hand-worked verdict
tables (a fair judge, one that always names the first shown), the sign test and Holm,
the dry run's counts, the report file, and bad inputs refused before any call."""

from __future__ import annotations

import json
import re

import pytest
from support.annotate_data import results_file
from support.cli import run_cli
from support.fake_llm_server import chat_reply

from ragmark.stats.win_rates import sign_test


def answers(body):
    user = body["messages"][-1]["content"]
    return dict(re.findall(r'<data name="(\w+_answer)">\n(.*?)\n</data>', user, re.S))


def fair(body):
    """Prefers an answer over 'No idea.'; two real answers tie."""
    a = answers(body)
    first, second = a["first_answer"] != "No idea.", a["second_answer"] != "No idea."
    better = "tie" if first == second else ("first" if first else "second")
    return chat_reply(json.dumps({"better": better, "reason": "r"}))


def always_first(body):
    return chat_reply(json.dumps({"better": "first", "reason": "first"}))


@pytest.fixture
def files(tmp_path):
    """A: the fixture's 12 answers; B: the same questions, 'No idea.' for the first 8."""
    a = results_file(tmp_path)
    data = json.loads(a.read_text())
    for q in data["queries"][:8]:
        q["answer"] = "No idea."
    data["config"]["name"] = "weak"
    b = tmp_path / "b.json"
    b.write_text(json.dumps(data))
    return a, b


def llm(server):
    return ["--llm-base-url", server.url, "--llm-model", "test-model"]


def test_a_fair_judge_gives_a_its_wins_and_no_bias(files, server, tmp_path, capsys):
    a, b = files
    server.rule = fair
    out = tmp_path / "duel.json"
    code, stdout, err = run_cli(["duel", str(a), str(b), "--output", str(out), "--quiet",
                                 "--resamples", "500", *llm(server)], capsys)
    assert code == 0, err
    r = json.loads(out.read_text())
    s = r["criteria"]["overall"]
    # 8 questions: A answered, B did not -> A wins; 4: both answered -> tie
    assert (s["wins"], s["ties"], s["losses"]) == (8, 4, 0)
    assert s["value"] == pytest.approx((8 + 2) / 12)
    assert s["p_value"] == pytest.approx(sign_test(8, 0)) == pytest.approx(2 / 256)
    assert s["p_holm"] == s["p_value"]  # one criterion
    assert s["position_bias"] == {"pairs": 8, "inconsistent": 0, "follows_position": 0,
                                  "rate": 0.0}  # the 4 identical pairs: no call
    assert len(server.requests) == 8 * 2  # both orders
    assert r["verdicts"]["overall"][-1] == {"id": "item11", "verdict": "tie", "orders": [],
                                            "reasons": ["the two answers are the same"]}
    assert r["a"]["name"] != r["b"]["name"] == "weak" and r["questions"] == 12
    assert r["verdicts"]["overall"][0]["orders"] == [{"first": "A", "said": "first"},
                                                      {"first": "B", "said": "second"}]
    assert "overall: A wins 8, ties 4, B wins 0; A's win rate 0.833 [" in " ".join(
        stdout.split())


def test_a_judge_that_names_the_first_shown_gives_ties_and_its_bias(files, server,
                                                                     tmp_path, capsys):
    a, b = files
    out = tmp_path / "duel.json"
    server.rule = always_first
    code, _, err = run_cli(["duel", str(a), str(b), "--output", str(out), "--quiet",
                            "--pairwise", "overall,completeness", "--resamples", "500",
                            *llm(server)], capsys)
    assert code == 0, err
    r = json.loads(out.read_text())
    for c in ("overall", "completeness"):
        s = r["criteria"][c]
        assert (s["wins"], s["ties"], s["losses"]) == (0, 12, 0)  # 8 flipped, 4 the same
        assert s["position_bias"]["rate"] == 1.0 and s["p_value"] == 1.0


def test_one_order_halves_the_calls_and_the_dry_run_counts_them(files, server, tmp_path,
                                                                capsys):
    a, b = files
    server.rule = fair
    code, stdout, err = run_cli(["duel", str(a), str(b), "--dry-run", "--pairwise",
                                 "overall,faithfulness", *llm(server)], capsys)
    assert code == 0, err
    text = " ".join(stdout.split())
    assert "dry run: 12 pairs x 2 criteria x 2 orders" in text
    assert "dry run: 32 judge calls" in text and server.requests == []  # 8 pairs differ
    out = tmp_path / "one.json"
    code, stdout, err = run_cli(["duel", str(a), str(b), "--pairwise-orders", "1",
                                 "--output", str(out), "--quiet", *llm(server)], capsys)
    assert code == 0, err
    r = json.loads(out.read_text())
    assert len(server.requests) == 8
    firsts = [v["orders"][0]["first"] for v in r["verdicts"]["overall"] if v["orders"]]
    assert len(set(firsts)) == 2  # drawn per question
    assert r["criteria"]["overall"]["position_bias"]["rate"] is None
    assert (r["criteria"]["overall"]["wins"], r["criteria"]["overall"]["ties"]) == (8, 4)


@pytest.mark.parametrize("args, message", [
    (["--pairwise", "nicest"], "--pairwise 'nicest': the criteria are overall"),
    (["--pairwise", "correctness"], "compares the answers with the reference answer"),
])
def test_bad_inputs_exit_2_before_any_call(files, server, args, message, capsys):
    a, b = files
    code, _, err = run_cli(["duel", str(a), str(b), *args, *llm(server)], capsys)
    assert code == 2 and message in " ".join(err.split()), err
    assert server.requests == []


def test_files_without_answers_or_shared_questions_are_refused(files, server, tmp_path,
                                                               capsys):
    a, b = files
    data = json.loads(b.read_text())
    for q in data["queries"]:
        q["id"] = "other-" + q["id"]
    b.write_text(json.dumps(data))
    code, _, err = run_cli(["duel", str(a), str(b), *llm(server)], capsys)
    assert code == 2 and "no question is answered in both" in err
    assert "B has no such question: 12" in err and server.requests == []


def test_three_systems_get_every_match_and_bradley_terry_strengths(files, server,
                                                                   tmp_path, capsys):
    """A: 12 answers; B: 'No idea.' for the first 8; C: 'No idea.' for all. A fair judge:
    A-B 8 wins, 4 ties; A-C 12 wins; B-C 4 wins, 8 ties (identical answers). Win matrix
    (a tie half each way): W[A,B] 10, W[B,A] 2, W[A,C] 12, W[C,A] 0, W[B,C] 8, W[C,B] 4;
    the strengths equal choix's on the same counts (each win twice, a tie once each way,
    which doubles every count and leaves the maximum where it is)."""
    a, b = files
    data = json.loads(b.read_text())
    for q in data["queries"]:
        q["answer"] = "No idea."
    data["config"]["name"] = "none"
    c = tmp_path / "c.json"
    c.write_text(json.dumps(data))
    server.rule = fair
    out = tmp_path / "three.json"
    code, stdout, err = run_cli(["duel", str(a), str(b), str(c), "--output", str(out),
                                 "--quiet", "--resamples", "300", *llm(server)], capsys)
    assert code == 0, err
    r = json.loads(out.read_text())
    assert [s["name"] for s in r["systems"]] == [r["matches"][0]["a"]["name"], "weak",
                                                  "none"]
    got = [(m["criteria"]["overall"]["wins"], m["criteria"]["overall"]["ties"],
            m["criteria"]["overall"]["losses"]) for m in r["matches"]]
    assert got == [(8, 4, 0), (12, 0, 0), (4, 8, 0)]
    s = r["strengths"]["overall"]
    assert s["win_matrix"] == [[0, 10, 12], [2, 0, 8], [0, 4, 0]]
    assert s["ranking"] == [r["systems"][0]["name"], "weak", "none"]
    choix = pytest.importorskip("choix", reason="needs choix (ragmark-eval[dev])")
    w = s["win_matrix"]
    doubled = [(i, j) for i in range(3) for j in range(3) for _ in range(int(2 * w[i][j]))]
    assert s["value"] == pytest.approx(choix.mm_pairwise(3, doubled, tol=1e-12,
                                                         max_iter=100_000), abs=1e-6)
    assert all(lo <= v <= hi for lo, v, hi in zip(s["ci_low"], s["value"], s["ci_high"],
                                                  strict=True))
    assert "overall: Bradley-Terry log-strength over 12 questions (95% bootstrap): " in \
        " ".join(stdout.split())


def test_the_pairwise_gate_fails_b_when_it_loses_significantly_to_a(files, server,
                                                                    tmp_path, capsys):
    a, b = files
    server.rule = fair
    out = tmp_path / "duel.json"
    code, stdout, err = run_cli(["duel", str(a), str(b), "--fail-on-regression",
                                 "pairwise:overall", "--output", str(out), "--quiet",
                                 "--resamples", "300", *llm(server)], capsys)
    assert code == 1  # weak: 0 wins, 4 ties, 8 losses; p = 2/256
    (g,) = json.loads(out.read_text())["gates"]
    assert g["condition"] == "weak: no pairwise loss to " + json.loads(
        out.read_text())["a"]["name"] + " in overall" and not g["passed"]
    assert f"sign test p {2 / 256:.3g}" in g["line"]
    assert "FAILED: loses significantly" in " ".join((stdout + err).split())
    # the other way round B wins: the gate passes (the calls come from the cache)
    code, _, err = run_cli(["duel", str(b), str(a), "--fail-on-regression",
                            "pairwise:overall", "--quiet", "--resamples", "300",
                            *llm(server)], capsys)
    assert code == 0, err
    code, _, err = run_cli(["duel", str(a), str(b), "--fail-on-regression", "mrr",
                            *llm(server)], capsys)
    assert code == 2 and "a duel gates by the pairwise judge only" in err


def test_the_report_as_markdown_or_an_html_page_by_the_suffix(files, server, tmp_path,
                                                              capsys):
    from support.annotate_data import HOSTILE

    a, b = files
    server.rule = fair
    md, page = tmp_path / "duel.md", tmp_path / "duel.html"
    for out in (md, page):
        code, _, err = run_cli(["duel", str(a), str(b), "--output", str(out), "--quiet",
                                "--fail-on-regression", "pairwise:overall",
                                "--resamples", "300", *llm(server)], capsys)
        assert code == 1, err  # weak loses 8 to 0
    text = md.read_text()
    assert text.startswith("## ragmark duel: ")
    assert "| 12 | 8 | 4 | 0 | 0.833 [" in text  # questions, A wins, ties, B wins
    assert "### Pairwise gate" in text and "FAILED: loses significantly" in text
    html = page.read_text()
    assert '<section id="pairwise">' in html and "FAILED: loses significantly" in html
    assert "<script" not in html.lower() and "http" not in html.split("<body>")[1]
    assert HOSTILE not in html  # no answer text is on the page, hostile or not


def test_a_pairwise_gate_too_small_to_fail_fails_saying_so():
    """B loses every judged pair to A. The sign test over n verdicts never gives p below
    2 / 2^n: over 5, 0.0625, not below 0.05, so no verdicts could fail the gate: it
    fails, saying so. Over 6 (p = 0.03125) B loses significantly. Over 6 with two
    criteria, Holm doubles that to 0.0625: neither can fail."""
    from ragmark.plan.pairwise import pairwise_gates
    from ragmark.stats.paired import holm

    def report(n: int, criteria: list[str]) -> dict:
        ps = holm([sign_test(n, 0)] * len(criteria))
        stats = {c: {"wins": n, "ties": 0, "losses": 0, "value": 1.0, "ci_low": 1.0,
                     "ci_high": 1.0, "p_value": sign_test(n, 0), "p_holm": p, "n": n}
                 for c, p in zip(criteria, ps, strict=True)}
        return {"systems": [{"name": "A"}, {"name": "B"}],
                "matches": [{"a": {"name": "A"}, "b": {"name": "B"}, "criteria": stats}]}

    [(what, passed, line)] = pairwise_gates(report(5, ["overall"]), "A", ["overall"], 0.05)
    assert what == "B: no pairwise loss to A in overall" and not passed
    assert line == ("B: no pairwise loss to A in overall: FAILED, this gate cannot fail: "
                    "over 5 judged pairs the sign test gives p no smaller than 0.0625, not "
                    "below alpha 0.05 after Holm; judge more questions")
    [(_, passed, line)] = pairwise_gates(report(6, ["overall"]), "A", ["overall"], 0.05)
    assert not passed and "FAILED: loses significantly" in line
    two = pairwise_gates(report(6, ["overall", "correctness"]), "A",
                         ["overall", "correctness"], 0.05)
    assert [p for _, p, _ in two] == [False, False]
    assert all("2 criteria x that is 0.0625" in line for *_, line in two)
