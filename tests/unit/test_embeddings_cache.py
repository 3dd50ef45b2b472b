"""CachedEmbedding: an on-disk cache of document embeddings keyed by (model, text hash)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from hoprag import Document
from hoprag.embeddings import CachedEmbedding, HashEmbedding
from hoprag.embeddings.cache import default_cache_dir
from hoprag.stores import MemoryStore


class Counting:
    """A LangChain-shaped embedding that counts the texts it embeds."""

    model_name = "counting-hash-16"

    def __init__(self, gate: threading.Event | None = None) -> None:
        self.inner = HashEmbedding(16)
        self.texts: list[str] = []
        self.gate = gate
        self.entered = threading.Event()
        self.released_by_gate = True
        self._lock = threading.Lock()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.entered.set()
        if self.gate is not None and not self.gate.wait(timeout=60):
            self.released_by_gate = False
        with self._lock:
            self.texts.extend(texts)
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        return self.inner.embed_query(text)


TEXTS = [f"document number {i} about topic {i % 7}" for i in range(200)]


def test_second_load_embeds_nothing(tmp_path: Path) -> None:
    inner = Counting()
    first = CachedEmbedding(inner, tmp_path)
    vecs = first.embed_documents(TEXTS)
    assert len(inner.texts) == 200 and first.misses == 200 and first.hits == 0
    first.close()

    again = CachedEmbedding(inner, tmp_path)  # a new process would open the file the same way
    assert again.embed_documents(TEXTS) == vecs
    assert len(inner.texts) == 200 and again.hits == 200 and again.misses == 0
    assert again.count() == 200
    assert (tmp_path / "embeddings.sqlite").exists()
    again.close()


def test_vectors_match_inner_within_float32(tmp_path: Path) -> None:
    inner = Counting()
    cache = CachedEmbedding(inner, tmp_path / "c.sqlite")
    got = cache.embed_documents(TEXTS[:5])
    want = HashEmbedding(16).embed_documents(TEXTS[:5])
    for g, w in zip(got, want, strict=True):
        assert max(abs(a - b) for a, b in zip(g, w, strict=True)) < 1e-6
    exact = CachedEmbedding(Counting(), tmp_path / "d.sqlite", dtype="float64")
    assert exact.embed_documents(TEXTS[:5]) == want


def test_duplicates_in_a_batch_embedded_once(tmp_path: Path) -> None:
    inner = Counting()
    cache = CachedEmbedding(inner, tmp_path)
    out = cache.embed_documents(["a", "b", "a", "a"])
    assert sorted(inner.texts) == ["a", "b"]
    assert out[0] == out[2] == out[3] != out[1]
    cache.embed_documents(["b", "c"])
    assert sorted(inner.texts) == ["a", "b", "c"]


def test_models_do_not_mix(tmp_path: Path) -> None:
    a = CachedEmbedding(HashEmbedding(8), tmp_path)
    b = CachedEmbedding(HashEmbedding(12), tmp_path)
    assert a.model_name == "HashEmbedding(dim=8)"
    assert len(a.embed_documents(["x"])[0]) == 8
    assert len(b.embed_documents(["x"])[0]) == 12
    named = CachedEmbedding(lambda t: [1.0, float(len(t))], tmp_path, model="len-model")
    assert named.embed_documents(["abc"]) == [[1.0, 3.0]]
    with pytest.raises(ValueError, match="model="):
        CachedEmbedding(lambda t: [1.0], tmp_path)


def test_queries_pass_through(tmp_path: Path) -> None:
    inner = Counting()
    cache = CachedEmbedding(inner, tmp_path)
    assert cache.embed_query("q") == HashEmbedding(16).embed_query("q")
    assert inner.texts == [] and cache.count() == 0


def test_threads_share_one_cache(tmp_path: Path) -> None:
    inner = Counting()
    cache = CachedEmbedding(inner, tmp_path)
    batches = [TEXTS[i : i + 50] for i in range(0, 200, 25)]  # overlapping batches
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(cache.embed_documents, batches * 3))
    want = HashEmbedding(16).embed_documents(TEXTS)
    for batch, got in zip(batches * 3, results, strict=True):
        for text, vec in zip(batch, got, strict=True):
            w = want[TEXTS.index(text)]
            assert max(abs(a - b) for a, b in zip(vec, w, strict=True)) < 1e-6
    assert cache.count() == 200
    assert set(inner.texts) == set(TEXTS)


async def test_async_does_not_block_the_loop(tmp_path: Path) -> None:
    # The model waits until a coroutine on the loop lets it go: that can only happen if the
    # model runs in a worker thread while the loop goes on.
    inner = Counting(gate=threading.Event())
    cache = CachedEmbedding(inner, tmp_path)
    work = asyncio.gather(*(cache.aembed_documents(TEXTS[i::4]) for i in range(4)))
    for _ in range(100_000):
        if inner.entered.is_set():
            break
        await asyncio.sleep(0.001)
    assert inner.entered.is_set() and not work.done()
    assert inner.gate is not None
    inner.gate.set()
    got = await work
    assert inner.released_by_gate
    assert sum(len(g) for g in got) == 200
    assert len(inner.texts) == 200
    again = await cache.aembed_documents(TEXTS)
    assert len(inner.texts) == 200 and len(again) == 200
    assert await cache.aembed_query("q") == HashEmbedding(16).embed_query("q")


async def test_memory_store_second_load_embeds_nothing(tmp_path: Path) -> None:
    docs = [Document(id=f"d{i}", content=t, metadata={"n": i}) for i, t in enumerate(TEXTS)]
    inner = Counting()
    await MemoryStore(embedding=CachedEmbedding(inner, tmp_path)).aadd(docs)
    assert len(inner.texts) == 200
    fresh = [Document(id=d.id, content=d.content, metadata=d.metadata) for d in docs]
    await MemoryStore(embedding=CachedEmbedding(inner, tmp_path)).aadd(fresh)
    assert len(inner.texts) == 200


def test_default_location(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOPRAG_CACHE_DIR", str(tmp_path / "here"))
    assert default_cache_dir() == tmp_path / "here"
    cache = CachedEmbedding(HashEmbedding(8))
    assert cache.path == tmp_path / "here" / "embeddings.sqlite"
    monkeypatch.delenv("HOPRAG_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "hoprag" / "embeddings"


def test_importing_embeddings_does_not_import_torch() -> None:
    code = (
        "import sys, hoprag.embeddings as e\n"
        "e.CachedEmbedding, e.MiniLMEmbedding\n"
        "import hoprag.embeddings.minilm\n"
        "assert 'torch' not in sys.modules, 'torch imported'\n"
        "assert 'sentence_transformers' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
