"""A scope as a start source: `scoped_hits` expands a `Scope` (`hoprag.scope_expansion`, one
round per hop, `hoprag.rounds`) and ranks its members that pass the run's filter, best first by
the query vector or by an `order_by` field. `hoprag.search.asearch` returns them as nodes; a
traversal with a scope starts from them (`hoprag.traversal`).

How the final ranking runs is the plan (`result.stats.plan`, shown by `stats.explain()`):

* `exact`: the expansion's own complete reads carry the query vector, so every member comes
  with its score; the filter is checked on each member here (`hoprag.filters.matches`, the
  evaluator every store's checks agree with) and the passing members are ranked. No read is
  added. (When the walk cannot carry the vector, as for a traversal's start, whose prepared
  query may read embeddings, the members passing the filter are read scored instead: `aget`
  for the earlier depths, `amatching` for the last hop, in the same round as its expansion.)
* `pushdown`: the last hop's metadata values are ranked by the store: one vector search per
  value with the filter ANDed in (`aadjacent_many`, k each, one burst), merged to the top `k`
  with the earlier members (read scored by `aget`). The expansion's last round reads the
  members without their vectors. It returns what `exact` returns: a member of the global top
  `k` reached through a value is among that value's top `k`.

`plan="auto"` is `exact`: the expansion reads every member of the last hop anyway, and exact
was the faster plan in every case of the films benchmark (docs/benchmarks.md); `pushdown`
runs only when asked for. A scope of depth
`d` answers in at most `d + 1` sequential rounds (a 2-hop scope: anchors, hop 1, hop 2 with the
ranking reads), with one exception: when the ranking reads could not ride along with the
expansion (a depth-0 scope with a `start` filter, or an expansion that ran out of new edges
before `max_depth`) they take one more round. An ids scope ranks its anchors in round 0."""

from __future__ import annotations

import functools
import math
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from hoprag.edges import MISSING, MetadataEdge, nested_get
from hoprag.errors import invalid
from hoprag.filters import matches
from hoprag.rounds import open_round, run_round
from hoprag.scope_expansion import Expansion, HopPlan, Member
from hoprag.scopes import Scope
from hoprag.stats import HopStats, TraversalStats
from hoprag.stores.base import DEFAULT_MAX_CONCURRENCY, Hit, PreparedQuery, Store
from hoprag.validation import check_field

__all__ = [
    "PLANS",
    "PUSHDOWN_MAX_K",
    "check_order_by",
    "order_hits",
    "scope_start_hits",
    "scoped_hits",
]

PLANS = ("auto", "exact", "pushdown")
"""The ranking plans a scoped search can be asked for (see the module docstring)."""
PUSHDOWN_MAX_K = 1000
"""The largest `k` the pushdown plan serves (a vector search answers at most 1000 rows on
Cassandra)."""


def check_order_by(order_by: Any) -> tuple[str, bool] | None:
    """`order_by` as (field, descending), or None."""
    if order_by is None:
        return None
    allowed = "a field name, 'field' for ascending or '-field' for descending, or None"
    if not isinstance(order_by, str) or order_by in ("", "-"):
        raise invalid("order_by", order_by, allowed)
    descending = order_by.startswith("-")
    name = order_by[1:] if descending else order_by
    check_field(name, what="order_by")
    return name, descending


def _value_rank(value: Any) -> tuple[int, Any]:
    """Sort key of a present value: numbers, then strings, then booleans, then anything else
    by its text form (each group in its own order)."""
    if isinstance(value, bool):
        return (2, value)
    if isinstance(value, int | float):
        return (0, value)
    if isinstance(value, str):
        return (1, value)
    return (3, repr(value))


def order_hits(hits: Sequence[Hit], field: str, descending: bool) -> list[Hit]:
    """`hits` ordered by metadata `field` (descending when asked); documents lacking the field
    (or holding None) come last; ties by id. Mixed types order numbers, strings, booleans,
    others (the group order reversed too when descending)."""
    present: list[tuple[tuple[int, Any], Hit]] = []
    missing: list[Hit] = []
    for hit in sorted(hits, key=lambda h: h.id):
        value = nested_get(hit.document.metadata, field)
        if value is MISSING or value is None:
            missing.append(hit)
        else:
            present.append((_value_rank(value), hit))
    present.sort(key=lambda p: p[0], reverse=descending)  # stable: ties keep id order
    return [h for _, h in present] + missing


