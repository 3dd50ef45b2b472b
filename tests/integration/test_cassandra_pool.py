"""CassandraStore's candidate pool (`candidate_pool=N`, `stores/cassandra/pool.py`) on the node:
a pool that holds every document answers every edge with what the filtered searches return; a
partial one answers only edges with `adjacent_k` holders among its documents, each with the
best of them; it respects the run's filter and a store view's access filter; and a run that
cannot use it (no metadata edges, a filter checked after the read) reads none. The figures it
leaves in `stats` (its rows, the edges it answered, the queries the store sent) are checked
against the hops'."""

from __future__ import annotations

from typing import Any

import pytest

import hoprag
from hoprag import Eager, Mmr, Scored
from hoprag.embeddings import HashEmbedding
from hoprag.stores.cassandra.store import CassandraStore
from shared_data import graph_documents
from traversal_checks import note_total, result_key

DIM = 16
N_DOCS = 300
EDGES = [("keywords", "keywords"), ("cites", "$id"), ("$id", "cites")]
STRATEGIES = {
    "eager d2": Eager(select_k=60, start_k=3, adjacent_k=3, max_depth=2),
    "mmr": Mmr(select_k=10, start_k=3, adjacent_k=5, max_depth=2),
    "scored": Scored(scorer=lambda n: n.similarity_score, select_k=10, adjacent_k=4, max_depth=2),
}
QUERIES = ("text 3", "text 17", "text 150")


@pytest.fixture(scope="module")
def stores(cassandra_session: Any) -> dict[int, CassandraStore]:
    """The same table through stores without a pool, with a partial pool (40 of 300
    documents) and with one that holds every document."""
    from keyspaces import new_keyspace

    keyspace = new_keyspace(cassandra_session)
    emb = HashEmbedding(DIM)
    base = CassandraStore(emb, keyspace=keyspace, table="g", session=cassandra_session)
    base.add(graph_documents(N_DOCS, DIM, seed=21, n_keywords=25))
    out = {0: base}
    for size in (40, 1000):
        out[size] = CassandraStore(
            emb, keyspace=keyspace, table="g", session=cassandra_session, candidate_pool=size
        )
    return out


@pytest.mark.parametrize("name", sorted(STRATEGIES))
async def test_a_pool_holding_every_document_answers_every_edge_as_the_searches_do(
    stores: dict[int, CassandraStore], name: str
) -> None:
    kw: dict[str, Any] = {"edges": EDGES, "strategy": STRATEGIES[name], "speculation": "off"}
    for q in QUERIES:
        plain = await hoprag.atraverse(q, store=stores[0], **kw)
        pooled = await hoprag.atraverse(q, store=stores[1000], **kw)
        assert result_key(pooled) == result_key(plain), (name, q)
        assert [n.similarity_score for n in pooled] == pytest.approx(
            [n.similarity_score for n in plain], abs=1e-6
        )
        stats = pooled.stats
        assert note_total(plain.stats, "pool_reads") == 0
        assert note_total(stats, "pool_reads") == 1 and note_total(stats, "pool_rows") == N_DOCS
        asked = sum(h.queries.get("adjacent", 0) for h in stats.hops)
        assert asked > 0 and note_total(stats, "pooled_edges") == asked  # no edge searched
        # The store sent the pool's read and one read by id per hop instead of the searches.
        gets = note_total(stats, "pooled_gets")
        assert 1 <= gets <= len(stats.hops)
        assert stats.store_queries == stats.total_queries - asked + 1 + gets
        by_id = note_total(stats, "pooled_get_rows") - note_total(stats, "pooled_rows")
        assert stats.rows_read == stats.total_rows + N_DOCS + by_id


