"""Store wrappers for tests: record calls, delay or block queries, count cancellations."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import anyio
import anyio.lowlevel

from hoprag import Document, MetadataEdge
from hoprag.filters import Filter, FilterPlan
from hoprag.stores import Hit, PreparedQuery, Store


class RecordingStore(Store):
    """Delegates to `inner`, recording every query as (kind, argument, filter); adjacency
    queries wait until `gate` is set when one is given, and count
    cancellations and the most in flight at once. Its prepared query keeps the contract's
    default `aadjacent_many` (one `aadjacent` per edge, each holding a limiter slot)."""

    def __init__(self, inner: Any, *, gate: anyio.Event | None = None):
        self.inner = inner
        self.embedding = inner.embedding
        self.gate = gate
        self.calls: list[tuple[str, Any, Any]] = []
        self.prepared = 0
        self.started = 0
        self.finished = 0
        self.cancelled = 0
        self.in_flight = 0
        self.max_in_flight = 0

    async def aprepare(
        self,
        embedding: Sequence[float] | None,
        filter: Filter | None = None,
        **kw: Any,
    ) -> RecordingQuery:
        self.prepared += 1
        return RecordingQuery(self, await self.inner.aprepare(embedding, filter, **kw), filter)

    async def aadd(self, documents: Iterable[Document]) -> None:
        await self.inner.aadd(documents)


class RecordingQuery(PreparedQuery):
    """The prepared query of a `RecordingStore`."""

    def __init__(self, store: RecordingStore, inner: PreparedQuery, filter: Any) -> None:
        self.store = store
        self.inner = inner
        self.raw_filter = filter
        self.embedding = inner.embedding
        self.filter = inner.filter
        self.include_embeddings = inner.include_embeddings
        self.limiter = inner.limiter

    @property
    def filter_plan(self) -> FilterPlan:
        return self.inner.filter_plan

    async def asearch(self, *, k: int) -> list[Hit]:
        self.store.calls.append(("search", None, self.raw_filter))
        return await self.inner.asearch(k=k)

    async def aget(self, ids: Sequence[str]) -> list[Hit]:
        self.store.calls.append(("get", tuple(ids), self.raw_filter))
        return await self.inner.aget(ids)

    async def aadjacent(self, edge: MetadataEdge, *, k: int) -> list[Hit]:
        store = self.store
        store.calls.append(("adjacent", edge, self.raw_filter))
        async with self.limiter:
            store.started += 1
            store.in_flight += 1
            store.max_in_flight = max(store.max_in_flight, store.in_flight)
            try:
                if store.gate is not None:
                    await store.gate.wait()
                result = await self.inner.aadjacent(edge, k=k)
                store.finished += 1
                return result
            except anyio.get_cancelled_exc_class():
                store.cancelled += 1
                raise
            finally:
                store.in_flight -= 1


class RoundCountingStore(Store):
    """Delegates to `inner` and counts sequential rounds: a round starts when a query is sent
    while none is in flight. Each query passes two scheduling checkpoints before it is
    answered (no sleeping), so queries sent together are in flight together. `queries[i]`
    lists round i's queries as (kind, argument); `round_trip` is what `around_trip` reports
    (the link the traversal believes it has)."""

    def __init__(self, inner: Any, *, round_trip: float | None = None) -> None:
        self.inner = inner
        self.embedding = inner.embedding
        self.round_trip = round_trip
        self.queries: list[list[tuple[str, Any]]] = []
        self.in_flight = 0
        self.rows = 0
        """Hits the inner store returned, in all."""

    @property
    def rounds(self) -> int:
        return len(self.queries)

    def reset(self) -> None:
        assert self.in_flight == 0
        self.queries = []

    async def aprepare(
        self, embedding: Sequence[float] | None, filter: Filter | None = None, **kw: Any
    ) -> RoundCountingQuery:
        return RoundCountingQuery(self, await self.inner.aprepare(embedding, filter, **kw))

    async def aadd(self, documents: Iterable[Document]) -> None:
        await self.inner.aadd(documents)


class RoundCountingQuery(PreparedQuery):
    """The prepared query of a `RoundCountingStore`."""

    def __init__(self, store: RoundCountingStore, inner: PreparedQuery) -> None:
        self.store = store
        self.inner = inner
        self.embedding = inner.embedding
        self.filter = inner.filter
        self.include_embeddings = inner.include_embeddings
        self.limiter = inner.limiter

    async def around_trip(self) -> float | None:
        return self.store.round_trip

    async def _in_round(self, kind: str, arg: Any, call: Any) -> Any:
        store = self.store
        if store.in_flight == 0:
            store.queries.append([])
        store.in_flight += 1
        store.queries[-1].append((kind, arg))
        try:
            await anyio.lowlevel.checkpoint()
            await anyio.lowlevel.checkpoint()
            result = await call()
        finally:
            store.in_flight -= 1
        store.rows += sum(len(r) if isinstance(r, list) else 1 for r in result)
        return result

    async def asearch(self, *, k: int) -> list[Hit]:
        return await self._in_round("search", k, lambda: self.inner.asearch(k=k))  # type: ignore[no-any-return]

    async def aget(self, ids: Sequence[str]) -> list[Hit]:
        return await self._in_round("get", tuple(ids), lambda: self.inner.aget(ids))  # type: ignore[no-any-return]

    async def aadjacent(self, edge: MetadataEdge, *, k: int) -> list[Hit]:
        call = lambda: self.inner.aadjacent(edge, k=k)  # noqa: E731
        return await self._in_round("adjacent", (edge,), call)  # type: ignore[no-any-return]

    async def aadjacent_many(self, edges: Sequence[MetadataEdge], *, k: int) -> list[list[Hit]]:
        call = lambda: self.inner.aadjacent_many(edges, k=k)  # noqa: E731
        return await self._in_round("adjacent", tuple(edges), call)  # type: ignore[no-any-return]
