"""`ragmark compare --pairwise` (issue 36): every two configs' answers judged side by side
through the scripted server, in both orders. Three configs answer six questions with the
same passage cut at 300, 60 and 30 characters; the scripted judge prefers the longer
answer (on one question, the shorter). Hand-worked: every match 5 wins to 1, the sign
test's p = 2 * 7/64, Bradley–Terry strengths equal choix's on the same counts, no
position bias; the gate `pairwise:overall` fails a config that loses 6 to 0 (p = 2/64);
the dry run counts 2 calls per pair and criterion; the verdicts are in the JSON, the
Markdown, the HTML (a heatmap) and read back from the results file."""

from __future__ import annotations

import json

import numpy as np
import pytest
from support.cli import run_cli
from support.fake_llm_server import chat_reply
from support.pairwise_data import answers_of, longer, make_setup

from ragmark.stats.win_rates import sign_test


@pytest.fixture
def setup(tmp_path, monkeypatch):
    for var in ("RAGMARK_LLM_BASE_URL", "RAGMARK_LLM_MODEL"):
        monkeypatch.delenv(var, raising=False)
    return make_setup(tmp_path)


def _compare(setup, server, tmp_path, capsys, *more):
    ds, cfgs = setup
    return run_cli(["compare", "--dataset", str(ds), "--configs", *cfgs, "--metrics", "mrr",
                    "--llm-base-url", server.url, "--llm-model", "judge",
                    "--output", str(tmp_path / "c"), "--include-details", "--format",
                    "json,md,html,csv", "--resamples", "300", "--no-history", *more], capsys)


def test_three_configs_get_every_match_the_strengths_and_the_win_matrix(setup, server,
                                                                        tmp_path, capsys):
    server.rule = longer(exception="bones")
    code, stdout, err = _compare(setup, server, tmp_path, capsys, "--pairwise", "overall")
    assert code == 0, err
    assert len(server.requests) == 3 * 6 * 2  # 3 matches x 6 questions x both orders
    data = json.loads((tmp_path / "c.json").read_text())
    r = data["pairwise"]
    assert r["baseline"] == "long" and [s["name"] for s in r["systems"]] == [
        "long", "mid", "short"]
    p = 2 * 7 / 64  # 5 wins, 1 loss: P(X <= 1 | n = 6) doubled
    for m in r["matches"]:
        s = m["criteria"]["overall"]
        assert (s["wins"], s["ties"], s["losses"]) == (5, 0, 1)  # A is the longer
        assert s["value"] == pytest.approx(5 / 6)
        assert s["p_value"] == pytest.approx(sign_test(5, 1)) == pytest.approx(p)
        assert s["position_bias"]["rate"] == 0.0
        lost = [v["id"] for v in m["verdicts"]["overall"] if v["verdict"] == "B"]
        assert lost == ["q5"]
    st = r["strengths"]["overall"]
    assert st["win_matrix"] == [[0, 5, 5], [1, 0, 5], [1, 1, 0]]
    choix = pytest.importorskip("choix")
    data_choix = [(0, 1)] * 5 + [(1, 0)] + [(0, 2)] * 5 + [(2, 0)] + [(1, 2)] * 5 + [(2, 1)]
    want = choix.mm_pairwise(3, data_choix, alpha=0.0, max_iter=10_000, tol=1e-12)
    assert np.allclose(st["value"], want - want.mean(), atol=1e-6)
    # cyclic-free and symmetric: log 5 apart, long on top
    assert st["value"][0] - st["value"][1] == pytest.approx(st["value"][1] - st["value"][2])
    assert st["ranking"] == ["long", "mid", "short"]
    text = " ".join(stdout.split())
    assert "### Which answer is better: pairwise verdicts by judge" in text
    assert "| long | mid | 6 | 5 | 0 | 1 | 0.833 [" in text
    assert "The pairwise judge made 36 calls (0 more served from the cache)" in text
    assert "| 1 | long | +" in text and "| 3 | short | -" in text
    md = (tmp_path / "c.md").read_text()
    assert "| long | – | 5 | 5 |" in md
    html = (tmp_path / "c.html").read_text()
    assert '<section id="pairwise">' in html and 'class="heatmap"' in html
    assert "long beat mid in 5 of 6 (83%)" in html and "<script>alert" not in html
    assert "Bradley-Terry strengths (overall)" in html
    rows = (tmp_path / "c.csv").read_text().splitlines()
    assert "mid,q5,pairwise:overall vs long,1.0," in rows  # mid won the bones question
    assert "mid,q0,pairwise:overall vs short,1.0," in rows
    assert "short,q0,pairwise:overall vs mid,0.0," in rows
    assert sum("pairwise:" in r for r in rows) == 3 * 2 * 6  # each side of each pair


