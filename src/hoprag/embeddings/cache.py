"""CachedEmbedding: document embeddings kept on disk (SQLite), keyed by (model name, SHA-256 of
the text), so loading the same data twice embeds nothing the second time."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio.to_thread
import numpy as np

from hoprag.embeddings.base import aembed_documents, aembed_query, embed_documents, embed_query

_SCHEMA = """
CREATE TABLE IF NOT EXISTS embeddings (
    model TEXT NOT NULL,
    text_hash BLOB NOT NULL,
    dim INTEGER NOT NULL,
    dtype TEXT NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (model, text_hash)
) WITHOUT ROWID
"""
_CHUNK = 500  # ids per IN (...) lookup, under every SQLite's variable limit
_DTYPES = {"float32": np.float32, "float64": np.float64}
# keys of a batch, the vectors found for them, the distinct texts still to embed
_Plan = tuple[list[bytes], dict[bytes, list[float]], list[str]]


def default_cache_dir() -> Path:
    """`$HOPRAG_CACHE_DIR`, else `$XDG_CACHE_HOME/hoprag/embeddings`, else
    `~/.cache/hoprag/embeddings`."""
    if os.environ.get("HOPRAG_CACHE_DIR"):
        return Path(os.environ["HOPRAG_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "hoprag" / "embeddings"


def text_key(text: str) -> bytes:
    """The cache key of a text: the SHA-256 digest of its UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8")).digest()


def _model_name(inner: Any, model: str | None) -> str:
    if model:
        return model
    name = getattr(inner, "model_name", None) or getattr(inner, "model", None)
    if isinstance(name, str) and name:
        return name
    text = repr(inner)
    if " at 0x" in text:  # default object repr: not stable between runs
        raise ValueError(
            f"CachedEmbedding cannot name the model of {text}; pass model='...' so that "
            f"cached vectors of different models never mix"
        )
    return text


