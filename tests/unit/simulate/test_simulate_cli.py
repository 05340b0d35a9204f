"""``ragmark simulate`` as a user runs it: a Python system in a module of their own, a
scripted simulated user; the transcripts scored by ``ragmark run --outputs``; a rerun
resumes from the journal (nothing asked again); bad input and a dead endpoint stop
before any call (exit 2)."""

from __future__ import annotations

import json
import sys

import pytest
from support.cli import run_cli
from test_play import SCENARIOS, _user

SYSTEM = '''
CALLS = []

def answer(question, history=None):
    CALLS.append((question, len(history or [])))
    if "bm25" in question and not history:
        return {"answer": "BM25 is a ranking function.",
                "contexts": ["BM25 ranks documents by term weights."]}
    if "ranks what" in question:
        return {"answer": "It ranks documents.", "contexts": ["Other text."]}
    return {"answer": "I do not know.", "contexts": []}
'''


@pytest.fixture
def files(tmp_path, monkeypatch):
    name = "sim_" + tmp_path.name.replace("-", "_")
    (tmp_path / "svc").mkdir()
    (tmp_path / "svc" / f"{name}.py").write_text(SYSTEM)
    monkeypatch.setattr(sys, "path", list(sys.path))
    cfg = tmp_path / "system.toml"
    cfg.write_text(f'name = "mine"\n[pipeline]\nkind = "python"\ntarget = "{name}:answer"\n'
                   'python_path = ["svc"]\n')
    scenarios = tmp_path / "scenarios.jsonl"
    scenarios.write_text("".join(json.dumps(s) + "\n" for s in SCENARIOS))
    yield scenarios, cfg, name
    sys.modules.pop(name, None)


def _simulate(server, files, tmp_path, capsys, *more, expect=0):
    scenarios, cfg, _ = files
    code, out, err = run_cli(["simulate", str(scenarios), "--config", str(cfg),
                              "--transcripts", str(tmp_path / "t.jsonl"),
                              "--messages", str(tmp_path / "m.jsonl"), "--llm-base-url",
                              server.url, "--llm-model", "sim", *more], capsys)
    assert code == expect, err
    return out + err


def test_simulate_writes_transcripts_that_run_scores(server, files, tmp_path, capsys):
    server.rule = _user
    said = _simulate(server, files, tmp_path, capsys)
    assert "4 conversations with mine, 7 turns, simulated by sim" in said
    assert "goal reached (the simulated user's verdict): 25% [95% CI 5%-70%], in 2.0 " \
           "turns on average" in said
    assert "simulator role adherence: 89% of its calls (1 broke role" in said
    assert "actor: simulator failed" in said
    module = sys.modules[files[2]]
    assert len(module.CALLS) == 7
    log = [json.loads(x) for x in (tmp_path / "t.jsonl").read_text().splitlines()]
    assert [c["conversation_id"] for c in log] == ["goal", "quit", "actor", "long"]
    assert log[0]["outcome"] == "goal_reached" and len(log[0]["turns"]) == 2
    messages = [json.loads(x) for x in (tmp_path / "m.jsonl").read_text().splitlines()]
    assert messages[1]["messages"] == [{"role": "user", "content": "capital of mars?"},
                                       {"role": "assistant", "content": "I do not know."}]
    # run scores the transcripts, each turn a question
    code, _, err = run_cli(["run", "--outputs", str(tmp_path / "t.jsonl"), "--metrics",
                            "hit@1", "--output", str(tmp_path / "r.json"), "--quiet",
                            "--no-history", "--allow-missing"], capsys)
    assert code == 0, err
    assert json.loads((tmp_path / "r.json").read_text())["metrics"]["hit@1"] == 0.5
    # a rerun resumes from the journal: the system and the simulator asked nothing again
    before = len(server.requests)
    said = _simulate(server, files, tmp_path, capsys)
    assert len(module.CALLS) == 7 and len(server.requests) == before
    assert "4 conversations with mine" in said


def test_bad_input_and_a_dead_endpoint_stop_before_any_call(server, files, tmp_path, capsys):
    scenarios, cfg, _ = files
    scenarios.write_text('{"id": "a", "scenario": "s"}\n')
    said = _simulate(server, files, tmp_path, capsys, expect=2)
    assert "line 1, field 'expected_outcome': missing" in said
    scenarios.write_text(json.dumps(SCENARIOS[0]) + "\n")
    system = cfg.read_text()
    cfg.write_text('name = "plain"\n')
    said = _simulate(server, files, tmp_path, capsys, expect=2)
    assert "give --corpus, the documents it retrieves from" in said
    assert not server.requests
    cfg.write_text(system)
    code, _, err = run_cli(["simulate", str(scenarios), "--config", str(files[1]),
                            "--transcripts", str(tmp_path / "t.jsonl"), "--llm-base-url",
                            "http://127.0.0.1:9/v1", "--llm-model", "sim"], capsys)
    assert code == 2 and "the simulated user's endpoint did not answer" in err



def test_an_unwritable_transcripts_path_stops_before_any_call(server, files, tmp_path,
                                                               capsys):
    scenarios, cfg, _ = files
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    for flag in ("--transcripts", "--messages"):
        args = {"--transcripts": str(tmp_path / "t.jsonl"),
                "--messages": str(tmp_path / "m.jsonl")} | {flag: str(blocker / "x.jsonl")}
        code, _, err = run_cli(["simulate", str(scenarios), "--config", str(cfg),
                                *[x for kv in args.items() for x in kv],
                                "--llm-base-url", server.url, "--llm-model", "sim"], capsys)
        assert code == 2 and err == (f"error: {flag} {blocker / 'x.jsonl'}: {blocker} is a "
                                     "file, not a folder\n")
    assert not server.requests and not (tmp_path / "t.jsonl.journal").exists()


