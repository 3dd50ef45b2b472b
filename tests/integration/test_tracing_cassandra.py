"""The span tree of retrievals on the real node, read back with OpenTelemetry's in-memory
exporter: a two-hop traversal and a scoped search are each one retrieval span with a span per
hop, and every CQL request is a client span under its hop with the database conventions'
attributes. The store reaches the node through a delay proxy (50 ms each way), so a client
span that covers the node's answer lasts at least the 100 ms round trip; one that ended when
the driver took the request would not."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from delay_proxy import DelayProxy, connect_through
from hoprag import Document, Eager, Scope, asearch, atraverse
from hoprag.embeddings import HashEmbedding
from hoprag.recording import record_statements
from hoprag.stores.cassandra.session import parse_contact_points
from hoprag.stores.cassandra.store import CassandraStore
from tracing_fixtures import Traces, collected

pytestmark = pytest.mark.integration

PROXY_HOST = "127.0.0.13"  # beside the latency test's proxy (.12)
ONE_WAY_S = 0.05
EDGES = [("kw", "kw")]
DOCS = [
    Document("a", "apples", {"kw": ["x"]}),
    Document("b", "bananas", {"kw": ["x", "y"]}),
    Document("c", "cherries", {"kw": ["y", "z"]}),
    Document("d", "dates", {"kw": ["z"]}),
]


@pytest.fixture(scope="module")
def remote(cassandra_contact_points: str, cassandra_session: Any) -> Iterator[CassandraStore]:
    """The four documents in a fresh keyspace, read through the delay proxy."""
    from keyspaces import new_keyspace

    keyspace = new_keyspace(cassandra_session)
    emb = HashEmbedding(16)
    CassandraStore(emb, keyspace=keyspace, table="fruit", session=cassandra_session).add(DOCS)
    host, port = parse_contact_points(cassandra_contact_points)[0]
    with DelayProxy((PROXY_HOST, port), (host, port), ONE_WAY_S):
        session = connect_through(PROXY_HOST, port)
        try:
            yield CassandraStore(emb, keyspace=keyspace, table="fruit", session=session)
        finally:
            session.cluster.shutdown()


def _check_clients(traces: Traces, hops: list[Any], store: CassandraStore, sent: int) -> None:
    """One client span per statement sent, each under a hop, with the conventions'
    attributes, lasting the proxied round trip and ending within its hop."""
    clients = [s for s in traces.spans() if s.kind.name == "CLIENT"]
    assert len(clients) == sent > 0
    by_id = {h.context.span_id: h for h in hops}
    for span in clients:
        a = dict(span.attributes or {})
        assert a["db.system.name"] == "cassandra"
        assert a["db.namespace"] == store.keyspace and a["db.collection.name"] == "fruit"
        assert a["db.operation.name"] == "SELECT" and span.name == "SELECT fruit"
        assert a["db.query.summary"] == "SELECT fruit" and "?" in str(a["db.query.text"])
        assert span.parent is not None and span.parent.span_id in by_id, span.name
        hop = by_id[span.parent.span_id]
        assert span.end_time is not None and span.start_time is not None
        assert span.end_time - span.start_time >= 2 * ONE_WAY_S * 1e9 * 0.95  # the round trip
        assert hop.end_time is not None and span.end_time <= hop.end_time


async def test_a_two_hop_traversal_on_the_node_has_a_client_span_per_cql_request(
    remote: CassandraStore,
) -> None:
    strategy = Eager(select_k=4, start_k=1, max_depth=2, adjacent_k=10)
    with collected() as traces, record_statements() as log:
        result = await atraverse(
            "apples", store=remote, edges=EDGES, strategy=strategy, initial_root_ids=["a"],
            speculation="off",
        )  # fmt: skip
    assert {n.id: n.depth for n in result} == {"a": 0, "b": 1, "c": 2}
    (retrieval,) = traces.named("retrieval")
    attrs = dict(retrieval.attributes or {})
    assert attrs["hoprag.rounds"] == result.stats.rounds
    assert "gen_ai.retrieval.query.text" not in attrs  # content is opt-in
    assert "gen_ai.retrieval.documents" not in attrs
    hops = traces.children(retrieval)
    assert [h.name for h in hops] == [f"hoprag hop {i}" for i in range(len(result.stats.hops))]
    assert len(hops) >= 3
    _check_clients(traces, hops, remote, len(log))


async def test_a_scoped_search_on_the_node_has_a_client_span_per_cql_request(
    remote: CassandraStore,
) -> None:
    scope = Scope(ids=["a"], edges=[("kw", "kw")], max_depth=2)
    with collected() as traces, record_statements() as log:
        result = await asearch("dates", store=remote, k=3, scope=scope)
    assert {n.id for n in result} <= {"a", "b", "c"} and len(result) == 3
    (retrieval,) = traces.named("retrieval")
    hops = traces.children(retrieval)
    assert len(hops) == len(result.stats.hops) >= 2
    _check_clients(traces, hops, remote, len(log))


async def test_on_the_node_the_query_text_and_documents_appear_when_opted_in(
    remote: CassandraStore,
) -> None:
    strategy = Eager(select_k=2, start_k=1, max_depth=1)
    with collected(capture_query_text=True, capture_documents=True) as traces:
        result = await atraverse("apples", store=remote, edges=EDGES, strategy=strategy)
    (retrieval,) = traces.named("retrieval")
    attrs = dict(retrieval.attributes or {})
    assert attrs["gen_ai.retrieval.query.text"] == "apples"
    documents = json.loads(str(attrs["gen_ai.retrieval.documents"]))
    assert [d["id"] for d in documents] == [n.id for n in result] != []