def test_the_pairwise_gate_fails_a_config_that_loses_significantly(setup, server,
                                                                   tmp_path, capsys):
    server.rule = longer()
    code, stdout, err = _compare(setup, server, tmp_path, capsys,
                                 "--fail-on-regression", "pairwise:overall")
    assert code == 1
    data = json.loads((tmp_path / "c.json").read_text())
    r = data["pairwise"]
    assert list(r["matches"][0]["criteria"]) == ["overall"]  # the gate asks for it
    gates = {g["condition"]: g for g in r["gates"]}
    assert set(gates) == {"mid: no pairwise loss to long in overall",
                          "short: no pairwise loss to long in overall"}
    mid = gates["mid: no pairwise loss to long in overall"]
    assert not mid["passed"]
    assert "0 wins, 0 ties, 6 losses; win rate 0.000" in mid["line"]
    assert f"p {2 / 64:.3g}" in mid["line"] and "FAILED" in mid["line"]
    assert "mid vs long, pairwise overall" in " ".join(err.split() + stdout.split())
    assert r["strengths"]["overall"]["value"] is None  # long never lost: no maximum
    assert "No Bradley–Terry strengths (no maximum-likelihood" in (tmp_path / "c.md").read_text()


def test_a_gate_passes_when_the_loss_is_not_significant(setup, server, tmp_path, capsys):
    server.rule = longer(exception="bones")
    code, stdout, err = _compare(setup, server, tmp_path, capsys,
                                 "--fail-on-regression", "pairwise:overall", "--baseline",
                                 "mid", "--pairwise-orders", "1")
    assert code == 0, err
    assert len(server.requests) == 3 * 6  # one order each
    r = json.loads((tmp_path / "c.json").read_text())["pairwise"]
    assert r["baseline"] == "mid"
    passed = {g["condition"]: g["passed"] for g in r["gates"]}
    # short loses 1:5 to mid, p = 0.219: not significant; long wins 5:1
    assert passed == {"long: no pairwise loss to mid in overall": True,
                      "short: no pairwise loss to mid in overall": True}


def test_the_dry_run_counts_two_calls_per_pair_and_criterion(setup, server, tmp_path,
                                                             capsys):
    code, stdout, err = _compare(setup, server, tmp_path, capsys, "--pairwise",
                                 "overall,completeness", "--dry-run")
    assert code == 0, err
    assert server.requests == [] and not (tmp_path / "c.json").exists()
    assert "dry run: 72 judge calls" in " ".join(stdout.split())  # 18 pairs x 2 x 2


@pytest.mark.parametrize("args, message", [
    (["--pairwise", "nicest"], "--pairwise 'nicest': the criteria are overall"),
    (["--fail-on-regression", "pairwise:nicest"],
     "--fail-on-regression pairwise:nicest: the criteria are overall"),
    (["--pairwise", "overall", "--skip-generation"], "drop --skip-generation"),
])
def test_bad_pairwise_flags_exit_2_before_any_work(setup, server, tmp_path, capsys, args,
                                                   message):
    code, _, err = _compare(setup, server, tmp_path, capsys, *args)
    assert code == 2 and message in " ".join(err.split())
    assert server.requests == []


def test_a_dead_judge_is_an_error_before_any_config_runs(setup, tmp_path, capsys):
    ds, cfgs = setup
    code, _, err = run_cli(["compare", "--dataset", str(ds), "--configs", *cfgs,
                            "--pairwise", "overall", "--llm-base-url",
                            "http://127.0.0.1:9/v1", "--llm-model", "x", "--output",
                            str(tmp_path / "c"), "--no-history"], capsys)
    assert code == 2 and "the judge's endpoint did not answer" in err
    assert "cannot reach http://127.0.0.1:9/v1" in err
    assert not (tmp_path / "c.json").exists()


def test_run_refuses_a_pairwise_gate(setup, capsys):
    ds, cfgs = setup
    code, _, err = run_cli(["run", "--dataset", str(ds), "--config", cfgs[0],
                            "--fail-on-regression", "pairwise:overall", "--no-history"],
                           capsys)
    assert code == 2 and "a pairwise gate needs two systems" in " ".join(err.split())


