"""Regression tests for the coordinator's edge cases found by a hostile test (issue #17): query
vectors of every shape, an edge function that returns nonsense, sync calls inside a trio loop,
large results, and the per-traversal deadline."""

from __future__ import annotations

import asyncio
from typing import Any

import anyio
import anyio.lowlevel
import numpy as np
import pytest
import trio
from wrappers import RecordingStore

import hoprag
from hoprag import Document, Eager, Node, TraversalTimeoutError, atraverse, traverse
from hoprag.edges import Edges
from hoprag.embeddings import HashEmbedding
from hoprag.errors import InvalidInputError, StoreError
from hoprag.stores import MemoryStore
from shared_data import graph_documents

DIM = 16
EDGES = [("keywords", "keywords"), ("cites", "$id")]


@pytest.fixture(scope="module")
def memory() -> MemoryStore:
    store = MemoryStore(HashEmbedding(DIM))
    store.add(graph_documents(120, DIM, seed=5))
    return store


def _ids(nodes: list[Node]) -> list[str]:
    return [n.id for n in nodes]


# -- query vectors (defect 3) ------------------------------------------------------------------


async def test_a_numpy_query_embedding_is_a_vector_like_any_other(memory: MemoryStore) -> None:
    q = HashEmbedding(DIM)("numpy query")
    kwargs: dict[str, Any] = {"store": memory, "edges": EDGES, "strategy": Eager(select_k=6)}
    as_list = await atraverse(None, query_embedding=q, **kwargs)
    as_array = await atraverse(None, query_embedding=np.asarray(q), **kwargs)
    as_f32 = await atraverse(None, query_embedding=np.asarray(q, dtype=np.float32), **kwargs)
    assert _ids(as_array) == _ids(as_list) == _ids(as_f32)


@pytest.mark.parametrize("query", ["a query text", None])
async def test_an_empty_query_embedding_is_refused_not_ignored(
    memory: MemoryStore, query: str | None
) -> None:
    with pytest.raises(InvalidInputError, match="query embedding"):
        await atraverse(query, query_embedding=[], store=memory, edges=EDGES, strategy=Eager())


# -- the edge function (defect 13) -------------------------------------------------------------


@pytest.mark.parametrize("result", [None, ([], []), "edges"])
async def test_an_edge_function_returning_no_edges_object_is_named(
    memory: MemoryStore, result: Any
) -> None:
    def broken(doc: Document) -> Any:
        return result

    with pytest.raises(InvalidInputError, match="edge function's result for document"):
        await atraverse("q", store=memory, edges=broken, strategy=Eager())


async def test_an_edge_function_returning_edges_is_followed(memory: MemoryStore) -> None:
    def none(doc: Document) -> Edges:
        return Edges(frozenset(), frozenset())

    result = await atraverse("q", store=memory, edges=none, strategy=Eager(select_k=3))
    assert len(result) == 3 and all(n.depth == 0 for n in result)


# -- sync calls inside other event loops (defect 10) -------------------------------------------


def test_sync_traverse_inside_a_running_trio_loop(memory: MemoryStore) -> None:
    expected = traverse("trio", store=memory, edges=EDGES, strategy=Eager(select_k=7))

    async def main() -> list[str]:
        await trio.lowlevel.checkpoint()
        return _ids(traverse("trio", store=memory, edges=EDGES, strategy=Eager(select_k=7)))

    assert trio.run(main) == _ids(expected)


@pytest.mark.parametrize("strategy", [Eager(select_k=9, max_depth=2), hoprag.Mmr(select_k=6)])
def test_the_async_engine_runs_under_trio_as_under_asyncio(
    memory: MemoryStore, strategy: hoprag.Strategy
) -> None:
    """docs/architecture.md: the engine and MemoryStore are anyio code, so `atraverse` and
    `astream` give under trio what they give under asyncio (paths and depths too)."""

    async def run() -> list[tuple[str, int, tuple[str, ...]]]:
        result = await atraverse("graph", store=memory, edges=EDGES, strategy=strategy)
        streamed = [n.id async for n in hoprag.astream("graph", store=memory, edges=EDGES,
                                                        strategy=strategy)]  # fmt: skip
        assert streamed == _ids(list(result))
        return [(n.id, n.depth, n.path.nodes) for n in result]

    under_trio = trio.run(run)
    assert under_trio == asyncio.run(run())
    assert len(under_trio) > 1


def test_sync_traverse_from_a_loop_callback_outside_any_task(memory: MemoryStore) -> None:
    expected = traverse("cb", store=memory, edges=EDGES, strategy=Eager(select_k=5))
    got: list[list[str]] = []

    async def main() -> None:
        loop = asyncio.get_running_loop()
        done = loop.create_future()

        def callback() -> None:  # runs on the loop, but in no task
            got.append(_ids(traverse("cb", store=memory, edges=EDGES, strategy=Eager(select_k=5))))
            done.set_result(None)

        loop.call_soon(callback)
        await done

    asyncio.run(main())
    assert got == [_ids(expected)]


