"""The frontier of a multi-hop run: which edges were followed, from where, and how a document
the run reaches is credited to one of them, so that its depth and path are the same whatever
order a store answers in. The traversal (`hoprag.engine.traversal`) and a scope's expansion
(`hoprag.scope_expansion`) are its two clients; each reads its hops as rounds
(`hoprag.engine.rounds`).

Crediting: an edge is followed from the first source (in the order the client gives them) at
the smallest depth; every edge gets the next number in follow order. A document is credited
to the followed edge, among those that returned it and those of its incoming edges that were
followed, reached first at the least depth, and its path is that edge's source path plus the
edge."""

from __future__ import annotations

from collections.abc import Iterable

from hoprag.documents import Document, Path
from hoprag.edges import Edge, EdgeFunction, Edges, IdEdge, MetadataEdge, edge_sort_key
from hoprag.errors import invalid

__all__ = ["Followed", "Frontier", "split_edges"]


class Followed:
    """A followed edge: its depth (1 + the depth of its source), the source's path and its
    number in follow order."""

    __slots__ = ("depth", "order", "source_path")

    def __init__(self, depth: int, source_path: Path, order: int) -> None:
        self.depth = depth
        self.source_path = source_path
        self.order = order


def split_edges(edges: Iterable[Edge]) -> tuple[list[MetadataEdge], list[IdEdge]]:
    """`edges` as metadata edges and id edges (each in the given order); anything else is the
    edge function's mistake and raises `InvalidInputError`."""
    meta: list[MetadataEdge] = []
    ids: list[IdEdge] = []
    for edge in edges:
        if isinstance(edge, MetadataEdge):
            meta.append(edge)
        elif isinstance(edge, IdEdge):
            ids.append(edge)
        else:
            raise invalid("an edge", edge, "a MetadataEdge or IdEdge (from the edge function)")
    return meta, ids


class Frontier:
    """The followed edges of one run and its documents' edges (from `edge_fn`, computed once
    per document). State of one call, never shared."""

    def __init__(self, edge_fn: EdgeFunction) -> None:
        self.edge_fn = edge_fn
        self.followed: dict[Edge, Followed] = {}
        self._edges: dict[str, Edges] = {}

    def edges_of(self, doc: Document) -> Edges:
        """The document's edges; the edge function must return `Edges`."""
        edges = self._edges.get(doc.id)
        if edges is not None:
            return edges
        edges = self.edge_fn(doc)
        if not isinstance(edges, Edges):
            raise invalid(
                f"the edge function's result for document {doc.id!r}",
                edges,
                "an Edges(incoming=frozenset, outgoing=frozenset)",
            )
        self._edges[doc.id] = edges
        return edges

    def follow(self, sources: Iterable[tuple[int, Path, Iterable[Edge]]]) -> list[Edge]:
        """Follow the edges of `sources` (each its depth, path and edges) not followed before,
        each from the source that reaches it at the least depth (the first such); the new
        edges, in follow order (each source's edges in `edge_sort_key` order)."""
        new: dict[Edge, Followed] = {}
        for depth, path, edges in sources:
            for edge in sorted(edges, key=edge_sort_key):
                if edge in self.followed:
                    continue
                seen = new.get(edge)
                if seen is None or depth + 1 < seen.depth:
                    new[edge] = Followed(depth + 1, path, len(self.followed) + len(new))
        self.followed.update(new)
        return list(new)

    def leading_edge(
        self, via: Iterable[Edge], incoming: frozenset[Edge] = frozenset()
    ) -> Edge | None:
        """Of the followed edges in `via` (those that returned a document) and in `incoming`
        (its incoming edges), the one reached first at the least depth; None if none is."""
        followed = self.followed
        # Look up whichever side is smaller (a hub document can have thousands of edges).
        if len(followed) < len(incoming):
            leading: Iterable[Edge] = [e for e in followed if e in incoming]
        else:
            leading = incoming
        best: tuple[int, int, Edge] | None = None
        for edge in (*via, *leading):
            f = followed.get(edge)
            if f is not None and (best is None or (f.depth, f.order) < best[:2]):
                best = (f.depth, f.order, edge)
        return None if best is None else best[2]

    def path_to(self, edge: Edge, doc_id: str) -> Path:
        """The path of a document credited to the followed `edge`."""
        return self.followed[edge].source_path.extend(edge, doc_id)
