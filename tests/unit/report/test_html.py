"""The HTML report from real runs on the demo set, checked by its parsed structure: the
sections, the numbers (equal to the JSON's), missing values shown as missing, the
question view, and no resource that would make a browser fetch anything."""

from __future__ import annotations

import json

import pytest
from support.cli import run_cli
from support.html_dom import parse, resources

from ragmark.demo.tour import demo_path

DEMO = ["--dataset", str(demo_path() / "questions.json"), "--corpus",
        str(demo_path() / "corpus")]
CHUNKY = 'name = "chunky"\nunit = "chunk"\n[chunker]\nname = "fixed"\nsize = 120\noverlap = 0\n'


@pytest.fixture
def compared(tmp_path, capsys):
    chunky = tmp_path / "chunky.toml"
    chunky.write_text(CHUNKY)
    out = tmp_path / "res" / "eval"
    code, stdout, err = run_cli(["compare", *DEMO, "--configs", "sparse", str(chunky),
                                 "--format", "json,html", "--output", str(out), "--quiet",
                                 "--no-history"], capsys)
    assert code == 0, err
    data = json.loads((tmp_path / "res" / "eval.json").read_text(encoding="utf-8"))
    doc = parse((tmp_path / "res" / "eval.html").read_text(encoding="utf-8"))
    return data, doc, tmp_path


def test_compare_page_has_every_section_and_the_json_numbers(compared):
    data, doc, _ = compared
    assert resources(doc) == []
    ids = {s.attrs.get("id") for s in doc.all("section")}
    assert {"summary", "differences", "costs", "distributions", "questions"} <= ids
    table = doc.one("table", class_="metrics")
    heads = [th.text() for th in table.one("thead").all("th")]
    rows = {tr.one("th").text().split(" (")[0]: tr for tr in table.one("tbody").all("tr")}
    assert set(rows) == {"sparse", "chunky"}
    col = heads.index("ndcg@10") - 1
    for name, tr in rows.items():
        cell = tr.all("td")[col]
        want = data["configs"][name]["metrics"]["ndcg@10"]
        assert cell.text().startswith(f"{want:.4f}") and "n=8" in cell.text()
    # the baseline is marked, the other row shows its change
    assert "(baseline)" in rows["sparse"].one("th").text()
    assert "%" in rows["chunky"].all("td")[col].text()


def test_forest_table_gives_the_paired_difference(compared):
    data, doc, _ = compared
    sec = doc.one("section", id="differences")
    assert len(sec.all("svg")) == len(data["run"]["compared_metrics"])
    for svg in sec.all("svg"):
        assert svg.attrs["role"] == "img" and svg.one("title").text()
    pq = {n: data["configs"][n]["per_query"] for n in ("sparse", "chunky")}
    m = data["run"]["compared_metrics"][0]
    diffs = [pq["chunky"][q][m] - pq["sparse"][q][m] for q in pq["sparse"]]
    first = sec.all("table")[0].one("tbody").one("tr").all("td")
    assert first[0].text() == "chunky"
    assert first[1].text() == f"{sum(diffs) / len(diffs):+.4f}" and first[3].text() == "8"


def test_question_view_sorted_by_largest_difference_with_details(compared):
    data, doc, _ = compared
    table = doc.one("table", id="qtable")
    heads = [th.text() for th in table.all("thead")[0].all("th")]  # (rows nest tables)
    compared = data["run"]["compared_metrics"]
    assert heads[2:-1] == [f"{m} · {c}" for m in compared for c in ("sparse", "chunky")]
    bodies = table.all("tbody", class_="q")
    assert len(bodies) == 8
    first_row = bodies[0].all("tr")[0].all("td")
    qid = first_row[0].text()
    for i, (m, c) in enumerate((m, c) for m in compared for c in ("sparse", "chunky")):
        want = data["configs"][c]["per_query"][qid][m]
        assert first_row[2 + i].text() == ("—" if want is None else f"{want:.4f}")
    spreads = [float(b.all("tr")[0].all("td")[-1].attrs["data-v"]) for b in bodies]
    assert spreads == sorted(spreads, reverse=True)
    first = bodies[0]
    details = first.all("details")[0]  # the row's; each config's contexts nest inside
    assert details.all("summary")[0].text().startswith("details of ")
    assert [d.one("summary").text() for d in details.all("details")] == [
        "contexts the generator saw"] * 2
    items = [t for t in details.all("table") if "items" in t.attrs.get("class", "")]
    assert len(items) == 2  # one ranking per config
    ranks = [tr.all("td")[0].text() for tr in items[0].one("tbody").all("tr")]
    assert ranks == [str(i) for i in range(1, len(ranks) + 1)] and len(ranks) >= 3


