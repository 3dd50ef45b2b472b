"""A scope as a start source: `scoped_hits` expands a `Scope` (`hoprag.scope_expansion`, one
`hoprag.engine.rounds.Round` per hop, opened from the `Rounds` it is given) and ranks its
members that pass the run's filter, best first by the query vector or by an `order_by` field.
`hoprag.search.asearch` returns them as nodes, each round a hop of its stats; a traversal with
a scope starts from them through `ScopeStart` (a `hoprag.engine.rounds.StartSource`), the
scope's rounds run inside the traversal's first round, whose hop counts their queries and
rounds.

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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hoprag.edges import MISSING, MetadataEdge, nested_get
from hoprag.engine.rounds import Round, Rounds, Slot
from hoprag.errors import invalid
from hoprag.filters import matches
from hoprag.scope_expansion import Expansion, HopPlan, Member
from hoprag.stats import HopStats, TraversalStats
from hoprag.stores.base import DEFAULT_MAX_CONCURRENCY, Hit, PreparedQuery, Store, by_score
from hoprag.validation import check_field

if TYPE_CHECKING:
    from hoprag.scopes import Scope

__all__ = [
    "PLANS",
    "PUSHDOWN_MAX_K",
    "ScopeStart",
    "Scoped",
    "check_order_by",
    "order_hits",
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

    def get(self, ids: list[str], rnd: Round) -> None:
        """Add to `rnd` one `get` reading `ids` scored and filtered."""
        self.asked.update(ids)
        hop = rnd.hop

        async def call() -> None:
            self._take(await self.rank.aget(ids), hop)

        rnd.add("get", call)

    def edges(self, edges: list[MetadataEdge], rnd: Round, pushdown: bool) -> None:
        """Add to `rnd` the reads of the last hop's metadata edges, one query each: the top
        `k` of each (pushdown, `adjacent`) or every filtered document of each (exact,
        `match`)."""
        hop = rnd.hop

        async def call() -> None:
            if pushdown:
                pages = await self.rank.aadjacent_many(edges, k=self.k)
            else:
                pages = await self.rank.amatching(edges, limit=self.limit)
            for hits in pages:
                self._take(hits, hop)

        rnd.add("adjacent" if pushdown else "match", call, count=len(edges))


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


@dataclass(slots=True)
class Scoped:
    """What `scoped_hits` found: the best members with their `Member` (depth, path), the
    expansion, and the plan that ran ("exact" or "pushdown")."""

    hits: list[tuple[Hit, Member]]
    expansion: Expansion
    plan: str


async def scoped_hits(
    store: Store,
    scope: Scope,
    rank: PreparedQuery,
    *,
    k: int,
    embedding: Sequence[float] | None = None,
    order: tuple[str, bool] | None = None,
    plan: str = "auto",
    rounds: Rounds,
    stats: TraversalStats,
    max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
) -> Scoped:
    """The `k` best members of `scope` that pass `rank`'s filter, best first by `rank`'s
    vector (or by `order`), with the expansion and the plan that ran. `rank` is the run's
    prepared query (its vector, filter and `include_embeddings`); `embedding` is its raw
    vector, given when the expansion's reads may carry it (when `rank` reads no embeddings:
    the expansion then ranks by itself, the filter checked on its members). Every round is
    opened from `rounds`; how the store answered the scope's start filter is recorded in
    `stats.filters`. All queries share `rank`'s limiter."""
    chosen = _choose(plan, rank, k, order)
    walk_ranks = chosen == "exact" and _walk_can_rank(rank, embedding)
    exp = await _prepare_walk(
        store, scope, rank, embedding if walk_ranks else None, max_concurrency
    )
    if exp.anchor_query is not None:
        stats.filters["scope start"] = exp.anchor_query.filter_plan
    ranking = _Ranking(rank, k, exp.limit)
    rnd = rounds.open()
    with rnd.timed():
        anchors = exp.read_anchors(rnd)
        if scope.ids and not walk_ranks:
            ranking.get(list(scope.ids), rnd)  # anchors known: ranked at once
        await rnd.send()
        exp.take_anchors(anchors.value, rnd.hop)
    pushdown = plan if chosen == "pushdown" else None
    used_pushdown = await _walk(exp, ranking, walk_ranks, pushdown, rounds)
    members = exp.members
    cands = _members_ranked(members, rank, ranking, walk_ranks)
    ordered = order_hits(cands, *order) if order is not None else by_score(cands)
    found = [(h, members[h.id]) for h in ordered[:k]]
    return Scoped(found, exp, "pushdown" if used_pushdown else "exact")


