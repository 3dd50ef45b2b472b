"""`asearch` / `search`: the `k` best documents for a query, optionally inside a `Scope`.

Without a scope, `asearch` is a plain filtered vector search: the `k` documents most similar
to the query that pass `filter`, as depth-0 nodes. With a scope, it expands the scope
(`hoprag.scope_expansion`: one round of concurrent queries per hop) and returns the `k` best
of its members that pass `filter`, each node with the depth and path the expansion gave it.
With `query=None`, `order_by` ranks instead of similarity ("year" ascending, "-year"
descending).

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
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from hoprag.documents import Node, Path
from hoprag.edges import MISSING, Edges, MetadataEdge, nested_get
from hoprag.embeddings.base import aembed_query
from hoprag.errors import invalid
from hoprag.filters import Filter, check_complete_read, matches
from hoprag.scope_expansion import Expansion, HopPlan, Member, gather
from hoprag.scopes import DEFAULT_MAX_SIZE, MAX_SCOPE_SIZE, Scope
from hoprag.stats import HopStats, TraversalResult, TraversalStats
from hoprag.stores.base import DEFAULT_MAX_CONCURRENCY, Hit, PreparedQuery, Store
from hoprag.sync import run_sync
from hoprag.validation import check_field, check_int

__all__ = ["PLANS", "PUSHDOWN_MAX_K", "asearch", "scoped_hits", "search"]

PLANS = ("auto", "exact", "pushdown")
"""The ranking plans a scoped search can be asked for (see the module docstring)."""
PUSHDOWN_MAX_K = 1000
"""The largest `k` the pushdown plan serves (a vector search answers at most 1000 rows on
Cassandra)."""

_NO_EDGES = Edges(frozenset(), frozenset())


def _check_order_by(order_by: Any) -> tuple[str, bool] | None:
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


def _hop(stats: TraversalStats) -> HopStats:
    hop = HopStats(depth=len(stats.hops))
    stats.hops.append(hop)
    return hop


async def _timed(hop: HopStats, calls: list[Callable[[], Awaitable[None]]]) -> None:
    """One round: `calls` concurrently, its wall time recorded on `hop`."""
    t0 = time.perf_counter()
    try:
        await gather(calls)
    finally:
        hop.seconds = time.perf_counter() - t0


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
    if scope.start is not None:
        anchors = await store.aprepare(
            vector, scope.start, include_embeddings=False, max_concurrency=max_concurrency
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
    hop = _hop(stats)
    calls: list[Callable[[], Awaitable[None]]] = [functools.partial(exp.read_anchors, hop)]
    if scope.ids and not walk_ranks:
        calls.append(ranking.get(list(scope.ids), hop))  # anchors known: ranked at once
    await _timed(hop, calls)
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
        hop = _hop(stats)
        if step.depth < scope.max_depth or walk_ranks:
            await _timed(hop, [functools.partial(exp.step, step, hop)])
            continue
        return await _last_round(exp, step, ranking, pushdown, hop)
    rest = [m for m in exp.members if m not in ranking.asked]
    if rest and not walk_ranks:
        hop = _hop(stats)
        await _timed(hop, [ranking.get(rest, hop)])
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
    await _timed(hop, calls)
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


def _node(hit: Hit, depth: int, path: Path, edges: Edges) -> Node:
    doc = hit.document
    return Node(
        id=doc.id,
        content=doc.content,
        depth=depth,
        similarity_score=float(hit.score) if hit.score is not None else float("nan"),
        embedding=doc.embedding,
        metadata=doc.metadata,
        incoming_edges=edges.incoming,
        outgoing_edges=edges.outgoing,
        path=path,
    )


def _check_args(
    query: Any, k: Any, scope: Any, order_by: Any, query_embedding: Any, plan: Any
) -> tuple[int, tuple[str, bool] | None]:
    if query is not None and not isinstance(query, str):
        raise invalid("query", query, "a string, or None with order_by")
    k = check_int("k", k, minimum=0, maximum=MAX_SCOPE_SIZE)
    if scope is not None and not isinstance(scope, Scope):
        raise invalid("scope", scope, "a hoprag Scope or None")
    order = _check_order_by(order_by)
    has_query = query is not None or query_embedding is not None
    if order is None and not has_query:
        raise invalid(
            "query", None, "a query text (or query_embedding), unless order_by ranks instead"
        )
    if order is not None and has_query:
        raise invalid(
            "order_by",
            order_by,
            "None when a query is given (results rank by similarity to the query)",
            hint="pass query=None to rank by a field",
        )
    if plan not in PLANS:
        raise invalid("plan", plan, f"one of {', '.join(map(repr, PLANS))}")
    return k, order


async def asearch(
    query: str | None,
    *,
    store: Store,
    k: int = 10,
    scope: Scope | None = None,
    filter: Filter | None = None,
    order_by: str | None = None,
    query_embedding: Sequence[float] | None = None,
    max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
    plan: str = "auto",
) -> TraversalResult:
    """The `k` documents most similar to `query` (or `query_embedding`) that pass `filter`,
    among the members of `scope` when given (see the module docstring), as a
    `TraversalResult` of nodes (depth and path from the scope; depth 0 without one) with
    `.stats` (one hop per round). With `query=None`, `order_by` ranks instead ("field"
    ascending, "-field" descending, documents lacking the field last, ties by id); giving both
    a query and `order_by` is an error. Nodes carry no embeddings. An empty scope gives an
    empty result; a scope beyond its `max_size` raises `ScopeTooLargeError`. At most
    `max_concurrency` store queries are in flight."""
    k, order = _check_args(query, k, scope, order_by, query_embedding, plan)
    check_int("max_concurrency", max_concurrency, minimum=1)
    emb: Sequence[float] | None = query_embedding
    if emb is None and query is not None:
        emb = await aembed_query(store.embedding, query)
    stats = TraversalStats()
    t0 = time.perf_counter()
    rank = await store.aprepare(
        emb, filter, include_embeddings=False, max_concurrency=max_concurrency
    )
    stats.filters["filter"] = rank.filter_plan
    if scope is not None:
        found, exp = await scoped_hits(
            store,
            scope,
            rank,
            k=k,
            embedding=emb,
            order=order,
            plan=plan,
            stats=stats,
            max_concurrency=max_concurrency,
        )
        nodes = [_node(h, m.depth, m.path, _edges_of(exp, m)) for h, m in found]
        stats.seconds = time.perf_counter() - t0
        return TraversalResult(nodes, stats)
    hop = _hop(stats)
    if order is None:
        stats.plan = "search"
        hop.queries["search"] += 1
        hits = await rank.asearch(k=k) if k else []
    else:
        if rank.filter.matches_all:
            raise invalid(
                "filter",
                filter,
                "a non-empty filter (or a scope) when order_by ranks without a query",
                hint="ordering every document of a store would read it all",
            )
        check_complete_read(rank.filter, "filter", filter)
        stats.plan = "filtered"
        hop.queries["filter"] = 1
        hits = await rank.afiltered(limit=DEFAULT_MAX_SIZE + 1)
        if len(hits) > DEFAULT_MAX_SIZE:
            raise invalid(
                "filter",
                filter,
                f"a filter matching at most {DEFAULT_MAX_SIZE} documents for order_by",
                hint="narrow the filter or use a Scope with a larger max_size",
            )
        hits = order_hits(hits, *order)[:k]
    hop.rows = len(hits)
    stats.seconds = hop.seconds = time.perf_counter() - t0
    return TraversalResult([_node(h, 0, Path((h.id,)), _NO_EDGES) for h in hits], stats)


def _edges_of(exp: Expansion, member: Member) -> Edges:
    return exp.edges(member)


def search(
    query: str | None,
    *,
    store: Store,
    k: int = 10,
    scope: Scope | None = None,
    filter: Filter | None = None,
    order_by: str | None = None,
    query_embedding: Sequence[float] | None = None,
    max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
    plan: str = "auto",
) -> TraversalResult:
    """Synchronous `asearch` (`hoprag.sync.run_sync`: works inside and outside a running
    event loop)."""
    call = functools.partial(
        asearch,
        query,
        store=store,
        k=k,
        scope=scope,
        filter=filter,
        order_by=order_by,
        query_embedding=query_embedding,
        max_concurrency=max_concurrency,
        plan=plan,
    )
    return run_sync(call)
