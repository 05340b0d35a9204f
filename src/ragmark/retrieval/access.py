"""The access filter of ragmark's own retrieval: a document another user may see and
the asking user may not is left out of what is indexed for them (a pre-filter, as a
vector store's metadata filter works). Pure."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ragmark.types import Corpus, Document

ACCESS = "access"
"""The metadata key of a document's access groups (a string or a list of strings)."""


def groups_of(doc: Document) -> tuple[str, ...] | None:
    """The groups that may see ``doc`` (None: everyone).

    >>> groups_of(Document("d", "t", metadata={"access": "hr"}))
    ('hr',)
    >>> groups_of(Document("d", "t")) is None
    True
    """
    got = doc.metadata.get(ACCESS)
    if got is None:
        return None
    return (str(got),) if isinstance(got, str) else tuple(str(g) for g in got)


def visible(corpus: Corpus, access: Sequence[str] | None) -> Corpus:
    """``corpus`` as a user of the groups ``access`` sees it (None: unfiltered, the
    same value): documents without an ``access`` entry, and those naming one of the
    user's groups.

    >>> c = Corpus((Document("a", "x"), Document("b", "y", metadata={"access": ["hr"]})))
    >>> [d.id for d in visible(c, []).documents], [d.id for d in visible(c, ["hr"]).documents]
    (['a'], ['a', 'b'])
    """
    if access is None:
        return corpus
    mine = set(access)
    kept = tuple(d for d in corpus.documents
                 if (g := groups_of(d)) is None or mine.intersection(g))
    if len(kept) == len(corpus.documents):
        return corpus
    return replace(corpus, documents=kept)
