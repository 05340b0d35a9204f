"""Questions to an external system (or its logged outputs) -> what the runner scores.

Every question is asked concurrently (up to the pipeline's ``concurrency``); a question
that fails is kept with its reason, and the run goes on. The latency of each answer is
measured around the call only (not the wait for a free slot).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections import Counter
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from ragmark.aio import run_sync
from ragmark.errors import ConfigError
from ragmark.pipelines.base import Output, Resolve, Sourced, produced
from ragmark.pipelines.config import HttpPipelineConfig, PythonPipelineConfig, pipeline_json
from ragmark.pipelines.http import HttpPipeline
from ragmark.types import Sample

if TYPE_CHECKING:
    from ragmark.config import RunConfig
    from ragmark.pipelines.http import HttpPipeline
    from ragmark.pipelines.python import PythonPipeline
    from ragmark.progress import Progress


def build(cfg: PythonPipelineConfig | HttpPipelineConfig,
          fn: Callable[..., Any] | None = None) -> PythonPipeline | HttpPipeline:
    """The pipeline a config describes (a Python target is imported here, unless the
    callable ``fn`` itself is given: an in-memory pipeline of the Python API)."""
    if isinstance(cfg, PythonPipelineConfig):
        from ragmark.pipelines.python import PythonPipeline

        return PythonPipeline(cfg, fn)

    return HttpPipeline(cfg)


Place = tuple[str, int] | None
"""Where a question sits in a conversation: (conversation id, turn from 1), or None."""


async def _ask_all(pipe: PythonPipeline | HttpPipeline, questions: Sequence[str],
                   concurrency: int, advance: Callable[[int], None],
                   places: Sequence[Place]) -> list[Output]:
    sem = asyncio.Semaphore(concurrency)
    outs: list[Output | None] = [None] * len(questions)

    async def one(i: int, history: list[dict[str, Any]] | None, talk: str | None = None
                  ) -> Output:
        async with sem:
            t = time.perf_counter()
            out = await pipe.ask(questions[i], history, talk)
            latency = time.perf_counter() - t
        advance(1)
        outs[i] = replace(out, latency_s=latency)
        return outs[i]  # type: ignore[return-value]

    async def conversation(talk: str, turns: list[int]) -> None:
        """The turns of one conversation in order, each with the earlier ones."""
        history: list[dict[str, Any]] = []
        for i in turns:
            out = await one(i, list(history), talk)
            history.append({"question": questions[i], "answer": out.answer
                            if out.error is None else None})

    talks: dict[str, list[tuple[int, int]]] = {}
    jobs: list[Coroutine[Any, Any, Any]] = []
    for i, place in enumerate(places):
        if place is None:
            jobs.append(one(i, None))
        else:
            talks.setdefault(place[0], []).append((place[1], i))
    jobs += [conversation(talk, [i for _, i in sorted(turns)])
             for talk, turns in talks.items()]
    async with pipe:
        await asyncio.gather(*jobs)
    return [o for o in outs if o is not None]


def ask_all(cfg: PythonPipelineConfig | HttpPipelineConfig, questions: Sequence[str],
            advance: Callable[[int], None] = lambda n: None,
            fn: Callable[..., Any] | None = None,
            places: Sequence[Place] | None = None) -> tuple[list[Output], int]:
    """Every question's :class:`Output` in order, and the number of retries made
    (``places``: where each question sits in its conversation; the turns of one
    conversation are asked in order, each with the earlier turns, and conversations run
    concurrently)."""
    return asked(build(cfg, fn), cfg.concurrency, questions, advance, places)


def asked(pipe: PythonPipeline | HttpPipeline, concurrency: int, questions: Sequence[str],
          advance: Callable[[int], None] = lambda n: None,
          places: Sequence[Place] | None = None) -> tuple[list[Output], int]:
    """:func:`ask_all` with the pipeline built (so the caller can ask it more)."""
    where = list(places) if places is not None else [None] * len(questions)
    outs = run_sync(_ask_all(pipe, questions, concurrency, advance, where))
    assert len(outs) == len(questions)  # each question asked once, in a turn or alone
    return outs, int(getattr(pipe, "retries", 0))


def places_of(samples: Sequence[Sample]) -> list[Place]:
    """Each sample's place in its conversation (``Sample.extra``), None for a question
    asked alone."""
    out: list[Place] = []
    for s in samples:
        cid, turn = s.extra.get("conversation_id"), s.extra.get("turn")
        out.append((str(cid), int(turn)) if cid is not None and isinstance(turn, int)
                   else None)
    return out


def _latencies(outs: Sequence[Output]) -> dict[str, float]:
    lat = [o.latency_s for o in outs if o.error is None and o.latency_s is not None]
    if not lat:
        return {}
    return {"latency_p50_ms": float(np.percentile(lat, 50)) * 1000,
            "latency_p95_ms": float(np.percentile(lat, 95)) * 1000}


def _outputs_hash(samples: Sequence[Sample], outs: Sequence[Output]) -> str:
    h = hashlib.sha256()
    for s, o in zip(samples, outs, strict=True):
        h.update(json.dumps([s.id, o.answer, [c.text for c in o.contexts]]).encode())
    return h.hexdigest()


def _failure_note(name: str, outs: Sequence[Output], retries: int) -> list[str]:
    """``pipeline NAME: 2 of 4 questions failed (reason (N questions); ...); the first:
    <its full message>``."""
    failed = Counter(o.error for o in outs if o.error is not None)
    if not failed and not retries:
        return []
    n = sum(failed.values())
    why = "; ".join(f"{r} ({k} question{'s' * (k > 1)})" for r, k in failed.most_common(5))
    text = f"pipeline {name}: {n} of {len(outs)} questions failed"
    if n:
        text += f" ({why}); their metrics are missing with the reason"
        first = next(o for o in outs if o.error is not None)
        detail = first.details.get("message") or first.details.get("response")
        if detail:
            text += f"; the first: {first.error}: {detail}"
    return [text + (f"; {retries} retries" if retries else "")]


def external(
    samples: Sequence[Sample],
    cfg: RunConfig,
    prog: Progress,
    *,
    outputs: Mapping[str, Output] | None = None,
    with_answers: bool = True,
    fn: Callable[..., Any] | None = None,
    resolve: Resolve | None = None,
) -> Sourced:
    """Each question's answer and contexts from the config's pipeline (``fn`` is its
    callable when it lives in memory), or from ``outputs`` (sample id -> logged output)
    when given."""
    timings: dict[str, float] = {}
    notes: list[str] = []
    extra: dict[str, Any] = {}
    if outputs is not None:
        outs = [outputs[s.id] for s in samples]
        config: dict[str, Any] = {"name": cfg.name,
                                  "source": getattr(outputs, "source", "outputs")}
        extra["outputs_hash"] = _outputs_hash(samples, outs)
    else:
        pipe = cfg.pipeline
        if pipe is None:
            raise ConfigError(f"config {cfg.name!r} has no [pipeline] and no outputs were given")
        name = pipe.target if isinstance(pipe, PythonPipelineConfig) else pipe.display_url
        t0 = time.perf_counter()
        with prog.task(f"asking {name}", len(samples)) as advance:
            places = places_of(samples)
            system = build(pipe, fn)
            outs, retries = asked(system, pipe.concurrency, [s.question for s in samples],
                                  advance, places)
        # an HTTP service always gets the earlier turns (as chat messages), a Python
        # callable when it takes ``history``
        if any(places) and not getattr(system, "takes_history", True):
            notes.append(f"pipeline {name} takes no history argument: each turn of the "
                         "conversations was asked on its own, without the earlier turns "
                         "(add a history=None parameter: it gets [{question, answer}, ...])")
        timings["pipeline_s"] = time.perf_counter() - t0
        timings.update(_latencies(outs))
        shapes = [o for o in outs if o.shape_error]
        if shapes and all(o.error is not None for o in outs):  # a config mistake, surely
            first = shapes[0]
            shown = first.details.get("response")
            raise ConfigError(f"config {cfg.name!r}: no question got a usable answer from "
                              f"{name}; the first: {first.error}"
                              + ("" if shown is None else f"; the response: {shown}"))
        notes += _failure_note(name, outs, retries)
        config = {"name": cfg.name, "pipeline": pipeline_json(pipe)}
    if cfg.refusal_patterns:  # they change what counts as a refusal: part of the config
        config["refusal_patterns"] = list(cfg.refusal_patterns)
    if cfg.refusal_judge:
        config["refusal_judge"] = True
    if cfg.language:  # the judges' claims are written in it
        config["language"] = cfg.language
    if cfg.context_match != "contains":  # it changes which contexts are relevant
        config["context_match"] = cfg.context_match
    if cfg.judges:  # which people's examples and rules the judges were given
        config["judges"] = cfg.judges_json()
    extra["chunks"] = sum(len(o.contexts) for o in outs)
    made = [produced(o, with_answers, resolve) for o in outs]
    by_text, anonymous = sum(p.by_text for p in made), sum(p.anonymous for p in made)
    if by_text:
        notes.append(f"{by_text} context{'s' if by_text != 1 else ''} without an id took "
                     "the id of the corpus document with the same text (lower-cased, white "
                     "space collapsed)")
    if anonymous and resolve is not None:
        notes.append(f"{anonymous} context{'s' if anonymous != 1 else ''} without an id "
                     "matched no corpus document's text; the ground truth is by document "
                     "id, so they count as not relevant (a question with only such contexts "
                     "has its retrieval metrics missing)")
    return Sourced(made, timings, config, extra, notes)
