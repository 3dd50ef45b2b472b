"""`asearch` / `search`: the `k` best documents for a query, optionally inside a `Scope`.

Without a scope, `asearch` is a plain filtered vector search: the `k` documents most similar
to the query that pass `filter`, as depth-0 nodes. With a scope, it expands the scope
(`hoprag.scope_expansion`: one round of concurrent queries per hop) and returns the `k` best
of its members that pass `filter`, each node with the depth and path the expansion gave it.
With `query=None`, `order_by` ranks instead of similarity ("year" ascending, "-year"
descending).

How a scope's members are ranked (the plans `exact` and `pushdown`, and the round bound) is
`hoprag.scope_ranking`'s docstring."""

from __future__ import annotations

import functools
import time
from collections.abc import Sequence
from typing import Any

from hoprag import telemetry
from hoprag.documents import Path
from hoprag.edges import Edges
from hoprag.embeddings.base import aembed_query_vector
from hoprag.engine.rounds import Round, Rounds
from hoprag.errors import invalid
from hoprag.filters import Filter, check_complete_read
from hoprag.scope_expansion import Expansion, Member
from hoprag.scope_ranking import PLANS, PUSHDOWN_MAX_K, check_order_by, order_hits, scoped_hits
from hoprag.scopes import DEFAULT_MAX_SIZE, MAX_SCOPE_SIZE, Scope
from hoprag.stats import TraversalResult, TraversalStats
from hoprag.stores.base import DEFAULT_MAX_CONCURRENCY, Hit, PreparedQuery, Store, hit_node
from hoprag.sync import run_sync
from hoprag.validation import check_int, checked_vector

__all__ = ["PLANS", "PUSHDOWN_MAX_K", "asearch", "scoped_hits", "search"]

_NO_EDGES = Edges(frozenset(), frozenset())


def _check_args(
    query: Any, k: Any, scope: Any, order_by: Any, query_embedding: Any, plan: Any
) -> tuple[int, tuple[str, bool] | None]:
    if query is not None and not isinstance(query, str):
        raise invalid("query", query, "a string, or None with order_by")
    k = check_int("k", k, minimum=0, maximum=MAX_SCOPE_SIZE)
    if scope is not None and not isinstance(scope, Scope):
        raise invalid("scope", scope, "a hoprag Scope or None")
    order = check_order_by(order_by)
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
    stats = TraversalStats()
    run = functools.partial(
        _search, query, store, k, scope, filter, order, query_embedding, max_concurrency, plan
    )
    span = telemetry.start_retrieval("search", query=query, top_k=k, store=store)
    if span is None:
        return await run(stats)
    result: TraversalResult | None = None
    try:
        with telemetry.attached(span):
            result = await run(stats)
        return result
    except Exception as exc:
        telemetry.end_retrieval(span, stats, None, exc)
        raise
    finally:
        if result is not None:
            found = [(n.id, n.similarity_score) for n in result]
            telemetry.end_retrieval(span, stats, found)


async def _search(
    query: str | None,
    store: Store,
    k: int,
    scope: Scope | None,
    filter: Filter | None,
    order: tuple[str, bool] | None,
    query_embedding: Sequence[float] | None,
    max_concurrency: int,
    plan: str,
    stats: TraversalStats,
) -> TraversalResult:
    """`asearch` after its argument checks, filling `stats`."""
    emb: Sequence[float] | None = None
    if query_embedding is not None:  # checked once, here; the stores check its dimension
        emb = checked_vector(query_embedding, what="query embedding")
    elif query is not None:
        emb = await aembed_query_vector(store.embedding, query)
    t0 = time.perf_counter()
    rank = await store.aprepare(
        emb, filter, include_embeddings=False, max_concurrency=max_concurrency
    )
    stats.filters["filter"] = rank.filter_plan
    if scope is not None:
        found = await scoped_hits(
            store,
            scope,
            rank,
            k=k,
            embedding=emb,
            order=order,
            plan=plan,
            rounds=Rounds(stats),
            stats=stats,
            max_concurrency=max_concurrency,
        )
        exp = found.expansion
        nodes = [hit_node(h, m.path, _edges_of(exp, m), m.depth) for h, m in found.hits]
        stats.plan = found.plan
        stats.scope_size = len(exp.members)
        stats.seconds = time.perf_counter() - t0
        return TraversalResult(nodes, stats)
    rnd = Round.open(stats)
    with rnd.timed():
        hits = await _rank(rank, rnd, stats, k, order, filter)
        rnd.hop.rows = len(hits)
    stats.seconds = time.perf_counter() - t0
    return TraversalResult([hit_node(h, Path((h.id,)), _NO_EDGES) for h in hits], stats)


async def _rank(
    rank: PreparedQuery,
    rnd: Round,
    stats: TraversalStats,
    k: int,
    order: tuple[str, bool] | None,
    filter: Filter | None,
) -> list[Hit]:
    """The `k` best hits without a scope, read in `rnd`: by similarity, or by `order` over a
    filtered read."""
    if order is None:
        stats.plan = "search"
        if not k:
            return []  # a search for no hits sends no query
        found = rnd.add("search", functools.partial(rank.asearch, k=k))
        await rnd.send()
        return list(found.value)
    if rank.filter.matches_all:
        raise invalid(
            "filter",
            filter,
            "a non-empty filter (or a scope) when order_by ranks without a query",
            hint="ordering every document of a store would read it all",
        )
    check_complete_read(rank.filter, "filter", filter)
    stats.plan = "filtered"
    read = rnd.add("filter", functools.partial(rank.afiltered, limit=DEFAULT_MAX_SIZE + 1))
    await rnd.send()
    hits = read.value
    if len(hits) > DEFAULT_MAX_SIZE:
        raise invalid(
            "filter",
            filter,
            f"a filter matching at most {DEFAULT_MAX_SIZE} documents for order_by",
            hint="narrow the filter or use a Scope with a larger max_size",
        )
    return order_hits(hits, *order)[:k]


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
