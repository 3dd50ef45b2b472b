"""Entity resolution on a CassandraStore (`CassandraStore.aresolve`): the values catalogue of
the declared entity fields answers, with the text and the fields only ever bound values. Two
catalogue reads per requested field (`norm = ? AND field = ?`, `words CONTAINS ? AND ... AND
field = ?`), all in one burst, then one `tokens CONTAINS ?` count per candidate of the score
tiers returned (`hoprag.resolve.rank`).

The cap (`resolve.MAX_CANDIDATES`) is MemoryStore's rule: the distinct values the text matches
in the requested fields, summed over them; values of other fields are never read, so they
never count. Each read asks for one row more than the cap, so a read that fills its limit has
already passed it."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import anyio

from hoprag.edges import MetadataEdge
from hoprag.errors import InvalidInputError
from hoprag.filters import CompiledFilter
from hoprag.resolve import MAX_CANDIDATES, Candidate, Match, ResolveRequest, rank, too_many
from hoprag.stores.cassandra import tokens as tok
from hoprag.stores.cassandra.fields import DeclaredField, declare_command

if TYPE_CHECKING:
    from hoprag.stores.cassandra.parts import TableParts

RESOLVE_CONCURRENCY = 32
"""Count queries one resolve has in flight at most."""


VIEW_COUNT_LIMIT = 10_000
"""With a filter (a store view's), a candidate's documents are counted by reading them, up to
this many: a larger count is shown as this."""


async def resolve_declared(
    parts: TableParts, request: ResolveRequest, filter: CompiledFilter
) -> list[Candidate]:
    """The candidates of a checked `request` on the declared entity fields of the set-up
    table `parts`, counting the documents that pass `filter` (all of them when it matches
    all)."""
    for field in request.fields:
        entity_field(parts, field)
    limiter = anyio.CapacityLimiter(RESOLVE_CONCURRENCY)
    matches = await _catalogue_matches(parts, request, limiter)
    if filter.matches_all:
        return await rank(request, matches, _token_counter(parts, limiter))
    return await rank(request, matches, _filtered_counter(parts, filter))


async def _catalogue_matches(
    parts: TableParts, request: ResolveRequest, limiter: anyio.CapacityLimiter
) -> list[Match]:
    """The catalogue's values of the requested fields that the text matches (refused beyond
    the cap)."""
    cat = parts.values
    bound = MAX_CANDIDATES + 1
    exact, token = cat.exact_query(), cat.token_query(len(request.words))
    calls: list[tuple[str, list[Any]]] = []
    for field in request.fields:
        calls.append((exact, [request.norm, field, bound]))
        calls.append((token, [*sorted(request.words), field, bound]))
    pages = await parts.executor.burst(calls, "resolve", limiter)
    longest = max(len(page) for page in pages)
    if longest > MAX_CANDIDATES:
        raise too_many(request, longest)
    rows = {(f, value_json): (norm, words) for page in pages for f, value_json, norm, words in page}
    matches: list[Match] = []
    for (field, value_json), (norm, words) in rows.items():
        m = request.match(field, json.loads(value_json), norm, words or ())
        if m is not None:
            matches.append(m)
    if len(matches) > MAX_CANDIDATES:
        raise too_many(request, len(matches))
    return matches


Counter = Callable[[list[Match]], Awaitable[list[int]]]
"""Counts the documents carrying each match's value (`hoprag.resolve.rank` calls it per tier)."""


def _token_counter(parts: TableParts, limiter: anyio.CapacityLimiter) -> Counter:
    """Counts with one `SELECT COUNT(*) ... WHERE tokens CONTAINS ?` per match, one burst."""
    text = parts.values.count_query()

    async def count(tier: list[Match]) -> list[int]:
        calls = [(text, [tok.token(m.field, m.value)]) for m in tier]
        pages = await parts.executor.burst(calls, "resolve count", limiter)
        return [int(rows[0][0]) if rows else 0 for rows in pages]

    return count


def _filtered_counter(parts: TableParts, filter: CompiledFilter) -> Counter:
    """Counts the documents passing `filter` too, by reading them as a scope reads an edge's
    members (`amatching`: the filter pushed down as in every read), one burst per tier."""
    query = parts.query(None, filter, include_embeddings=False)

    async def count(tier: list[Match]) -> list[int]:
        edges = [MetadataEdge(m.field, m.value) for m in tier]
        pages = await query.amatching(edges, limit=VIEW_COUNT_LIMIT)
        return [len(hits) for hits in pages]

    return count


def entity_field(parts: TableParts, field: str) -> DeclaredField:
    """The declared entity field `field`, or InvalidInputError naming the fix."""
    decl = parts.layout.fields.get(field)
    if decl is None or decl.kind != "entity":
        entities = [f for f, d in parts.layout.fields.items() if d.kind == "entity"]
        what = "not declared" if decl is None else f"declared {decl.kind!r}"
        raise InvalidInputError(
            f"aresolve reads the values catalogue of declared entity fields; {field!r} is "
            f"{what} on {parts.layout.fq} (its entity fields: {entities}); declare it with "
            f"`{declare_command(parts.keyspace, parts.table, {field: 'entity'})}` or "
            f"`await store.adeclare_fields({{{field!r}: 'entity'}})`",
            argument="fields",
            value=field,
            allowed=f"declared entity fields: {entities}",
        )
    if not decl.ready:
        raise InvalidInputError(
            f"the declaration of {field!r} on {parts.layout.fq} did not complete: run "
            f"`{declare_command(parts.keyspace, parts.table, {field: 'entity'})}` again",
            argument="fields",
            value=field,
            allowed="entity fields whose declaration completed",
        )
    return decl
