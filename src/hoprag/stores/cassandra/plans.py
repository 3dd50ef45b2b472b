"""Edge plans: each metadata edge of a hop read the way its value's holders make cheapest.

Cassandra 5.0 answers a filtered vector search (`tokens CONTAINS ? ORDER BY embedding ANN OF ?
LIMIT k`) by materializing every row that holds the edge's value before it searches among
them (`pool.py`), so an edge on a value that a fixed share of the corpus holds costs more as
the corpus grows. A table that keeps holder counts (`holder_counts=True`, `holders.py`) tells
how many documents hold each value, and a run's `Planner` reads them, once per value per run,
before a hop's edges are read, then plans each edge:

* "none": no document holds the value; nothing is read (the edge leads nowhere).
* "read": at most `read_holders` documents hold it. Every holder is read by an SAI equality
  read (`tokens CONTAINS ?`, no vector search: `sets.py`), scored in the client and the `k`
  best kept. At 1M documents a filtered vector search costs 10-20 ms even for a value of a
  few holders (the vector index of every SSTable is searched), the equality read of its rows
  a few ms (docs/benchmarks.md, "Reading a value's holders"). A read that comes back with
  more holders than counted (the count lags a write) may be incomplete: that edge is then
  searched.
* "pool": at least `hub_holders` documents hold it (a hub). The run's candidate pool answers
  it (the query's nearest documents, over-fetched and unfiltered: one read shared by every
  hub edge of the run, read at the first hop that has one, sized from the table's documents
  so that a value of `hub_holders` holders expects `POOL_COVER` times `k` of them among it,
  at most `guards.MAX_K`). The pool answers an edge only when it holds at least `k` of the
  value's holders (or every document): those are then exactly the `k` best, as the filtered
  search gives them, read by id. A hub the pool holds fewer of is searched as any edge.
* "search": every other edge (and the hubs when the pool cannot be used: a filter checked
  after the read, or a cassio table), the filtered vector search.

Every plan gives what the filtered search gives (up to the vector index's own approximation),
so a traversal's results do not depend on the counts it read, only its cost does. A count
read while a document holding the value is being written may miss that document, as a read
sent a moment earlier would. The counts' read is one round of the hop, before its edges' reads
(noted `plan_rounds` with `holder_reads`), and a hub hop that reads the pool waits for one
more round (the pool, then its edges' rows by id). Every edge's plan, holders and rows is in
the hop's `HopStats.plans` (`explain()`)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field

import anyio

from hoprag.edges import MetadataEdge
from hoprag.errors import one_error
from hoprag.stats import EdgePlan
from hoprag.stores.base import Hit, by_score
from hoprag.stores.cassandra.guards import MAX_K
from hoprag.stores.cassandra.holders import ALL
from hoprag.stores.cassandra.layouts import Clause
from hoprag.stores.cassandra.pool import Pool

POOL_COVER = 3
"""A pool holds this many times `k` holders of a value of `hub_holders` holders, on average."""

CountReader = Callable[[Iterable[str]], Awaitable[dict[str, int]]]
"""Reads the holders of tokens (`holders.HolderCounts.read_tokens`)."""
Reads = Callable[[list[list[Clause]]], Awaitable[list[list[Hit]]]]


@dataclass(frozen=True)
class PlanReads:
    """What a planned hop reads with, from the run's query: the edges' filtered searches,
    the pool's answers (`pool.answer_edges`, which searches the edges it cannot answer), the
    pool's read of a size, the run's pool so far, whether a pool can be used, the layout's
    token clause, and the complete read of edges' holders up to a LIMIT (scored)."""

    search: Reads
    pooled: Callable[[Pool, list[list[Clause]]], Awaitable[list[list[Hit]]]]
    read_pool: Callable[[int], Awaitable[Pool]]
    pool: Pool | None
    pool_usable: bool
    clause_text: str
    complete: Callable[[list[list[Clause]], int], Awaitable[list[list[Hit]]]]


def edge_label(edge: MetadataEdge) -> str:
    """`field=value`, as `explain()` shows an edge."""
    return f"{edge.incoming_field}={edge.value!r}"


def pool_size(total: int, hub_holders: int, k: int) -> int:
    """The pool that holds `POOL_COVER * k` documents of a value `hub_holders` of `total`
    documents hold (if the query were unrelated to the value): at least `k + 1`, at most
    `guards.MAX_K` (Cassandra's largest ANN LIMIT)."""
    wanted = math.ceil(POOL_COVER * k * total / max(hub_holders, 1))
    return min(MAX_K, max(k + 1, wanted))


