"""A hop's edge queries over a link with network latency: through a proxy that adds 25 ms each
way in front of the real node (as between an application and a node in another zone, or
Astra), a hop with N metadata edges costs about one query's round trip, not N.

On this project's 2-core machines the node's own CPU serialises a burst of queries (see
`test_a_hops_edge_queries_run_concurrently`), so the local node alone cannot show the
overlap; with the round trip dominating, as it does for remote nodes, it shows plainly."""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Iterator
from typing import Any

import pytest

import hoprag
from delay_proxy import DelayProxy, connect_through
from hoprag import Document, MetadataEdge
from hoprag.embeddings import HashEmbedding
from hoprag.stores.cassandra.session import parse_contact_points
from hoprag.stores.cassandra.store import CassandraStore

DIM = 16
ONE_WAY_S = 0.025
PROXY_HOST = "127.0.0.12"  # beside the suite's node (.1 or .7) and the 3-node test (.4-.6)


@pytest.fixture(scope="module")
def remote_session(cassandra_contact_points: str) -> Iterator[Any]:
    """A driver session that reaches the node only through the delay proxy."""
    host, port = parse_contact_points(cassandra_contact_points)[0]
    with DelayProxy((PROXY_HOST, port), (host, port), ONE_WAY_S):
        session = connect_through(PROXY_HOST, port)
        try:
            yield session
        finally:
            session.cluster.shutdown()


@pytest.fixture(scope="module")
def remote_store(cassandra_session: Any, remote_session: Any) -> CassandraStore:
    """40 documents, 16 keywords, loaded directly; read through the proxy."""
    from keyspaces import new_keyspace

    ks = new_keyspace(cassandra_session)
    docs = [
        Document(f"d{i}", f"text {i}", {"keywords": [f"k{i % 16}", f"k{(i * 5) % 16}"]})
        for i in range(40)
    ]
    CassandraStore(HashEmbedding(DIM), keyspace=ks, table="docs", session=cassandra_session).add(
        docs
    )
    return CassandraStore(HashEmbedding(DIM), keyspace=ks, table="docs", session=remote_session)


async def test_the_proxy_adds_its_latency(remote_store: CassandraStore) -> None:
    q = HashEmbedding(DIM)("probe")
    await remote_store.asearch(q, k=3)
    t0 = time.perf_counter()
    await remote_store.asearch(q, k=3)
    assert time.perf_counter() - t0 >= 2 * ONE_WAY_S


@pytest.mark.parametrize("n", [4, 16])
async def test_a_hop_costs_one_round_trip_not_n(remote_store: CassandraStore, n: int) -> None:
    """N edge queries through `aadjacent_many` against one, and against N in sequence."""
    q = HashEmbedding(DIM)("latency probe")
    edges = [MetadataEdge("keywords", f"k{i}") for i in range(n)]
    await remote_store.aadjacent_many(edges, q, k=5, include_embeddings=False)  # warm-up
    singles, batches, sequentials = [], [], []
    for _ in range(5):
        t0 = time.perf_counter()
        await remote_store.aadjacent(edges[0], q, k=5, include_embeddings=False)
        singles.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        got = await remote_store.aadjacent_many(edges, q, k=5, include_embeddings=False)
        batches.append(time.perf_counter() - t0)
        assert len(got) == n and all(got)
    for _ in range(2):
        t0 = time.perf_counter()
        for e in edges:
            await remote_store.aadjacent(e, q, k=5, include_embeddings=False)
        sequentials.append(time.perf_counter() - t0)
    single, batch = statistics.median(singles), statistics.median(batches)
    sequential = statistics.median(sequentials)
    print(
        f"{n} edges over a {2 * ONE_WAY_S * 1e3:.0f} ms round trip: one {single * 1e3:.0f} ms, "
        f"all at once {batch * 1e3:.0f} ms, one after another {sequential * 1e3:.0f} ms"
    )
    assert sequential > 0.8 * n * single  # the link really costs a round trip per query
    assert batch < sequential / 3
    if n == 4:
        assert batch < 1.6 * single  # about one query's time
    else:
        assert batch < 3 * single  # 16 queries: the node's CPU adds its share


async def test_a_traversal_hop_with_many_edges_takes_about_one_round_trip(
    remote_store: CassandraStore,
) -> None:
    """From the stats of a real traversal: the first hop follows several keyword edges at
    once, and its time is close to the start search's (one round trip each)."""
    strategy = hoprag.Eager(select_k=40, start_k=4, adjacent_k=3, max_depth=1)
    edges = [("keywords", "keywords")]
    await hoprag.atraverse("text 3", store=remote_store, edges=edges, strategy=strategy)  # warm
    stream = hoprag.astream("text 3", store=remote_store, edges=edges, strategy=strategy)
    nodes = [n async for n in stream]
    hop0, hop1 = stream.stats.hops[0], stream.stats.hops[1]
    assert hop1.queries["adjacent"] >= 4 and nodes
    print(
        f"start search {hop0.seconds * 1e3:.0f} ms; hop 1 with "
        f"{hop1.queries['adjacent']} edge queries {hop1.seconds * 1e3:.0f} ms"
    )
    assert hop1.seconds < hop1.queries["adjacent"] * hop0.seconds / 3
    assert hop1.seconds < 1.6 * hop0.seconds


def test_the_event_loop_is_free_while_queries_wait_on_the_link(
    remote_store: CassandraStore,
) -> None:
    """While 16 queries wait on the link, the loop keeps running other work."""

    async def main() -> int:
        ticks = 0
        done = asyncio.Event()

        async def ticker() -> None:
            nonlocal ticks
            while not done.is_set():
                ticks += 1
                await asyncio.sleep(0.001)

        task = asyncio.create_task(ticker())
        edges = [MetadataEdge("keywords", f"k{i}") for i in range(16)]
        await remote_store.aadjacent_many(edges, HashEmbedding(DIM)("x"), k=5)
        done.set()
        await task
        return ticks

    assert asyncio.run(main()) >= 20  # >= 50 ms of waiting, ticking every ~1 ms
