"""Documents going into a store, and the nodes a traversal yields with the path to each."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

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
            raise ValueError(f"Document id must be a non-empty string, got {self.id!r}")
        if not isinstance(self.content, str):
            raise TypeError(
                f"Document {self.id!r}: content must be a string, got {type(self.content).__name__}"
            )
        if not isinstance(self.metadata, Mapping):
            raise TypeError(
                f"Document {self.id!r}: metadata must be a mapping, got "
                f"{type(self.metadata).__name__}"
            )
        if self.embedding is not None:
            vec = list(map(float, self.embedding))
            if not vec:
                raise ValueError(f"Document {self.id!r}: embedding is empty")
            if not all(map(math.isfinite, vec)):
                raise ValueError(f"Document {self.id!r}: embedding contains NaN or infinity")
            self.embedding = vec


@dataclass(frozen=True, slots=True)
class Path:
    """A chain of followed edges: `nodes[0]` is a start node, `edges[i]` led from `nodes[i]`
    to `nodes[i + 1]`, so `len(nodes) == len(edges) + 1`."""

    nodes: tuple[str, ...]
    edges: tuple[Edge, ...] = ()

    def __post_init__(self) -> None:
        if not self.nodes:
            raise ValueError("A path has at least one node")
        if len(self.nodes) != len(self.edges) + 1:
            raise ValueError(
                f"A path with {len(self.nodes)} nodes needs {len(self.nodes) - 1} edges, "
                f"got {len(self.edges)}"
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
