"""Judges of a whole conversation (``ragmark simulate``): whether the assistant reached
the outcome the user wanted, and whether it kept what the user told it.

- **Goal completion** (DeepEval's ConversationCompleteness and the simulators' "expected
  outcome", judged rather than taken from the simulated user): one yes/no call reads the
  scenario, the expected outcome and the conversation; the value is P(yes) where the
  endpoint gives log-probabilities, else the hard verdict (1 or 0).
- **Knowledge retention** (DeepEval's KnowledgeRetention, whose verdicts ask of each
  assistant message whether it forgets what the user said before): a yes/no call per
  assistant answer from the second turn on reads the user's earlier messages and the
  answer: does it ask again for, ignore or contradict something the user already said?
  The value is the mean over those answers of P(kept) = 1 - P(forgot); a conversation
  of one turn has nothing to remember (missing with that reason, never 1). A turn the
  system failed has no answer and is not judged.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from pydantic import BaseModel

from ragmark.case import ChatClient, JudgeCounts
from ragmark.judges.outcome import JudgeFailure
from ragmark.judges.passages import yes_chances
from ragmark.judges.prompt import Prompt, ask_weighed
from ragmark.types import Score


def conversation_text(turns: Sequence[tuple[str, str | None]]) -> str:
    """A conversation as the simulated user and these judges read it: each turn's
    ``USER:`` message and ``ASSISTANT:`` answer (a failed answer said so).

    >>> print(conversation_text([("hi?", "Hello."), ("and?", None)]))
    USER: hi?
    <BLANKLINE>
    ASSISTANT: Hello.
    <BLANKLINE>
    USER: and?
    <BLANKLINE>
    ASSISTANT: (no answer: it failed)
    """
    if not turns:
        return "(nothing said yet)"
    return "\n\n".join(f"USER: {q}\n\nASSISTANT: "
                       f"{a if a is not None else '(no answer: it failed)'}"
                       for q, a in turns)


class GoalInput(BaseModel):
    scenario: str
    expected_outcome: str
    conversation: str


class GoalVerdict(BaseModel):
    reached: bool


GOAL_PROMPT: Prompt[GoalInput, GoalVerdict] = Prompt(
    name="goal_completion",
    instruction=(
        "A user talked to an assistant. The scenario says what the user wanted, the "
        "expected outcome what would satisfy them. Decide whether the assistant's "
        "answers in the conversation achieve the expected outcome: the assistant itself "
        "gave what the outcome describes, correctly as far as the conversation shows. "
        "The user saying thanks or repeating the outcome is not the assistant achieving "
        "it. YES when the assistant achieved it, NO when it did not."
    ),
    input_model=GoalInput,
    output_model=GoalVerdict,
    output="yes_no",
    examples=(
        (GoalInput(scenario="You want to know when the Eiffel Tower was finished.",
                   expected_outcome="The assistant gives the year it was finished.",
                   conversation="USER: when was it finished?\n\nASSISTANT: Which "
                                "building?\n\nUSER: the eiffel tower\n\nASSISTANT: It was "
                                "finished in 1889."),
         GoalVerdict(reached=True)),
        (GoalInput(scenario="You want to know when the Eiffel Tower was finished.",
                   expected_outcome="The assistant gives the year it was finished.",
                   conversation="USER: when was the eiffel tower finished?\n\nASSISTANT: "
                                "It is 330 metres tall.\n\nUSER: ok, 1889 then, thanks"),
         GoalVerdict(reached=False)),
    ),
)


class RetentionInput(BaseModel):
    user_said: str
    answer: str


class RetentionVerdict(BaseModel):
    forgot: bool


RETENTION_PROMPT: Prompt[RetentionInput, RetentionVerdict] = Prompt(
    name="knowledge_retention",
    instruction=(
        "The user's earlier messages to an assistant are given, then the assistant's "
        "latest answer. Decide whether the answer forgets what the user said: it asks "
        "again for something the user already told, or ignores or contradicts it. An "
        "answer that uses what the user said, or does not need it, does not forget. YES "
        "when the answer forgets, NO when it does not."
    ),
    input_model=RetentionInput,
    output_model=RetentionVerdict,
    output="yes_no",
    examples=(
        (RetentionInput(user_said="My flight leaves from Lisbon on Friday.\n"
                                  "Which terminal should I go to?",
                        answer="Which city are you flying from?"),
         RetentionVerdict(forgot=True)),
        (RetentionInput(user_said="My flight leaves from Lisbon on Friday.\n"
                                  "Which terminal should I go to?",
                        answer="Lisbon's airport has two terminals; check your booking."),
         RetentionVerdict(forgot=False)),
    ),
)


async def goal_completion(client: ChatClient, scenario: str, expected_outcome: str,
                          turns: Sequence[tuple[str, str | None]], *,
                          counts: JudgeCounts | None = None) -> Score:
    """P(the assistant achieved ``expected_outcome``) over the conversation (``details``:
    the hard verdict, and ``hard_value`` where the value is a probability)."""
    if not turns:
        return Score.missing("no turn was played")
    got = await ask_weighed(client, GOAL_PROMPT, GoalInput(
        scenario=scenario, expected_outcome=expected_outcome,
        conversation=conversation_text(turns)), counts=counts)
    if isinstance(got, JudgeFailure):
        return got.missing()
    hard, chances, weighed = yes_chances([got], "reached")
    return Score(chances[0], details={"reached": hard[0],
                                      **({"hard_value": float(hard[0])} if weighed else {})})


async def knowledge_retention(client: ChatClient, turns: Sequence[tuple[str, str | None]],
                              *, counts: JudgeCounts | None = None) -> Score:
    """The mean over the answers from the second turn on of P(the answer keeps what the
    user said before); ``details``: each judged turn's P(forgot) and hard verdict."""
    judged = [i for i in range(1, len(turns)) if turns[i][1] is not None]
    if not turns:
        return Score.missing("no turn was played")
    if not judged:
        return Score.missing("no answer after the first turn: nothing to remember"
                             if len(turns) < 2 else "no answer after the first turn")
    got = await asyncio.gather(*(ask_weighed(client, RETENTION_PROMPT, RetentionInput(
        user_said="\n".join(q for q, _ in turns[:i]), answer=str(turns[i][1])),
        counts=counts) for i in judged))
    failed = next((g for g in got if isinstance(g, JudgeFailure)), None)
    if failed is not None:
        return failed.missing()
    verdicts, forgot, _ = yes_chances([g for g in got if not isinstance(g, JudgeFailure)],
                                      "forgot")
    return Score(1.0 - sum(forgot) / len(forgot), details={
        "turns": [i + 1 for i in judged], "forgot_chances": [round(f, 4) for f in forgot],
        "forgot": [i + 1 for i, v in zip(judged, verdicts, strict=True) if v],
        "hard_value": 1.0 - sum(verdicts) / len(verdicts)})