async def test_a_partial_pool_answers_edges_with_enough_holders_and_searches_the_others(
    stores: dict[int, CassandraStore],
) -> None:
    strategy = Eager(select_k=200, start_k=3, adjacent_k=3, max_depth=2)
    docs = {d.id: d for d in graph_documents(N_DOCS, DIM, seed=21, n_keywords=25)}
    pooled_total = searched_total = 0
    for q in QUERIES:
        res = await hoprag.atraverse(
            q, store=stores[40], edges=EDGES, strategy=strategy, speculation="off"
        )
        stats = res.stats
        assert note_total(stats, "pool_rows") == 40  # the pool did not hold every document
        asked = sum(h.queries.get("adjacent", 0) for h in stats.hops)
        pooled = note_total(stats, "pooled_edges")
        pooled_total += pooled
        searched_total += asked - pooled
        for node in res:  # whatever answered, a node reached by a keyword edge holds it
            for edge in node.path.edges[-1:]:
                if isinstance(edge, hoprag.MetadataEdge) and edge.incoming_field == "keywords":
                    assert edge.value in docs[node.id].metadata["keywords"]
    # 25 keywords over 300 documents: the common ones have 3 holders among the 40 nearest,
    # the rarer ones do not, so both paths ran.
    assert pooled_total > 0 and searched_total > 0


async def test_pooled_edges_return_the_best_holders_among_the_pools_documents(
    stores: dict[int, CassandraStore],
) -> None:
    store = stores[40]
    vector = HashEmbedding(DIM)("text 17")
    query = await store.aprepare(vector)
    top = await query.astart(k=3, adjacent_k=3)
    assert len(top) == 3
    pool_ids = await (await store.aprepare(vector)).asearch(k=40)
    ranked = [h.id for h in pool_ids]
    docs = {d.id: d for d in graph_documents(N_DOCS, DIM, seed=21, n_keywords=25)}
    counts: dict[str, int] = {}
    for i in ranked:
        for k in docs[i].metadata["keywords"]:
            counts[k] = counts.get(k, 0) + 1
    common = max(counts, key=lambda k: counts[k])
    assert counts[common] >= 3
    (hits,) = await query.aadjacent_many([hoprag.MetadataEdge("keywords", common)], k=3)
    notes = query.take_notes()
    assert notes["pooled_edges"] == 1 and notes["pool_rows"] == 40
    assert [h.id for h in hits] == [i for i in ranked if common in docs[i].metadata["keywords"]][:3]
    assert query.take_notes() == {}  # taken once


async def test_a_pool_keeps_to_the_runs_filter_and_to_a_store_views_access(
    stores: dict[int, CassandraStore],
) -> None:
    strategy = Eager(select_k=60, start_k=3, adjacent_k=3, max_depth=2)
    kw: dict[str, Any] = {"edges": EDGES, "strategy": strategy, "speculation": "off"}
    for q in QUERIES:
        plain = await hoprag.atraverse(q, store=stores[0], filter={"type": "a"}, **kw)
        pooled = await hoprag.atraverse(q, store=stores[1000], filter={"type": "a"}, **kw)
        assert result_key(pooled) == result_key(plain)
        assert all(n.metadata["type"] == "a" for n in pooled)
        assert note_total(pooled.stats, "pooled_edges") > 0
        view = stores[1000].restricted({"type": {"$in": ["b", "c"]}})
        viewed = await hoprag.atraverse(q, store=view, **kw)
        plain_view = await hoprag.atraverse(
            q, store=stores[0].restricted({"type": {"$in": ["b", "c"]}}), **kw
        )
        assert result_key(viewed) == result_key(plain_view)
        assert {n.metadata["type"] for n in viewed} <= {"b", "c"}
        assert note_total(viewed.stats, "pool_reads") == 2  # one per branch of the access filter


async def test_no_pool_is_read_when_it_cannot_answer_an_edge(
    stores: dict[int, CassandraStore],
) -> None:
    strategy = Eager(select_k=20, start_k=3, adjacent_k=3, max_depth=2)
    ids_only = await hoprag.atraverse(
        "text 3", store=stores[1000], edges=[("cites", "$id")], strategy=strategy
    )
    assert note_total(ids_only.stats, "pool_reads") == 0  # id edges are read by id anyway
    after_read = await hoprag.atraverse(
        "text 3", store=stores[1000], edges=EDGES, strategy=strategy, filter={"type": {"$ne": "a"}}
    )
    assert note_total(after_read.stats, "pool_reads") == 0  # `$ne` is checked on metadata
    assert all(n.metadata["type"] != "a" for n in after_read)
