"""Regenerate ``run_results.json``, the results file the inspect and review tests read.

    python tests/unit/inspection/regenerate_fixture.py

It is ``ragmark run --include-details`` on the bundled demo set, with a deliberately
weak retriever (small chunks, ranked per chunk) and an LLM generator and faithfulness
judge answered by a scripted local server, so the file holds every kind of failure:
relevant items below rank 1, ungrounded and unfaithful answers, a judge failure, an
answer without claims. Timings, versions and machine paths are then stripped so the
file is stable. After regenerating, review the goldens (RAGMARK_UPDATE_GOLDEN=1).
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))  # tests/, for support.fake_llm_server

from support.fake_llm_server import FakeLLMServer, Reply  # noqa: E402

from ragmark.cli import main  # noqa: E402
from ragmark.demo import demo_path  # noqa: E402

CONFIG = """name = "weak-bm25-llm"
top_k = 5
top_n = 2
unit = "chunk"

[chunker]
name = "fixed"
size = 120
overlap = 0

[retriever]
name = "bm25"
k1 = 5.0
b = 1.0

[generator]
name = "llm"
"""

# question (start) -> (answer, claims, verdicts); verdicts None: the judge answers nonsense
SCRIPT: dict[str, tuple[str, list[str], list[bool] | None]] = {
    "What are the two main": (
        "The two main components are the retriever and the generator [1].",
        ["A RAG pipeline has two main components.",
         "The two main components are the retriever and the generator."], [True, True]),
    "How is mean reciprocal": (
        "MRR is the mean over questions of one divided by the rank of the first relevant "
        "result [1].", ["MRR is the mean of one divided by the rank of the first relevant "
                        "result."], [True]),
    "When is an answer flagged": (
        "Bananas ripen faster next to apples because of ethylene gas.",
        ["Bananas ripen faster next to apples.", "Ethylene gas makes bananas ripen."],
        [False, False]),
    "How is the faithfulness": (
        "The faithfulness score is the number of supported claims divided by the total "
        "number of claims [1].", [], None),
    "What chunk size": (
        "Fixed-size chunking typically uses 500 characters with an overlap of 50 [1]. Most "
        "teams use 1,000 tokens [2]. Sentences never need an overlap.",
        ["Fixed-size chunking typically uses 500 characters with an overlap of 50.",
         "Most teams use chunks of 1,000 tokens.", "Sentences never need an overlap."],
        [True, False, False]),
    "What value of k": ("I do not know.", [], [True]),
    "Why is recall": (
        "Recall matters most because a passage that is never retrieved can never reach "
        "the generator [2].", ["A passage that is never retrieved can never reach the "
                               "generator."], [True]),
    "What does a reranker": (
        "A reranker reorders the retrieved candidates with a slower but more accurate "
        "model such as a cross-encoder [1][2].",
        ["A reranker reorders the retrieved candidates.",
         "A reranker uses a slower but more accurate model such as a cross-encoder."],
        [True, True]),
}


def _reply(text: str) -> Reply:
    return Reply(body={"id": "x", "object": "chat.completion",
                       "choices": [{"index": 0,
                                    "message": {"role": "assistant", "content": text}}],
                       "usage": {"prompt_tokens": 100, "completion_tokens": 20}})


def _blocks(text: str, name: str) -> list[str]:
    return re.findall(rf'<data name="{name}"(?: index="\d+")?>\n(.*?)\n</data>', text, re.S)


def rule(body: Any) -> Reply:
    messages = body["messages"]
    system, last = messages[0]["content"], messages[-1]["content"]
    item = messages[-3]["content"] if last.startswith("That answer could not be") else last
    if system.startswith("Check each numbered claim"):
        claims = _blocks(item, "claim")
        verdicts = next(v for _, c, v in SCRIPT.values() if c == claims)
        return _reply(json.dumps({"verdicts": [
            {"claim": i, "supported": v,
             "reason": "stated in the passages" if v else "the passages do not say this"}
            for i, v in enumerate(verdicts or [], start=1)]}))
    question = _blocks(item, "question")[0]
    answer, claims, verdicts = next(e for k, e in SCRIPT.items() if question.startswith(k))
    if system.startswith("Answer the question"):
        return _reply(answer)
    if system.startswith("Break the answer"):
        return _reply("Sorry, I cannot judge that." if verdicts is None
                      else json.dumps({"claims": claims}))
    raise LookupError(f"unexpected prompt: {system[:80]}")


def strip(data: dict[str, Any]) -> dict[str, Any]:
    """Drop what changes from run to run or machine to machine."""
    data.pop("timings", None)
    data.pop("versions", None)
    data["dataset"]["path"] = "src/ragmark/demo/questions.json"
    if "endpoint" in data.get("llm", {}):
        data["llm"]["endpoint"] = "http://127.0.0.1:8000/v1"
    return data


def regenerate(target: Path = HERE / "run_results.json") -> Path:
    server = FakeLLMServer("openai").start()
    server.rule = rule
    try:
        with tempfile.TemporaryDirectory() as tmp:
            os.environ["RAGMARK_HOME"] = tmp
            os.environ["RAGMARK_LLM_BASE_URL"] = server.url
            os.environ["RAGMARK_LLM_MODEL"] = "test-model"
            config = Path(tmp) / "weak-bm25-llm.toml"
            config.write_text(CONFIG, encoding="utf-8")
            out = Path(tmp) / "results.json"
            try:
                main(["run", "--dataset", str(demo_path() / "questions.json"), "--corpus",
                      str(demo_path() / "corpus"), "--config", str(config),
                      "--judge-metrics", "faithfulness", "--output", str(out),
                      "--include-details", "--no-history", "--quiet"])
            except SystemExit as e:
                if e.code:
                    raise
            data = strip(json.loads(out.read_text(encoding="utf-8")))
    finally:
        server.stop()
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    if tmp in text or str(demo_path()) in text:
        raise RuntimeError("a machine path is left in the fixture")
    target.write_text(text, encoding="utf-8")
    return target


if __name__ == "__main__":
    print(f"wrote {regenerate()}")
