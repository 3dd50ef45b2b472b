"""Many concurrent writers into one vector-indexed table, on the Cassandra version that
`scripts/cassandra` pins (docs/cassandra.md, "Known bad versions"): 5.0.9's in-memory vector
index lost its lock (CASSANDRA-21160), and jvector 1.0.2 refuses more concurrent writers than
the node has cores + 1 (CASSANDRA-21644, not released). Loaded with more writers than that at
once, every document must then read back whole and be found by a search for its own vector."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import anyio
import numpy as np

from hoprag import Document
from hoprag.embeddings import HashEmbedding
from hoprag.stores.cassandra.store import CassandraStore

LAUNCHER = Path(__file__).resolve().parents[2] / "scripts" / "cassandra"
CORES = os.cpu_count() or 1  # what the local JVM node sees: it runs on this machine
WRITERS = max(16, 4 * (CORES + 1))  # concurrent writers, well over the node's cores + 1
PER_WRITER = 40
DIM = 32


def _pinned_version() -> str:
    """The Cassandra version `scripts/cassandra` starts when HOPRAG_CASSANDRA_VERSION is unset."""
    text = LAUNCHER.read_text()
    found = re.search(r'os\.environ\.get\("HOPRAG_CASSANDRA_VERSION", "([0-9.]+)"\)', text)
    assert found is not None, "scripts/cassandra no longer pins CASSANDRA_VERSION as expected"
    return found.group(1)


def _documents() -> list[Document]:
    """WRITERS * PER_WRITER documents with distinct random unit vectors (seeded)."""
    rng = np.random.default_rng(21644)
    vectors = rng.standard_normal((WRITERS * PER_WRITER, DIM))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return [
        Document(f"w{i:05d}", f"written by writer {i % WRITERS}", {"writer": i % WRITERS},
                 embedding=[float(x) for x in v])
        for i, v in enumerate(vectors)
    ]  # fmt: skip


def test_the_node_runs_the_version_scripts_cassandra_pins(cassandra_session: Any) -> None:
    row = cassandra_session.execute("SELECT release_version FROM system.local").one()
    assert row.release_version == _pinned_version() == "5.0.8"


async def test_more_concurrent_writers_than_cores_plus_one_lose_no_document(
    cassandra_session: Any, keyspace: str
) -> None:
    assert WRITERS > CORES + 1
    docs = _documents()
    store = CassandraStore(
        HashEmbedding(DIM), keyspace=keyspace, table="writers", session=cassandra_session
    )
    peak = 0

    def seen(_done: int, _total: int) -> None:
        nonlocal peak
        peak = max(peak, store.in_flight)

    async def writer(n: int) -> None:
        await store.aadd(docs[n::WRITERS], concurrency=2, progress=seen)

    async with anyio.create_task_group() as tg:
        for n in range(WRITERS):
            tg.start_soon(writer, n)
    assert peak > CORES + 1  # the writes really were in flight together

    got = await store.aget([d.id for d in docs], include_embeddings=True)
    assert [(h.id, h.document.content, h.document.metadata) for h in got] == [
        (d.id, d.content, d.metadata) for d in docs
    ]
    stored = np.array([h.document.embedding for h in got], dtype=np.float32)
    assert np.allclose(stored, np.array([d.embedding for d in docs], dtype=np.float32))

    missed: list[str] = []
    limiter = anyio.CapacityLimiter(8)

    async def find(doc: Document) -> None:
        async with limiter:
            assert doc.embedding is not None
            hits = await store.asearch(doc.embedding, k=5, include_embeddings=False)
        if doc.id not in [h.id for h in hits]:
            missed.append(doc.id)

    async with anyio.create_task_group() as tg:
        for doc in docs:
            tg.start_soon(find, doc)
    assert missed == []
