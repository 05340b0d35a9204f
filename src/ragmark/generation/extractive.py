"""Extractive generators: answers cut from the retrieved contexts, no model (pure)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ragmark.generation.base import check_positive
from ragmark.text import content_tokens, split_sentences, truncate_words
from ragmark.types import Chunk


def _collapse(s: str) -> str:
    return " ".join(s.split())


def top1_answer(contexts: Sequence[Chunk], max_chars: int) -> str:
    """The top context's text, white space collapsed, cut at a word boundary to at most
    ``max_chars`` characters; "" when there is no context."""
    if not contexts:
        return ""
    return truncate_words(_collapse(contexts[0].text), max_chars)


@dataclass(frozen=True, slots=True)
class Top1Generator:
    """Answers with the top-ranked context, trimmed to ``max_chars`` (default 300).

    >>> Top1Generator(12).generate("q?", [Chunk("d#0", "d", "Hybrid  search\\nfuses ranks")])
    'Hybrid'
    """

    max_chars: int = 300
    name: str = field(default="top1", init=False)

    def __post_init__(self) -> None:
        check_positive("max_chars", self.max_chars)

    def generate(self, question: str, contexts: Sequence[Chunk]) -> str:
        return top1_answer(contexts, self.max_chars)


@dataclass(frozen=True, slots=True)
class SentencesGenerator:
    """Answers with the sentences of the top ``top_n`` contexts that best match the
    question.

    A sentence's score is the number of distinct content tokens (stop-words removed) it
    shares with the question. Sentences are taken best first (ties: better context
    rank, then earlier in the context) while they fit in ``max_chars`` together, joined
    by a space; a repeated sentence (as from overlapping chunks) is taken once, and a
    piece of a sentence is dropped when the whole sentence is also a candidate. The
    chosen sentences are output in their original order (context rank, then position).
    If the best sentence alone is too long it is cut at a word boundary. When no
    sentence shares a token with the question, the answer is :class:`Top1Generator`'s.
    """

    max_chars: int = 300
    top_n: int = 3
    name: str = field(default="sentences", init=False)

    def __post_init__(self) -> None:
        check_positive("max_chars", self.max_chars)
        check_positive("top_n", self.top_n)

    def generate(self, question: str, contexts: Sequence[Chunk]) -> str:
        wanted = set(content_tokens(question))
        # (score, rank, position, text); position is the sentence number in its context.
        candidates: list[tuple[int, int, int, str]] = []
        seen: set[str] = set()
        for rank, chunk in enumerate(contexts[: self.top_n]):
            for pos, (s, e) in enumerate(split_sentences(chunk.text)):
                text = _collapse(chunk.text[s:e])
                if text in seen:
                    continue
                seen.add(text)
                score = len(wanted.intersection(content_tokens(text)))
                if score > 0:
                    candidates.append((score, rank, pos, text))
        # A sentence cut by a chunk boundary is dropped when its whole is also there.
        candidates = [
            c for c in candidates if not any(c[3] in d[3] and c[3] != d[3] for d in candidates)
        ]
        if not candidates:
            return top1_answer(contexts, self.max_chars)

        candidates.sort(key=lambda c: (-c[0], c[1], c[2]))
        chosen: list[tuple[int, int, str]] = []
        used = -1  # characters used, counting one joining space per sentence
        for _, rank, pos, text in candidates:
            if used + 1 + len(text) > self.max_chars:
                break
            chosen.append((rank, pos, text))
            used += 1 + len(text)
        if not chosen:
            return truncate_words(candidates[0][3], self.max_chars)
        return " ".join(text for _, _, text in sorted(chosen))
