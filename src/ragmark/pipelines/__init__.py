"""External RAG systems that ragmark asks instead of running its own parts: a Python
callable (:mod:`.python`) or an HTTP endpoint (:mod:`.http`), described by a config's
``[pipeline]`` table (:mod:`.config`); what they answer (:mod:`.base`) is scored by the
runner like ragmark's own answers. Importing this package imports no network code."""

from __future__ import annotations

from ragmark.pipelines.base import Context, Output, Produced, ShapeError, Sourced
from ragmark.pipelines.config import HttpPipelineConfig, PipelineConfig, PythonPipelineConfig

__all__ = [
    "Context",
    "HttpPipelineConfig",
    "Output",
    "PipelineConfig",
    "Produced",
    "PythonPipelineConfig",
    "ShapeError",
    "Sourced",
]