def _by_score(hits: Sequence[Hit]) -> list[Hit]:
    """Best score first (unscored last), ties by id."""
    return sorted(hits, key=lambda h: (-(h.score if h.score is not None else -math.inf), h.id))


def _choose(plan: str, rank: PreparedQuery, k: int, order: tuple[str, bool] | None) -> str:
    """The plan to run ("exact" or "pushdown"), before knowing the last hop."""
    if plan == "exact" or order is not None or rank.embedding is None:
        if plan == "pushdown":
            raise invalid("plan", plan, "'auto' or 'exact' when there is no query to rank by")
        return "exact"
    if plan == "pushdown":
        if k > PUSHDOWN_MAX_K:
            raise invalid("plan", plan, f"'auto' or 'exact' for k > {PUSHDOWN_MAX_K}")
        return "pushdown"
    # "auto" is exact: a scope's expansion reads every member of its last hop anyway, so a
    # fan-out of filtered vector searches only repeats that work (measured on the films:
    # docs/benchmarks.md, "Scoped search").
    return "exact"


class _Ranking:
    """The ranking reads of one scoped search: `rank`'s hits by id, and the ids asked."""

    def __init__(self, rank: PreparedQuery, k: int, limit: int) -> None:
        self.rank = rank
        self.k = k
        self.limit = limit
        self.hits: dict[str, Hit] = {}
        self.asked: set[str] = set()

    def _take(self, hits: Sequence[Hit], hop: HopStats) -> None:
        hop.rows += len(hits)
        for h in hits:
            self.hits.setdefault(h.id, h)

    def get(self, ids: list[str], hop: HopStats) -> Callable[[], Awaitable[None]]:
        """A call reading `ids` scored and filtered."""
        hop.queries["get"] += 1
        self.asked.update(ids)

        async def call() -> None:
            self._take(await self.rank.aget(ids), hop)

        return call

    def edges(
        self, edges: list[MetadataEdge], hop: HopStats, pushdown: bool
    ) -> Callable[[], Awaitable[None]]:
        """A call reading the last hop's metadata edges: the top `k` of each (pushdown) or
        every filtered document of each (exact)."""
        kind = "adjacent" if pushdown else "match"
        hop.queries[kind] = hop.queries.get(kind, 0) + len(edges)

        async def call() -> None:
            if pushdown:
                pages = await self.rank.aadjacent_many(edges, k=self.k)
            else:
                pages = await self.rank.amatching(edges, limit=self.limit)
            for hits in pages:
                self._take(hits, hop)

        return call


async def _prepare_walk(
    store: Store,
    scope: Scope,
    rank: PreparedQuery,
    vector: Sequence[float] | None,
    max_concurrency: int,
) -> Expansion:
    """The expansion, its queries prepared (with `vector` when they rank) and sharing `rank`'s
    limiter."""
    walk = await store.aprepare(
        vector, None, include_embeddings=False, max_concurrency=max_concurrency
    )
    walk.limiter = rank.limiter
    anchors = None
    if scope.compiled_start is not None:
        anchors = await store.aprepare(
            vector, scope.compiled_start, include_embeddings=False, max_concurrency=max_concurrency
        )
        anchors.limiter = rank.limiter
    return Expansion(scope, walk, anchors)


async def scoped_hits(
    store: Store,
    scope: Scope,
    rank: PreparedQuery,
    *,
    k: int,
    embedding: Sequence[float] | None = None,
    order: tuple[str, bool] | None = None,
    plan: str = "auto",
    stats: TraversalStats,
    max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
) -> tuple[list[tuple[Hit, Member]], Expansion]:
    """The `k` best members of `scope` that pass `rank`'s filter, each with its `Member`
    (depth, path), best first by `rank`'s vector (or by `order`), and the expansion. `rank`
    is the run's prepared query (its vector, filter and `include_embeddings`); `embedding` is
    its raw vector, given when the expansion's reads may carry it (when `rank` reads no
    embeddings: the expansion then ranks by itself, the filter checked on its members).
    Every round is one `HopStats` in `stats`; `stats.plan` names the plan that ran. All
    queries share `rank`'s limiter."""
    chosen = _choose(plan, rank, k, order)
    walk_ranks = chosen == "exact" and _walk_can_rank(rank, embedding)
    exp = await _prepare_walk(
        store, scope, rank, embedding if walk_ranks else None, max_concurrency
    )
    if exp.anchor_query is not None:
        stats.filters["scope start"] = exp.anchor_query.filter_plan
    ranking = _Ranking(rank, k, exp.limit)
    hop = open_round(stats)
    calls: list[Callable[[], Awaitable[None]]] = [functools.partial(exp.read_anchors, hop)]
    if scope.ids and not walk_ranks:
        calls.append(ranking.get(list(scope.ids), hop))  # anchors known: ranked at once
    await run_round(hop, calls)
    pushdown = plan if chosen == "pushdown" else None
    used_pushdown = await _walk(exp, ranking, walk_ranks, pushdown, stats)
    members = exp.members
    cands = _members_ranked(members, rank, ranking, walk_ranks)
    ordered = order_hits(cands, *order) if order is not None else _by_score(cands)
    stats.plan = "pushdown" if used_pushdown else "exact"
    stats.scope_size = len(members)
    return [(h, members[h.id]) for h in ordered[:k]], exp


