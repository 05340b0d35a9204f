"""A judge aligned to people's labels, without training it: examples people labelled
(few-shot) and rules from their notes (a rubric). ``judge-eval --align`` chooses them and
measures the gain (for a score-valued judge, the threshold at which its score means
*yes* is judge-eval's cross-validated threshold, reported beside);
``--save-alignment FILE`` writes them (TOML, with a content hash); ``[judges.METRIC]
alignment = "FILE"`` in a config makes ``run`` and ``compare`` judge with them.

How it reaches the prompt: :func:`aligned` runs a judge's call with the guidance of its
metric as the current one (a context variable, so every judge module's prompts get it
without passing it down), and :func:`~ragmark.judges.guided.guided`, called by
:func:`~ragmark.judges.prompt.ask` for every prompt, appends the rubric and the
examples to the instruction, each example's texts in data blocks as any data. The
messages change, so the call cache's keys do: an aligned judge never reads an unaligned
judge's answers. Without guidance every prompt
is unchanged, and so are its cache keys.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeVar

from ragmark.errors import ConfigError
from ragmark.judges.fit import CUT_MARK
from ragmark.judges.guided import CURRENT
from ragmark.judges.prompt import data_block
from ragmark.versions import canonical_hash

T = TypeVar("T")


@dataclass(frozen=True)
class Example:
    """One case people labelled: ``label`` True is *yes* to the metric's question."""

    question: str
    answer: str
    contexts: tuple[str, ...]
    label: bool
    note: str = ""
    expected_answer: str = ""


@dataclass(frozen=True)
class Guidance:
    """What aligns one judge metric: ``ask`` (the question people answered), the
    ``examples`` and the ``rubric`` lines."""

    metric: str
    ask: str
    examples: tuple[Example, ...] = ()
    rubric: tuple[str, ...] = ()

    @property
    def hash(self) -> str:
        """A hash of the content: results record it, and the prompt's text carries it."""
        return canonical_hash({"metric": self.metric, "ask": self.ask,
                               "examples": [vars(e) for e in self.examples],
                               "rubric": list(self.rubric)})

    def text(self) -> str:
        """The block appended to the judge's instruction."""
        parts = [f"People who check this judge were asked: {self.ask} Judge as they do."]
        if self.rubric:
            parts.append("Their rules:\n" + "\n".join(f"- {r}" for r in self.rubric))
        for i, e in enumerate(self.examples, start=1):
            blocks = [data_block("question", e.question), data_block("answer", e.answer),
                      *(data_block("context", c, k) for k, c in enumerate(e.contexts, 1))]
            if e.expected_answer:
                blocks.append(data_block("expected_answer", e.expected_answer))
            said = "YES" if e.label else "NO"
            parts.append(f"Case {i} they labelled (for calibration; judge the case you are "
                         f"given on its own):\n" + "\n".join(blocks)
                         + f"\nTheir answer: {said}" + (f" ({e.note})" if e.note else ""))
        return "\n\n".join(parts)

    def within(self, chars: int) -> tuple[Guidance | None, int, int]:
        """This guidance with a text of at most ``chars`` characters: the examples'
        texts cut to one length (longest first, each ending in the cut mark, never under
        :data:`SHORTEST` characters), then the last examples dropped while that is not
        enough; None when not even the question and rules fit. Also how many examples
        were shortened and how many dropped."""
        if len(self.text()) <= chars:
            return self, 0, 0
        for keep in range(len(self.examples), -1, -1):
            kept = replace(self, examples=self.examples[:keep])
            if len(kept.text()) <= chars:
                return kept, 0, len(self.examples) - keep
            cut = _cut_examples(kept, chars)
            if cut is not None:
                shortened = sum(a != b for a, b in zip(cut.examples, kept.examples,
                                                       strict=True))
                return cut, shortened, len(self.examples) - keep
        return None, 0, len(self.examples)

    def to_toml(self) -> str:
        """The alignment file: metric, ask, rubric, examples, and the hash."""
        lines = [f"metric = {_q(self.metric)}", f"ask = {_q(self.ask)}",
                 f"hash = {_q(self.hash)}"]
        lines.append("rubric = [" + ", ".join(_q(r) for r in self.rubric) + "]")
        for e in self.examples:
            lines += ["", "[[examples]]", f"question = {_q(e.question)}",
                      f"answer = {_q(e.answer)}",
                      "contexts = [" + ", ".join(_q(c) for c in e.contexts) + "]",
                      f"label = {'true' if e.label else 'false'}", f"note = {_q(e.note)}",
                      f"expected_answer = {_q(e.expected_answer)}"]
        return "\n".join(lines) + "\n"


