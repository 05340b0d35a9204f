"""The documentation site (issue 24, item 3): it builds with MkDocs in strict mode (a
broken link or reference fails), and every code example in it runs: each page's bash
and Python blocks in order, in a fresh folder, with an LLM endpoint (the scripted local
server) in the environment for the pages that need one. Only a block that installs
packages (``pip install``) is not run."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = sorted(p for p in DOCS.rglob("*.md") if p.name != "ARCHITECTURE.md")
BLOCK = re.compile(r"^```(bash|python)\n(.*?)^```", re.S | re.M)
WORDS = re.compile(r"[a-z0-9]{4,}")


def blocks(page: Path) -> list[tuple[str, str]]:
    return [(lang, code) for lang, code in BLOCK.findall(page.read_text(encoding="utf-8"))
            if not code.lstrip().startswith("pip install")]


def test_every_page_has_examples_or_is_a_reference():
    assert {p.relative_to(DOCS).as_posix() for p in PAGES} >= {
        "index.md", "tutorials/evaluate.md", "tutorials/compare.md", "tutorials/gate.md",
        "tutorials/judge-your-judge.md", "tutorials/monitor.md", "how-to/import.md",
        "how-to/frameworks.md"}
    for page in PAGES:
        if "reference" not in page.parts:
            assert blocks(page), f"{page} has no example"


def _judge(body):
    """A judge that reads what it is given (the claims are the answer's sentences; a claim
    is supported when the passages hold its words)."""
    from support.fake_llm_server import chat_reply

    system = body["messages"][0]["content"]
    user = [m["content"] for m in body["messages"] if m["role"] == "user"][-1]
    data = dict(re.findall(r'<data name="(\w+)"(?: index="\d+")?>\n(.*?)\n</data>', user,
                           re.S))
    if "factual claims" in system:
        return chat_reply(json.dumps({"claims": [s.strip() + "." for s in
                                                 data.get("answer", "").split(".")
                                                 if s.strip()]}))
    seen = set(WORDS.findall(user.lower().split('<data name="claim"')[0]))
    claims = re.findall(r'<data name="claim" index="\d+">\n(.*?)\n</data>', user, re.S)
    return chat_reply(json.dumps({"verdicts": [
        {"claim": i, "supported": set(WORDS.findall(c.lower())) <= seen, "reason": ""}
        for i, c in enumerate(claims, start=1)]}))


@pytest.mark.parametrize("page", [p for p in PAGES if "reference" not in p.parts],
                         ids=lambda p: p.relative_to(DOCS).as_posix())
def test_the_examples_run(page, tmp_path, server):
    if "langchain" in page.read_text() and not _has("langchain_core"):
        pytest.skip("langchain-core is not installed (ragmark[langchain])")
    server.rule = _judge
    env = {**os.environ, "RAGMARK_LLM_BASE_URL": server.url,
           "RAGMARK_LLM_MODEL": "test-model", "PYTHONPATH": str(tmp_path)}
    bindir = str(Path(sys.executable).parent)
    env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
    for i, (lang, code) in enumerate(blocks(page)):
        cmd = ["bash", "-euo", "pipefail", "-c", code] if lang == "bash" else [
            sys.executable, "-c", code]
        got = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True,
                             timeout=300)
        assert got.returncode == 0, (f"{page.name} block {i + 1} ({lang}) exited "
                                     f"{got.returncode}:\n{code}\n--- stderr:\n"
                                     f"{got.stderr[-3000:]}\n--- stdout:\n{got.stdout[-2000:]}")


def _has(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def test_the_site_builds_in_strict_mode(tmp_path):
    if not (_has("mkdocs") and _has("material") and _has("mkdocstrings")
            and _has("mkdocs_gen_files")):
        pytest.skip("the docs extra is not installed (ragmark[docs])")
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
