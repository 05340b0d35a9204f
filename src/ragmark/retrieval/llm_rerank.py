"""The LLM pointwise reranker: one judge call per (question, passage), the grade as score.

Each of a question's ``top_k`` passages is graded on its own (0-3 by default, or the
YES/NO label of seed 003 with ``scale = "binary"``), concurrently through the cached LLM
client, so a rerun or a resumed run makes no call twice. The score written for a passage
is its grade plus a tie-breaker below 0.5 that keeps the retrieval order among passages of
equal grade. A passage whose grade could not be had (invalid output after the re-ask, a
failed call) scores below every graded one, still in retrieval order; such failures are
counted and reported in the run's notes, never scored as 0.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from ragmark.errors import ConfigError
from ragmark.judges.language import speaking
from ragmark.judges.prompt import JudgeCounts
from ragmark.judges.relevance import relevance_grade, relevance_label
from ragmark.llm.accounting import llm_summary
from ragmark.llm.config import LLMSettings
from ragmark.llm.endpoint import Endpoint
from ragmark.llm.factory import direct_client
from ragmark.llm.loop import LoopThread
from ragmark.registry import Table
from ragmark.retrieval.rerank import unscored_notes
from ragmark.types import Score


def order_scores(grades: Sequence[float | None]) -> NDArray[np.float32]:
    """Scores that order passages by grade, then by their retrieval order; ungraded
    passages (None) go below all graded ones.

    >>> order_scores([1.0, 3.0, None, 1.0]).round(3).tolist()
    [1.5, 3.375, -0.75, 1.125]
    """
    n = len(grades)
    out = np.empty(n, dtype=np.float64)
    for i, g in enumerate(grades):
        tie = 0.5 * (n - i) / n  # in (0, 0.5]: earlier retrieved ranks higher
        out[i] = (g if g is not None else -1.0) + tie
    return out.astype(np.float32)


class LLMReranker:
    """Grades each retrieved passage with an LLM judge; see the module docstring.

    The endpoint comes from the ``[reranker]`` table (``base_url``, ``model``, ...) or,
    for what it does not give, from ``RAGMARK_LLM_*``. ``template`` (binary scale only) is
    a custom relevance prompt with ``{question}`` and ``{passage}``.
    """

    name = "llm"

    def __init__(self, endpoint: Endpoint | LLMSettings | None = None,
                 scale: Literal["graded", "binary"] = "graded",
                 template: str | None = None, language: str | None = None) -> None:
        if scale not in ("graded", "binary"):
            raise ConfigError(f"llm reranker: scale must be 'graded' or 'binary', got {scale!r}")
        if template is not None and scale != "binary":
            raise ConfigError("llm reranker: a template needs scale = \"binary\" (YES/NO)")
        self.settings = (endpoint if isinstance(endpoint, LLMSettings) else
                         (endpoint or Endpoint()).settings("llm reranker"))
        self.scale = scale
        self.template = template
        self.language = language
        self.client = direct_client(self.settings)
        self.counts = JudgeCounts()
        self.graded = 0
        self.failures: Counter[str] = Counter()
        self._loop = LoopThread()
        self._probed = False

    async def _probe(self) -> None:
        if not self._probed:
            ok, why = await self.client.probe()
            if not ok:
                raise ConfigError(
                    f"the llm reranker's endpoint {self.settings.display_url} did not "
                    f"answer: {why}")
            self._probed = True

    async def _grade_all(self, query: str, texts: Sequence[str]) -> list[Score]:
        with speaking(self.language):  # the passages' language, told to every call
            if self.scale == "binary":
                jobs = [relevance_label(self.client, query, t, template=self.template,
                                        counts=self.counts) for t in texts]
            else:
                jobs = [relevance_grade(self.client, query, t, counts=self.counts)
                        for t in texts]
            return list(await asyncio.gather(*jobs))

    def score(self, query: str, texts: Sequence[str]) -> NDArray[np.float32]:
        return self.score_many([query], [texts])[0]

    def score_many(self, queries: Sequence[str],
                   text_lists: Sequence[Sequence[str]]) -> list[NDArray[np.float32]]:
        """:meth:`score` of many questions, their calls made concurrently."""

        async def grade() -> list[list[Score]]:
            await self._probe()
            return list(await asyncio.gather(*(self._grade_all(q, ts) for q, ts in
                                               zip(queries, text_lists, strict=True) if ts)))

        got = iter(self._loop.run(grade()) if any(text_lists) else [])
        return [self._order(next(got)) if ts else np.zeros(0, dtype=np.float32)
                for ts in text_lists]

    def _order(self, got: Sequence[Score]) -> NDArray[np.float32]:
        grades: list[float | None] = []
        for s in got:
            if s.ok:
                self.graded += 1
                grades.append(s.value)
            else:
                self.failures[s.reason or "unknown"] += 1
                grades.append(None)
        return order_scores(grades)

    def summary(self) -> tuple[list[str], dict[str, Any]]:
        """Notes for the report (failures) and the LLM accounting of the reranking."""
        failed = sum(self.failures.values())
        notes = unscored_notes("llm reranker", self.failures, self.graded,
                               "could not be graded", "graded")
        return notes, {**llm_summary(self.settings, self.client, self.counts),
                       "scale": self.scale, "passages_graded": self.graded,
                       "passages_failed": failed}

    def close(self) -> None:
        """Close the HTTP pool and the background loop."""
        if self._loop.started:
            self._loop.run(self.client.aclose())
        self._loop.close()


@dataclass(frozen=True, kw_only=True)
class LLMRerankerTable(Endpoint, Table):
    """The ``[reranker]`` table of ``name = "llm"``: ``scale``, ``template``, ``language``
    (the data's, which the judge is told; a config's ``language`` fills it) and the
    endpoint's keys (:class:`~ragmark.llm.endpoint.Endpoint`)."""

    scale: Literal["graded", "binary"] = "graded"
    template: str | None = None
    language: str | None = None

    def build(self) -> LLMReranker:
        return LLMReranker(self.endpoint(), self.scale, self.template, self.language)

