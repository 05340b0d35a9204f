"""Running the ``ragmark`` command in-process from a test."""

from __future__ import annotations

from typing import Any

import pytest

from ragmark.cli import main


def run_cli(args: list[str], capsys: Any) -> tuple[int, str, str]:
    """Exit code, stdout and stderr of ``ragmark ARGS``."""
    with pytest.raises(SystemExit) as e:
        main(args)
    out = capsys.readouterr()
    return int(e.value.code or 0), out.out, out.err
