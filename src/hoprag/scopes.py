"""`Scope`: a set of documents reached through the graph, to search or start a traversal in.

A scope's anchors are the documents matching its `start` filter, or the documents with its
`ids`; they are at depth 0. Every document reachable from an anchor by following `edges` (the
edge specs of a traversal) at most `max_depth` times is in the scope too, with no `adjacent_k`
cut: a scope is a set, not a ranking. `max_size` bounds it: a scope that reaches more documents
raises `ScopeTooLargeError` (an `InvalidInputError`) saying how many were reached at which
depth. Expansion is done by `hoprag.scope_expansion` (where `ScopeTooLargeError` and
`MAX_SCOPE_SIZE` are defined; this module exports them); `hoprag.search.asearch` ranks a
scope's members and `hoprag.engine.traversal.atraverse(scope=...)` starts inside one, through the
start source a scope gives (`Scope.start_source`, `hoprag.scope_ranking.ScopeStart`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hoprag.edges import EdgeFunction, EdgeSpec, MetadataEdgeFunction, parse_edges
from hoprag.engine.rounds import StartSource
from hoprag.errors import invalid
from hoprag.filters import CompiledFilter, Filter, check_complete_read, compile_filter
from hoprag.scope_expansion import MAX_SCOPE_SIZE, ScopeTooLargeError
from hoprag.scope_ranking import ScopeStart
from hoprag.stats import TraversalStats
from hoprag.stores.base import PreparedQuery, Store
from hoprag.validation import check_ids, check_int

__all__ = [
    "DEFAULT_MAX_SIZE",
    "MAX_SCOPE_DEPTH",
    "MAX_SCOPE_SIZE",
    "Scope",
    "ScopeTooLargeError",
]

DEFAULT_MAX_SIZE = 10_000
"""Documents a scope may hold unless it says otherwise."""
MAX_SCOPE_DEPTH = 8
"""The largest `max_depth` (hops from the anchors)."""


def _given_ids(ids: Any) -> Sequence[str]:
    """A Scope's `ids` as given, read once when an iterator (checked later, when non-empty)."""
    if ids is None:
        return ()
    if isinstance(ids, str | bytes | Mapping) or not isinstance(ids, Iterable):
        raise invalid("Scope ids", ids, "a list of id strings (wrap a single id in a list)")
    return ids if isinstance(ids, Sequence) else tuple(ids)


@dataclass(frozen=True, slots=True)
class Scope:
    """The documents reachable from anchors (matching `start`, or with the given `ids`) within
    `max_depth` hops along `edges` (see the module docstring). Checked at construction:
    exactly one of `start` (a non-empty filter) and `ids` (a non-empty list) is given,
    `max_depth` is 0..`MAX_SCOPE_DEPTH`, `max_size` 1..`MAX_SCOPE_SIZE`, and `edges` is a list
    of edge specs (or an edge function), non-empty when `max_depth` > 0. Scopes compare by
    value and are hashable (`start` is left out of the hash, being a dict)."""

    start: Filter | None = field(default=None, hash=False)
    ids: Sequence[str] = ()
    edges: Iterable[EdgeSpec] | EdgeFunction | MetadataEdgeFunction = ()
    max_depth: int = 1
    max_size: int = DEFAULT_MAX_SIZE
    edge_fn: EdgeFunction = field(init=False, repr=False, compare=False)
    compiled_start: CompiledFilter | None = field(
        init=False, repr=False, compare=False, default=None
    )
    """`start`, checked and compiled (None for an ids scope)."""

    def __post_init__(self) -> None:
        _set = object.__setattr__
        has_start = self.start is not None
        ids = _given_ids(self.ids)
        _set(self, "ids", ids)
        has_ids = len(ids) > 0
        if has_start == has_ids:
            raise invalid(
                "Scope(start=..., ids=...)",
                {"start": self.start, "ids": ids},
                "exactly one of start (a filter) and ids (a non-empty list of ids)",
            )
        if has_start:
            if not isinstance(self.start, Mapping) or not self.start:
                raise invalid(
                    "Scope start",
                    self.start,
                    "a non-empty filter mapping, e.g. {'cast': 'Meryl Streep'}",
                    hint="an empty filter would anchor the scope on every document",
                )
            # checked now (and that its anchors can be read from an index); the stores take
            # the compiled filter as it is
            compiled = compile_filter(self.start)
            check_complete_read(compiled, "Scope start", self.start)
            _set(self, "start", dict(self.start))
            _set(self, "compiled_start", compiled)
        else:
            _set(self, "ids", tuple(check_ids(ids, what="Scope ids")))
        depth = check_int("Scope max_depth", self.max_depth, minimum=0, maximum=MAX_SCOPE_DEPTH)
        size = check_int("Scope max_size", self.max_size, minimum=1, maximum=MAX_SCOPE_SIZE)
        _set(self, "max_depth", depth)
        _set(self, "max_size", size)
        edges: Any = self.edges
        if not callable(edges):
            if isinstance(edges, str | bytes | Mapping) or not isinstance(edges, Iterable):
                raise invalid("Scope edges", edges, "a list of (source, target) edge specs")
            edges = tuple(edges)
            _set(self, "edges", edges)
            if depth > 0 and not edges:
                raise invalid(
                    "Scope edges",
                    edges,
                    f"at least one edge spec for max_depth={depth}",
                    hint="give edges, e.g. [('director', 'director')], or max_depth=0",
                )
        edge_fn = parse_edges(edges)
        if isinstance(edge_fn, MetadataEdgeFunction) and not isinstance(
            self.edges, MetadataEdgeFunction
        ):
            _set(self, "edges", edge_fn.specs)  # checked specs, Id() as "$id": hashable
        _set(self, "edge_fn", edge_fn)

    def start_source(
        self,
        store: Store,
        prepared: PreparedQuery,
        stats: TraversalStats,
        *,
        k: int,
        max_concurrency: int,
    ) -> StartSource:
        """The scope as a traversal's start source (`hoprag.engine.rounds.StartSource`): its `k`
        best members that pass the run's filter, read through the run's `prepared` query,
        its rounds inside the traversal's first round (`hoprag.scope_ranking.ScopeStart`)."""
        return ScopeStart(store, self, prepared, stats, k=k, max_concurrency=max_concurrency)

    def describe(self) -> str:
        """A short text form for messages and `explain()`."""
        anchors = f"start={self.start!r}" if self.start is not None else f"ids={list(self.ids)!r}"
        edges = list(self.edges) if isinstance(self.edges, tuple) else self.edges
        shown = f", edges={edges!r}" if edges else ""
        return f"Scope({anchors}{shown}, max_depth={self.max_depth}, max_size={self.max_size})"