def test_simulate_scores_every_turn_with_metrics(server, files, tmp_path, capsys):
    """--metrics scores the turns as run --outputs scores the transcripts: hit@1 over
    the turns whose scenario names its passages (goal's two: the first retrieved the
    passage, the second did not; 0.5 over 2), the others missing with run's reason;
    each turn's value beside it in the report's transcript. An unknown metric stops
    before any call."""
    server.rule = _user
    said = _simulate(server, files, tmp_path, capsys, "--metrics", "hit@1", "--output",
                     str(tmp_path / "sim.json"))
    data = json.loads((tmp_path / "sim.json").read_text())
    (config,) = data["configs"]
    hit = config["turn_metrics"]["metrics"]["hit@1"]
    assert (hit["mean"], hit["n"], hit["missing"]) == (0.5, 2, 5)
    assert hit["interval"] is not None and hit["interval"][0] <= 0.5 <= hit["interval"][1]
    code, _, err = run_cli(["run", "--outputs", str(tmp_path / "t.jsonl"), "--metrics",
                            "hit@1", "--output", str(tmp_path / "r.json"), "--quiet",
                            "--no-history", "--allow-missing"], capsys)
    run = json.loads((tmp_path / "r.json").read_text())
    assert code == 0 and run["counts"]["hit@1"]["reasons"] == hit["reasons"]  # the same run
    goal = next(c for c in config["conversations"] if c["id"] == "goal")
    assert [t["metrics"] for t in goal["transcript"]] == [{"hit@1": 1.0}, {"hit@1": 0.0}]
    assert "per turn (--metrics):\n  hit@1: 0.500" in said and "over 2 of 7 turns" in said
    before = len(server.requests)
    said = _simulate(server, files, tmp_path / "x", capsys, "--metrics", "hit@99x",
                     expect=2)
    assert "hit@99x" in said and len(server.requests) == before


def test_a_system_that_raises_is_said_with_its_message(server, files, tmp_path, capsys):
    """The LangGraph trial's agent raised on every turn (an async call of sync-only
    middleware) and the summary said only how the conversations ended: the failures
    are counted, and the first one's message shown."""
    server.rule = _user
    scenarios, cfg, name = files
    (tmp_path / "svc" / f"{name}.py").write_text(
        "def answer(question, history=None):\n"
        "    raise NotImplementedError('call me with ainvoke() <b>')\n")
    said = _simulate(server, files, tmp_path, capsys)
    line = next(x for x in said.splitlines() if x.startswith("the system failed"))
    assert line == (f"the system failed on 7 of 7 turns ({name}:answer raised "
                    f"NotImplementedError (7)); the first: {name}:answer raised "
                    "NotImplementedError: call me with ainvoke() <b>")
    turns = [json.loads(x) for x in (tmp_path / "t.jsonl").read_text().splitlines()]
    assert turns and all(t["turns"][0]["error"].endswith("raised NotImplementedError")
                         for t in turns)


def test_a_changed_module_is_not_resumed_from_the_journal(server, files, tmp_path, capsys):
    """The journal is keyed by the target module's file too: after the user fixes their
    code, the old turns are not reused (they are refused, and --fresh starts over)."""
    server.rule = _user
    scenarios, cfg, name = files
    module = tmp_path / "svc" / f"{name}.py"
    module.write_text("def answer(question, history=None):\n    raise ValueError('bug')\n")
    assert "failed on 7 of 7 turns" in _simulate(server, files, tmp_path, capsys)
    sys.modules.pop(name, None)  # a new process imports the fixed file
    module.write_text(SYSTEM)
    said = _simulate(server, files, tmp_path, capsys, expect=2)
    assert "was written by another simulation (other scenarios, system or its code" in said
    said = _simulate(server, files, tmp_path, capsys, "--fresh")
    assert "the system failed" not in said and "4 conversations with mine, 7 turns" in said


def test_a_changed_helper_of_the_module_is_not_resumed_either(server, files, tmp_path,
                                                              capsys):
    """The key covers the modules the target imported from beside it, not only its own
    file: a fix in a helper is seen; an installed package is not part of it."""
    server.rule = _user
    scenarios, cfg, name = files
    helper = tmp_path / "svc" / f"{name}_helper.py"
    helper.write_text("def reply(question):\n    raise ValueError('bug')\n")
    module = tmp_path / "svc" / f"{name}.py"
    module.write_text(f"import json\nfrom {name}_helper import reply\n\n"
                      "def answer(question, history=None):\n    return reply(question)\n")
    assert "failed on 7 of 7 turns" in _simulate(server, files, tmp_path, capsys)
    for n in (name, f"{name}_helper"):
        sys.modules.pop(n, None)  # a new process imports the fixed files
    helper.write_text("def reply(question):\n    return {'answer': 'It ranks documents.', "
                      "'contexts': []}\n")
    said = _simulate(server, files, tmp_path, capsys, expect=2)
    assert "was written by another simulation (other scenarios, system or its code" in said
    assert "the system failed" not in _simulate(server, files, tmp_path, capsys, "--fresh")
    sys.modules.pop(f"{name}_helper", None)
