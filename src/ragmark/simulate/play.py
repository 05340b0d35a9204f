"""Playing scenarios: the simulated user writes a turn, the system answers it with the
conversation so far, until the user says the goal is reached or gives up, or the
scenario's turns run out. Conversations run concurrently; every finished turn and every
ending is written to the journal the moment it happens, so a killed simulation resumes:
finished conversations are kept, a conversation in progress goes on from its last
finished turn (the system is never asked a turn twice), and the simulator's calls are
cached like the judges' (asked again, they cost nothing).

How a conversation ended (``outcome``): ``goal_reached`` and ``gave_up`` (the simulated
user's own verdict), ``max_turns`` (the scenario's turns ran out), ``simulator_failed``
(no usable turn after a re-ask; the reason kept).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ragmark.case import ChatClient, JudgeCounts, Output
from ragmark.simulate.journal import Journal
from ragmark.simulate.scenarios import Scenario
from ragmark.simulate.user import Said, next_turn


class System(Protocol):
    """What is simulated against: anything ragmark asks in turns (its pipelines)."""

    async def ask(self, question: str, history: list[dict[str, Any]] | None,
                  conversation: str | None = None) -> Output: ...


@dataclass(frozen=True)
class Played:
    """One conversation's turns (as the journal holds them) and how it ended."""

    scenario: str
    turns: tuple[Mapping[str, Any], ...]
    outcome: str
    reason: str | None = None


def turn_record(scenario: str, n: int, question: str, out: Output, latency: float,
                role_breaks: Sequence[str]) -> dict[str, Any]:
    """A finished turn as the journal writes it (a failed one with the failure's own
    message, when the system gave one: an exception's text, a service's response)."""
    detail = out.details.get("message") or out.details.get("response") if out.error else None
    return {"scenario": scenario, "turn": n, "question": question, "answer": out.answer,
            "contexts": [{"text": c.text, **({"id": c.id} if c.id else {}),
                          **({"doc_id": c.doc_id} if c.doc_id and c.doc_id != c.id else {})}
                         for c in out.contexts],
            "error": out.error,
            **({"error_detail": " ".join(str(detail).split())[:500]} if detail else {}),
            "latency_s": round(latency, 6),
            "role_breaks": list(role_breaks)}


async def play(scenario: Scenario, system: System, client: ChatClient, journal: Journal,
               counts: JudgeCounts, **params: Any) -> Played:
    """One conversation, from where the journal left it."""
    done = journal.ending(scenario.id)
    turns = list(journal.turns(scenario.id))
    if done is not None:
        return Played(scenario.id, tuple(turns), done["outcome"], done.get("reason"))
    outcome, reason = "max_turns", None
    while len(turns) < scenario.max_turns:
        said = [Said(t["question"], t["answer"]) for t in turns]
        nxt = await next_turn(client, scenario, said, counts, **params)
        if nxt.status is None:
            outcome, reason = "simulator_failed", nxt.failure
            break
        if nxt.status != "continue":
            outcome = nxt.status
            if nxt.role_breaks:
                journal.write({"scenario": scenario.id, "closing_role_breaks":
                               list(nxt.role_breaks)})
            break
        history = [{"question": t["question"], "answer": t["answer"]} for t in turns]
        t0 = time.perf_counter()
        out = await system.ask(nxt.message, history, conversation=scenario.id)
        rec = turn_record(scenario.id, len(turns) + 1, nxt.message, out,
                          time.perf_counter() - t0, nxt.role_breaks)
        journal.write(rec)
        turns.append(rec)
    journal.write({"scenario": scenario.id, "outcome": outcome,
                   **({"reason": reason} if reason else {})})
    return Played(scenario.id, tuple(turns), outcome, reason)


async def play_all(scenarios: Sequence[Scenario], system: System, client: ChatClient,
                   journal: Journal, concurrency: int,
                   advance: Callable[[int], None] = lambda n: None, **params: Any
                   ) -> tuple[list[Played], JudgeCounts]:
    """Every scenario played (``concurrency`` conversations at once), in order."""
    sem = asyncio.Semaphore(concurrency)
    counts = JudgeCounts()

    async def one(s: Scenario) -> Played:
        async with sem:
            got = await play(s, system, client, journal, counts, **params)
        advance(1)
        return got

    jobs: list[Awaitable[Played]] = [one(s) for s in scenarios]
    return list(await asyncio.gather(*jobs)), counts
