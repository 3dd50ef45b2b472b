"""Edge plans on CassandraStore (issue #53, `stores/cassandra/plans.py`): on a table that keeps
holder counts each traversal reads its edges' holders and reads each edge by them: a value no
document holds is not read, a value of few holders (`read_holders` or fewer) is read whole and
scored in the client, a hub (`hub_holders` or more) is answered from a candidate pool read for
the run, the rest searched. The results are the same whatever the plans (every plan
gives the filtered search's answer), and `stats` and `explain()` say what each edge cost."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

import hoprag
from hoprag import Beam, Document, Eager, Mmr
from hoprag.embeddings import HashEmbedding
from hoprag.stores.cassandra.plans import pool_size
from hoprag.stores.cassandra.store import CassandraStore
from traversal_checks import note_total, result_key

pytestmark = pytest.mark.integration

DIM = 16
N_DOCS = 300
HUB = 100
"""`hub_holders` of the planned store: the keyword `hub` (150 holders) is a hub, no other."""
FEW = 8
"""`read_holders` of the planned store: a cited document (7 citers) is read whole, a small
keyword (10 holders) searched."""
EDGES = [("keywords", "keywords"), ("$id", "cites")]
STRATEGIES = {
    "eager d2": Eager(select_k=40, start_k=3, adjacent_k=5, max_depth=2),
    "mmr d2": Mmr(select_k=10, start_k=3, adjacent_k=5, max_depth=2),
    "beam d2": Beam(beam_width=4, select_k=10, start_k=3, adjacent_k=5, max_depth=2),
}
QUERIES = ("topic 3 words", "topic 11 words", "something else 7")


def _documents() -> list[Document]:
    """Every other document holds `hub`; each holds one of 30 small keywords; document i
    cites document i // 7 (most documents are cited by none)."""
    docs = []
    for i in range(N_DOCS):
        keywords = [f"k{i % 30}"] + (["hub"] if i % 2 == 0 else [])
        meta = {"keywords": keywords, "cites": f"d{i // 7}"}
        docs.append(Document(f"d{i}", f"topic {i % 13} words {i}", meta))
    return docs


def _holders(docs: list[Document], field: str, value: Any) -> int:
    held = Counter(v for d in docs for v in set(_values(d.metadata.get(field))))
    return held[value]