class CachedEmbedding:
    """Wraps an embedding model (a LangChain `Embeddings` or a callable `str -> vector`) and
    keeps the vectors of embedded documents in a SQLite file.

    `embed_documents` / `aembed_documents` look every text up by (model name, SHA-256 of the
    text), embed only the misses (each distinct text once per call, in one batch) and store
    them; vectors are stored as `dtype` (float32 by default) and returned as read back, so a
    hit and a miss give the same floats. Queries are passed to the inner model uncached.
    `path` is the SQLite file, or a directory to hold `embeddings.sqlite` (default
    `default_cache_dir()`). `model` names the model in the key; by default the inner model's
    `model_name`/`model` attribute or its repr. Safe to share between threads and tasks of one
    process (one connection behind a lock, the inner model called outside it); other processes
    may use the same file (WAL journal, busy timeout). `hits` and `misses` count texts."""

    def __init__(
        self,
        inner: Any,
        path: str | Path | None = None,
        *,
        model: str | None = None,
        dtype: str = "float32",
    ) -> None:
        if dtype not in _DTYPES:
            raise ValueError(f"dtype must be one of {sorted(_DTYPES)}, got {dtype!r}")
        self.inner = inner
        self.model_name = _model_name(inner, model)
        self.dtype = dtype
        target = Path(path) if path is not None else default_cache_dir()
        if target.is_dir() or (path is None) or not target.suffix:
            target = target / "embeddings.sqlite"
        target.parent.mkdir(parents=True, exist_ok=True)
        self.path = target
        self.hits = 0
        self.misses = 0
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(str(target), check_same_thread=False, timeout=30.0)
        with self._lock:
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.execute(_SCHEMA)
            self._conn.commit()
        dim = getattr(inner, "dim", None)
        if isinstance(dim, int):
            self.dim = dim

    def __repr__(self) -> str:
        return f"CachedEmbedding({self.inner!r}, path={str(self.path)!r})"

    # -- storage -------------------------------------------------------------------------

    def _lookup(self, keys: list[bytes]) -> dict[bytes, list[float]]:
        found: dict[bytes, list[float]] = {}
        with self._lock:
            for start in range(0, len(keys), _CHUNK):
                chunk = keys[start : start + _CHUNK]
                marks = ",".join("?" * len(chunk))
                rows = self._conn.execute(
                    f"SELECT text_hash, dim, dtype, vector FROM embeddings "
                    f"WHERE model = ? AND text_hash IN ({marks})",
                    [self.model_name, *chunk],
                )
                for key, dim, dtype, blob in rows:
                    vec = np.frombuffer(blob, dtype=_DTYPES.get(dtype, np.float32))
                    if len(vec) == dim:
                        found[bytes(key)] = vec.astype(np.float64).tolist()
        return found

    def _store(self, items: Sequence[tuple[bytes, Sequence[float]]]) -> dict[bytes, list[float]]:
        np_dtype = _DTYPES[self.dtype]
        rows, out = [], {}
        for key, vec in items:
            arr = np.asarray(vec, dtype=np_dtype)
            rows.append((self.model_name, key, len(arr), self.dtype, arr.tobytes()))
            out[key] = arr.astype(np.float64).tolist()
        with self._lock:
            self._conn.executemany(
                "INSERT OR REPLACE INTO embeddings (model, text_hash, dim, dtype, vector) "
                "VALUES (?, ?, ?, ?, ?)",
                rows,
            )
            self._conn.commit()
        return out

    def _plan(self, texts: Sequence[str]) -> _Plan:
        if isinstance(texts, str):
            raise TypeError("embed_documents takes a list of texts, not one string")
        keys = [text_key(t) for t in texts]
        found = self._lookup(list(dict.fromkeys(keys)))
        missing: dict[bytes, str] = {}
        for key, text in zip(keys, texts, strict=True):
            if key not in found:
                missing.setdefault(key, text)
        hits = sum(1 for k in keys if k in found)
        with self._lock:
            self.hits += hits
            self.misses += len(keys) - hits
        return keys, found, list(missing.values())

    # -- the Embeddings shape ------------------------------------------------------------

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """The vectors of `texts`, in order: cached ones read back, the rest embedded by the
        inner model in one batch and stored."""
        keys, found, todo = self._plan(texts)
        if todo:
            vecs = embed_documents(self.inner, todo)
            found.update(self._store([(text_key(t), v) for t, v in zip(todo, vecs, strict=True)]))
        return [found[k] for k in keys]

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        """`embed_documents` without blocking the event loop: the cache is read and written in
        worker threads, misses go to the inner model's async method or a worker thread."""
        keys, found, todo = await anyio.to_thread.run_sync(self._plan, list(texts))
        if todo:
            vecs = await aembed_documents(self.inner, todo)
            items = [(text_key(t), v) for t, v in zip(todo, vecs, strict=True)]
            found.update(await anyio.to_thread.run_sync(self._store, items))
        return [found[k] for k in keys]

    def embed_query(self, text: str) -> list[float]:
        """The inner model's query embedding (not cached)."""
        return embed_query(self.inner, text)

    async def aembed_query(self, text: str) -> list[float]:
        """The inner model's query embedding, without blocking the event loop (not cached)."""
        return await aembed_query(self.inner, text)

    def __call__(self, text: str) -> list[float]:
        """The cached document embedding of one text."""
        return self.embed_documents([text])[0]

    # -- housekeeping --------------------------------------------------------------------

    def count(self) -> int:
        """How many vectors the file holds for this model."""
        with self._lock:
            (n,) = self._conn.execute(
                "SELECT count(*) FROM embeddings WHERE model = ?", (self.model_name,)
            ).fetchone()
        return int(n)

    def close(self) -> None:
        """Close the SQLite connection."""
        with self._lock:
            self._conn.close()

    def __enter__(self) -> CachedEmbedding:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
