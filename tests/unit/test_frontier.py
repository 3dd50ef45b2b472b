"""The frontier's crediting rules, which fix every node's depth and path in the traversal and
in a scope's expansion whatever order a store answers in."""

from __future__ import annotations

import pytest

from hoprag.documents import Document, Path
from hoprag.edges import Edges, IdEdge, MetadataEdge
from hoprag.engine.frontier import Frontier, split_edges
from hoprag.errors import InvalidInputError


def _no_edges(doc: Document) -> Edges:
    return Edges(frozenset(), frozenset())


A = MetadataEdge("k", "a")
B = MetadataEdge("k", "b")
C = IdEdge("c")


def test_an_edge_met_twice_is_followed_once_from_its_first_source() -> None:
    frontier = Frontier(_no_edges)
    first, second = Path(("x",)), Path(("y",))
    new = frontier.follow([(0, first, [B, A]), (0, second, [A, C])])
    assert new == [A, B, C]  # each source's edges in edge order, then the next source's
    assert frontier.followed[A].source_path == first
    assert frontier.followed[C].source_path == second
    assert frontier.follow([(1, second, [A, B])]) == []  # never followed again


def test_an_edge_is_followed_from_the_source_at_the_least_depth() -> None:
    frontier = Frontier(_no_edges)
    deep, shallow = Path(("x", "w"), (C,)), Path(("y",))
    frontier.follow([(1, deep, [A]), (0, shallow, [A])])
    assert frontier.followed[A].depth == 1
    assert frontier.followed[A].source_path == shallow


def test_a_document_is_credited_to_the_edge_reached_first_at_the_least_depth() -> None:
    frontier = Frontier(_no_edges)
    frontier.follow([(0, Path(("x",)), [A, B])])
    frontier.follow([(1, Path(("x", "y"), (A,)), [C])])
    assert frontier.leading_edge([B, A]) == A  # A was followed before B
    assert frontier.leading_edge([C, B]) == B  # B at depth 1, C at depth 2
    assert frontier.path_to(B, "d") == Path(("x", "d"), (B,))


def test_a_followed_incoming_edge_that_did_not_return_the_document_is_credited_too() -> None:
    frontier = Frontier(_no_edges)
    frontier.follow([(0, Path(("x",)), [A]), (1, Path(("x", "y"), (A,)), [B])])
    assert frontier.leading_edge([B], frozenset({A})) == A
    assert frontier.leading_edge([], frozenset({MetadataEdge("k", "z")})) is None


def test_the_edge_function_runs_once_per_document_and_must_return_edges() -> None:
    calls: list[str] = []

    def edge_fn(doc: Document) -> Edges:
        calls.append(doc.id)
        return Edges(frozenset({A}), frozenset())

    frontier = Frontier(edge_fn)
    doc = Document(id="d", content="")
    assert frontier.edges_of(doc) is frontier.edges_of(doc)
    assert calls == ["d"]
    bad = Frontier(lambda doc: [A])  # type: ignore[arg-type, return-value]
    with pytest.raises(InvalidInputError, match="edge function's result for document 'd'"):
        bad.edges_of(doc)


def test_split_edges_refuses_what_is_not_an_edge() -> None:
    assert split_edges([A, C, B]) == ([A, B], [C])
    with pytest.raises(InvalidInputError, match="MetadataEdge or IdEdge"):
        split_edges([A, "links"])  # type: ignore[list-item]
