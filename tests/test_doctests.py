"""Every example in ragmark's docstrings runs and gives what it says (a wrong example
there is a wrong number a reader copies)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import ragmark

MODULES = sorted(m.name for m in pkgutil.walk_packages(ragmark.__path__, "ragmark.")
                 if not m.name.endswith("__main__"))


def test_the_package_has_examples_to_check() -> None:
    assert "ragmark.text" in MODULES and "ragmark.judges.reference" in MODULES


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), report=False,
                             optionflags=doctest.ELLIPSIS)
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} failed"