@dataclass
class Planner:
    """One run's edge plans (never shared between runs): the holders read so far, by token,
    and the plans made since the hop's figures were last taken."""

    read_counts: CountReader
    hub_holders: int
    read_holders: int = 0
    held: dict[str, int] = field(default_factory=dict)
    plans: list[EdgePlan] = field(default_factory=list)
    notes: Counter[str] = field(default_factory=Counter)

    @property
    def total(self) -> int:
        """The table's documents (read with the first counts)."""
        return self.held.get(ALL, 0)

    async def holders(self, tokens: Sequence[str | None]) -> list[int | None]:
        """Each token's holders (None for an edge with no single token), read once per run:
        the tokens not read before in one burst, with the table's documents the first time."""
        missing = {t for t in tokens if t is not None and t not in self.held}
        if missing and ALL not in self.held:
            missing.add(ALL)
        if missing:
            self.held.update(await self.read_counts(missing))
            self.notes.update(holder_reads=len(missing), plan_rounds=1)
        return [None if t is None else self.held[t] for t in tokens]

    def choose(self, holders: Sequence[int | None], pool_usable: bool) -> list[str]:
        """Each edge's plan from its holders: "none", "read" (few holders), "pool" (a hub,
        when the pool can be used) or "search"."""
        return [self._plan(h, pool_usable) for h in holders]

    def _plan(self, holders: int | None, pool_usable: bool) -> str:
        if holders is None:
            return "search"
        if holders == 0:
            return "none"
        if holders <= self.read_holders:
            return "read"
        if pool_usable and 0 < self.hub_holders <= holders:
            return "pool"
        return "search"

    async def read(
        self,
        edges: Sequence[MetadataEdge],
        owns: list[list[Clause]],
        k: int,
        io: PlanReads,
    ) -> tuple[list[list[Hit]], Pool | None]:
        """Each edge's `k` best hits by its plan, in the order of `edges` (their clauses
        `owns`), and the run's pool: the holders read, then, in flight together, the few
        holders' edges read whole, the hubs answered from the pool (read first when the run
        has none; with a pool, every searched edge asks it first) and the other edges
        searched; each edge's plan kept (`take`)."""
        holders = await self.holders([single_token(o, io.clause_text) for o in owns])
        run = _HopRun(self, owns, k, io, self.choose(holders, io.pool_usable), holders)
        await run.go()
        self.record(edges, run.plans, holders, [len(hits) for hits in run.out])
        return run.out, run.pool

    def record(
        self,
        edges: Sequence[MetadataEdge],
        plans: Sequence[str],
        holders: Sequence[int | None],
        rows: Sequence[int],
    ) -> None:
        """Keep each edge's plan for the hop's figures (`take`)."""
        for edge, plan, held, n in zip(edges, plans, holders, rows, strict=True):
            self.plans.append(EdgePlan(edge_label(edge), plan, held, n))
        self.notes.update(
            plan_none=plans.count("none"), plan_pool=plans.count("pool"),
            plan_read=plans.count("read"),
        )  # fmt: skip

    def take(self) -> tuple[list[EdgePlan], dict[str, int]]:
        """The plans and counts since the last call, then forgotten."""
        plans, self.plans = self.plans, []
        notes, self.notes = dict(self.notes), Counter()
        return plans, {k: v for k, v in notes.items() if v}


@dataclass
class _HopRun:
    """One planned hop's reads (`Planner.read`): the edges' plans, their hits as they come,
    and the run's pool."""

    planner: Planner
    owns: list[list[Clause]]
    k: int
    io: PlanReads
    plans: list[str]
    holders: list[int | None]
    out: list[list[Hit]] = field(init=False)
    pool: Pool | None = field(init=False)

    def __post_init__(self) -> None:
        self.out = [[] for _ in self.owns]
        self.pool = self.io.pool

    async def go(self) -> None:
        """Every edge's reads by its plan, the three kinds in flight together."""
        plans = self.plans
        whole = [i for i, p in enumerate(plans) if p == "read"]
        asked = [i for i, p in enumerate(plans) if p in ("pool", "search")]
        pooled = asked if self.pool is not None else [i for i in asked if plans[i] == "pool"]
        searched = [i for i in asked if i not in pooled]
        with one_error():
            async with anyio.create_task_group() as tg:
                if whole:
                    tg.start_soon(self.read_whole, whole)
                if searched:
                    tg.start_soon(self.search, searched)
                if pooled:
                    tg.start_soon(self.from_pool, pooled)

    async def search(self, edges: list[int]) -> None:
        """The filtered searches of these edges."""
        hits = await self.io.search([self.owns[i] for i in edges])
        for i, found in zip(edges, hits, strict=True):
            self.out[i] = found

    async def from_pool(self, edges: list[int]) -> None:
        """These edges answered from the run's pool (read first when there is none), those
        it cannot answer searched (`pool.answer_edges`)."""
        if self.pool is None:
            size = pool_size(self.planner.total, self.planner.hub_holders, self.k)
            self.pool = await self.io.read_pool(size)
            self.planner.notes.update(plan_rounds=1)
        pool = self.pool
        hits = await self.io.pooled(pool, [self.owns[i] for i in edges])
        for i, found in zip(edges, hits, strict=True):
            self.out[i] = found
            self.plans[i] = "search" if pool.answer(self.owns[i], self.k) is None else "pool"

    async def read_whole(self, edges: list[int]) -> None:
        """Every holder of these edges read (one LIMIT for all: the most holders counted,
        plus `k`), each edge's `k` best kept; an edge whose read filled the LIMIT has more
        holders than counted and is searched after all."""
        limit = max(self.holders[i] or 0 for i in edges) + self.k
        got = await self.io.complete([self.owns[i] for i in edges], limit)
        full = [i for i, hits in zip(edges, got, strict=True) if len(hits) >= limit]
        for i, hits in zip(edges, got, strict=True):
            if i not in full:
                self.out[i] = by_score(hits)[: self.k]
        read = sum(len(h) for h in got)
        self.planner.notes.update(read_rows=read, read_kept=sum(len(self.out[i]) for i in edges))
        if full:
            self.planner.notes.update(read_searched=len(full), plan_rounds=1)
            for i in full:
                self.plans[i] = "search"
            await self.search(full)


def single_token(own: Sequence[Clause], clause_text: str) -> str | None:
    """The token an edge's clauses test (hoprag's layout: one `tokens CONTAINS ?`), None when
    they are anything else."""
    if len(own) != 1:
        return None
    text, values = own[0]
    if text != clause_text or len(values) != 1 or not isinstance(values[0], str):
        return None
    return values[0]