def test_inspect_shows_both_verdicts_and_failures_lists_the_lost_questions(
        setup, server, tmp_path, capsys):
    server.rule = longer(exception="bones")
    code, _, err = _compare(setup, server, tmp_path, capsys, "--pairwise", "overall")
    assert code == 0, err
    results = str(tmp_path / "c.json")
    code, stdout, err = run_cli(["inspect", results, "q5", "--config-name", "mid"], capsys)
    assert code == 0, err
    text = " ".join(stdout.split())
    assert "Pairwise verdicts (2)" in text
    assert "overall vs long: won (mid shown as B)" in text  # the bones question: shorter
    assert "A first: the judge said second: second is longer" in text
    assert "B first: the judge said first: first is longer" in text
    assert "overall vs short: lost (mid shown as A)" in text
    code, stdout, _ = run_cli(["inspect", results, "q5", "--config-name", "mid", "--json"],
                              capsys)
    got = json.loads(stdout)["pairwise"]
    assert [(v["other"], v["outcome"]) for v in got] == [("long", "won"), ("short", "lost")]
    code, stdout, _ = run_cli(["inspect", results, "--failures", "--config-name", "short"],
                              capsys)
    text = " ".join(stdout.split())
    assert "lost to the baseline by the pairwise judge 5 of 6 questions" in text
    for q in ("q0", "q1", "q2", "q3", "q4"):
        assert f"{q} lost pairwise: the judge preferred long's answer (overall)" in text
    assert "q5 lost pairwise" not in text
    code, stdout, _ = run_cli(["inspect", results, "--failures"], capsys)
    assert "not checked: the config is the baseline" in " ".join(stdout.split())


def test_the_history_keeps_the_verdicts_and_diff_shows_them(setup, server, tmp_path,
                                                            capsys):
    ds, cfgs = setup
    hist = tmp_path / "h.db"
    for i, rule in enumerate((longer(exception="bones"), longer())):
        server.rule = rule  # another judge model: its own calls, not the cache's
        code, _, err = run_cli(["compare", "--dataset", str(ds), "--configs", *cfgs,
                                "--metrics", "mrr", "--pairwise", "overall",
                                "--llm-base-url", server.url, "--llm-model", f"judge{i}",
                                "--output", str(tmp_path / f"c{i}"), "--resamples", "300",
                                "--history", str(hist), "--quiet"], capsys)
        assert code == 0, err
    code, stdout, err = run_cli(["history", "--history", str(hist), "show", "1"], capsys)
    assert code == 0, err
    text = " ".join(stdout.split())
    assert "pairwise verdicts (--pairwise):" in text
    assert "A = long, B = mid; 6 questions both answered" in text
    assert "overall: A wins 5, ties 0, B wins 1" in text
    assert "overall: Bradley-Terry log-strength over 6 questions" in text
    code, stdout, err = run_cli(["diff", "1", "2", "--history", str(hist), "--config-name",
                                 "mid"], capsys)
    assert code == 0, err
    text = " ".join(stdout.split())
    assert ("pairwise overall against long: A won 1, tied 0, lost 5 (win rate 0.167 ["
            in text)
    assert ("B won 0, tied 0, lost 6 (win rate 0.000 [0.000, 0.000]); 1 question changed: "
            "q5 won -> lost" in text)
    assert "pairwise overall against short: A won 5, tied 0, lost 1" in text
    code, stdout, _ = run_cli(["diff", str(tmp_path / "c0.json"), str(tmp_path / "c1.json"),
                               "--config-name", "mid", "--json"], capsys)
    got = json.loads(stdout)["pairwise"]
    assert [(p["against"], p["changed"]) for p in got] == [
        ("long", [{"id": "q5", "a": "won", "b": "lost"}]),
        ("short", [{"id": "q5", "a": "lost", "b": "won"}])]
    code, stdout, _ = run_cli(["diff", "1", "1", "--history", str(hist), "--config-name", "mid",
                               "--json"], capsys)
    assert "pairwise" not in json.loads(stdout)  # one run against itself: nothing moved


