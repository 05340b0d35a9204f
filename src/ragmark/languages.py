"""The language of the data: which Snowball stemmer (PyStemmer) and which stop-word list
(bm25s's) BM25 uses, and how a text in a script written without spaces (Chinese,
Japanese; Korean too) becomes tokens: each run of such characters as its overlapping
character bigrams, as Lucene's CJK analyzer does ("信息检索" -> "信息 息检 检索"), instead
of one token for the whole run."""

from __future__ import annotations

import re

STEMMERS = {
    "ar": "arabic", "hy": "armenian", "eu": "basque", "ca": "catalan", "cs": "czech",
    "da": "danish", "nl": "dutch", "en": "english", "eo": "esperanto", "et": "estonian",
    "fi": "finnish", "fr": "french", "de": "german", "el": "greek", "hi": "hindi",
    "hu": "hungarian", "id": "indonesian", "ga": "irish", "it": "italian",
    "lt": "lithuanian", "ne": "nepali", "no": "norwegian", "fa": "persian", "pl": "polish",
    "pt": "portuguese", "ro": "romanian", "ru": "russian", "sr": "serbian",
    "st": "sesotho", "es": "spanish", "sv": "swedish", "ta": "tamil", "tr": "turkish",
    "yi": "yiddish",
}
"""ISO 639-1 code -> PyStemmer's Snowball algorithm."""
STOPWORDS = frozenset({"en", "de", "nl", "fr", "es", "pt", "it", "ru", "sv", "no", "zh",
                       "tr", "ko", "da"})
"""The languages bm25s has a stop-word list for."""
WITHOUT_SPACES = {"zh": "chinese", "ja": "japanese", "ko": "korean"}
"""Languages tokenised by character bigrams, without a stemmer."""

_NAMES = {name: code for code, name in (*STEMMERS.items(), *WITHOUT_SPACES.items())}
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+")


def language_code(language: str) -> str:
    """``de``, ``DE`` or ``german`` -> ``de``; ValueError naming the known ones."""
    text = language.strip().lower()
    code = text if text in STEMMERS or text in WITHOUT_SPACES else _NAMES.get(text)
    if code is None:
        known = ", ".join(sorted({*STEMMERS, *WITHOUT_SPACES}))
        raise ValueError(f"unknown language {language!r}; known (ISO 639-1, or the "
                         f"language's English name): {known}")
    return code


def analysis_for(language: str) -> tuple[str | None, str | None]:
    """(stemmer, stop-words) for BM25 in ``language`` (None: none for it).

    >>> analysis_for("de"), analysis_for("zh"), analysis_for("finnish")
    (('german', 'de'), (None, 'zh'), ('finnish', None))
    """
    code = language_code(language)
    return STEMMERS.get(code), code if code in STOPWORDS else None


def cjk_bigrams(text: str) -> str:
    """``text`` with every run of CJK characters written as its overlapping bigrams,
    separated by spaces (a single character stays as it is); other text unchanged.

    >>> cjk_bigrams("BM25 用于信息检索")
    'BM25  用于 于信 信息 息检 检索 '
    """
    if _CJK.search(text) is None:
        return text

    def pairs(m: re.Match[str]) -> str:
        run = m.group(0)
        if len(run) == 1:
            return f" {run} "
        return " " + " ".join(run[i:i + 2] for i in range(len(run) - 1)) + " "

    return _CJK.sub(pairs, text)


def language_name(language: str) -> str:
    """``de`` -> ``German`` (a name ragmark does not know stays as given).

    >>> language_name("de"), language_name("zh"), language_name("Plattdeutsch")
    ('German', 'Chinese', 'Plattdeutsch')
    """
    try:
        code = language_code(language)
    except ValueError:
        return language
    return {**STEMMERS, **WITHOUT_SPACES}[code].capitalize()

