"""Text helpers shared by chunkers, generators, relevance and metrics (pure).

- :func:`normalise`: lower-case, every run of white space becomes one space, stripped.
- :func:`tokenize`: lower-cased word tokens (letters and digits of any script; ``_`` and
  punctuation separate tokens).
- :data:`STOPWORDS`: English function words, removed where a metric wants content words.
- :func:`split_sentences`: sentence spans as ``(start, end)`` character offsets.
- :func:`citing_sentences`: an answer's sentences with the ``[n]`` passages each cites.
- :func:`contains_normalised`: the passage-containment rule of SPEC section 3.
- :func:`visible`: control characters made visible, for a terminal or a Markdown file.
"""

from __future__ import annotations

import re

__all__ = [
    "STOPWORDS",
    "citing_sentences",
    "contains_normalised",
    "content_tokens",
    "normalise",
    "split_sentences",
    "tokenize",
    "truncate_words",
    "visible",
]

_TOKEN_RE = re.compile(r"[^\W_]+")

_STOPWORD_TEXT = """
    a about above after again against all almost also although am among an and another
    any anyone anything are around as at be because been before being below between
    both but by can cannot could did do does doing done down during each either else
    enough etc even ever every few for from further had has have having he her here hers
    herself him himself his how however i if in into is it its itself just least less
    let like many may me might more most much must my myself neither no nor not now of
    off often on once one only onto or other others otherwise our ours ourselves out
    over own per perhaps quite rather same shall she should since so some such than that
    the their theirs them themselves then there therefore these they this those though
    through thus to too under until up upon us very via was we were what whatever when
    where whether which while who whom whose why will with within without would yet you
    your yours yourself yourselves s t d ll m re ve don doesn didn isn aren wasn weren
    wouldn shouldn couldn
"""
STOPWORDS: frozenset[str] = frozenset(_STOPWORD_TEXT.split())

# Words after which a full stop does not end a sentence (compared lower-cased, without
# the final dot). A single upper-case letter ("J. Smith") is an initial, but "top k." is
# not. The second list are real words ("the answer is no. The ...") that only abbreviate
# before a number ("No. 5", "pp. 10", "Sec. 3").
_ABBREVIATIONS = (
    "e.g", "i.e", "et al", "cf", "vs", "v", "viz", "fig", "figs", "eq", "eqs", "approx", "ca",
    "dr", "mr", "mrs", "ms", "prof", "st", "jr", "sr", "inc", "ltd", "corp", "dept",
)  # fmt: skip
_NUMBER_ABBREVIATIONS = ("no", "nos", "vol", "pp", "p", "sec", "ch", "tab", "ref", "refs")


def _ends_with(words: tuple[str, ...]) -> re.Pattern[str]:
    alts = "|".join(re.escape(w) for w in words)
    return re.compile(r"[^\w.](?:" + alts + r")$")


_ABBREV_RE = _ends_with(_ABBREVIATIONS)
_NUMBER_ABBREV_RE = _ends_with(_NUMBER_ABBREVIATIONS)
_INITIAL_RE = re.compile(r"[^\w.][^\W\d_]$")
_CLOSERS = "\"'\u201d\u2019)]"
_END_RE = re.compile(r"([.!?]+[\"'\u201d\u2019)\]]*)\s+")
_BLANK_LINE_RE = re.compile(r"\n[^\S\n]*\n")
_OPENERS = frozenset("\"'\u201c\u2018([")


def article(word: str) -> str:
    """``word`` with its indefinite article, by its first letter.

    >>> article("answer_correctness"), article("faithfulness")
    ('an answer_correctness', 'a faithfulness')
    """
    return f"{'an' if word[:1].lower() in 'aeiou' else 'a'} {word}"


def normalise(s: str) -> str:
    """Lower-case ``s``, collapse all white space to single spaces, strip the ends.

    >>> normalise("  Hybrid\\n\\tSearch  ")
    'hybrid search'
    """
    return " ".join(s.lower().split())


