"""What a model library must see in the environment before it is imported: the one
place ragmark sets an environment variable (no telemetry, no downloads it did not ask
for). A variable the user set is left as it is."""

from __future__ import annotations

import os

BEFORE_IMPORT = {
    "huggingface": {"HF_HUB_OFFLINE": "1"},     # models from local folders only
    "ray": {"RAY_USAGE_STATS_ENABLED": "0"},     # no usage statistics sent
}


def before_import(library: str) -> None:
    """Set ``library``'s variables (those of :data:`BEFORE_IMPORT`) unless already set."""
    for name, value in BEFORE_IMPORT[library].items():
        os.environ.setdefault(name, value)
