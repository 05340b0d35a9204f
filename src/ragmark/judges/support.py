"""Support of cited sentences, as TREC RAG assesses it (Thakur et al., "Support
Evaluation for the TREC 2024 RAG Track: Comparing Human versus LLM Judges", arXiv
2504.15205, sections 3.2-3.4): is each sentence of an answer that cites a passage
supported by it, fully, partially or not at all?

An answer's sentences and the passages each cites are those its source gives (TREC RAG's
answer objects, each a unit as the track has it, even of several sentences), else read
from its ``[n]`` markers (:func:`ragmark.text.citing_sentences`: ragmark's LLM generator
writes them, a log may have them). As the track does, a sentence is
judged against the FIRST passage it cites (the track orders citations strongest first);
one call for each passage an answer cites first, with every sentence that cites it
numbered (exact count in the schema), so the passage is read once. A sentence that cites
no passage the answer has (none, or only numbers out of range) is uncited: it is counted
as such, never judged, and never called unsupported.

With ``full`` = 1 for full support, 0.5 for partial support, 0 for none:

- ``support_full`` = cited sentences fully supported / cited sentences (strict);
- ``support_partial`` = (fully + 0.5 x partially supported) / cited sentences (the paper's
  weighted precision);
- ``support_recall`` = (fully + 0.5 x partially supported) / all sentences (the paper's
  weighted recall: an uncited sentence adds nothing; equal to ``support_partial`` when
  every sentence cites).

The paper's worked example (in the tests): a1 partially supported by its passage, a2
fully, a3 uncited -> support_partial (0.5 + 1) / 2 = 0.75, support_recall 1.5 / 3 = 0.5,
support_full 1 / 2 = 0.5. An answer that cites nothing has the two precisions missing
(nothing was cited) and support_recall 0 over its sentences; an empty answer has all
three missing. Each sentence, what it cites and its verdict are in the details.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, Field

from ragmark.case import Case
from ragmark.judges.lists import Numbered
from ragmark.judges.prompt import ChatClient, JudgeCounts, JudgeFailure, Prompt
from ragmark.judges.spec import answer_sentences, judge_spec
from ragmark.judges.unknown import Unknown, ask_or_unknown
from ragmark.types import Score

GROUP = "support"
"""The name that asks for the three support scores at once (``--metrics support``)."""
METRICS = ("support_full", "support_partial", "support_recall")
LABELS = ("full_support", "partial_support", "no_support")
CREDIT = {"full_support": 1.0, "partial_support": 0.5, "no_support": 0.0}
NOTHING_CITED = "the answer cites no passage it has ([n])"


class SupportInput(BaseModel):
    passage: str
    statement: list[str]


class SupportVerdict(BaseModel):
    statement: int = Field(description="the number of the statement, from 1")
    support: Literal["full_support", "partial_support", "no_support"]


class SupportOutput(BaseModel):
    verdicts: list[SupportVerdict]


SUPPORT_PROMPT: Prompt[SupportInput, SupportOutput] = Prompt(
    name="support",
    instruction=(
        "Each numbered statement cites the passage. Say for each how far the passage "
        "supports it: full_support when everything the statement says is stated in the "
        "passage or follows from it; partial_support when some of what it says is and "
        "some is not; no_support when the passage supports no part of it. Only the "
        "passage counts, not your own knowledge; a fluent statement may still hold a "
        "detail the passage lacks. One verdict per statement, with its number."
    ),
    input_model=SupportInput,
    output_model=SupportOutput,
    examples=((
        SupportInput(passage="The tower was built by the company of Gustave Eiffel and "
                             "completed in March 1889 for the World's Fair.",
                     statement=["Gustave Eiffel's company built the tower.",
                                "It was finished in 1889 and is 330 metres tall.",
                                "The tower is painted every seven years."]),
        SupportOutput(verdicts=[SupportVerdict(statement=1, support="full_support"),
                                SupportVerdict(statement=2, support="partial_support"),
                                SupportVerdict(statement=3, support="no_support")])),),
    numbered=Numbered("verdicts", "statement", "statement"),
)


def support_scores(labels: Sequence[str | None]) -> dict[str, Score]:
    """The three scores of an answer whose sentences have ``labels`` (one of
    :data:`LABELS`, or None for an uncited sentence), in order."""
    if not labels:
        return dict.fromkeys(METRICS, Score.missing("the answer has no sentence"))
    cited = [lab for lab in labels if lab is not None]
    weighted = sum(CREDIT[lab] for lab in cited)
    recall = Score(weighted / len(labels))
    if not cited:
        return {"support_full": Score.missing(NOTHING_CITED),
                "support_partial": Score.missing(NOTHING_CITED), "support_recall": recall}
    return {"support_full": Score(sum(lab == "full_support" for lab in cited) / len(cited)),
            "support_partial": Score(weighted / len(cited)), "support_recall": recall}


async def judge(client: ChatClient, case: Case,
                counts: JudgeCounts | None = None) -> dict[str, Score]:
    """The three support scores of one answer, each with its sentences in the details."""
    if not case.answer.strip():
        return dict.fromkeys(METRICS, Score.missing("empty answer"))
    sentences = [(t, cites) for t, cites in answer_sentences(case) if t.strip()]
    first = [next((c for c in cites if 1 <= c <= len(case.contexts)), None)
             for _, cites in sentences]
    passages = list(dict.fromkeys(p for p in first if p is not None))
    mine = JudgeCounts()
    prompt = SUPPORT_PROMPT
    try:
        got = await asyncio.gather(*(ask_or_unknown(client, prompt, SupportInput(
            passage=case.contexts[p - 1],
            statement=[t for (t, _), f in zip(sentences, first, strict=True) if f == p]),
            mine) for p in passages))
    finally:
        if counts is not None:
            counts.add(mine)
    labels: dict[int, str] = {}
    for p, out in zip(passages, got, strict=True):
        if isinstance(out, JudgeFailure):
            return dict.fromkeys(METRICS, out.missing())
        if isinstance(out, Unknown):
            return dict.fromkeys(METRICS, Score.missing("dry run: the verdicts are not known"))
        by = {v.statement: v.support for v in out.verdicts}
        citing = [i for i, f in enumerate(first) if f == p]
        labels |= {i: by[n] for n, i in enumerate(citing, start=1)}
    details = {"sentences": [
        {"text": t, "cites": list(cites), "passage": f, "support": labels.get(i)}
        for i, ((t, cites), f) in enumerate(zip(sentences, first, strict=True))],
        "cited": len(labels), "uncited": len(sentences) - len(labels),
        "calls": mine.asked + mine.reasked}
    scores = support_scores([labels.get(i) for i in range(len(sentences))])
    return {m: Score(s.value, s.reason, details) for m, s in scores.items()}


_SUMMARY = {
    "support_full": "cited sentences their first cited passage fully supports / cited "
                    "sentences",
    "support_partial": "(cited sentences fully supported + 0.5 x partly supported) / "
                       "cited sentences",
    "support_recall": "(sentences fully supported + 0.5 x partly supported) / sentences, "
                      "uncited ones adding nothing",
}
_LABEL = {"support_full": "Citation support (full)", "support_partial": "Citation support",
          "support_recall": "Citation support recall"}

SPECS = tuple(judge_spec(n, _SUMMARY[n] + " (TREC RAG)", _LABEL[n], ("answer", "contexts"),
                         judge, ask="does the passage each sentence cites first "
                         "support it?", group=GROUP) for n in METRICS)