def tokenize(s: str) -> list[str]:
    """Lower-cased word tokens: maximal runs of letters and digits (``\\w`` minus ``_``).

    >>> tokenize("BM25's top-k, état_2")
    ['bm25', 's', 'top', 'k', 'état', '2']
    """
    return _TOKEN_RE.findall(s.lower())


def content_tokens(s: str) -> list[str]:
    """:func:`tokenize` with the :data:`STOPWORDS` removed (order and repeats kept)."""
    return [t for t in tokenize(s) if t not in STOPWORDS]


def _is_abbreviation(text: str, dot: int, before_digit: bool) -> bool:
    """Whether the full stop at ``text[dot]`` closes an abbreviation or an initial."""
    start = max(0, dot - 12)
    before = (" " if start == 0 else "") + text[start:dot]
    if _INITIAL_RE.search(before) and before[-1].isupper():
        return True
    before = before.lower()
    if _ABBREV_RE.search(before):
        return True
    return before_digit and _NUMBER_ABBREV_RE.search(before) is not None


def split_sentences(text: str) -> list[tuple[int, int]]:
    """Sentence spans ``(start, end)`` of ``text``, white space trimmed, in order.

    A sentence ends after ``.``, ``!`` or ``?`` (and any closing quotes or brackets)
    when white space and then an upper-case letter, a digit or an opening quote follow;
    a blank line always ends one. A full stop after a known abbreviation ("e.g.",
    "et al.", "Fig.", "Dr.", ...) or an initial ("J. Smith") does not; "3.14" has no space after
    its dot. Every non-space character lies in exactly one span.

    >>> t = "See Fig. 2 for details. It shows 3.5 points!\\n\\nnext part"
    >>> [t[s:e] for s, e in split_sentences(t)]
    ['See Fig. 2 for details.', 'It shows 3.5 points!', 'next part']
    """
    cuts: set[int] = set()
    for m in _END_RE.finditer(text):
        nxt_at = m.end()
        if nxt_at >= len(text):
            continue
        nxt = text[nxt_at]
        if not (nxt.isupper() or nxt.isdigit() or nxt in _OPENERS):
            continue
        if m.group(1).rstrip(_CLOSERS) == "." and _is_abbreviation(text, m.start(), nxt.isdigit()):
            continue
        cuts.add(m.end(1))
    cuts.update(m.start() for m in _BLANK_LINE_RE.finditer(text))

    spans: list[tuple[int, int]] = []
    prev = 0
    for cut in [*sorted(cuts), len(text)]:
        start, end = prev, cut
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        if start < end:
            spans.append((start, end))
        prev = cut
    return spans


_CITE_RE = re.compile(r"\[(\d+)\]")
_MARKS_AFTER_END_RE = re.compile(r"([.!?]+[\"'\u201d\u2019)]*)((?:[^\S\n]*\[\d+\])+)")
_SPACE_BEFORE_STOP_RE = re.compile(r"\s+([.!?,;:])")


def citing_sentences(text: str) -> list[tuple[str, tuple[int, ...]]]:
    """The sentences of an answer (:func:`split_sentences`; a line break ends one too),
    each with the numbers of the ``[n]`` markers standing in it or right after its
    closing stop (in order, each once), the markers removed. A sentence without a marker
    cites ``()``.

    >>> citing_sentences("Paris is big [1]. It is old. [2][3] No cite.\\n- A list item [2]")
    [('Paris is big.', (1,)), ('It is old.', (2, 3)), ('No cite.', ()), ('- A list item', (2,))]
    """
    out = []
    for line in text.splitlines():
        line = _MARKS_AFTER_END_RE.sub(lambda m: m.group(2) + m.group(1), line)
        for start, end in split_sentences(line):
            part = line[start:end]
            cites = tuple(dict.fromkeys(int(c) for c in _CITE_RE.findall(part)))
            words = _SPACE_BEFORE_STOP_RE.sub(r"\1", " ".join(_CITE_RE.sub(" ", part).split()))
            if words:
                out.append((words, cites))
    return out


