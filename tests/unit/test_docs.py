"""The documentation site (issue 24, item 3): it builds with MkDocs in strict mode (a
broken link or reference fails), and every code example in it runs: each page's bash
and Python blocks in order, in a fresh folder, with an LLM endpoint (the scripted local
server) in the environment for the pages that need one. Only a block that installs
packages (``pip install``) is not run.

The guide (``docs/guide/``, every option of every command) shows command lines and
snippets over the reader's own files (``sh`` and ``py`` blocks): each ``ragmark`` command
line there is parsed by the command's own parser (a flag or subcommand that does not
exist fails), each snippet compiles and what it imports from ragmark exists, and each
TOML and JSON block parses."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = sorted(p for p in DOCS.rglob("*.md") if p.name != "ARCHITECTURE.md"
               and "guide" not in p.relative_to(DOCS).parts)
GUIDE = sorted((DOCS / "guide").glob("*.md"))
SYNOPSIS = re.compile(r"^```(sh|py|toml|json)\n(.*?)^```", re.S | re.M)
BLOCK = re.compile(r"^```(bash|python)\n(.*?)^```", re.S | re.M)
WORDS = re.compile(r"[a-z0-9]{4,}")


def blocks(page: Path) -> list[tuple[str, str]]:
    return [(lang, code) for lang, code in BLOCK.findall(page.read_text(encoding="utf-8"))
            if not code.lstrip().startswith("pip install")]


def test_every_page_has_examples_or_is_a_reference():
    assert {p.relative_to(DOCS).as_posix() for p in PAGES} >= {
        "index.md", "tutorials/evaluate.md", "tutorials/compare.md", "tutorials/gate.md",
        "tutorials/judge-your-judge.md", "tutorials/monitor.md",
        "tutorials/label-measure-align.md", "how-to/import.md",
        "how-to/frameworks.md", "how-to/trec-rag.md", "how-to/agents.md",
        "how-to/probe.md", "how-to/simulate.md"}
    for page in PAGES:
        if "reference" not in page.parts:
            assert blocks(page), f"{page} has no example"
    assert any(DOCS_PORT in page.read_text() for page in PAGES)  # replaced when they run


def _judge(body):
    """A judge that reads what it is given (the claims are the answer's sentences; a claim
    is supported when the passages hold its words)."""
    from support.fake_llm_server import chat_reply

    system = body["messages"][0]["content"]
    user = [m["content"] for m in body["messages"] if m["role"] == "user"][-1]
    data = dict(re.findall(r'<data name="(\w+)"(?: index="\d+")?>\n(.*?)\n</data>', user,
                           re.S))
    if "numbered nugget" in system:  # a nugget is supported when the answer holds its words
        answer = set(WORDS.findall(data.get("answer", "").lower()))
        nuggets = re.findall(r'<data name="nugget" index="\d+">\n(.*?)\n</data>', user, re.S)
        return chat_reply(json.dumps({"verdicts": [
            {"nugget": i, "assignment": "support" if set(WORDS.findall(n.lower())) <= answer
             else "partial_support" if set(WORDS.findall(n.lower())) & answer
             else "not_support"} for i, n in enumerate(nuggets, start=1)]}))
    if "Each numbered statement cites the passage" in system:  # support: the passage's words
        passage = set(WORDS.findall(data.get("passage", "").lower()))
        said = re.findall(r'<data name="statement" index="\d+">\n(.*?)\n</data>', user, re.S)
        return chat_reply(json.dumps({"verdicts": [
            {"statement": i, "support": "full_support" if set(WORDS.findall(t.lower()))
             <= passage else "partial_support" if set(WORDS.findall(t.lower())) & passage
             else "no_support"} for i, t in enumerate(said, start=1)]}))
    said = _simulation(system, data)
    if said is not None:
        return chat_reply(said)
    if "Write the evaluation steps" in system:  # a criterion's steps, written once
        return chat_reply(json.dumps({"steps": ["Read the answer.", "Find the technical "
                                                "terms.", "Decide."]}))
    if "against one criterion" in system:  # plain: no word of 12 letters or more
        plain = not re.search(r"[A-Za-z]{12,}", data.get("answer", ""))
        if "Rate from 1" in system:
            return chat_reply(json.dumps({"rating": 5 if plain else 2, "reason": ""}))
        return chat_reply("YES" if plain else "NO")
    if "factual claims" in system:
        return chat_reply(json.dumps({"claims": [s.strip() + "." for s in
                                                 data.get("answer", "").split(".")
                                                 if s.strip()]}))
    seen = set(WORDS.findall(user.lower().split('<data name="claim"')[0]))
    claims = re.findall(r'<data name="claim" index="\d+">\n(.*?)\n</data>', user, re.S)
    return chat_reply(json.dumps({"verdicts": [
        {"claim": i, "supported": set(WORDS.findall(c.lower())) <= seen, "reason": ""}
        for i, c in enumerate(claims, start=1)]}))


def _simulation(system: str, data: dict[str, str]) -> str | None:
    """ragmark simulate's calls and testset --scenarios': a scenario about a passage's
    first sentence; a user who asks about it, and says the goal is reached when an
    answer holds half the outcome's words (gives up after two answers); a goal judge by
    the same rule; answers that never forget."""
    def words(text: str) -> set[str]:
        return set(WORDS.findall(text.lower()))

    if system.startswith("You write scenarios"):
        first = data["passage"].split(". ")[0].rstrip(".") + "."
        return json.dumps({"scenario": f"You want to know about {' '.join(first.split()[:4])}",
                           "user": "A curious engineer.", "facts": [],
                           "expected_outcome": f"The assistant says: {first}",
                           "answer": first, "quotes": [first]})
    outcome = words(data.get("expected_outcome", "").replace("The assistant says", ""))
    answers = re.findall(r"ASSISTANT: (.*?)(?:\n\nUSER: |$)", data.get("conversation", ""),
                         re.S)
    reached = any(len(words(a) & outcome) * 2 >= len(outcome) for a in answers)
    if system.startswith("You play a person"):
        if reached or len(answers) >= 2:
            return json.dumps({"status": "goal_reached" if reached else "gave_up"})
        asked = data["scenario"].removeprefix("You want to know about ")
        return json.dumps({"status": "continue", "message": f"what about {asked}?"
                           if not answers else "can you say more?"})
    if system.startswith("A user talked to an assistant"):
        return "YES" if reached else "NO"
    if system.startswith("The user's earlier messages"):
        return "NO"
    return None


@pytest.mark.parametrize("page", [p for p in PAGES if "reference" not in p.parts],
                         ids=lambda p: p.relative_to(DOCS).as_posix())
def test_the_examples_run(page, tmp_path, server):
    if "langchain" in page.read_text() and not _has("langchain_core"):
        pytest.skip("langchain-core is not installed (ragmark-eval[langchain])")
    server.rule = _judge
    env = {**os.environ, "RAGMARK_LLM_BASE_URL": server.url,
           "RAGMARK_LLM_MODEL": "test-model", "PYTHONPATH": str(tmp_path)}
    bindir = str(Path(sys.executable).parent)
    env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
    port = str(_free_port())  # a page's fixed port, taken by something else, fails nothing
    try:
        _run_blocks(page, tmp_path, env, port)
    finally:  # what a page started in the background (its pid in a .pid file) stops
        for pid in tmp_path.glob("*.pid"):
            with contextlib.suppress(ValueError, OSError):
                os.kill(int(pid.read_text().strip()), signal.SIGTERM)


def _run_blocks(page: Path, tmp_path: Path, env: dict[str, str], port: str) -> None:
    for i, (lang, code) in enumerate(blocks(page)):
        code = code.replace(DOCS_PORT, port)
        cmd = ["bash", "-euo", "pipefail", "-c", code] if lang == "bash" else [
            sys.executable, "-c", code]
        got = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True,
                             timeout=300)
        assert got.returncode == 0, (f"{page.name} block {i + 1} ({lang}) exited "
                                     f"{got.returncode}:\n{code}\n--- stderr:\n"
                                     f"{got.stderr[-3000:]}\n--- stdout:\n{got.stdout[-2000:]}")


DOCS_PORT = "18751"
"""The port the pages' served examples listen on (ragmark annotate)."""


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _has(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def test_the_site_builds_in_strict_mode(tmp_path):
    if not (_has("mkdocs") and _has("material") and _has("mkdocstrings")
            and _has("mkdocs_gen_files")):
        pytest.skip("the docs extra is not installed (ragmark-eval[docs])")
    env = {**os.environ, "DISABLE_MKDOCS_2_WARNING": "true", "NO_MKDOCS_2_WARNING": "1"}
    got = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d",
                          str(tmp_path / "site")], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=600)
    assert got.returncode == 0, got.stderr[-4000:]
    metrics = (tmp_path / "site" / "reference" / "metrics" / "index.html").read_text()
    assert "claim_f1" in metrics and "ndcg" in metrics  # generated from the catalogue
    cli = (tmp_path / "site" / "reference" / "cli" / "index.html").read_text()
    assert "ragmark monitor" in cli and "--refusal-judge" in cli
    # a broken link fails the build
    bad = ROOT / "docs" / "how-to" / "_broken_link_check.md"
    bad.write_text("[nowhere](../no-such-page.md)\n")
    try:
        got = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d",
                              str(tmp_path / "site2")], cwd=ROOT, env=env,
                             capture_output=True, text=True, timeout=600)
    finally:
        bad.unlink()
    assert got.returncode != 0 and "no-such-page.md" in got.stderr


