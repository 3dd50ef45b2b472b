"""A hop's edge queries over a link with network latency: through a proxy that adds 25 ms each
way in front of the real node (as between an application and a node in another zone, or
Astra), the N metadata-edge queries of a hop are all in flight together, so the hop costs one
round trip, not N.

Nothing here is timed. The session's queries are counted as they are sent and answered
(`QueryLog`), and the proxy holds the node's answers until the test's condition holds (all of a
round's queries in flight, or a coroutine on the loop has run), so a store that sent the
queries one after another, or blocked the loop while waiting, would fail every time rather than
now and then. Speed over such a link is measured by `scripts/bench.py --latency-ms`."""

from __future__ import annotations

import asyncio
import threading
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


class QueryLog:
    """The queries a driver session sends (`execute_async`) and the answers it gets. A round
    runs from a first query in flight to none; `rounds` has the most in flight during each.

    `hold()` (the proxy's) is true while queries are in flight and either `gate` is set or the
    current round has fewer in flight than `targets[0]`; a round's target is used up when it
    ends. `reached(n)` is an asyncio event set once n queries are in flight together."""

    def __init__(self, session: Any) -> None:
        self._lock = threading.Lock()
        self.in_flight = 0
        self.rounds: list[int] = []
        self.targets: list[int] = []
        self.gate = False
        self.proxy: DelayProxy | None = None
        self._waits: list[tuple[int, asyncio.AbstractEventLoop, asyncio.Event]] = []
        real = session.execute_async

        def execute_async(*args: Any, **kwargs: Any) -> Any:
            self._sent()
            try:
                rf = real(*args, **kwargs)
            except BaseException:
                self._answered()
                raise
            done = threading.Event()

            def answered(_: Any = None) -> None:
                if not done.is_set():  # once per query, whatever its pages
                    done.set()
                    self._answered()

            rf.add_callbacks(answered, answered)
            return rf

        session.execute_async = execute_async

    def reset(self, targets: list[int] | None = None) -> None:
        with self._lock:
            assert self.in_flight == 0, "a query from an earlier test is still in flight"
            self.rounds, self.targets, self.gate, self._waits = [], list(targets or []), False, []

    def reached(self, n: int) -> asyncio.Event:
        event = asyncio.Event()
        with self._lock:
            self._waits.append((n, asyncio.get_running_loop(), event))
        return event

    def hold(self) -> bool:
        with self._lock:
            if self.in_flight == 0:
                return False
            return self.gate or bool(self.targets and self.rounds[-1] < self.targets[0])

    def open_gate(self) -> None:
        with self._lock:
            self.gate = False
        self._recheck()

    def _sent(self) -> None:
        with self._lock:
            if self.in_flight == 0:
                self.rounds.append(0)
            self.in_flight += 1
            self.rounds[-1] = max(self.rounds[-1], self.in_flight)
            for n, loop, event in self._waits:
                if self.in_flight >= n:
                    loop.call_soon_threadsafe(event.set)
        self._recheck()

    def _answered(self) -> None:
        with self._lock:
            self.in_flight -= 1
            if self.in_flight == 0 and self.targets:
                self.targets.pop(0)
        self._recheck()

    def _recheck(self) -> None:
        if self.proxy is not None:
            self.proxy.recheck()


@pytest.fixture(scope="module")
def link(cassandra_contact_points: str) -> Iterator[tuple[Any, DelayProxy, QueryLog]]:
    """A driver session that reaches the node only through the delay proxy, the proxy and the
    session's query log (whose `hold` the proxy obeys)."""
    host, port = parse_contact_points(cassandra_contact_points)[0]
    holder: list[QueryLog] = []
    proxy = DelayProxy(
        (PROXY_HOST, port), (host, port), ONE_WAY_S, hold=lambda: bool(holder and holder[0].hold())
    )
    with proxy:
        session = connect_through(PROXY_HOST, port)
        log = QueryLog(session)
        log.proxy = proxy
        holder.append(log)
        try:
            yield session, proxy, log
        finally:
            session.cluster.shutdown()


@pytest.fixture(scope="module")
def remote_store(cassandra_session: Any, link: tuple[Any, DelayProxy, QueryLog]) -> CassandraStore:
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
    return CassandraStore(HashEmbedding(DIM), keyspace=ks, table="docs", session=link[0])


@pytest.fixture
def log(link: tuple[Any, DelayProxy, QueryLog]) -> Iterator[QueryLog]:
    """The query log, fresh for the test; no hold of the proxy may have timed out."""
    proxy, query_log = link[1], link[2]
    query_log.reset()
    before = proxy.held_too_long
    yield query_log
    assert proxy.held_too_long == before, "the proxy gave up holding answers: see its docstring"