def contains_normalised(a: str, b: str, min_len: int = 20) -> bool:
    """Whether, after :func:`normalise`, the shorter of ``a`` and ``b`` lies wholly in
    the longer and has at least ``min_len`` characters (SPEC section 3).

    >>> contains_normalised("Hybrid  search fuses BM25", "We see that hybrid search "
    ...                     "fuses BM25 and dense scores.")
    True
    >>> contains_normalised("BM25", "BM25 is sparse.")  # shorter than 20 characters
    False
    """
    return normalised_contains(normalise(a), normalise(b), min_len)


def normalised_contains(na: str, nb: str, min_len: int = 20) -> bool:
    """:func:`contains_normalised` of two texts already :func:`normalise`-d (one
    corpus normalised once, compared with many passages)."""
    shorter, longer = (na, nb) if len(na) <= len(nb) else (nb, na)
    return len(shorter) >= min_len and shorter in longer


def truncate_words(s: str, max_chars: int) -> str:
    """``s`` cut to at most ``max_chars`` characters at the last word boundary.

    A first word longer than ``max_chars`` is cut inside the word. Trailing white space
    is removed.

    >>> truncate_words("dense retrieval uses embeddings", 20)
    'dense retrieval uses'
    """
    if max_chars < 0:
        raise ValueError(f"max_chars must be >= 0, got {max_chars}")
    if len(s) <= max_chars:
        return s.rstrip()
    if s[max_chars].isspace():
        return s[:max_chars].rstrip()
    head = s[:max_chars]
    cut = max((i for i, c in enumerate(head) if c.isspace()), default=-1)
    return (head[:cut] if cut > 0 else head).rstrip()


_BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_UNSEEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f" + _BIDI + "]")


def _shown(m: re.Match[str]) -> str:
    c = ord(m.group(0))
    if c < 0x20:
        return chr(0x2400 + c)  # the control picture: ESC is shown as U+241B
    if c == 0x7F:
        return "\u2421"
    return f"<U+{c:04X}>"


def visible(s: str) -> str:
    r"""``s`` with every control character a terminal or a Markdown viewer would act on
    made visible: C0 controls (ESC, BEL, CR, backspace...) as their Unicode control
    pictures, DEL as ␡, C1 controls and bidirectional overrides as ``<U+XXXX>``. Tabs and
    new lines are kept. Text from outside (answers, documents, tool results, files)
    goes through it before it is printed or written to Markdown, so an answer cannot
    move the cursor, clear a line, colour the terminal or hide a link (OSC 8).

    >>> visible("ok\x1b[2K\x1b]8;;https://x.invalid\x07link\x1b]8;;\x07\tend\n")
    'ok␛[2K␛]8;;https://x.invalid␇link␛]8;;␇\tend\n'
    >>> visible("abc\u202edef\x9b")
    'abc<U+202E>def<U+009B>'
    """
    return _UNSEEN.sub(_shown, s)


_MARKDOWN = re.compile(r"([\\`*_\[\]|#!])")


def markdown_text(s: str) -> str:
    r"""``s`` shown as itself in Markdown: :func:`visible`, then HTML's ``&``, ``<`` and
    ``>`` as entities and Markdown's marks (backslash, backtick, ``* _ [ ] | # !``)
    escaped with a backslash, so a question cannot open a link, an image, a table cell
    or a tag.

    >>> markdown_text('<img src=x> ![a](http://x.invalid) *b* | c')
    '&lt;img src=x&gt; \\!\\[a\\](http://x.invalid) \\*b\\* \\| c'
    """
    shown = visible(s).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MARKDOWN.sub(r"\\\1", shown)