SHORTEST = 80
"""The fewest characters an example's text is cut to before examples are dropped."""


def _cut_examples(g: Guidance, chars: int) -> Guidance | None:
    """``g`` with its examples' texts cut to the longest one length that brings its text
    within ``chars`` (None when even :data:`SHORTEST` does not)."""
    def at(level: int) -> Guidance:
        def cut(t: str) -> str:
            return t if len(t) <= level + len(CUT_MARK) else t[:level].rstrip() + CUT_MARK

        return replace(g, examples=tuple(replace(
            e, question=cut(e.question), answer=cut(e.answer),
            contexts=tuple(cut(c) for c in e.contexts),
            expected_answer=cut(e.expected_answer)) for e in g.examples))

    if not g.examples or len(at(SHORTEST).text()) > chars:
        return None
    lo, hi = SHORTEST, max(len(t) for e in g.examples
                           for t in (e.question, e.answer, e.expected_answer, *e.contexts))
    while lo < hi:  # the longest level that fits
        mid = (lo + hi + 1) // 2
        if len(at(mid).text()) <= chars:
            lo = mid
        else:
            hi = mid - 1
    return at(lo)


def _q(text: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's for these characters)."""
    return json.dumps(text, ensure_ascii=False)


def read_guidance(path: str | Path, metric: str | None = None) -> Guidance:
    """The alignment file at ``path``; a ConfigError naming the file when it is not one,
    is of another metric than ``metric``, or its content no longer matches its hash."""
    p = Path(path)
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
        g = Guidance(str(data["metric"]), str(data["ask"]), tuple(
            Example(str(e["question"]), str(e["answer"]), tuple(map(str, e["contexts"])),
                    bool(e["label"]), str(e.get("note", "")),
                    str(e.get("expected_answer", ""))) for e in data.get("examples", [])),
            tuple(map(str, data.get("rubric", []))))
    except OSError as e:
        raise ConfigError(f"alignment {p}: cannot read it: {e.strerror}") from None
    except (tomllib.TOMLDecodeError, KeyError, TypeError, ValueError) as e:
        raise ConfigError(f"alignment {p}: not an alignment file as `judge-eval "
                          f"--save-alignment` writes ({type(e).__name__}: {e})") from None
    if metric is not None and g.metric != metric:
        raise ConfigError(f"alignment {p} is of {g.metric}, not of {metric}")
    if data.get("hash") != g.hash:
        raise ConfigError(f"alignment {p}: its content does not match its hash (edited by "
                          "hand?); save it again with judge-eval --save-alignment")
    return g


async def aligned(job: Awaitable[T], guidance: Guidance | None) -> T:
    """Await a judge's call with ``guidance`` as the current one (what
    :func:`~ragmark.judges.guided.guided` appends to every prompt of the call)."""
    token = CURRENT.set(guidance)
    try:
        return await job
    finally:
        CURRENT.reset(token)


def choose_examples(pool: Sequence[Example], wrong: Sequence[bool], per_class: int
                    ) -> tuple[Example, ...]:
    """Up to ``per_class`` examples of each label from ``pool``, those the unaligned
    judge got wrong (``wrong``) first, then in pool order; yes first, then no."""
    out: list[Example] = []
    for label in (True, False):
        ranked = sorted((i for i, e in enumerate(pool) if e.label == label),
                        key=lambda i: (not wrong[i], i))
        out += [pool[i] for i in ranked[:per_class]]
    return tuple(out)


def rubric_of(notes: Sequence[str], at_most: int = 8) -> tuple[str, ...]:
    """The people's distinct non-empty notes as rubric lines (at most ``at_most``, the
    first given first)."""
    seen: dict[str, None] = {}
    for n in notes:
        line = " ".join(n.split())
        if line:
            seen.setdefault(line, None)
    return tuple(list(seen)[:at_most])
