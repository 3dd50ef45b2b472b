"""What a store holds is not the caller's input: odd stored values never fail a caller's
traversal or search, and a query prepared before the store knew its dimension is checked when
it reads (issue #28, defects 5 and 8)."""

from __future__ import annotations

import pytest

from hoprag import Document, Eager, InvalidInputError, Scope, asearch, atraverse
from hoprag.edges import MetadataEdgeFunction
from hoprag.embeddings.hash import HashEmbedding
from hoprag.stores import MemoryStore

DIM = 16


@pytest.fixture
def store() -> MemoryStore:
    s = MemoryStore(HashEmbedding(DIM))
    s.add(
        [
            Document("a", "alpha", {"links": ["", "b"]}),
            Document("b", "beta", {"links": [""]}),
            Document("c", "gamma", {"links": "b"}),
        ]
    )
    return s


def test_an_empty_stored_id_makes_no_id_edge() -> None:
    edges = MetadataEdgeFunction([("links", "$id")])(Document("a", "", {"links": ["", "b"]}))
    assert {e.describe() for e in edges.outgoing} == {"$id=b"}


async def test_a_traversal_through_documents_with_empty_stored_ids_answers(
    store: MemoryStore,
) -> None:
    found = await atraverse(
        None,
        store=store,
        edges=[("links", "$id")],
        strategy=Eager(select_k=5, start_k=0, max_depth=2),
        initial_root_ids=["a", "c"],
        query_embedding=HashEmbedding(DIM)("alpha"),
    )
    assert {n.id for n in found} == {"a", "b", "c"}


async def test_a_scope_through_documents_with_empty_stored_ids_answers(
    store: MemoryStore,
) -> None:
    scope = Scope(ids=["a"], edges=[("links", "$id")], max_depth=2)
    found = await asearch("beta", store=store, k=5, scope=scope)
    assert {n.id for n in found} == {"a", "b"}


async def test_a_query_prepared_on_an_empty_store_is_checked_against_what_was_added() -> None:
    s = MemoryStore(HashEmbedding(DIM))
    short = await s.aprepare([1.0] * 4)  # no dimension is known yet: accepted
    same = await s.aprepare([1.0] * DIM)
    await s.aadd([Document("a", "alpha", {"k": 1})])
    with pytest.raises(InvalidInputError, match="dimension 4, but the store holds vectors of"):
        await short.asearch(k=3)
    with pytest.raises(InvalidInputError, match="query embedding"):
        await short.aget(["a"])
    assert [h.id for h in await same.asearch(k=3)] == ["a"]


def test_a_stored_id_value_longer_than_an_id_makes_no_id_edge() -> None:
    """A reference of 70,000 characters cannot name a document (ids are at most
    `MAX_ID_BYTES`), so it makes no edge instead of failing every read that reaches it."""
    doc = Document("a", "", {"links": ["x" * 70_000, "b"]})
    edges = MetadataEdgeFunction([("links", "$id")])(doc)
    assert {e.describe() for e in edges.outgoing} == {"$id=b"}
