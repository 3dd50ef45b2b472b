"""Rounds: the unit every multi-hop reader of hoprag is built from. A round is one set of store
reads sent together (concurrently, so that a hop costs one round trip however many edges it
follows), recorded on one `HopStats` of the run's `TraversalStats`.

A `Round` owns its queries: a read is counted, by kind, because it was added to the round
(`Round.add`) and sent with it (`Round.send`), never by hand. The round's wall time
(`HopStats.seconds`) and its trace span (`hoprag.telemetry`) are set in one place,
`Round.timed`. A reader that needs several sequential rounds inside one round (a scope's
expansion as a traversal's start, in flight beside the roots' read) opens them with
`Round.within`: their queries count on the enclosing round's hop as well, and that hop records
the sequential rounds it waited for (`HopStats.rounds`).

Where a traversal's start documents come from is a `StartSource` (vector search, initial
roots and lexical search in `hoprag.engine.traversal`; a scope in `hoprag.scope_ranking`): each adds
its reads to the traversal's first round. The traversal (`hoprag.engine.traversal`) and the scope
expansion with its ranking (`hoprag.scope_ranking`) run their hops as rounds."""

from __future__ import annotations

import functools
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

import anyio

from hoprag import telemetry
from hoprag.edges import Edge, IdEdge, MetadataEdge
from hoprag.errors import one_error
from hoprag.stats import HopStats, TraversalStats
from hoprag.stores.base import Hit, PreparedQuery, Store

__all__ = [
    "EdgeReads",
    "Round",
    "Rounds",
    "Slot",
    "StartSource",
    "StartSources",
    "gather",
]

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


async def gather(calls: Sequence[Callable[[], Awaitable[T]]]) -> list[T]:
    """The results of `calls`, run concurrently, in the order of `calls` (a single call runs
    without a task group). The first failure is the answer: the others are cancelled."""
    if not calls:
        return []
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


class Slot(Generic[T]):
    """The result of one call of a round, set when the round has been sent."""

    __slots__ = ("_value",)

    def __init__(self) -> None:
        self._value: Any = _UNSET

    @property
    def value(self) -> T:
        """The call's result; a slot read before its round was sent is a programming error."""
        assert self._value is not _UNSET, "the round was not sent"
        value: T = self._value
        return value


_UNSET: Any = object()


class Round:
    """One round of store reads, recorded on `hop`. Reads are added (`add`, counted by kind;
    `beside`, counted by nothing: work in flight with the reads that is no query of this round)
    and sent together (`send`); `timed` is the round's wall time and trace span. A round
    opened by `Rounds.within` also counts its queries on the enclosing round's hop."""

    def __init__(self, hop: HopStats, parent: Round | None = None) -> None:
        self.hop = hop
        self._parent = parent
        self._calls: list[tuple[Callable[[], Awaitable[Any]], Slot[Any]]] = []
        self._counts: dict[str, int] = {}
        self._own = 0
        """1 once the round sent a query of its own."""
        self._inner: list[Rounds] = []

    @classmethod
    def open(cls, stats: TraversalStats) -> Round:
        """A new round whose `HopStats` is appended to `stats` (its depth is its position)."""
        hop = HopStats(depth=len(stats.hops))
        stats.hops.append(hop)
        return cls(hop)

    def add(self, kind: str, call: Callable[[], Awaitable[T]], *, count: int = 1) -> Slot[T]:
        """Add `call` to the round as `count` store queries of `kind` (a burst of edge reads is
        one call of many queries); its result is the slot's value once the round is sent."""
        assert count >= 1, "a read of the round is at least one query"
        self._counts[kind] = self._counts.get(kind, 0) + count
        return self.beside(call)

    def beside(self, call: Callable[[], Awaitable[T]]) -> Slot[T]:
        """Add `call` to run in flight with the round's queries, counted as none: a
        measurement, or a reader running rounds of its own inside this one (`within`)."""
        slot: Slot[T] = Slot()
        self._calls.append((call, slot))
        return slot

    def within(self) -> Rounds:
        """Sequential rounds run inside this one (by a call added with `beside`): their queries
        count on this round's hop too, which waits for as many rounds as its longest branch
        (`HopStats.rounds`)."""
        inner = Rounds(parent=self)
        self._inner.append(inner)
        return inner

    async def send(self) -> None:
        """Send the calls added so far, concurrently (`gather`), counting their queries; each
        call's result goes to its slot."""
        calls, self._calls = self._calls, []
        counts, self._counts = self._counts, {}
        if counts:
            self._count(counts)
            self._own = 1
            self._recount()
        results = await gather([call for call, _ in calls])
        for (_, slot), value in zip(calls, results, strict=True):
            slot._value = value

    async def run(self) -> None:
        """`send`, timed and traced as the whole round (`timed`)."""
        with self.timed():
            await self.send()

    @contextmanager
    def timed(
        self,
        parent_span: Any = None,
        shown: Callable[[BaseException], BaseException] | None = None,
    ) -> Iterator[None]:
        """The block as this round: its wall time becomes `hop.seconds` (also when it fails)
        and it runs in the round's trace span (a child of `parent_span`, or of the current
        span), ended with the hop's figures, or with the block's error (as `shown` gives it,
        when given). The block must not yield from a generator."""
        t0 = time.perf_counter()
        span = telemetry.start_hop(parent_span, self.hop.depth)
        try:
            with telemetry.attached(span):
                yield
        except BaseException as exc:
            self.hop.seconds = time.perf_counter() - t0
            telemetry.end_hop(span, self.hop, exc if shown is None else shown(exc))
            raise
        self.hop.seconds = time.perf_counter() - t0
        telemetry.end_hop(span, self.hop)

    def _count(self, counts: dict[str, int]) -> None:
        queries = self.hop.queries
        for kind, n in counts.items():
            queries[kind] = queries.get(kind, 0) + n
        if self._parent is not None:
            self._parent._count(counts)

    def _recount(self) -> None:
        """The hop's sequential rounds: its own round, or its longest inner branch."""
        self.hop.rounds = max([self._own, *(inner.rounds for inner in self._inner)])
        if self._parent is not None:
            self._parent._recount()