def _walk_can_rank(rank: PreparedQuery, embedding: Sequence[float] | None) -> bool:
    """Whether the expansion's own reads can rank the members: `rank` reads no embeddings
    and the expansion can carry its vector (or it has none)."""
    return not rank.include_embeddings and (embedding is not None or rank.embedding is None)


async def _walk(
    exp: Expansion,
    ranking: _Ranking,
    walk_ranks: bool,
    pushdown: str | None,
    stats: TraversalStats,
) -> bool:
    """Run the expansion's rounds after the first: one per hop, the last hop's expansion reads
    in one round with the ranking reads (of the members met so far, and, under the pushdown
    plan, of the last hop's metadata edges), or a round of its own for the ranking when the
    walk ended early. `pushdown`: None, or the plan asked for ("pushdown" or "auto") when the
    pushdown plan was chosen. Whether it ran."""
    scope = exp.scope
    while step := exp.plan():
        hop = open_round(stats)
        if step.depth < scope.max_depth or walk_ranks:
            await run_round(hop, [functools.partial(exp.step, step, hop)])
            continue
        return await _last_round(exp, step, ranking, pushdown, hop)
    rest = [m for m in exp.members if m not in ranking.asked]
    if rest and not walk_ranks:
        hop = open_round(stats)
        await run_round(hop, [ranking.get(rest, hop)])
    return False


async def _last_round(
    exp: Expansion, step: HopPlan, ranking: _Ranking, pushdown: str | None, hop: HopStats
) -> bool:
    """The last hop's expansion reads and the ranking reads in one round; whether the pushdown
    plan ran (see `_walk`)."""
    calls: list[Callable[[], Awaitable[None]]] = [functools.partial(exp.step, step, hop)]
    earlier = [m for m in exp.members if m not in ranking.asked] + [e.id for e in step.ids]
    if earlier:
        calls.append(ranking.get(earlier, hop))
    used = False
    if step.meta:
        # auto: a fan-out that could read more rows than the scope may hold is not cheaper.
        fits = len(step.meta) * ranking.k <= exp.scope.max_size
        used = pushdown is not None and (pushdown == "pushdown" or fits)
        calls.append(ranking.edges(step.meta, hop, used))
    await run_round(hop, calls)
    return used


def _members_ranked(
    members: Mapping[str, Member], rank: PreparedQuery, ranking: _Ranking, walk_ranks: bool
) -> list[Hit]:
    """The members' hits that pass the filter: checked here when the walk ranked (its reads
    carry no filter), else those the ranking reads found."""
    if not walk_ranks:
        return [h for h in ranking.hits.values() if h.id in members]
    flt = rank.filter
    return [
        m.hit for m in members.values() if flt.matches_all or matches(flt, m.hit.document.metadata)
    ]


async def scope_start_hits(
    store: Store,
    scope: Scope,
    prepared: PreparedQuery,
    stats: TraversalStats,
    max_concurrency: int,
    *,
    k: int,
) -> list[Hit]:
    """A scope as a traversal's start source: the best `k` members that pass the run's filter,
    read through the run's `prepared` query; the scope's rounds are noted on the traversal's
    hop 0 (`scope_rounds`, `scope_size`, `scope_queries`)."""
    inner = TraversalStats()
    found, _ = await scoped_hits(
        store, scope, prepared, k=k, stats=inner, max_concurrency=max_concurrency
    )
    notes = stats.hops[0].notes
    notes["scope_rounds"] = inner.rounds
    notes["scope_size"] = inner.scope_size or 0
    notes["scope_queries"] = inner.total_queries
    stats.filters.update((k, v) for k, v in inner.filters.items() if k != "filter")
    return [hit for hit, _ in found]