def test_missing_values_are_shown_as_missing_never_zero(tmp_path, capsys, monkeypatch):
    for var in ("RAGMARK_LLM_BASE_URL", "RAGMARK_LLM_MODEL"):
        monkeypatch.delenv(var, raising=False)
    out = tmp_path / "run.json"
    code, _, err = run_cli(["run", *DEMO, "--judge-metrics", "faithfulness", "--allow-missing",
                            "--format", "json,html", "--output", str(out), "--quiet",
                            "--no-history"], capsys)
    assert code == 0, err
    doc = parse((tmp_path / "run.html").read_text(encoding="utf-8"))
    table = doc.one("table", class_="metrics")
    heads = [th.text() for th in table.one("thead").all("th")]
    cell = table.one("tbody").one("tr").all("td")[heads.index("faithfulness") - 1]
    assert cell.text().startswith("—") and "n=0, 8 missing" in cell.text()
    reasons = [li.text() for li in doc.all("li") if li.text().startswith("faithfulness:")]
    assert len(reasons) == 8 and all("missing: no LLM endpoint" in r for r in reasons)


def test_report_command_renders_files_and_history_ids(compared, capsys):
    data, doc, tmp_path = compared
    page = tmp_path / "again.html"
    code, stdout, _ = run_cli(["report", str(tmp_path / "res" / "eval.json"), "--output",
                               str(page)], capsys)
    assert code == 0 and f"Report written to {page}" in stdout
    again = parse(page.read_text(encoding="utf-8"))
    # the JSON has no details: the question view says where to find them
    assert "--include-details" in again.one("section", id="questions").text()
    assert again.one("table", class_="metrics").text() == doc.one(
        "table", class_="metrics").text()
    hist = tmp_path / "h.sqlite"
    code, _, err = run_cli(["run", *DEMO, "--output", str(tmp_path / "r.json"), "--quiet",
                            "--history", str(hist)], capsys)
    assert code == 0, err
    code, _, err = run_cli(["report", "1", "--history", str(hist), "--output",
                            str(tmp_path / "h.html")], capsys)
    assert code == 0, err
    page = parse((tmp_path / "h.html").read_text(encoding="utf-8"))
    assert "sparse" in page.one("table", class_="metrics").text()
    code, _, err = run_cli(["report", "nothing-here", "--output", str(tmp_path / "x.html")],
                           capsys)
    assert code == 2 and "'nothing-here' is neither a results file nor a history id" in err
    # a malformed file is read through the results model: an error naming the file and
    # the field, and no page
    bad = json.loads((tmp_path / "res" / "eval.json").read_text())
    first = next(iter(bad["configs"].values()))
    first["per_query"][next(iter(first["per_query"]))] = ["not", "values"]
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    code, _, err = run_cli(["report", str(tmp_path / "bad.json"), "--output",
                            str(tmp_path / "bad.html")], capsys)
    assert code == 2 and not (tmp_path / "bad.html").exists()
    assert err.startswith(f"error: {tmp_path / 'bad.json'}, item configs.")
    assert "expected an object, got a list" in err


def test_label_page_has_metrics_at_every_k_and_the_presence_curve(tmp_path, capsys, server,
                                                                   monkeypatch):
    from support.fake_llm_server import chat_reply

    for var in ("RAGMARK_LLM_BASE_URL", "RAGMARK_LLM_MODEL", "RAGMARK_LLM_API_KEY_ENV"):
        monkeypatch.delenv(var, raising=False)
    server.rule = lambda body: chat_reply(
        "YES" if "generator" in body["messages"][-1]["content"].lower() else "NO")
    out = tmp_path / "label"
    code, _, err = run_cli(["label", *DEMO, "--configs", "sparse", "--top-k", "3",
                            "--llm-base-url", server.url, "--llm-model", "m", "--format",
                            "json,html", "--output", str(out), "--quiet", "--no-history"],
                           capsys)
    assert code == 0, err
    data = json.loads((tmp_path / "label.json").read_text(encoding="utf-8"))
    doc = parse((tmp_path / "label.html").read_text(encoding="utf-8"))
    assert resources(doc) == []
    table = doc.one("section", id="summary").all("table")[0]
    row = next(tr for tr in table.one("tbody").all("tr")
               if tr.one("th").text() == "answer_presence")
    want = [data["configs"]["sparse"]["metrics"][f"answer_presence@{k}"] for k in (1, 2, 3)]
    assert [td.text().split("n=")[0] for td in row.all("td")] == [f"{v:.4f}" for v in want]
    svg = doc.one("section", id="summary").one("svg")
    assert svg.one("title").text() == "answer presence against k"
    assert len(svg.all("polyline")) == 1  # one config, no missing k


