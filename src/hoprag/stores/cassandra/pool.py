"""The candidate pool: a post-filter plan for edges whose value many documents share.

Cassandra 5.0 answers a filtered vector search (`tokens CONTAINS ? ORDER BY embedding ANN OF ?
LIMIT k`) by first materializing every primary key that passes the filter, then searching the
vector index among them (SAI's pre-filter plan). An edge on a value that a fixed share of the
documents holds (the most common keyword, the most cited document) therefore costs time in
proportion to the corpus, not to `k` (docs/benchmarks.md, "Cost as the corpus grows").

A run with a pool (`CassandraStore(candidate_pool=N)`) reads, beside its start search, the `N`
documents most similar to the query that pass its filter: their ids, scores and tokens only,
no content and no vectors. An edge whose value at least `k` of them hold is then answered from
the pool: those `k` are the edge's `k` best (every document more similar than the last of them
is in the pool, so none is missed), exactly what the filtered search returns when the vector
index is exact. When the pool holds every document that passes the filter (it came back with
fewer than `N`), it answers every edge. The rows of the edges it answers are read by id, one
read for all of a hop's pooled edges, in the same round as the other edges' searches. Edges it
cannot answer are searched as before. So a pool trades one vector search of `N` rows per run
for the filtered searches of the common values."""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio

from hoprag.errors import one_error
from hoprag.stores.base import Hit
from hoprag.stores.cassandra.executor import Executor
from hoprag.stores.cassandra.guards import GET_CHUNK
from hoprag.stores.cassandra.layouts import Clause, Layout
from hoprag.stores.cassandra.vectors import PackedVector


@dataclass
class Pool:
    """One run's candidate pool: ids best first, the positions holding each clause's token,
    and whether it holds every document passing the run's filter."""

    ids: list[str]
    complete: bool
    clause_text: str
    by_token: dict[Any, list[int]] = field(default_factory=dict)

    @classmethod
    def of(cls, rows: Iterable[Sequence[Any]], *, complete: bool, clause_text: str) -> Pool:
        """The pool of rows `(id, tokens, similarity)` (any order; an id once, its best score
        kept), ranked best first, equal scores by id."""
        best: dict[str, tuple[float, Any]] = {}
        for doc_id, tokens, score in rows:
            s = float(score) if score is not None else float("-inf")
            if doc_id not in best or s > best[doc_id][0]:
                best[doc_id] = (s, tokens)
        ranked = sorted(best.items(), key=lambda item: (-item[1][0], item[0]))
        pool = cls([doc_id for doc_id, _ in ranked], complete, clause_text)
        for position, (_, (_, tokens)) in enumerate(ranked):
            for token in tokens or ():
                pool.by_token.setdefault(token, []).append(position)
        return pool

    def answer(self, own: Sequence[Clause], k: int) -> list[str] | None:
        """The ids of the `k` best documents holding every clause of `own` (an edge's), best
        first, when the pool can tell them; None when the edge must be searched."""
        positions: list[int] | None = None
        for text, values in own:
            if text != self.clause_text or len(values) != 1:
                return None  # a clause the pool's tokens cannot decide
            held = self.by_token.get(values[0], [])
            positions = held if positions is None else sorted(set(positions) & set(held))
        if positions is None:
            return None
        if len(positions) < k and not self.complete:
            return None
        return [self.ids[p] for p in positions[:k]]


async def read_pool(
    executor: Executor,
    layout: Layout,
    branches: Sequence[Sequence[Clause]],
    qv: PackedVector,
    size: int,
    limiter: anyio.CapacityLimiter,
) -> tuple[Pool, int, int]:
    """The `size` documents most similar to `qv` that pass the filter's pushed-down
    `branches`, as a `Pool` (ids, tokens and scores: one read per branch, in one burst), with
    the number of reads and of rows."""
    calls: list[tuple[str, list[Any]]] = []
    for branch in branches:
        text = layout.pool_query([t for t, _ in branch])
        assert text is not None  # the caller checked the layout
        calls.append((text, [qv, *(v for _, vals in branch for v in vals), qv, size]))
    pages = await executor.burst(calls, "candidate pool", limiter)
    complete = all(len(rows) < size for rows in pages)
    rows = [row for page in pages for row in page]
    pool = Pool.of(rows, complete=complete, clause_text=layout.condition_clause)
    return pool, len(calls), len(rows)


async def answer_edges(
    pool: Pool,
    owns: Sequence[Sequence[Clause]],
    k: int,
    search: Callable[[list[list[Clause]]], Awaitable[list[list[Hit]]]],
    get: Callable[[list[str]], Awaitable[list[Hit]]],
) -> tuple[list[list[Hit]], Counter[str]]:
    """Every edge's `k` best hits, in the order of `owns` (the edges' clauses): those the
    pool answers read by id (`get`, one call for all their ids), the others `search`ed, both
    in flight together; with counts of what was done (`pooled_edges`, `pooled_rows`,
    `pooled_gets`, `pooled_get_rows`)."""
    answers = [pool.answer(own, k) for own in owns]
    rest = [list(own) for own, ids in zip(owns, answers, strict=True) if ids is None]
    wanted = list(dict.fromkeys(i for ids in answers if ids for i in ids))
    searched: list[list[Hit]] = []
    got: dict[str, Hit] = {}

    async def run_search() -> None:
        searched.extend(await search(rest))

    with one_error():
        async with anyio.create_task_group() as tg:
            tg.start_soon(run_search)
            got.update((h.id, h) for h in await get(wanted))
    return _assemble(answers, searched, got, len(wanted))


def _assemble(
    answers: list[list[str] | None], searched: list[list[Hit]], got: dict[str, Hit], asked: int
) -> tuple[list[list[Hit]], Counter[str]]:
    """The edges' hits in order (the searched ones in turn, the pooled ones from `got`) and
    the counts of the pooled ones (`answer_edges`; `asked` ids were read by id)."""
    left = iter(searched)
    out: list[list[Hit]] = []
    notes: Counter[str] = Counter()
    for ids in answers:
        if ids is None:
            out.append(next(left))
            continue
        hits = [got[i] for i in ids if i in got]
        out.append(hits)
        notes.update(pooled_edges=1, pooled_rows=len(hits))
    if asked:
        notes.update(pooled_gets=-(-asked // GET_CHUNK), pooled_get_rows=len(got))
    return out, notes
