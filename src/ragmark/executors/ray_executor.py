"""The Ray executor: work items run as Ray tasks on a cluster (``--executor ray``).

``address`` is the cluster's (``auto``, ``HOST:PORT``, ``ray://HOST:PORT``); without one,
Ray starts a local instance for the run. The shared part of a map (an index, a
retriever) is put in Ray's object store once; each item is one task of one CPU. Which
nodes and worker processes ran tasks is recorded for the results file. Ray's usage
statistics are switched off (ragmark sends nothing anywhere) and its logs stay quiet.
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from ragmark.errors import ConfigError, MissingExtraError
from ragmark.libraries import before_import
from ragmark.llm.config import display_url

S = TypeVar("S")
T = TypeVar("T")
R = TypeVar("R")


def _call(fn: Callable[[Any, Any], Any], shared: Any, item: Any) -> tuple[Any, str, str]:
    import ray

    ctx = ray.get_runtime_context()
    return fn(shared, item), ctx.get_node_id(), ctx.get_worker_id()


def display_address(address: str | None) -> str:
    """The address as recorded: never credentials (a ``ray://user:pw@host`` URL)."""
    return "local instance" if address is None else display_url(address)


def _reachable(address: str | None, timeout: float = 5.0) -> None:
    """A ``HOST:PORT`` address must accept a connection (Ray itself would retry for
    minutes)."""
    if address is None or address == "auto" or "://" in address:
        return
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit():
        raise ConfigError(f"--address {address!r}: expected auto, HOST:PORT or "
                          "ray://HOST:PORT")
    try:
        socket.create_connection((host or "127.0.0.1", int(port)), timeout=timeout).close()
    except OSError as e:
        raise ConfigError(
            f"--executor ray: nothing answers at {address} ({e.strerror or e}). Start a "
            "cluster with `ray start --head` and pass the address it prints, or leave "
            "--address out for a local Ray instance") from None


class RayExecutor:
    """Tasks on a Ray cluster; connects when created, so a wrong address fails before
    any work."""

    name = "ray"
    distributed = True

    def __init__(self, address: str | None = None) -> None:
        try:
            import ray
        except ImportError:
            raise MissingExtraError("ray", "ray") from None
        before_import("ray")
        self.address = address
        self._owned = not ray.is_initialized()
        if self._owned:
            _reachable(address)
            try:
                ray.init(address=address, logging_level=logging.ERROR, log_to_driver=False,
                         include_dashboard=False, configure_logging=True)
            except (ConnectionError, RuntimeError, ValueError) as e:
                first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
                raise ConfigError(
                    f"--executor ray: cannot connect to the Ray cluster at "
                    f"{display_address(address)}: {first}. Start one with `ray start "
                    "--head` and pass its address (--address HOST:PORT), or leave "
                    "--address out for a local Ray instance") from None
        self._task = ray.remote(num_cpus=1)(_call)
        self._nodes: set[str] = set()
        self._workers: set[str] = set()

    @property
    def slots(self) -> int:
        import ray

        return max(int(ray.cluster_resources().get("CPU", 1)), 1)

    def map(self, fn: Callable[[S, T], R], shared: S, items: Sequence[T], *,
            on_done: Callable[[int, R], None] | None = None) -> list[R]:
        import ray
        from ray.exceptions import RayTaskError

        if not items:
            return []
        shared_ref = ray.put(shared)
        index = {self._task.remote(fn, shared_ref, item): i for i, item in enumerate(items)}
        results: list[Any] = [None] * len(items)
        pending = list(index)
        try:
            while pending:
                done, pending = ray.wait(pending, num_returns=1)
                for ref in done:
                    try:
                        value, node, worker = ray.get(ref)
                    except RayTaskError as e:  # the task's own exception, as if local
                        cause = getattr(e, "cause", None)
                        if isinstance(cause, BaseException):
                            raise cause from None
                        raise
                    i = index[ref]
                    results[i] = value
                    self._nodes.add(node)
                    self._workers.add(worker)
                    if on_done is not None:
                        on_done(i, value)
        finally:
            for ref in pending:  # a failure or an interrupt: stop what is still queued
                ray.cancel(ref)
        return results

    def info(self) -> dict[str, Any]:
        """The executor, the address, and the nodes and worker processes that ran tasks
        (``cluster_nodes``/``cluster_cpus``: what the cluster had)."""
        import ray

        alive = [n for n in ray.nodes() if n.get("Alive")]
        return {"name": "ray", "address": display_address(self.address),
                "nodes": len(self._nodes), "workers": len(self._workers),
                "cluster_nodes": len(alive),
                "cluster_cpus": int(ray.cluster_resources().get("CPU", 0))}

    def close(self) -> None:
        import ray

        if self._owned and ray.is_initialized():
            ray.shutdown()
