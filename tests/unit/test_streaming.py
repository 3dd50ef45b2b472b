"""Streaming: nodes arrive as admitted, early exit cancels in-flight queries, bounded fan-out,
and the sync wrapper works inside a running loop."""

from __future__ import annotations

import anyio
import anyio.lowlevel
import pytest
from wrappers import RecordingStore

import hoprag
from hoprag import Eager, Mmr, astream, atraverse
from hoprag.embeddings import HashEmbedding
from hoprag.stores import MemoryStore
from shared_data import graph_documents

DIM = 16
EDGES = [("keywords", "keywords"), ("cites", "$id")]


@pytest.fixture(scope="module")
def memory() -> MemoryStore:
    store = MemoryStore(HashEmbedding(DIM))
    store.add(graph_documents(150, DIM, seed=21))
    return store


async def test_first_node_arrives_before_the_next_hop_finishes(memory: MemoryStore) -> None:
    gate = anyio.Event()
    store = RecordingStore(memory, gate=gate)
    got: list[hoprag.Node] = []
    with anyio.fail_after(5):
        stream = astream(
            "alpha", store=store, edges=EDGES, strategy=Eager(select_k=20, max_depth=2)
        )
        first = await stream.__anext__()
        got.append(first)
        # Hop 1 has not even been awaited: the start node came from the search alone.
        assert store.finished == 0
        assert stream.stats.first_node_seconds is not None
        gate.set()
        got.extend([n async for n in stream])
    assert first.depth == 0
    assert store.finished > 0
    assert 4 < len(got) <= 20
    assert all(n.depth <= 2 for n in got)
    assert got[0].similarity_score >= got[1].similarity_score  # start hits, best first


async def test_leaving_early_cancels_in_flight_queries(memory: MemoryStore) -> None:
    store = RecordingStore(memory, gate=anyio.Event())  # adjacency queries never finish
    stream = astream("alpha", store=store, edges=EDGES, strategy=Eager(select_k=50, max_depth=2))
    for _ in range(4):  # the four start nodes
        await stream.__anext__()
    with anyio.move_on_after(0.2) as scope:
        await stream.__anext__()
    assert scope.cancelled_caught
    assert store.started > 1
    assert store.cancelled == store.started
    assert store.in_flight == 0
    await stream.aclose()


async def test_break_and_aclose_fetch_nothing_more(memory: MemoryStore) -> None:
    store = RecordingStore(memory)
    async with astream(
        "alpha", store=store, edges=EDGES, strategy=Mmr(select_k=10, max_depth=3)
    ) as stream:
        async for _node in stream:
            break
    assert store.started == 0
    with pytest.raises(StopAsyncIteration):
        await stream.__anext__()


async def test_fan_out_is_concurrent_and_bounded(memory: MemoryStore) -> None:
    # Adjacency queries wait at a gate. It opens once three are in flight: the bound is
    # reached, and no fourth has started while the three wait.
    gate = anyio.Event()
    store = RecordingStore(memory, gate=gate)
    seen: dict[str, int] = {}

    async def open_at_the_bound() -> None:
        for _ in range(10_000):
            if store.in_flight == 3:
                break
            await anyio.lowlevel.checkpoint()
        seen["in_flight"], seen["started"] = store.in_flight, store.started
        gate.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(open_at_the_bound)
        result = await atraverse(
            "alpha",
            store=store,
            edges=EDGES,
            strategy=Eager(select_k=100, max_depth=2),
            max_concurrency=3,
        )
    assert seen == {"in_flight": 3, "started": 3}
    assert store.started > 6
    assert store.max_in_flight == 3
    assert len(result) > 4


async def test_sync_traverse_inside_a_running_loop(memory: MemoryStore) -> None:
    expected = await atraverse("alpha", store=memory, edges=EDGES, strategy=Eager(select_k=7))
    got = hoprag.traverse("alpha", store=memory, edges=EDGES, strategy=Eager(select_k=7))
    assert [n.id for n in got] == [n.id for n in expected]
    assert got.stats.hops and isinstance(got, list)


def test_sync_traverse_outside_a_loop(memory: MemoryStore) -> None:
    got = hoprag.traverse("alpha", store=memory, edges=EDGES, strategy=Eager(select_k=7))
    assert len(got) == 7
