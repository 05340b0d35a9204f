"""The simulated user: an LLM that, given a scenario (what the user wants and the outcome
that would satisfy them), who the user is, what they know and the conversation so far,
writes the user's next message, or says the goal is reached or that it gives up. It
never sees the system's documents: only what the assistant said.

A message written in the assistant's voice breaks the role: it offers help ("How can I
help you?"), speaks as an AI, carries a speaker tag, or copies the assistant's last
answer. Such an answer is asked once more, the reason told (the judges' re-ask); the
breaks are counted per turn, so a simulator that keeps breaking role is visible in the
results (role adherence).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from pydantic import BaseModel

from ragmark.case import ChatClient, JudgeCounts
from ragmark.judges.conversation import conversation_text
from ragmark.judges.prompt import JudgeFailure, Prompt, ask
from ragmark.simulate.scenarios import Scenario
from ragmark.text import content_tokens

Status = Literal["continue", "goal_reached", "gave_up"]


class UserInput(BaseModel):
    scenario: str
    expected_outcome: str
    user: str
    facts: list[str]
    conversation: str


class UserTurn(BaseModel):
    status: Status
    message: str = ""


ASSISTANT_VOICE = ("how can i help", "how may i help", "how can i assist", "how may i assist",
                   "as an ai", "i am an ai", "i'm an ai", "as a language model",
                   "i'm here to help", "i am here to help", "is there anything else i can",
                   "happy to help", "glad to help", "i can't assist", "i cannot assist",
                   "i'm sorry, but i can't")
"""Phrases only the assistant says: a user message holding one breaks the role (the
1.5B model as the user wrote "I'm sorry, but I can't assist with that ... I'd be happy
to help")."""
SPEAKER_TAG = re.compile(r"^\s*\**\s*(assistant|ai|system|bot)\s*\**\s*:", re.IGNORECASE)
COPIED = 0.8
"""A user message this similar to the assistant's last answer (difflib's ratio, over
messages of 40 characters or more) copies it."""


STATES = 0.6
"""A user message without a question mark that holds this share of the expected
outcome's content words states the outcome instead of asking for it (the 1.5B model's
first message was the outcome itself, in three of four scenarios tried)."""
OUTCOME_WORDS = frozenset({"assistant", "says", "say", "tells", "explains", "gives"})


def states_outcome(message: str, outcome: str | None) -> bool:
    """Whether ``message`` states ``outcome`` rather than asking for it.

    >>> states_outcome("Fra-1 regulates IL-6 in macrophages.",
    ...                "The assistant says Fra-1 regulates IL-6 in macrophages.")
    True
    >>> states_outcome("does fra-1 regulate il-6 in macrophages?",
    ...                "The assistant says Fra-1 regulates IL-6 in macrophages.")
    False
    """
    if not outcome or "?" in message:
        return False
    want = set(content_tokens(outcome)) - OUTCOME_WORDS
    return bool(want) and len(set(content_tokens(message)) & want) >= STATES * len(want)


def breaks_role(message: str, last_answer: str | None, outcome: str | None = None
                ) -> str | None:
    """Why ``message`` is written as the assistant rather than the user (or states the
    ``outcome`` the user wants to be told), or None."""
    text = " ".join(message.lower().split())
    if SPEAKER_TAG.match(message):
        return "the message begins with the assistant's speaker tag"
    said = next((p for p in ASSISTANT_VOICE if p in text), None)
    if said is not None:
        return f"the message speaks as the assistant ({said!r})"
    if last_answer and len(text) >= 40:
        theirs = " ".join(last_answer.lower().split())
        if difflib.SequenceMatcher(None, text, theirs).ratio() >= COPIED:
            return "the message repeats the assistant's last answer"
    if states_outcome(message, outcome):
        return "the message states the expected outcome instead of asking for it"
    return None


@dataclass
class RoleCheck:
    """The check of one call: the breaks it found (each a re-ask), kept for the turn."""

    last_answer: str | None
    outcome: str | None = None
    breaks: list[str] = field(default_factory=list)

    def __call__(self, item: UserInput, out: UserTurn) -> str | None:
        if out.status == "continue" and not out.message.strip():
            return "status is continue but the message is empty"
        if out.status != "continue":
            return None
        if _plain(out.message) in example_messages():
            self.breaks.append("the message copies the instructions' example")
            return ("you copied the example's message; write this person's own next "
                    "message, about the scenario")
        why = breaks_role(out.message, self.last_answer, self.outcome)
        if why is not None:
            self.breaks.append(why)
            return (f"you wrote as the assistant ({why}); you are the USER: write the "
                    "user's next message to the assistant")
        return None


USER_PROMPT: Prompt[UserInput, UserTurn] = Prompt(
    name="simulated_user",
    instruction=(
        "You play a person talking to an assistant; you are the USER, never the "
        "assistant. The scenario says what you want, the expected outcome what would "
        "satisfy you, the user who you are and how you write, the facts what you know "
        "(say one only when it is needed or asked for). The conversation so far is "
        "given. Write your next message to the assistant: short, in your own words, as "
        "this person would; ask follow-ups, correct the assistant when it is wrong, refer "
        "to what was said. The assistant has not read your scenario: your first message "
        "names what you ask about. Never state the expected outcome yourself: you do not "
        "know it yet, you ask for it. Status goal_reached (no message) only when the "
        "assistant's answers have given you what the expected outcome says; an answer "
        "about something else, vague or partial, is not it: continue, and say what is "
        "missing. gave_up (no message) when it clearly cannot help after you have tried; "
        "else continue with the message."
    ),
    input_model=UserInput,
    output_model=UserTurn,
    max_tokens=200,
    examples=(
        (UserInput(scenario="You want to know when the Eiffel Tower was finished.",
                   expected_outcome="The assistant gives the year it was finished.",
                   user="A tourist who writes briefly.", facts=["You are in Paris."],
                   conversation="(nothing said yet)"),
         UserTurn(status="continue", message="when was the eiffel tower finished?")),
        (UserInput(scenario="You want to know when the Eiffel Tower was finished.",
                   expected_outcome="The assistant gives the year it was finished.",
                   user="A tourist who writes briefly.", facts=["You are in Paris."],
                   conversation="USER: when was the eiffel tower finished?\n\n"
                                "ASSISTANT: It was finished in 1889."),
         UserTurn(status="goal_reached")),
        (UserInput(scenario="You want to know when the Eiffel Tower was finished.",
                   expected_outcome="The assistant gives the year it was finished.",
                   user="A tourist who writes briefly.", facts=["You are in Paris."],
                   conversation="USER: when was the eiffel tower finished?\n\n"
                                "ASSISTANT: The tower is 330 metres tall."),
         UserTurn(status="continue", message="ok but what year was it finished?")),
    ),
)


def _plain(text: str) -> str:
    return " ".join(text.lower().split()).rstrip("?.! ")


def example_messages() -> frozenset[str]:
    """The user messages of the simulator's examples: a small model copies them (the
    1.5B model asked "what year was it finished?" in a conversation about biology)."""
    return frozenset(_plain(out.message) for _, out in USER_PROMPT.examples
                     if out.message)


@dataclass(frozen=True)
class Said:
    """One turn of the conversation so far: the user's message and the answer."""

    question: str
    answer: str | None


@dataclass(frozen=True)
class NextTurn:
    """The simulator's answer for one turn: its status and message, the role breaks its
    check found (each asked again), or the failure that ended the conversation."""

    status: Status | None
    message: str
    role_breaks: tuple[str, ...] = ()
    failure: str | None = None


async def next_turn(client: ChatClient, scenario: Scenario, turns: Sequence[Said],
                    counts: JudgeCounts | None = None, **params: Any) -> NextTurn:
    """The simulated user's next turn in ``scenario`` after ``turns``."""
    check = RoleCheck(turns[-1].answer if turns else None, scenario.expected_outcome)
    item = UserInput(scenario=scenario.scenario, expected_outcome=scenario.expected_outcome,
                     user=scenario.user or "(not described: write plainly)",
                     facts=list(scenario.facts), conversation=conversation_text(
                         [(t.question, t.answer) for t in turns]))
    got = await ask(client, replace(USER_PROMPT, check=check), item, counts=counts, **params)
    if isinstance(got, JudgeFailure):
        return NextTurn(None, "", tuple(check.breaks), got.reason)
    if not turns and got.status != "continue":
        return NextTurn(None, "", tuple(check.breaks),
                        f"the simulated user said {got.status} before asking anything")
    return NextTurn(got.status, got.message.strip(), tuple(check.breaks))
