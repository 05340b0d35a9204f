"""Loaders: corpora and evaluation sets from files, validated; bad input is a DataError
that names the file, the item or line, and the field."""

from __future__ import annotations

from ragmark.data.corpus import load_corpus
from ragmark.data.detect import load_dataset

__all__ = ["load_corpus", "load_dataset"]