# -- large results (defect 14) -----------------------------------------------------------------


def _chain(n: int) -> MemoryStore:
    store = MemoryStore(HashEmbedding(2))
    store.add(
        [
            Document(f"n{i}", f"node {i}", {"next": f"n{i + 1}"}, [1.0, i % 7 + 0.5])
            for i in range(n)
        ]
    )
    return store


def test_a_long_result_is_never_turned_into_text(monkeypatch: pytest.MonkeyPatch) -> None:
    # Python 3.11's asyncio runner builds the text form of its main task, result included; a
    # node's text form holds its whole path, so that was quadratic in a chain's length.
    store = _chain(300)
    calls = 0
    real = Node.__repr__

    def counting(self: Node) -> str:
        nonlocal calls
        calls += 1
        return real(self)

    monkeypatch.setattr(Node, "__repr__", counting)
    kwargs: dict[str, Any] = {
        "store": store,
        "edges": [("next", "$id")],
        "strategy": Eager(select_k=300, start_k=0),
        "initial_root_ids": ["n0"],
        "query_embedding": [1.0, 0.5],
    }
    result = traverse(None, **kwargs)
    assert len(result) == 300 and result[-1].depth == 299
    assert asyncio.run(atraverse(None, **kwargs)) == result
    assert calls == 0
    text = repr(result)
    assert "'n0'" in text and "nodes=300" in text and calls == 0


# -- the deadline (the "Load and faults") ----------------------------------------------


async def test_a_traversal_past_its_timeout_raises_and_cancels_its_queries(
    memory: MemoryStore,
) -> None:
    store = RecordingStore(memory, gate=anyio.Event())  # adjacency queries never answer
    with pytest.raises(TraversalTimeoutError, match=r"timeout of 0\.2 s") as err:
        await atraverse("q", store=store, edges=EDGES, strategy=Eager(select_k=50), timeout=0.2)
    assert isinstance(err.value, TimeoutError)
    assert store.started > 0 and store.cancelled == store.started and store.in_flight == 0


async def test_a_partial_traversal_returns_what_was_admitted_at_its_timeout(
    memory: MemoryStore,
) -> None:
    store = RecordingStore(memory, gate=anyio.Event())
    strategy = Eager(select_k=50, start_k=3)
    # The adjacency queries never answer, so the traversal always ends at its timeout; 2 s
    # leaves the start search time enough on a saturated machine (0.2 s did not, once).
    result = await atraverse(
        "q", store=store, edges=EDGES, strategy=strategy, timeout=2.0, on_timeout="partial"
    )
    assert result.stats.partial
    assert len(result) == 3 and all(n.depth == 0 for n in result)  # the start nodes only
    assert store.cancelled == store.started > 0
    full = await atraverse("q", store=memory, edges=EDGES, strategy=strategy, timeout=60)
    assert not full.stats.partial and _ids(full)[:3] == _ids(result)


@pytest.mark.parametrize(
    ("kwargs", "argument"),
    [
        ({"timeout": 0}, "timeout"),
        ({"timeout": -1.0}, "timeout"),
        ({"timeout": float("nan")}, "timeout"),
        ({"timeout": "5"}, "timeout"),
        ({"on_timeout": "ignore"}, "on_timeout"),
    ],
)
def test_bad_timeouts_are_invalid_input(
    memory: MemoryStore, kwargs: dict[str, Any], argument: str
) -> None:
    with pytest.raises(InvalidInputError, match=argument):
        hoprag.astream("q", store=memory, edges=EDGES, strategy=Eager(), **kwargs)


class _FailingAdjacency(RecordingStore):
    """Every adjacency query of its runs fails with a StoreError once it has started."""

    async def aprepare(self, embedding: Any, filter: Any = None, **kw: Any) -> Any:
        query = await super().aprepare(embedding, filter, **kw)

        async def fail(edge: Any, *, k: int) -> Any:
            await anyio.lowlevel.checkpoint()  # all three are in flight before one fails
            raise StoreError(f"adjacent query for {edge} failed")

        query.aadjacent = fail
        return query


async def test_several_concurrent_store_failures_surface_as_one_store_error() -> None:
    """A hop whose adjacency queries all fail at once raises one StoreError (the first), not
    an ExceptionGroup of them; the group stays reachable as its context."""
    docs = [
        Document("a", "alpha", {"k": ["x", "y", "z"]}, [1.0, 0.0]),
        Document("b", "beta", {"k": ["x"]}, [0.9, 0.1]),
    ]
    inner = MemoryStore(HashEmbedding(2))
    await inner.aadd(docs)
    store = _FailingAdjacency(inner)
    with pytest.raises(StoreError, match="adjacent query for") as caught:
        await atraverse(
            None,
            query_embedding=[1.0, 0.0],
            store=store,
            edges=[("k", "k")],
            strategy=Eager(select_k=5, start_k=1, max_depth=2),
        )
    assert isinstance(caught.value.__context__, BaseExceptionGroup)
    assert len(caught.value.__context__.exceptions) == 3
