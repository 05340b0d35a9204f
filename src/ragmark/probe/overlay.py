"""The corpus a probe runs on: the user's documents and the planted ones, a new value
(the user's corpus, files and indexes are never touched; an index of the overlay hashes
other chunks, so it is cached apart). And the target questions, drawn with the seed."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import replace

from ragmark.errors import DataError
from ragmark.probe.attacks import Planted, plant
from ragmark.types import Corpus, Dataset, Document, Sample


def targets(samples: Sequence[Sample], n: int | None, seed: int) -> tuple[Sample, ...]:
    """``n`` answerable questions drawn with ``seed`` (all of them, in the set's order,
    when ``n`` is None or at least their number); in the set's order either way."""
    pool = [s for s in samples if s.answerable]
    if n is None or n >= len(pool):
        return tuple(pool)
    chosen = set(random.Random(seed).sample(range(len(pool)), n))
    return tuple(s for i, s in enumerate(pool) if i in chosen)


def plant_all(attack: str, chosen: Sequence[Sample], seed: int, *, style: str = "plain",
              copies: int = 1) -> tuple[Planted, ...]:
    """The planted documents of ``attack`` for each target question, each drawn from its
    own generator (seed, attack, style, question id): the same question gets the same
    canary in every config and every rerun, whatever else is probed. A poisoning's wrong
    answer is the question's ``extra["wrong_answer"]`` where the set gives one."""
    out = []
    for s in chosen:
        rng = random.Random(f"{seed}:{attack}:{style}:{s.id}")
        wrong = s.extra.get("wrong_answer") if attack == "poisoning" else None
        out.append(plant(attack, s.id, s.question, rng, style=style, copies=copies,
                         wrong=str(wrong) if wrong else None))
    return tuple(out)


def overlay(corpus: Corpus, planted: Sequence[Planted]) -> Corpus:
    """``corpus`` with the planted documents after its own; a DataError when a planted
    id is already a document's (a corpus that holds an earlier probe's documents)."""
    have = {d.id for d in corpus.documents}
    added = [Document(id=i, text=t, metadata=dict(p.metadata))
             for p in planted for i, t in zip(p.ids, p.texts, strict=True)]
    clash = next((d.id for d in added if d.id in have), None)
    if clash is not None:
        raise DataError(f"{corpus.source or 'the corpus'}: document {clash!r} already "
                        "exists; a probe's planted ids must be new (was the corpus "
                        "written by an earlier probe?)")
    return replace(corpus, documents=corpus.documents + tuple(added),
                   source=f"{corpus.source} + {len(added)} planted (ragmark probe)")


def overlaid(dataset: Dataset, planted: Sequence[Planted]) -> Dataset:
    """``dataset`` restricted to the planted documents' target questions, on the
    overlay corpus (its name says so: a probe's results never pass for the clean set's)."""
    asked = {p.question_id for p in planted}
    return replace(dataset, name=f"{dataset.name} (probe)",
                   samples=tuple(s for s in dataset.samples if s.id in asked),
                   corpus=overlay(dataset.corpus, planted))
