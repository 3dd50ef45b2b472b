"""CassandraStore in cassio mode over a table written by LangChain's `Cassandra` vector store
(cassio's MetadataVectorCassandraTable), lists shredded by langchain-graph-retriever's
ShreddingTransformer: traversals select the same ids as over hoprag's own table.

The writer is langchain-community's `Cassandra`, the cassio-layout store that
langchain-graph-retriever's CassandraAdapter also wraps. langchain-cassandra 0.1.0's `Cassandra`
is another store with another layout (an `embedding list<float>` column, JSON metadata, no vector
index, a full scan per search), which `from_langchain_table` refuses ("no 'vector' column")."""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_community.vectorstores import Cassandra
from langchain_core.documents import Document as LCDocument
from langchain_graph_retriever.transformers import ShreddingTransformer

import hoprag
from hoprag import Document, MetadataEdge
from hoprag.embeddings import HashEmbedding
from hoprag.stores.cassandra.store import CassandraStore
from shared_data import graph_documents

DIM = 16
EDGES = [("keywords", "keywords"), ("cites", "$id"), ("$id", "cites")]
LIST_FIELDS = {"keywords", "cites"}


def _docs() -> list[Document]:
    # No explicit embeddings: both stores embed the content with the same HashEmbedding.
    return [Document(d.id, d.content, d.metadata) for d in graph_documents(150, DIM, seed=11)]


def _write_with_langchain(session: Any, keyspace: str, table: str, docs: list[Document]) -> None:
    lc = Cassandra(
        embedding=HashEmbedding(DIM), session=session, keyspace=keyspace, table_name=table
    )
    shredded = ShreddingTransformer().transform_documents(
        [LCDocument(id=d.id, page_content=d.content, metadata=d.metadata) for d in docs]
    )
    # One at a time, like `own` below: both vector graphs are then built in the same order
    # (concurrent inserts make the memtable's graph, and so ANN answers, vary; see
    # docs/cassandra.md).
    lc.add_documents(list(shredded), batch_size=1)


@pytest.fixture
async def stores(cassandra_session: Any, keyspace: str) -> tuple[CassandraStore, CassandraStore]:
    docs = _docs()
    _write_with_langchain(cassandra_session, keyspace, "lc_docs", docs)
    cassio_store = CassandraStore.from_langchain_table(
        HashEmbedding(DIM),
        keyspace=keyspace,
        table="lc_docs",
        session=cassandra_session,
        list_fields=LIST_FIELDS,
    )
    own = CassandraStore(
        HashEmbedding(DIM), keyspace=keyspace, table="own", session=cassandra_session
    )
    await own.aadd(docs, concurrency=1)
    await cassio_store.asetup()
    return cassio_store, own


def _similarity(node: Any) -> float:
    return float(node.similarity_score)


@pytest.mark.parametrize("kind", ["eager", "mmr", "scored"])
async def test_traversal_over_a_langchain_table_matches_hoprags_table(
    stores: tuple[CassandraStore, CassandraStore], kind: str
) -> None:
    strategies = {
        "eager": lambda: hoprag.Eager(select_k=10, start_k=2, adjacent_k=6, max_depth=2),
        "mmr": lambda: hoprag.Mmr(select_k=10, start_k=2, adjacent_k=6, max_depth=2),
        "scored": lambda: hoprag.Scored(
            scorer=_similarity, select_k=10, start_k=2, adjacent_k=6, max_depth=2
        ),
    }
    for query, flt in (("alpha", None), ("beta gamma", {"type": "c"})):
        runs = []
        for store in stores:
            nodes = await hoprag.atraverse(
                query, store=store, edges=EDGES, strategy=strategies[kind](), filter=flt
            )
            runs.append([(n.id, n.depth) for n in nodes])
        assert runs[0] == runs[1], (query, flt)
        assert len(runs[0]) > 3


async def test_langchain_rows_decode_like_langchain_restores_them(
    stores: tuple[CassandraStore, CassandraStore],
) -> None:
    cassio_store, _ = stores
    docs = {d.id: d for d in _docs()}
    ids = list(docs)[:40]
    got = await cassio_store.aget(ids)
    assert [h.document.id for h in got] == ids
    for h in got:
        want = docs[h.document.id]
        md = dict(h.document.metadata)
        assert md["type"] == want.metadata["type"]
        assert sorted(md["keywords"]) == sorted(want.metadata["keywords"])
        assert sorted(md.get("cites", [])) == sorted(want.metadata["cites"])
        assert h.document.content == want.content