def test_pointwise_or_pairwise_how_decisive_each_is_for_its_calls(setup, server, tmp_path,
                                                                  capsys):
    pairwise = longer(exception="bones")

    def rule(body):  # the pairwise prompts as above; answer relevance by length
        if "first_answer" in body["messages"][-1]["content"]:
            return pairwise(body)
        answer = body["messages"][-1]["content"]
        rating = 5 if "which is why" in answer or "appearance" in answer or (
            "release oxygen" in answer) or "curvature" in answer or "square miles" in answer \
            or "fuse together" in answer else 3
        return chat_reply(json.dumps({"rating": rating, "reason": "r"}))

    server.rule = rule
    code, stdout, err = _compare(setup, server, tmp_path, capsys, "--pairwise", "overall",
                                 "--judge-metrics", "answer_relevance")
    assert code == 0, err
    r = json.loads((tmp_path / "c.json").read_text())["pairwise"]
    rows = {(d["config"], d["kind"]): d for d in r["decisiveness"]}
    mid = rows[("mid", "pairwise")]
    assert mid["value"] == pytest.approx(2 * (1 / 6) - 1) and mid["calls"] == 12
    assert mid["width_at_100_calls"] == pytest.approx(mid["width"] * (12 / 100) ** 0.5)
    point = rows[("mid", "pointwise")]
    assert point["measure"] == "answer_relevance" and point["calls"] == 12  # 6 + 6
    assert point["value"] == pytest.approx(0.5 - 1.0) and point["width"] == 0.0
    assert "#### Pointwise or pairwise?" in stdout


def test_equal_strengths_share_a_rank(setup, server, tmp_path, capsys):
    """A judge that calls every pair a tie: every system's strength is 0, so the
    ranking says they are equal instead of ordering them."""
    server.rule = lambda body: chat_reply(json.dumps({"better": "tie", "reason": "same"}))
    code, stdout, err = _compare(setup, server, tmp_path, capsys, "--pairwise", "overall")
    assert code == 0, err
    st = json.loads((tmp_path / "c.json").read_text())["pairwise"]["strengths"]["overall"]
    assert st["value"] == [0.0, 0.0, 0.0] and st["ranks"] == [1, 1, 1]
    text = " ".join(stdout.split())
    assert "| 1 | long | +0.000" in text and "| 1 | short | +0.000" in text
    assert "Systems with equal strengths share a rank" in text


def test_a_named_custom_rubric_is_a_criterion(setup, server, tmp_path, capsys):
    """--pairwise-rubric NAME=TEXT: the judge is asked what TEXT says 'better' means,
    and the criterion is reported, gated and recorded like a built-in one."""
    def rule(body):
        if "by concise: it answers in fewer words" not in json.dumps(body["messages"]):
            return chat_reply(json.dumps({"better": "tie", "reason": "not the rubric"}))
        a = answers_of(body)
        first, second = len(a["first_answer"]), len(a["second_answer"])
        better = "tie" if first == second else ("first" if first < second else "second")
        return chat_reply(json.dumps({"better": better, "reason": "shorter"}))

    server.rule = rule
    code, stdout, err = _compare(setup, server, tmp_path, capsys, "--pairwise", "concise",
                                 "--pairwise-rubric", "concise=it answers in fewer words",
                                 "--fail-on-regression", "pairwise:concise", "--baseline",
                                 "short")
    assert code == 1, err  # long and mid lose 0:6 to short, the baseline, by concision
    r = json.loads((tmp_path / "c.json").read_text())["pairwise"]
    assert r["rubrics"] == {"concise": "it answers in fewer words"}
    s = r["matches"][0]["criteria"]["concise"]  # long vs mid: mid (shorter) wins all
    assert (s["wins"], s["losses"]) == (0, 6)
    assert [g["passed"] for g in r["gates"]] == [False, False]
    assert "Custom criteria (--pairwise-rubric): **concise**: better means it answers in " \
        "fewer words." in (tmp_path / "c.md").read_text()
    for args, message in ((["--pairwise", "concise"], "--pairwise 'concise': the criteria"),
                          (["--pairwise", "overall", "--pairwise-rubric", "x=y"],
                           "--pairwise-rubric x: not asked for"),
                          (["--pairwise", "overall", "--pairwise-rubric", "overall=z"],
                           "--pairwise-rubric overall: the name is taken"),
                          (["--pairwise", "a", "--pairwise-rubric", "Bad Name=z"],
                           "expected NAME=TEXT")):
        code, _, err = _compare(setup, server, tmp_path, capsys, *args)
        assert code == 2 and message in " ".join(err.split()), err