class Rounds:
    """Where a multi-round reader opens its rounds, one after the other: each a new hop of
    `stats` (`Rounds(stats)`), or rounds inside an enclosing round (`Round.within`), each on
    a hop of its own kept in `hops`."""

    def __init__(self, stats: TraversalStats | None = None, *, parent: Round | None = None):
        assert (stats is None) != (parent is None)
        self._stats = stats
        self._parent = parent
        self.hops: list[HopStats] = []

    def open(self) -> Round:
        """The next round."""
        if self._stats is not None:
            rnd = Round.open(self._stats)
        else:
            rnd = Round(HopStats(depth=len(self.hops)), self._parent)
        self.hops.append(rnd.hop)
        return rnd

    @property
    def rounds(self) -> int:
        """The sequential rounds opened here that sent a query."""
        return sum(h.rounds for h in self.hops)


class EdgeReads:
    """Every edge's targets read in one round: the metadata edges as one `read_meta` burst
    (counted as `kind` queries, one per edge) and the id edges as one `get`, both added to
    `rnd`. An id edge's targets are its document, or none when it is missing."""

    def __init__(
        self,
        rnd: Round,
        meta: Sequence[MetadataEdge],
        ids: Sequence[IdEdge],
        *,
        kind: str,
        read_meta: Callable[[list[MetadataEdge]], Awaitable[list[list[Hit]]]],
        get: Callable[[list[str]], Awaitable[Sequence[Hit]]],
    ) -> None:
        self._meta = list(meta)
        self._ids = list(ids)
        self._meta_hits = (
            rnd.add(kind, functools.partial(read_meta, self._meta), count=len(meta))
            if meta
            else None
        )
        self._id_hits = rnd.add("get", functools.partial(get, [e.id for e in ids])) if ids else None

    def results(self) -> dict[Edge, list[Hit]]:
        """Each edge's targets, metadata edges first (after the round was sent)."""
        results: dict[Edge, list[Hit]] = {}
        if self._meta_hits is not None:
            results.update(zip(self._meta, self._meta_hits.value, strict=True))
        if self._id_hits is not None:
            by_id = {hit.id: hit for hit in self._id_hits.value}
            for e in self._ids:
                hit = by_id.get(e.id)
                results[e] = [hit] if hit is not None else []
        return results


@runtime_checkable
class StartSource(Protocol):
    """A source of a traversal's start documents (depth 0): it adds its reads to the
    traversal's first round and gives its hits, best first, once the round was sent."""

    def read(self, rnd: Round) -> Slot[Sequence[Hit]]:
        """Add this source's reads to `rnd`; the slot holds its hits once `rnd` was sent."""
        ...


@runtime_checkable
class StartSources(Protocol):
    """What can stand in for a traversal's vector search (`astream(scope=...)`): a `Scope`
    gives the start source of its best members."""

    def start_source(
        self,
        store: Store,
        prepared: PreparedQuery,
        stats: TraversalStats,
        *,
        k: int,
        max_concurrency: int,
    ) -> StartSource:
        """The source of the `k` best starts for the run's `prepared` query; it may record how
        the store answered its filters in `stats.filters`."""
        ...