async def test_edges_and_filters_on_a_langchain_table(
    stores: tuple[CassandraStore, CassandraStore],
) -> None:
    cassio_store, own = stores
    q = HashEmbedding(DIM)("edges")
    for edge, flt in [
        (MetadataEdge("keywords", "k3"), None),
        (MetadataEdge("keywords", "k3"), {"type": "a"}),
        (MetadataEdge("cites", "doc7"), None),
        (MetadataEdge("type", "d"), {"keywords": "k1"}),
    ]:
        a = await cassio_store.aadjacent(edge, q, k=50, filter=flt)
        b = await own.aadjacent(edge, q, k=50, filter=flt)
        assert [h.document.id for h in a] == [h.document.id for h in b], edge
        for x, y in zip(a, b, strict=True):
            assert x.score == pytest.approx(y.score, abs=1e-4)
    got = await cassio_store.aget(["doc1", "doc2", "doc3", "doc4"], filter={"type": "a"})
    want = await own.aget(["doc1", "doc2", "doc3", "doc4"], filter={"type": "a"})
    assert [h.document.id for h in got] == [h.document.id for h in want]


async def test_cassio_mode_writes_rows_langchain_can_read(
    cassandra_session: Any, keyspace: str
) -> None:
    store = CassandraStore.from_langchain_table(
        HashEmbedding(DIM),
        keyspace=keyspace,
        table="written",
        session=cassandra_session,
        list_fields={"tags"},
    )
    await store.aadd(
        [
            Document("a", "apple pie", {"tags": ["x", "y"], "n": 1, "ok": True}),
            Document("b", "banana", {"tags": ["y"], "n": 2.5}),
        ]
    )
    lc = Cassandra(
        embedding=HashEmbedding(DIM),
        session=cassandra_session,
        keyspace=keyspace,
        table_name="written",
    )
    found = lc.similarity_search("apple pie", k=2, filter={'tags→"y"': "§"})
    assert {d.id for d in found} == {"a", "b"}
    a = next(d for d in found if d.id == "a")
    assert a.metadata["n"] == "1.0" and a.metadata["ok"] == "true"
    assert set(json.loads(a.metadata["__shredded_keys"])) == {"tags"}
    hits = await store.asearch(HashEmbedding(DIM)("x"), k=5, filter={"n": 1})
    assert [h.document.id for h in hits] == ["a"]
    assert hits[0].document.metadata["tags"] == ["x", "y"]


async def test_graph_retriever_works_over_a_langchain_table(
    stores: tuple[CassandraStore, CassandraStore],
) -> None:
    from hoprag.integrations.langchain import GraphRetriever

    cassio_store, own = stores
    strategy = hoprag.Eager(select_k=8, start_k=2, adjacent_k=6, max_depth=2)
    retriever = GraphRetriever(store=cassio_store, edges=EDGES, strategy=strategy)
    docs = await retriever.ainvoke("alpha")
    expected = await hoprag.atraverse("alpha", store=own, edges=EDGES, strategy=strategy)
    assert [d.id for d in docs] == [n.id for n in expected]
    for d in docs:
        assert d.metadata["_path"][-1] == d.id
        assert d.metadata["_depth"] == len(d.metadata["_path"]) - 1
        assert isinstance(d.metadata["keywords"], list)  # shredded lists come back as lists
    assert any(d.metadata["_depth"] > 0 for d in docs)


@pytest.mark.parametrize("plan", ["exact", "pushdown"])
async def test_scoped_search_over_a_langchain_table_matches_hoprags_table(
    stores: tuple[CassandraStore, CassandraStore], plan: str
) -> None:
    """Scope expansion's complete reads (`metadata_s[?] = ?`, shredded lists) reach the same
    members with the same paths as over hoprag's table, under both ranking plans."""
    scope = hoprag.Scope(start={"type": "c"}, edges=EDGES, max_depth=2, max_size=1000)
    for k, flt in ((10, None), (1000, None), (1000, {"type": "a"})):
        runs = []
        for store in stores:
            res = await hoprag.asearch(
                "alpha", store=store, k=k, scope=scope, filter=flt, plan=plan
            )
            runs.append([(n.id, n.depth, n.path) for n in res])
        assert runs[0] == runs[1], (k, flt)
        assert len(runs[0]) >= min(k, 10)
