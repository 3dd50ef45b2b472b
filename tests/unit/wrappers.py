"""Store wrappers for tests: record calls, delay or block queries, count cancellations."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import anyio

from hoprag import MetadataEdge
from hoprag.stores import Hit


class RecordingStore:
    """Delegates to `inner`, recording every call; adjacency queries wait `delay` seconds, or
    until `gate` is set when one is given, and count cancellations and concurrency."""

    def __init__(self, inner: Any, *, delay: float = 0.0, gate: anyio.Event | None = None):
        self.inner = inner
        self.embedding = inner.embedding
        self.delay = delay
        self.gate = gate
        self.calls: list[tuple[str, Any, Any]] = []
        self.started = 0
        self.finished = 0
        self.cancelled = 0
        self.in_flight = 0
        self.max_in_flight = 0

    async def asearch(self, embedding: Sequence[float], **kw: Any) -> list[Hit]:
        self.calls.append(("search", None, kw.get("filter")))
        return await self.inner.asearch(embedding, **kw)

    async def aget(self, ids: Sequence[str], **kw: Any) -> list[Hit]:
        self.calls.append(("get", tuple(ids), kw.get("filter")))
        return await self.inner.aget(ids, **kw)

    async def aadd(self, documents: Any) -> None:
        await self.inner.aadd(documents)

    async def aadjacent(
        self, edge: MetadataEdge, embedding: Sequence[float], **kw: Any
    ) -> list[Hit]:
        self.calls.append(("adjacent", edge, kw.get("filter")))
        self.started += 1
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if self.gate is not None:
                await self.gate.wait()
            elif self.delay:
                await anyio.sleep(self.delay)
            result = await self.inner.aadjacent(edge, embedding, **kw)
            self.finished += 1
            return result
        except anyio.get_cancelled_exc_class():
            self.cancelled += 1
            raise
        finally:
            self.in_flight -= 1