def _walk_can_rank(rank: PreparedQuery, embedding: Sequence[float] | None) -> bool:
    """Whether the expansion's own reads can rank the members: `rank` reads no embeddings
    and the expansion can carry its vector (or it has none)."""
    return not rank.include_embeddings and (embedding is not None or rank.embedding is None)


async def _walk(
    exp: Expansion,
    ranking: _Ranking,
    walk_ranks: bool,
    pushdown: str | None,
    rounds: Rounds,
) -> bool:
    """Run the expansion's rounds after the first: one per hop, the last hop's expansion reads
    in one round with the ranking reads (of the members met so far, and, under the pushdown
    plan, of the last hop's metadata edges), or a round of its own for the ranking when the
    walk ended early. `pushdown`: None, or the plan asked for ("pushdown" or "auto") when the
    pushdown plan was chosen. Whether it ran."""
    scope = exp.scope
    while step := exp.plan():
        rnd = rounds.open()
        if step.depth < scope.max_depth or walk_ranks:
            with rnd.timed():
                reads = exp.read_step(step, rnd)
                await rnd.send()
                exp.take_step(step, reads, rnd.hop)
            continue
        return await _last_round(exp, step, ranking, pushdown, rnd)
    rest = [m for m in exp.members if m not in ranking.asked]
    if rest and not walk_ranks:
        rnd = rounds.open()
        ranking.get(rest, rnd)
        await rnd.run()
    return False


async def _last_round(
    exp: Expansion, step: HopPlan, ranking: _Ranking, pushdown: str | None, rnd: Round
) -> bool:
    """The last hop's expansion reads and the ranking reads in one round; whether the pushdown
    plan ran (see `_walk`)."""
    earlier = [m for m in exp.members if m not in ranking.asked] + [e.id for e in step.ids]
    used = False
    with rnd.timed():
        reads = exp.read_step(step, rnd)
        if earlier:
            ranking.get(earlier, rnd)
        if step.meta:
            # auto: a fan-out that could read more rows than the scope may hold is not cheaper.
            fits = len(step.meta) * ranking.k <= exp.scope.max_size
            used = pushdown is not None and (pushdown == "pushdown" or fits)
            ranking.edges(step.meta, rnd, used)
        await rnd.send()
        exp.take_step(step, reads, rnd.hop)
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


class ScopeStart:
    """A scope as a traversal's start source (`hoprag.engine.rounds.StartSource`, given by
    `Scope.start_source`): the best `k` members that pass the run's filter, read through the
    run's `prepared` query. Its rounds run inside the traversal's first round
    (`Round.within`), so that round's hop counts their queries by kind and waits for their
    rounds; the hop's notes say the scope's size (`scope_size`) and the rows its reads
    returned (`scope_rows`), and `stats.filters` how the store answered its start filter."""

    def __init__(
        self,
        store: Store,
        scope: Scope,
        prepared: PreparedQuery,
        stats: TraversalStats,
        *,
        k: int,
        max_concurrency: int,
    ) -> None:
        self.store = store
        self.scope = scope
        self.prepared = prepared
        self.stats = stats
        self.k = k
        self.max_concurrency = max_concurrency

    def read(self, rnd: Round) -> Slot[Sequence[Hit]]:
        """Add the scope's rounds to `rnd`, in flight beside its other reads."""
        return rnd.beside(functools.partial(self._hits, rnd))

    async def _hits(self, rnd: Round) -> Sequence[Hit]:
        inner = rnd.within()
        found = await scoped_hits(
            self.store,
            self.scope,
            self.prepared,
            k=self.k,
            rounds=inner,
            stats=self.stats,
            max_concurrency=self.max_concurrency,
        )
        notes = rnd.hop.notes
        notes["scope_size"] = len(found.expansion.members)
        notes["scope_rows"] = notes.get("scope_rows", 0) + sum(h.rows for h in inner.hops)
        return [hit for hit, _ in found.hits]