def _values(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [] if value is None else [value]


@pytest.fixture(scope="module")
def stores(cassandra_session: Any) -> dict[str, CassandraStore]:
    """One table with holder counts, through stores with no plans, with all four plans (`hub`
    the only hub, the citations read whole), with every held value a hub, and with every
    held value read whole."""
    from keyspaces import new_keyspace

    keyspace = new_keyspace(cassandra_session)
    emb = HashEmbedding(DIM)

    def store(hub: int, few: int = 0) -> CassandraStore:  # few=0: no edge read whole
        return CassandraStore(emb, keyspace=keyspace, table="p", session=cassandra_session,
                              holder_counts=True, hub_holders=hub, read_holders=few)  # fmt: skip

    out = {"searched": store(0), "planned": store(HUB, FEW), "all hubs": store(1),
           "all read": store(0, 10_000)}  # fmt: skip
    out["searched"].add(_documents())
    return out


@pytest.mark.parametrize("name", sorted(STRATEGIES))
async def test_a_traversal_returns_the_same_nodes_whatever_its_edges_plans(
    stores: dict[str, CassandraStore], name: str
) -> None:
    kw: dict[str, Any] = {"edges": EDGES, "strategy": STRATEGIES[name], "speculation": "off"}
    for q in QUERIES:
        searched = await hoprag.atraverse(q, store=stores["searched"], **kw)
        assert all(not h.plans for h in searched.stats.hops)  # hub_holders=0: no plans
        assert note_total(searched.stats, "holder_reads") == 0
        for label in ("planned", "all hubs", "all read"):
            planned = await hoprag.atraverse(q, store=stores[label], **kw)
            assert result_key(planned) == result_key(searched), (name, q, label)
            assert [n.similarity_score for n in planned] == pytest.approx(
                [n.similarity_score for n in searched], abs=1e-6
            )


async def test_each_edges_plan_follows_its_holders_and_explain_shows_it(
    stores: dict[str, CassandraStore],
) -> None:
    docs = _documents()
    k = 5
    res = await hoprag.atraverse(
        "topic 3 words", store=stores["planned"], edges=EDGES,
        strategy=Eager(select_k=60, start_k=3, adjacent_k=k, max_depth=2), speculation="off",
    )  # fmt: skip
    plans = [p for h in res.stats.hops for p in h.plans]
    assert plans, "a planned traversal records its edges' plans"
    assert sum(h.edges for h in res.stats.hops) == len(plans)  # one plan per edge followed
    for p in plans:
        field, _, shown = p.edge.partition("=")
        value = shown.strip("'")
        assert p.holders == _holders(docs, field, value), p
        assert p.plan == _expected_plan(p.holders), p
        assert p.rows == min(k, p.holders), p  # no filter: every edge gives its k best
    assert {p.plan for p in plans} == {"none", "read", "pool", "search"}
    stats = res.stats
    # The pool is read once, at the first hop with a hub, sized from the table's documents.
    assert note_total(stats, "pool_reads") == 1
    assert note_total(stats, "pool_rows") == min(N_DOCS, pool_size(N_DOCS, HUB, k))
    assert note_total(stats, "plan_none") == sum(p.plan == "none" for p in plans)
    assert note_total(stats, "plan_pool") == sum(p.plan == "pool" for p in plans)
    read = [p for p in plans if p.plan == "read"]
    assert note_total(stats, "plan_read") == len(read)
    # An edge read whole reads every holder; the rows beyond its k count as read.
    assert note_total(stats, "read_rows") == sum(p.holders for p in read)
    assert note_total(stats, "read_kept") == sum(p.rows for p in read)
    assert note_total(stats, "read_searched") == 0
    # Values are counted once per run; each hop's counts are one more round of the hop.
    edges = {p.edge for p in plans}
    assert note_total(stats, "holder_reads") == len(edges) + 1  # and the table's documents
    assert note_total(stats, "plan_rounds") == sum(1 for h in stats.hops if h.plans) + 1
    # The store sent no query for an edge no document holds.
    asked = stats.total_queries
    sent = asked - note_total(stats, "plan_none") - note_total(stats, "pooled_edges")
    sent += note_total(stats, "pool_reads") + note_total(stats, "pooled_gets")
    assert stats.store_queries == sent + note_total(stats, "holder_reads")
    text = stats.explain()
    for p in plans:
        assert f"{p.edge}: {p.plan}, {p.holders} holders, {p.rows} rows" in text


def _expected_plan(holders: int | None) -> str:
    if holders == 0:
        return "none"
    return "read" if holders <= FEW else "pool" if holders >= HUB else "search"


async def test_no_pool_is_read_when_no_edge_is_a_hub(
    stores: dict[str, CassandraStore], cassandra_session: Any
) -> None:
    store = CassandraStore(HashEmbedding(DIM), keyspace=stores["planned"].keyspace, table="p",
                           session=cassandra_session, hub_holders=10_000,
                           read_holders=0)  # fmt: skip
    res = await hoprag.atraverse(
        "topic 5 words", store=store, edges=EDGES,
        strategy=Eager(select_k=30, start_k=2, adjacent_k=4, max_depth=2), speculation="off",
    )  # fmt: skip
    plans = [p for h in res.stats.hops for p in h.plans]
    assert plans and {p.plan for p in plans} <= {"none", "search"}
    assert note_total(res.stats, "pool_reads") == 0


async def test_a_filter_checked_after_the_read_searches_the_hubs(
    stores: dict[str, CassandraStore],
) -> None:
    """The pool reads no metadata, so a run whose filter is checked after the read (`$ne`)
    searches every edge it reads, and keeps to the filter."""
    kw: dict[str, Any] = {
        "edges": EDGES, "strategy": Eager(select_k=30, start_k=3, adjacent_k=5, max_depth=2),
        "speculation": "off", "filter": {"cites": {"$ne": "d0"}},
    }  # fmt: skip
    planned = await hoprag.atraverse("topic 3 words", store=stores["planned"], **kw)
    searched = await hoprag.atraverse("topic 3 words", store=stores["searched"], **kw)
    assert result_key(planned) == result_key(searched)
    assert all(n.metadata["cites"] != "d0" for n in planned)
    plans = [p for h in planned.stats.hops for p in h.plans]
    assert any(p.holders is not None and p.holders >= HUB for p in plans)
    assert {p.plan for p in plans} == {"none", "read", "search"}  # few holders are still read
    assert note_total(planned.stats, "pool_reads") == 0


@pytest.mark.parametrize("where", [{"keywords": "hub"}, {"cites": {"$in": ["d1", "d2", "d3"]}}])
async def test_an_edge_read_whole_keeps_to_the_runs_filter(
    stores: dict[str, CassandraStore], where: dict[str, Any]
) -> None:
    """The filter's conditions go into the holders' read: an edge read whole gives the
    filtered search's answer under the filter."""
    kw: dict[str, Any] = {
        "edges": EDGES, "strategy": Eager(select_k=30, start_k=3, adjacent_k=5, max_depth=2),
        "speculation": "off", "filter": where,
    }  # fmt: skip
    for q in QUERIES:
        read = await hoprag.atraverse(q, store=stores["all read"], **kw)
        searched = await hoprag.atraverse(q, store=stores["searched"], **kw)
        assert result_key(read) == result_key(searched), (q, where)
        assert note_total(read.stats, "plan_read") > 0


async def test_an_edge_whose_count_lags_its_holders_is_searched_after_its_read(
    cassandra_session: Any, stores: dict[str, CassandraStore]
) -> None:
    """A count below the value's holders (a write the count has not seen yet) plans a read
    whose LIMIT the holders fill: the edge is then searched, and the traversal finds what
    it finds without plans."""
    from hoprag.stores.cassandra import tokens
    from hoprag.stores.cassandra.holders import HOLDERS_TABLE, _table_key

    keyspace = stores["searched"].keyspace
    emb = HashEmbedding(DIM)
    docs = [Document(f"x{i}", f"lag words {i}", {"keywords": ["x", f"own{i}"]}) for i in range(12)]
    plain = CassandraStore(emb, keyspace=keyspace, table="lag", session=cassandra_session,
                           holder_counts=True, read_holders=0)  # fmt: skip
    await plain.aadd(docs)
    key = _table_key(cassandra_session, keyspace, "lag")
    cassandra_session.execute(
        f"UPDATE {keyspace}.{HOLDERS_TABLE} SET holders = holders - 8 "
        "WHERE table_key = %s AND value_token = %s",
        (key, tokens.token("keywords", "x")),
    )
    lagging = CassandraStore(emb, keyspace=keyspace, table="lag", session=cassandra_session,
                             read_holders=12)  # fmt: skip
    kw: dict[str, Any] = {
        "edges": [("keywords", "keywords")], "speculation": "off",
        "strategy": Eager(select_k=12, start_k=1, adjacent_k=3, max_depth=1),
    }  # fmt: skip
    res = await hoprag.atraverse("lag words 3", store=lagging, **kw)
    assert result_key(res) == result_key(await hoprag.atraverse("lag words 3", store=plain, **kw))
    x = [p for h in res.stats.hops for p in h.plans if p.edge == "keywords='x'"]
    assert [(p.plan, p.holders, p.rows) for p in x] == [("search", 4, 3)]
    assert note_total(res.stats, "read_searched") == 1
    assert await lagging.arecount_holders() == 1  # x's count repaired: read whole again
    again = await hoprag.atraverse("lag words 3", store=lagging, **kw)
    assert result_key(again) == result_key(res)
    x = [p for h in again.stats.hops for p in h.plans if p.edge == "keywords='x'"]
    assert [(p.plan, p.holders) for p in x] == [("read", 12)]


async def test_a_store_views_run_plans_nothing_so_no_count_tells_of_other_documents(
    stores: dict[str, CassandraStore],
) -> None:
    """The counts cover the whole table: a view's traversal reads none and plans none (its
    explain() would show how many documents outside the view hold a value), and finds what
    the same view over a store without plans finds."""
    kw: dict[str, Any] = {
        "edges": EDGES, "strategy": Eager(select_k=30, start_k=3, adjacent_k=5, max_depth=2),
        "speculation": "off",
    }  # fmt: skip
    access = {"keywords": "hub"}
    planned = await hoprag.atraverse(
        "topic 3 words", store=stores["all hubs"].restricted(access), **kw
    )
    plain = await hoprag.atraverse(
        "topic 3 words", store=stores["searched"].restricted(access), **kw
    )
    assert planned and result_key(planned) == result_key(plain)
    assert all("hub" in n.metadata["keywords"] for n in planned)
    assert all(not h.plans for h in planned.stats.hops)
    for name in ("holder_reads", "plan_rounds", "plan_none", "plan_pool", "pool_reads"):
        assert note_total(planned.stats, name) == 0, name
    assert "holders" not in planned.stats.explain()
