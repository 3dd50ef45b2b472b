"""hoprag: graph traversal retrieval over Apache Cassandra 5.0 and Astra DB.

A query is embedded, a vector search finds start documents, and the traversal follows edges
defined by the documents' metadata hop by hop, streaming each admitted node with its depth,
score and path. `atraverse` / `astream` / `traverse` run a traversal over any `Store`
(`hoprag.stores.MemoryStore`, `hoprag.stores.CassandraStore`) with a `Strategy`
(`Eager`, `Mmr`, `Scored`, or the path search `Beam` with its `Prune` and
signals `StartBoost`, `Importance`, `Recency`). `asearch` / `search` rank the documents of a
`Scope` (a set reached through the graph from anchors) or run a plain filtered search;
`Store.aresolve` turns a typed name into the `Candidate` values it may mean.
Errors: `HopragError`, with `InvalidInputError` (a `ValueError`) for the caller's mistakes
and `StoreError` / `StoreUnavailableError` for a store that failed or could not be reached
(docs/stores.md)."""

from hoprag.documents import Document, Node, Path
from hoprag.edges import (
    Edge,
    EdgeFunction,
    Edges,
    EdgeSpec,
    Id,
    IdEdge,
    MetadataEdge,
    MetadataEdgeFunction,
    parse_edges,
)
from hoprag.engine.traversal import TraversalStream, astream, atraverse, traverse
from hoprag.errors import (
    AuthenticationError,
    HopragError,
    InvalidInputError,
    StoreError,
    StoreUnavailableError,
    TraversalTimeoutError,
)
from hoprag.filters import FilterPlan
from hoprag.resolve import Candidate
from hoprag.scopes import Scope, ScopeTooLargeError
from hoprag.search import asearch, search
from hoprag.stats import HopStats, TraversalResult, TraversalStats
from hoprag.strategies import (
    Beam,
    Eager,
    Importance,
    Mmr,
    Prune,
    Recency,
    RunState,
    Scored,
    Signal,
    StartBoost,
    Strategy,
)

__version__ = "0.1.0"

__all__ = [
    "AuthenticationError",
    "Beam",
    "Candidate",
    "Document",
    "Eager",
    "Edge",
    "EdgeFunction",
    "EdgeSpec",
    "Edges",
    "FilterPlan",
    "HopStats",
    "HopragError",
    "Id",
    "IdEdge",
    "Importance",
    "InvalidInputError",
    "MetadataEdge",
    "MetadataEdgeFunction",
    "Mmr",
    "Node",
    "Path",
    "Prune",
    "Recency",
    "RunState",
    "Scope",
    "ScopeTooLargeError",
    "Scored",
    "Signal",
    "StartBoost",
    "StoreError",
    "StoreUnavailableError",
    "Strategy",
    "TraversalResult",
    "TraversalStats",
    "TraversalStream",
    "TraversalTimeoutError",
    "__version__",
    "asearch",
    "astream",
    "atraverse",
    "parse_edges",
    "search",
    "traverse",
]
