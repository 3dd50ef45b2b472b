"""Store wrappers for tests: record calls, delay or block queries, count cancellations."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import anyio

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