def test_curves_at_every_k_equal_the_table_at_its_cutoffs(compared):
    data, doc, _ = compared
    sec = doc.one("section", id="curves")
    tables = sec.all("table")
    assert len(sec.all("svg")) == 3  # recall, ndcg, hit
    checked = 0
    for metric, table in zip(("recall", "ndcg", "hit"), tables, strict=True):
        heads = [th.text() for th in table.one("thead").all("th")]
        for tr in table.one("tbody").all("tr"):
            cells = tr.all("td")
            name = cells[0].text()
            assert cells[heads.index("questions")].text() == "8"  # the count under the means
            for k in (5, 10):
                key = f"{metric}@{k}"
                if key in data["configs"][name]["metrics"] and f"@{k}" in heads:
                    shown = cells[heads.index(f"@{k}")].text()
                    assert shown == f"{data['configs'][name]['metrics'][key]:.4f}", key
                    checked += 1
    assert checked == 8  # recall@5, recall@10, ndcg@10, hit@5 of two configs


def test_failures_section_is_the_inspectors_view(compared):
    from ragmark.analysis.failures import find_failures
    from ragmark.analysis.inspection import results_from

    data, doc, tmp_path = compared
    sec = doc.one("section", id="failures")
    assert [h.text() for h in sec.all("h3")] == ["sparse", "chunky"]
    page = (tmp_path / "res" / "eval.html").read_text(encoding="utf-8")
    assert page.count("no relevant item in the top") == 2
    # the same counts as `ragmark inspect --failures` on the same results
    for name, ul in zip(("sparse", "chunky"), sec.all("ul"), strict=True):
        rep = find_failures(results_from("x", data, name))
        first, second = (li.text() for li in ul.all("li")[:2])
        assert first.startswith(f"retrieved nothing: {rep.count('empty_ranking')} of ")
        assert second.startswith(f"no relevant item in the top {rep.depth}: "
                                 f"{rep.count('no_hit')} of ")


def test_unsupported_claims_are_listed_under_their_metric():
    from ragmark.report.html_questions import question_details
    from ragmark.results.model import QueryRecord
    from ragmark.types import Score

    q = QueryRecord("q1", "", [], None, {
        "faithfulness": Score(0.5, details={"claims": ["A", "B"], "unsupported": ["B <i>"]}),
        "mrr": Score.missing("no ground truth")})
    doc = parse(question_details(q))
    claims = doc.one("ul", class_="claims")
    assert [li.text() for li in claims.all("li")] == ["B <i>"]  # escaped, not markup
    assert "missing: no ground truth" in doc.one("ul", class_="qm").text()


def test_gate_verdicts_and_history_trend_in_json_and_page(tmp_path, capsys):
    chunky = tmp_path / "chunky.toml"  # same name, judged per chunk: precision@5 higher
    chunky.write_text('name = "sparse"\nunit = "chunk"\n[chunker]\nname = "fixed"\n'
                      'size = 120\noverlap = 0\n')
    hist = tmp_path / "h.sqlite"
    args = ["run", *DEMO, "--quiet", "--history", str(hist)]
    for _ in range(2):
        code, _, err = run_cli([*args, "--config", str(chunky), "--output",
                                str(tmp_path / "old.json")], capsys)
        assert code == 0, err
    code, _, _ = run_cli([*args, "--fail-on-regression", "P@5", "--format", "json,html",
                          "--output", str(tmp_path / "r.json")], capsys)
    assert code == 1  # precision@5 fell: the gate fails, the files are written
    data = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    (gate,) = data["gates"]
    assert gate["config"] == "sparse" and gate["baseline"] == "run 2 (sparse)"
    assert [(r["metric"], r["verdict"]) for r in gate["rows"]] == [("precision@5", "FAIL")]
    runs = data["trend"]["sparse"]["precision@5"]
    assert [r["run"] for r in runs] == [1, 2] and runs[0]["value"] == pytest.approx(0.675)
    # the gates' blocks are part of the results model: the file round-trips exactly
    from ragmark.results.codec import run_from_json, run_to_json

    report = run_from_json(data, "r.json")
    assert report.gated is not None and report.gated["gates"] == data["gates"]
    assert json.loads(json.dumps(run_to_json(report))) == data
    doc = parse((tmp_path / "r.html").read_text(encoding="utf-8"))
    sec = doc.one("section", id="history")
    verdict = sec.all("table")[0].one("tbody").one("tr").all("td")
    assert verdict[0].text() == "precision@5" and verdict[6].text() == "FAIL"
    trend = sec.all("table")[1].one("tbody").all("tr")
    assert [tr.all("td")[0].text()[:5] for tr in trend] == ["run 1", "run 2", "this "]
    assert trend[-1].all("td")[1].text() == f"{data['metrics']['precision@5']:.4f}"
    assert sec.one("svg").one("title").text() == "precision@5 over the runs of sparse"
