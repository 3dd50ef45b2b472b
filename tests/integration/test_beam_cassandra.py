"""Beam on CassandraStore: the same ids, depths, paths and path scores as on MemoryStore for
the same data, with signals, a path preference and pruning, and the same per-hop bound."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import hoprag
from hoprag import Beam, Document, IdEdge, Importance, Prune, Recency, StartBoost
from hoprag.embeddings import HashEmbedding
from hoprag.stores import MemoryStore
from hoprag.stores.cassandra.store import CassandraStore
from shared_data import graph_documents

DIM = 16
EDGES = [("keywords", "keywords"), ("cites", "$id"), ("$id", "cites")]
NOW = "2025-01-01"


def beam_documents() -> list[Document]:
    """The shared random graph plus a market cap and an event date on most documents."""
    rng = np.random.default_rng(11)
    docs = []
    for d in graph_documents(250, DIM, seed=9):
        meta = dict(d.metadata)
        if rng.random() < 0.8:
            meta["cap"] = float(10 ** rng.uniform(3, 12))
        if rng.random() < 0.8:
            meta["date"] = f"20{rng.integers(10, 25)}-0{rng.integers(1, 10)}-1{rng.integers(0, 9)}"
        docs.append(Document(d.id, d.content, meta, d.embedding))
    return docs


STRATEGIES = {
    "plain": Beam(beam_width=4, adjacent_k=5, select_k=15, max_depth=3),
    "signals": Beam(
        beam_width=3,
        adjacent_k=6,
        select_k=12,
        signals=[StartBoost(), Importance("cap"), Recency("date", 365, now=NOW)],
        path_preference=["a", "b", "c"],
    ),
    "pruned": Beam(
        beam_width=3,
        adjacent_k=4,
        select_k=12,
        prune=Prune(
            node=lambda n: n.metadata.get("type") == "e", edge=lambda e: isinstance(e, IdEdge)
        ),
    ),
}


@pytest.fixture
def stores(cassandra_session: Any, keyspace: str) -> tuple[CassandraStore, MemoryStore]:
    docs = beam_documents()
    cstore = CassandraStore(
        HashEmbedding(DIM), keyspace=keyspace, table="beam", session=cassandra_session
    )
    cstore.add(docs, concurrency=1)  # a deterministic vector graph (see test_cassandra_store)
    mstore = MemoryStore(HashEmbedding(DIM))
    mstore.add(docs)
    return cstore, mstore


async def test_beam_selects_the_same_ids_and_paths_as_memory(
    stores: tuple[CassandraStore, MemoryStore],
) -> None:
    cstore, mstore = stores
    for name, strategy in STRATEGIES.items():
        for query in ("alpha", "beta gamma", "delta"):
            out = []
            for store in (cstore, mstore):
                nodes = await hoprag.atraverse(query, store=store, edges=EDGES, strategy=strategy)
                stats = nodes.stats  # type: ignore[attr-defined]
                out.append(
                    (
                        [(n.id, n.depth, n.path.nodes) for n in nodes],
                        [n.extra_metadata["_path_score"] for n in nodes],
                        [(h.candidates, h.traversed, h.queries) for h in stats.hops],
                    )
                )
            (c_nodes, c_scores, c_hops), (m_nodes, m_scores, m_hops) = out
            assert c_nodes == m_nodes, (name, query)
            assert c_scores == pytest.approx(m_scores, abs=1e-4), (name, query)
            assert c_hops == m_hops, (name, query)
            assert m_nodes and max(d for _, d, _ in m_nodes) >= 1
            bound = strategy.beam_width * strategy.adjacent_k
            assert all(c <= bound for c, _, _ in m_hops[1:])
            if name == "pruned":
                assert all(q["get"] == 0 for _, _, q in c_hops[1:])  # id edges never queried
