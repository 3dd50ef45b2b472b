"""Speculation on CassandraStore: over real ANN answers, every `speculation=` mode returns what
`"off"` returns (ids, order, depths, paths), with fewer or as many rounds; and the sessions
hoprag opens turn Nagle's algorithm off (otherwise every query of a hop after the first waits
a round trip more over a slow link)."""

from __future__ import annotations

import socket
from typing import Any

import pytest

import hoprag
from hoprag import Eager, Mmr, Scored
from hoprag.embeddings import HashEmbedding
from hoprag.stores.cassandra.session import connect
from hoprag.stores.cassandra.store import CassandraStore
from shared_data import graph_documents

DIM = 16
EDGES = [("keywords", "keywords"), ("cites", "$id"), ("$id", "cites")]
STRATEGIES = {
    "eager d2": Eager(select_k=60, start_k=3, adjacent_k=3, max_depth=2),
    "eager d3": Eager(select_k=80, start_k=2, adjacent_k=4, max_depth=3),
    "mmr": Mmr(select_k=10, start_k=3, adjacent_k=5, max_depth=2),
    "scored": Scored(scorer=lambda n: n.similarity_score, select_k=10, adjacent_k=4, max_depth=2),
}


@pytest.fixture(scope="module")
def graph_store(cassandra_session: Any) -> CassandraStore:
    from keyspaces import new_keyspace

    docs = graph_documents(300, DIM, seed=21, n_keywords=25)
    store = CassandraStore(
        HashEmbedding(DIM), keyspace=new_keyspace(cassandra_session), table="g",
        session=cassandra_session,
    )  # fmt: skip
    store.add(docs)
    return store


def _result(res: list[hoprag.Node]) -> list[tuple[Any, ...]]:
    return [(n.id, n.depth, n.path.nodes, n.path.edges) for n in res]


@pytest.mark.parametrize("name", sorted(STRATEGIES))
async def test_every_speculation_mode_returns_what_off_returns(
    graph_store: CassandraStore, name: str
) -> None:
    strategy = STRATEGIES[name]
    for q in ("text 3", "text 17", "text 150"):
        kw: dict[str, Any] = {"store": graph_store, "edges": EDGES, "strategy": strategy}
        off = await hoprag.atraverse(q, speculation="off", **kw)
        assert off.stats.speculation.issued == 0
        for mode in ("strategy", "wide", "on", 3):
            res = await hoprag.atraverse(q, speculation=mode, **kw)
            assert _result(res) == _result(off), (name, q, mode)
            assert res.stats.rounds <= off.stats.rounds
            spec = res.stats.speculation
            assert spec.issued <= spec.budget and spec.used <= spec.issued


def test_sessions_hoprag_opens_send_each_query_at_once(cassandra_contact_points: str) -> None:
    session = connect(cassandra_contact_points)
    try:
        sockets = [
            conn._socket
            for pool in session._pools.values()
            for conn in ([pool._connection] if getattr(pool, "_connection", None) else [])
        ]
        assert sockets
        for s in sockets:
            assert s.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1
    finally:
        session.cluster.shutdown()
