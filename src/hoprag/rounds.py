"""Rounds: the unit every multi-hop reader of hoprag is built from. A round is one set of store
reads sent together (concurrently, so that a hop costs one round trip however many edges it
follows), recorded as one `HopStats` of the run's `TraversalStats`. The traversal
(`hoprag.traversal`) and the scope expansion with its ranking (`hoprag.scope_ranking`) run
their hops as rounds through these helpers."""

from __future__ import annotations

import functools
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

import anyio

from hoprag import telemetry
from hoprag.edges import Edge, IdEdge, MetadataEdge
from hoprag.errors import one_error
from hoprag.stats import HopStats, TraversalStats
from hoprag.stores.base import Hit

T = TypeVar("T")


async def gather(calls: Sequence[Callable[[], Awaitable[T]]]) -> list[T]:
    """The results of `calls`, run concurrently, in the order of `calls` (a single call runs
    without a task group). The first failure is the answer: the others are cancelled."""
    if len(calls) == 1:
        return [await calls[0]()]
    out: list[Any] = [None] * len(calls)

    async def one(i: int) -> None:
        out[i] = await calls[i]()

    with one_error():
        async with anyio.create_task_group() as tg:
            for i in range(len(calls)):
                tg.start_soon(one, i)
    return out


def open_round(stats: TraversalStats) -> HopStats:
    """A new round's `HopStats`, appended to `stats` (its depth is its position)."""
    hop = HopStats(depth=len(stats.hops))
    stats.hops.append(hop)
    return hop


@contextmanager
def traced(hop: HopStats) -> Iterator[None]:
    """The block as round `hop`'s trace span (`hoprag.telemetry`: a child of the current span,
    current while the block runs, ended with the hop's figures or the block's error). The
    block must not yield from a generator."""
    span = telemetry.start_hop(None, hop.depth)
    if span is None:
        yield
        return
    try:
        with telemetry.attached(span):
            yield
    except BaseException as exc:
        telemetry.end_hop(span, hop, exc)
        raise
    telemetry.end_hop(span, hop)


async def run_round(hop: HopStats, calls: Sequence[Callable[[], Awaitable[T]]]) -> list[T]:
    """One round: `calls` concurrently (`gather`), its wall time recorded on `hop` (also when
    it fails), in the round's trace span."""
    t0 = time.perf_counter()
    try:
        with traced(hop):
            return await gather(calls)
    finally:
        hop.seconds = time.perf_counter() - t0


async def read_edges(
    hop: HopStats,
    meta: Sequence[MetadataEdge],
    ids: Sequence[IdEdge],
    *,
    kind: str,
    read_meta: Callable[[list[MetadataEdge]], Awaitable[list[list[Hit]]]],
    get: Callable[[list[str]], Awaitable[Sequence[Hit]]],
) -> dict[Edge, list[Hit]]:
    """Every edge's targets, the metadata edges as one `read_meta` burst (counted as `kind`
    queries on `hop`) and the id edges as one `get`, both in flight together. An id edge's
    targets are its document, or none when it is missing."""
    calls: list[Callable[[], Awaitable[Any]]] = []
    if meta:
        hop.queries[kind] = hop.queries.get(kind, 0) + len(meta)
        calls.append(functools.partial(read_meta, list(meta)))
    if ids:
        hop.queries["get"] += 1
        calls.append(functools.partial(get, [e.id for e in ids]))
    answers = await gather(calls)
    results: dict[Edge, list[Hit]] = {}
    if meta:
        results.update(zip(meta, answers[0], strict=True))
    if ids:
        by_id = {hit.id: hit for hit in answers[-1]}
        for e in ids:
            hit = by_id.get(e.id)
            results[e] = [hit] if hit is not None else []
    return results