def _command_lines(code: str) -> list[list[str]]:
    """The ``ragmark`` (and ``evaluate-rag``) command lines of a shell block, as argv
    (continuation lines joined, comments and the rest of a pipeline dropped); a line
    with a ``...`` placeholder is not a whole command and is left out."""
    import shlex

    out = []
    for line in code.replace("\\\n", " ").splitlines():
        words = shlex.split(line, comments=True)
        for cut in ("&&", "|", ";"):
            words = words[:words.index(cut)] if cut in words else words
        if words and words[0] in ("ragmark", "evaluate-rag") and "..." not in words:
            out.append(["compare", *words[1:]] if words[0] == "evaluate-rag" else words[1:])
    return out


def _parse(argv: list[str]) -> None:
    """``argv`` through the commands' own parsers, without running anything: an unknown
    subcommand or flag, or a flag without its value, raises click's UsageError."""
    import click

    from ragmark.cli import cli

    cmd: click.Command = cli
    ctx = click.Context(cli, info_name="ragmark")
    while isinstance(cmd, click.Group) and argv and not argv[0].startswith("-"):
        sub = cmd.get_command(ctx, argv[0])
        if sub is None:
            raise click.UsageError(f"no such command {argv[0]!r}")
        cmd, argv = sub, argv[1:]
        ctx = click.Context(cmd, info_name=cmd.name, parent=ctx)
    cmd.make_parser(ctx).parse_args(list(argv))


