"""Every example in ragmark's docstrings runs and gives what it says (a wrong example
there is a wrong number a reader copies)."""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import pkgutil

import pytest

import ragmark


def _has_examples(name: str) -> bool:
    """Whether the module's source holds an example (read, not imported: importing a
    command's module outside the lazy command table changes what the table serves)."""
    spec = importlib.util.find_spec(name)
    origin = spec.origin if spec is not None else None
    return bool(origin and origin.endswith(".py")
                and ">>> " in open(origin, encoding="utf-8").read())


MODULES = sorted(m.name for m in pkgutil.walk_packages(ragmark.__path__, "ragmark.")
                 if not m.name.endswith("__main__") and _has_examples(m.name))


def test_the_package_has_examples_to_check() -> None:
    assert "ragmark.text" in MODULES and "ragmark.judges.reference" in MODULES
    assert len(MODULES) >= 20 and not any(m.startswith("ragmark.cli.") for m in MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), report=False,
                             optionflags=doctest.ELLIPSIS)
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} failed"
