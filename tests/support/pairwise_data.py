"""A compare of three configs whose answers differ only in length, for the pairwise tests:
six questions, each answered with the same passage cut at 300 (long), 60 (mid) and 30
(short) characters, and a scripted judge that prefers the longer answer (on one
question, the shorter). One passage holds a hostile ``<script>`` text."""

from __future__ import annotations

import json
import re

from support.cli import run_cli
from support.fake_llm_server import chat_reply

FACTS = [
    ("What is the boiling point of water at sea level?",
     "Water boils at 100 degrees Celsius at sea level under standard atmospheric pressure, "
     "which is why recipes assume it."),
    ("Which planet is known as the red planet?",
     "Mars is known as the red planet because iron oxide on its surface gives it a reddish "
     "appearance in the night sky."),
    ("What gas do plants absorb for photosynthesis?",
     "Plants absorb carbon dioxide from the air for photosynthesis and release oxygen as a "
     "product of the process."),
    ("Who wrote the theory of general relativity?",
     "Albert Einstein published the theory of general relativity in 1915, describing "
     "gravity as the curvature of spacetime."),
    ("What is the largest ocean on Earth?",
     "The Pacific Ocean is the largest ocean on Earth, covering more than sixty million "
     "square miles of the planet."),
    ("How many bones are in the adult human body?",
     "The adult human body has 206 bones, although babies are born with around 270 that "
     "fuse together during growth <script>alert(1)</script>."),
]


def make_setup(tmp_path):
    """The dataset and the three configs' files."""
    items = [{"id": f"q{i}", "question": q, "ground_truth_contexts": [c],
              "expected_answer": c.split(",")[0]} for i, (q, c) in enumerate(FACTS)]
    ds = tmp_path / "set.json"
    ds.write_text(json.dumps(items))
    cfgs = []
    for name, chars in (("long", 300), ("mid", 60), ("short", 30)):
        p = tmp_path / f"{name}.toml"
        p.write_text(f'name = "{name}"\n[generator]\nname = "top1"\nmax_chars = {chars}\n')
        cfgs.append(str(p))
    return ds, cfgs


def answers_of(body):
    user = body["messages"][-1]["content"]
    return dict(re.findall(r'<data name="(\w+_answer)">\n(.*?)\n</data>', user, re.S))


def longer(exception=None):
    """The longer answer is better; on a question mentioning ``exception``, the shorter."""
    def rule(body):
        a = answers_of(body)
        first, second = len(a["first_answer"]), len(a["second_answer"])
        if exception and exception in body["messages"][-1]["content"]:
            first, second = second, first
        better = "tie" if first == second else ("first" if first > second else "second")
        return chat_reply(json.dumps({"better": better, "reason": f"{better} is longer"}))
    return rule


def compare_file(tmp_path, server, capsys, *more):
    """The results of ``compare --include-details --pairwise overall`` of the three configs
    judged by :func:`longer` (the bones question the other way), baseline long."""
    ds, cfgs = make_setup(tmp_path)
    server.rule = longer(exception="bones")
    code, _, err = run_cli(["compare", "--dataset", str(ds), "--configs", *cfgs, "--metrics",
                            "mrr", "--llm-base-url", server.url, "--llm-model", "judge",
                            "--output", str(tmp_path / "c"), "--include-details",
                            "--pairwise", "overall", "--resamples", "300", "--no-history",
                            "--quiet", *more], capsys)
    assert code == 0, err
    return tmp_path / "c.json"