def _ragmark_names(code: str) -> list[str]:
    """What a snippet takes from ragmark (``from ragmark.x import y``, ``ragmark.y``) that
    does not exist."""
    import ast
    import importlib

    import ragmark

    tree = ast.parse(code)
    missing = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("ragmark"):
            mod = importlib.import_module(node.module)
            for alias in node.names:
                if not hasattr(mod, alias.name) and importlib.util.find_spec(
                        f"{node.module}.{alias.name}") is None:
                    missing.append(f"{node.module}.{alias.name}")
        elif (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
              and node.value.id == "ragmark" and not hasattr(ragmark, node.attr)):
            missing.append(f"ragmark.{node.attr}")
    return missing


@pytest.mark.parametrize("page", GUIDE, ids=lambda p: p.name)
def test_the_guide_says_what_the_commands_take(page):
    import json
    import tomllib

    import click

    checked = 0
    for lang, code in SYNOPSIS.findall(page.read_text(encoding="utf-8")):
        if lang == "sh":
            for argv in _command_lines(code):
                try:
                    _parse(argv)
                except click.UsageError as e:
                    pytest.fail(f"{page.name}: ragmark {' '.join(argv)}: {e.format_message()}")
                checked += 1
        elif lang == "py":
            compile(code, page.name, "exec")
            assert not _ragmark_names(code), (page.name, _ragmark_names(code))
            checked += 1
        elif lang == "toml":
            tomllib.loads(code)
            checked += 1
        else:
            json.loads(code)
            checked += 1
    assert checked or not SYNOPSIS.findall(page.read_text(encoding="utf-8"))


def test_the_guide_check_fails_on_a_flag_that_does_not_exist():
    import click

    _parse(["run", "--dataset", "set.json", "--fail-on-regression", "mrr"])
    _parse(["history", "show", "12"])
    for bad in (["run", "--no-such-flag"], ["history", "nosuch"], ["run", "--dataset"]):
        with pytest.raises(click.UsageError):
            _parse(bad)
    assert _command_lines("ragmark run --a b \\\n  --c d  # note\nragmark run ... --x\n"
                          "evaluate-rag --configs a b | tee log") == [
        ["run", "--a", "b", "--c", "d"], ["compare", "--configs", "a", "b"]]
    assert _ragmark_names("import ragmark\nragmark.nosuch()\n"
                          "from ragmark.plan import NoSuch") == ["ragmark.plan.NoSuch",
                                                                  "ragmark.nosuch"]


def test_no_page_tells_to_install_the_other_project():
    """``pip install ragmark`` installs an unrelated project from the package index (issue
    33, item 23): the distribution is ragmark-eval, and no page, message or help text
    names the other one."""
    import tomllib

    assert tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["name"] == (
        "ragmark-eval")
    texts = [ROOT / "README.md", *DOCS.rglob("*.md"), *(ROOT / "src").rglob("*.py")]
    wrong = re.compile(r"pip install\s+['\"]?ragmark(\[|['\"]|\s|$)|['\"`]ragmark\[[a-z]")
    assert [str(p.relative_to(ROOT)) for p in texts if wrong.search(p.read_text())] == []
