"""Documents going into a store, and the nodes a traversal yields with the path to each."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hoprag.errors import invalid

if TYPE_CHECKING:
    from hoprag.edges import Edge


@dataclass(slots=True)
class Document:
    """A document to store: a unique `id`, its text `content`, JSON-like `metadata` and,
    optionally, a precomputed `embedding` (stores embed documents that lack one)."""

    id: str
    content: str
    metadata: dict[str, Any] = field(default_factory=dict)
    embedding: list[float] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id:
            raise invalid("Document id", self.id, "a non-empty string")
        if not isinstance(self.content, str):
            raise invalid(f"content of document {self.id!r}", self.content, "a string")
        if not isinstance(self.metadata, Mapping):
            raise invalid(f"metadata of document {self.id!r}", self.metadata, "a mapping")
        if self.embedding is not None:
            what = f"embedding of document {self.id!r}"
            try:
                vec = list(map(float, self.embedding))
            except (TypeError, ValueError):
                raise invalid(what, self.embedding, "a sequence of floats") from None
            if not vec or not all(map(math.isfinite, vec)):
                raise invalid(what, self.embedding, "a non-empty sequence of finite floats")
            self.embedding = vec


@dataclass(frozen=True, slots=True)
class Path:
    """A chain of followed edges: `nodes[0]` is a start node, `edges[i]` led from `nodes[i]`
    to `nodes[i + 1]`, so `len(nodes) == len(edges) + 1`."""

    nodes: tuple[str, ...]
    edges: tuple[Edge, ...] = ()

    def __post_init__(self) -> None:
        if not self.nodes:
            raise invalid("Path nodes", self.nodes, "at least one node id")
        if len(self.nodes) != len(self.edges) + 1:
            raise invalid(
                "Path edges", self.edges, f"{len(self.nodes) - 1} edges for {len(self.nodes)} nodes"
            )

    @property
    def depth(self) -> int:
        """Number of edges followed from the start node."""
        return len(self.edges)

    def extend(self, edge: Edge, node_id: str) -> Path:
        """Return this path followed by `edge` to `node_id`."""
        return Path((*self.nodes, node_id), (*self.edges, edge))


@dataclass(slots=True)
class Node:
    """A document admitted by a traversal, with its depth, its similarity to the query, the edges
    it has, the path that reached it and the strategy's scores in `extra_metadata`."""

    id: str
    content: str
    depth: int
    similarity_score: float
    embedding: Sequence[float] | None
    metadata: Mapping[str, Any]
    incoming_edges: frozenset[Edge]
    outgoing_edges: frozenset[Edge]
    path: Path
    extra_metadata: dict[str, Any] = field(default_factory=dict)


def known_similarity(node: Node) -> float:
    """`node`'s similarity score, or -1.0 (the lowest cosine) when it has none or it is not
    finite: how Beam and the ranking read it."""
    s = node.similarity_score
    return float(s) if s is not None and math.isfinite(s) else -1.0
