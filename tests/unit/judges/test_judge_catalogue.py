"""A judge metric is one module's change (issue 21): a module of ragmark.judges declares
its metrics in ``SPECS`` beside the prompt and the scoring that compute them, and the
catalogue, ``--judge-metrics``, the runner, the cache and the reports take it from
there."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

from support.fake_llm_server import chat_reply

from ragmark import judges
from ragmark.judges import (
    answers,
    claim_scores,
    claims,
    nugget_scores,
    nuggets,
    reference,
    support,
)
from ragmark.metrics.names import catalogue

# The worked example of the guide's development page (docs/guide/development.md): a
# yes/no judge of whether the answer says what was asked without unneeded material.
CONCISENESS = '''\
"""Conciseness: does the answer say what the question asks, without unneeded material?"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from ragmark.case import Case
from ragmark.judges.spec import judge_spec
from ragmark.judges.prompt import JudgeFailure, Prompt, ask
from ragmark.types import Score


class ConciseInput(BaseModel):
    question: str
    answer: str


class Concise(BaseModel):
    concise: bool


CONCISE_PROMPT: Prompt[ConciseInput, Concise] = Prompt(
    name="conciseness",
    instruction="Does the answer say what the question asks, without unneeded material? "
                "Answer yes or no.",
    input_model=ConciseInput,
    output_model=Concise,
    output="yes_no",
)


async def conciseness_of(client: Any, c: Case, counts: Any) -> Score:
    if not c.answer.strip():
        return Score.missing("empty answer")
    out = await ask(client, CONCISE_PROMPT, ConciseInput(question=c.question, answer=c.answer),
                    counts=counts)
    if isinstance(out, JudgeFailure):
        return out.missing()
    return Score(1.0 if out.concise else 0.0)


SPECS = (judge_spec("conciseness", "answers the judge finds concise / answers",
                    "Conciseness", ("answer",), conciseness_of),)
'''

LOGGED = [
    {"id": "q1", "question": "What does BM25 rank?", "answer": "Documents.",
     "contexts": ["BM25 ranks documents by term frequency."]},
    {"id": "q2", "question": "What is a reranker?",
     "answer": "A reranker reorders passages, and let me also tell you about my weekend.",
     "contexts": ["A reranker reorders the candidate passages."]},
    {"id": "q3", "question": "What is dense retrieval?", "answer": "",
     "contexts": ["Dense retrievers embed queries and passages."]},
]

RUN = """
import sys
import ragmark.judges
ragmark.judges.__path__.append(sys.argv[1])
from ragmark.cli import main
main(sys.argv[2:])
"""


def test_the_built_in_judges_are_declared_beside_their_code():
    # (ragmark.judges.faithfulness the attribute is the judge function, not the module)
    faithfulness_judge = importlib.import_module("ragmark.judges.faithfulness")
    agent = importlib.import_module("ragmark.judges.agent")  # dropped in: after them
    declared = [*faithfulness_judge.SPECS, *answers.SPECS, *reference.SPECS, *claims.SPECS,
                *nuggets.SPECS, *support.SPECS, *agent.SPECS]
    assert judges.specs() == tuple(declared)
    catalogue()  # the judges join the catalogue on first use (not at import)
    assert [s.name for s in catalogue().values() if s.kind == "judge"] == [
        "faithfulness", "answer_relevance", "context_relevance", "answer_correctness",
        "context_recall", "context_entity_recall", "context_precision",
        "context_precision_without_reference",
        "citation_correctness", *claim_scores.METRICS, *nugget_scores.METRICS,
        *support.METRICS, "task_completion", "argument_correctness"]
    for s in declared:
        assert s.cutoff == "none" and "llm" in s.needs and catalogue()[s.name] is s


def test_a_new_judge_metric_is_one_file(tmp_path, server, monkeypatch):
    for var in ("RAGMARK_LLM_BASE_URL", "RAGMARK_LLM_MODEL", "RAGMARK_LLM_API_KEY_ENV"):
        monkeypatch.delenv(var, raising=False)
    extra = tmp_path / "judges"
    extra.mkdir()
    (extra / "conciseness.py").write_text(CONCISENESS)
    server.rule = lambda body: chat_reply(
        "no" if "weekend" in json.dumps(body["messages"]) else "yes")
    logged = tmp_path / "logged.jsonl"
    logged.write_text("".join(json.dumps(r) + "\n" for r in LOGGED))
    out = tmp_path / "r.json"
    done = subprocess.run(
        [sys.executable, "-c", RUN, str(extra), "run", "--outputs", str(logged),
         "--judge-metrics", "conciseness", "--llm-base-url", server.url,
         "--llm-model", "test-model", "--output", str(out), "--quiet"],
        capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    data = json.loads(out.read_text())
    # q1 concise (1), q2 not (0), q3 has an empty answer: missing, never 0
    assert data["metrics"]["conciseness"] == 0.5
    assert data["counts"]["conciseness"] == {"n": 2, "missing": 1,
                                             "reasons": {"empty answer": 1}}
    assert len(server.requests) == 2
    # without the file, the name is unknown: an error naming the known judges, exit 2
    done = subprocess.run(
        [sys.executable, "-c", RUN, str(tmp_path / "none"), "run", "--outputs", str(logged),
         "--judge-metrics", "conciseness", "--llm-base-url", server.url,
         "--llm-model", "test-model", "--quiet"],
        capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "unknown judge metric 'conciseness'; known: faithfulness," in done.stderr
