"""A Python callable as the pipeline: ``module:function`` called with each question.

The function returns ``{"answer": str, "contexts": [...]}`` or ``(answer, contexts)``;
a context is a string or ``{"text", "id"?, "doc_id"?, "score"?}``. A plain function runs
in worker threads (``concurrency`` at a time); an ``async def`` runs on the event loop.
A call that passes ``timeout`` is recorded as timed out; Python cannot stop a thread, so
a plain function keeps running in the background until it returns. The turns of a
conversation are asked in order, each with ``history=`` the earlier turns, when the
function takes that argument.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import importlib
import inspect
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ragmark.data.files import Where
from ragmark.data.trajectories import searched, trajectory_of
from ragmark.errors import ConfigError, DataError
from ragmark.pipelines.base import (
    Output,
    ShapeError,
    Turn,
    parse_confidence,
    parse_result,
)
from ragmark.pipelines.config import PythonPipelineConfig


def load_target(cfg: PythonPipelineConfig, source: str = "[pipeline]", key: str = "target"
                ) -> Callable[..., Any]:
    """Import the ``module:function`` of ``key`` (``target``, or ``documents``: the
    function that takes extra documents) after putting ``python_path`` folders on
    sys.path."""
    for folder in reversed(cfg.python_path):
        if folder not in sys.path:
            sys.path.insert(0, folder)
    spec = str(getattr(cfg, key))
    module_name, _, attr = spec.partition(":")
    where = f"{source}, key 'pipeline.{key}'"
    try:
        obj: Any = importlib.import_module(module_name)
    except ModuleNotFoundError as e:
        hint = ("; put its folder in 'python_path' (relative to the config file) or on "
                "PYTHONPATH") if e.name == module_name.split(".")[0] else ""
        raise ConfigError(f"{where}: cannot import {module_name!r}: {e}{hint}") from None
    except Exception as e:  # the user's module failed while importing
        raise ConfigError(f"{where}: importing {module_name!r} failed: "
                          f"{type(e).__name__}: {e}") from None
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise ConfigError(f"{where}: {module_name!r} has no attribute {attr!r}")
        obj = getattr(obj, part)
    if cfg.kind != "python" and key == "target":  # LangChain, LlamaIndex: through their API
        from ragmark.pipelines.adapters import adapt

        return adapt(cfg.kind, obj, cfg.target)
    if not callable(obj):
        raise ConfigError(f"{where}: {spec!r} is not callable")
    return obj  # type: ignore[no-any-return]


def _local_files(module: Any) -> list[Path]:
    """The files of every imported module that lives where ``module``'s top-level
    package was imported from (the user's own code), outside the Python installation
    and its site-packages, ragmark's own left out."""
    path = getattr(module, "__file__", None)
    if not path:
        return []
    base = Path(path).resolve().parent  # up to where "a.b.c" was found
    for _ in range(module.__name__.count(".") + (Path(path).name == "__init__.py")):
        base = base.parent
    installed = {Path(p).resolve() for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    out = set()
    for name, m in list(sys.modules.items()):
        f = getattr(m, "__file__", None)
        if not f or name.partition(".")[0] == "ragmark":
            continue
        file = Path(f).resolve()
        if (file.is_relative_to(base) and file.is_file()
                and not any(file.is_relative_to(p) for p in installed)
                and not {"site-packages", "dist-packages"} & set(file.parts)):
            out.add(file)
    return sorted(out)


def target_digest(cfg: PythonPipelineConfig) -> str | None:
    """The sha256 (16 hex digits) of the code the module ``target`` names runs, once it
    is imported (:func:`load_target`), or None (not imported, or no file): what a
    resumed result that depends on the user's code is keyed by beside the config. The
    code is the module's file and every module it had imported by then from the same
    place (its helpers), each by its path there and its bytes; installed packages are
    keyed by the config's versions, not here."""
    module = sys.modules.get(cfg.target.partition(":")[0])
    files = _local_files(module)
    if not files:
        return None
    base = os.path.commonpath([str(f.parent) for f in files])
    h = hashlib.sha256()
    for f in files:
        h.update(os.path.relpath(f, base).encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def _is_async(fn: Callable[..., Any]) -> bool:
    # an instance whose __call__ is an ``async def`` counts too
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(type(fn).__call__)


class PythonPipeline:
    """Asks a Python callable; use as ``async with``: it owns the worker threads."""

    def __init__(self, cfg: PythonPipelineConfig, fn: Callable[..., Any] | None = None) -> None:
        self.cfg = cfg
        self.fn = fn if fn is not None else load_target(cfg)
        self.name = cfg.target
        self._pool: ThreadPoolExecutor | None = None

    async def __aenter__(self) -> PythonPipeline:
        if not _is_async(self.fn):
            self._pool = ThreadPoolExecutor(self.cfg.concurrency,
                                            thread_name_prefix="ragmark-pipeline")
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None

    @functools.cached_property
    def takes_history(self) -> bool:
        """Whether the callable accepts a ``history`` argument (or any keyword)."""
        return self.takes("history")

    def takes(self, name: str) -> bool:
        """Whether the callable accepts the keyword ``name`` (or any keyword)."""
        try:
            params = inspect.signature(self.fn).parameters.values()
        except (TypeError, ValueError):
            return False
        return any(p.name == name or p.kind is p.VAR_KEYWORD for p in params)

    async def ask(self, question: str, history: Sequence[Turn] | None = None,
                  conversation: str | None = None) -> Output:
        """One question; a failure is an :class:`Output` with its error, never raised. A
        turn of a conversation passes the earlier turns as ``history=[{"question",
        "answer"}, ...]`` and the conversation's id as ``conversation=`` to a callable
        that takes them (a LangGraph graph with its own memory keeps a thread for it)."""
        kw: dict[str, Any] = {}
        if history is not None and self.takes("history"):
            kw["history"] = [dict(t) for t in history]
        if conversation is not None and self.takes("conversation"):
            kw["conversation"] = conversation
        fn: Callable[..., Any] = functools.partial(self.fn, **kw) if kw else self.fn
        try:
            if self._pool is None:
                call = fn(question)
            else:
                call = asyncio.get_running_loop().run_in_executor(self._pool, fn, question)
            async with asyncio.timeout(self.cfg.timeout):
                value = await call
        except TimeoutError:
            return Output.failed(f"timed out: {self.name} gave no answer within "
                                 f"{self.cfg.timeout:g} s")
        except Exception as e:
            return Output.failed(f"{self.name} raised {type(e).__name__}", message=str(e)[:500])
        try:
            answer, contexts, hops = parse_result(value)
            facts = parse_confidence(value) if isinstance(value, Mapping) else {}
            steps = trajectory_of(value, Where(self.name)) if isinstance(value, Mapping) \
                else None
        except (ShapeError, DataError) as e:
            return Output.failed(f"{self.name} returned a bad value: {e}", shape=True,
                                 response=repr(value)[:500])
        return searched(Output(answer, contexts, hops=hops, facts=facts, trajectory=steps),
                        self.cfg.search_tools)


def resolve_python_path(paths: list[Any], base: Path) -> list[Any]:
    """``python_path`` entries made absolute against the config file's folder."""
    return [str((base / p).resolve()) if isinstance(p, str) else p for p in paths]