async def test_the_remote_session_reaches_the_node_only_through_the_proxy(
    remote_store: CassandraStore, link: tuple[Any, DelayProxy, QueryLog], log: QueryLog
) -> None:
    session, proxy, _ = link
    assert {h.address for h in session.cluster.metadata.all_hosts()} == {PROXY_HOST}
    before = proxy.bytes_to_client
    hits = await remote_store.asearch(HashEmbedding(DIM)("probe"), k=3)
    assert len(hits) == 3
    assert proxy.bytes_to_client > before  # the answer came across the link
    assert log.rounds == [1]


@pytest.mark.parametrize("n", [4, 16])
async def test_a_hops_edge_queries_are_in_flight_together_one_round_trip_not_n(
    remote_store: CassandraStore, log: QueryLog, n: int
) -> None:
    """`aadjacent_many` sends all N edge queries before any answer comes back (the proxy
    holds the answers until N are in flight); `aadjacent` one after another takes N rounds."""
    q = HashEmbedding(DIM)("latency probe")
    edges = [MetadataEdge("keywords", f"k{i}") for i in range(n)]
    await remote_store.aadjacent_many(edges, q, k=5, include_embeddings=False)  # warm-up
    log.reset(targets=[n])
    got = await asyncio.wait_for(
        remote_store.aadjacent_many(edges, q, k=5, include_embeddings=False), 60
    )
    assert len(got) == n and all(got)
    assert log.rounds == [n]
    log.reset()
    for e in edges:
        await remote_store.aadjacent(e, q, k=5, include_embeddings=False)
    assert log.rounds == [1] * n


async def test_a_traversal_hop_sends_all_its_edge_queries_in_one_round_trip(
    remote_store: CassandraStore, log: QueryLog
) -> None:
    """A real traversal: the start search is one round, and hop 1's edge queries (as many as
    its stats count) are the next, all in flight together."""
    strategy = hoprag.Eager(select_k=40, start_k=4, adjacent_k=3, max_depth=1)
    edges = [("keywords", "keywords")]
    first = await hoprag.atraverse("text 3", store=remote_store, edges=edges, strategy=strategy)
    m = first.stats.hops[1].queries["adjacent"]
    assert m >= 4
    log.reset(targets=[1, m])
    # "strategy": no link ping (speculation="auto" sends one beside the start search).
    stream = hoprag.astream(
        "text 3", store=remote_store, edges=edges, strategy=strategy, speculation="strategy"
    )

    async def run() -> list[Any]:
        return [node async for node in stream]

    nodes = await asyncio.wait_for(run(), 60)
    assert [n.id for n in nodes] == [n.id for n in first]
    assert stream.stats.hops[1].queries["adjacent"] == m
    assert log.rounds == [1, m]


async def test_the_event_loop_is_free_while_queries_wait_on_the_link(
    remote_store: CassandraStore, log: QueryLog
) -> None:
    """The proxy holds every answer until this test's own coroutine, on the same loop,
    releases them, which it can only do once all 16 queries are in flight: a store that
    waited on the loop for an answer would never let it run."""
    q = HashEmbedding(DIM)("x")
    edges = [MetadataEdge("keywords", f"k{i}") for i in range(16)]
    await remote_store.aadjacent_many(edges, q, k=5)  # warm-up
    log.reset()
    log.gate = True
    all_sent = log.reached(16)
    task = asyncio.create_task(remote_store.aadjacent_many(edges, q, k=5))
    await asyncio.wait_for(all_sent.wait(), 30)
    assert not task.done() and log.in_flight == 16
    log.open_gate()
    got = await asyncio.wait_for(task, 60)
    assert len(got) == 16 and all(got)
    assert log.rounds == [16]


async def test_the_store_measures_the_links_round_trip_for_speculation(
    remote_store: CassandraStore, cassandra_session: Any, log: QueryLog
) -> None:
    """The link's round trip as `speculation="auto"` sees it: at least the proxy's two ways
    through the proxy, well below that on the direct session (the fastest of its pings)."""
    q = HashEmbedding(DIM)("ping")
    remote = await (await remote_store.aprepare(q)).around_trip()
    assert remote is not None and remote >= 2 * ONE_WAY_S
    direct_store = CassandraStore(
        HashEmbedding(DIM), keyspace=remote_store.keyspace, table="docs", session=cassandra_session
    )
    direct = await (await direct_store.aprepare(q)).around_trip()
    assert direct is not None and direct < 2 * ONE_WAY_S
