"""Parity with graph-retriever 0.8.0 (installed as a test dependency): same documents, same
embedding and parameters give the same selected ids and similarity scores, except for the
graph-retriever bugs that DESIGN §2 lists, each of which has its own test below showing the bug
really exists in 0.8.0 and that hoprag behaves correctly."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import graph_retriever.strategies as gr_strategies
import pytest
from graph_retriever import Content
from graph_retriever import traverse as gr_traverse
from graph_retriever.adapters.in_memory import InMemory

import hoprag
from hoprag import Document
from hoprag.embeddings import HashEmbedding
from hoprag.stores import MemoryStore
from shared_data import graph_documents

DIM = 16
EDGES = [("keywords", "keywords"), ("cites", "$id"), ("$id", "cites")]
QUERIES = ["alpha", "beta gamma", "delta"]


def _similarity(node: Any) -> float:
    return float(node.similarity_score)


def _pair(kind: str, **params: Any) -> tuple[Any, hoprag.Strategy]:
    if kind == "eager":
        return gr_strategies.Eager(**params), hoprag.Eager(**params)
    if kind == "mmr":
        return gr_strategies.Mmr(**params), hoprag.Mmr(**params)
    return (
        gr_strategies.Scored(scorer=_similarity, **params),
        hoprag.Scored(scorer=_similarity, **params),
    )


def _stores(docs: list[Document], embedding: Callable[[str], Sequence[float]]) -> tuple[Any, Any]:
    contents = [
        Content(id=d.id, content=d.content, embedding=d.embedding or [], metadata=d.metadata)
        for d in docs
    ]
    store = MemoryStore(embedding=embedding)
    store.add(docs)
    return InMemory(embedding, contents), store


@pytest.fixture(scope="module")
def stores() -> tuple[Any, Any]:
    return _stores(graph_documents(200, DIM, seed=3), HashEmbedding(DIM))


# Cases. graph-retriever gives every node of a hop's batch the depth of the batch's first node;
# that only changes *which* nodes are selected when `max_depth` decides whether a node is
# traversed, and only when a node's shortest incoming edge was followed in an earlier hop than
# the one that returned it, which needs `adjacent_k` to have truncated that earlier hop. So
# the cases with `max_depth` set either use an `adjacent_k` larger than the corpus (no
# truncation) or are Eager/Mmr cases checked to be unaffected. Scored with `max_depth` and a
# small `adjacent_k` is left out: there the depth bug and graph-retriever's Scored overshoot
# (admitting more than select_k, then trimming) both change the selection.
CASES: list[tuple[str, dict[str, Any]]] = [
    ("eager", {"select_k": 5, "start_k": 1, "adjacent_k": 3, "max_depth": None}),
    ("eager", {"select_k": 12, "start_k": 3, "adjacent_k": 10, "max_depth": 2}),
    ("eager", {"select_k": 30, "start_k": 2, "adjacent_k": 300, "max_depth": 1}),
    ("eager", {"select_k": 60, "start_k": 3, "adjacent_k": 300, "max_depth": 2}),
    ("mmr", {"select_k": 5, "start_k": 1, "adjacent_k": 3, "lambda_mult": 0.3}),
    ("mmr", {"select_k": 12, "start_k": 3, "adjacent_k": 10, "lambda_mult": 0.7}),
    ("mmr", {"select_k": 12, "start_k": 3, "adjacent_k": 10, "max_depth": 2}),
    ("mmr", {"select_k": 10, "start_k": 2, "adjacent_k": 300, "max_depth": 1, "lambda_mult": 0.1}),
    (
        "mmr",
        {"select_k": 8, "start_k": 4, "adjacent_k": 5, "lambda_mult": 0.5, "min_mmr_score": 0.1},
    ),
    ("scored", {"select_k": 5, "start_k": 1, "adjacent_k": 3}),
    ("scored", {"select_k": 12, "start_k": 3, "adjacent_k": 10, "per_iteration_limit": 2}),
    ("scored", {"select_k": 12, "start_k": 2, "adjacent_k": 300, "max_depth": 1}),
    ("scored", {"select_k": 20, "start_k": 3, "adjacent_k": 300, "max_depth": 2}),
]


@pytest.mark.parametrize("query", QUERIES)
@pytest.mark.parametrize(("kind", "params"), CASES)
def test_same_selection_as_graph_retriever(
    stores: tuple[Any, Any], query: str, kind: str, params: dict[str, Any]
) -> None:
    gr_store, store = stores
    gr_strategy, strategy = _pair(kind, **params)
    expected = gr_traverse(query, edges=EDGES, strategy=gr_strategy, store=gr_store)
    got = hoprag.traverse(query, edges=EDGES, strategy=strategy, store=store)
    # Same ids in the same order (Eager: discovery order; Mmr: selection order; Scored: score).
    assert [n.id for n in got] == [n.id for n in expected]
    assert len(got) == min(params["select_k"], len(got))
    for mine, theirs in zip(got, expected, strict=True):
        assert mine.similarity_score == pytest.approx(float(theirs.similarity_score), abs=1e-5)
        assert mine.extra_metadata["_similarity_score"] == pytest.approx(
            float(theirs.extra_metadata["_similarity_score"]), abs=1e-5
        )
        if kind == "mmr":
            assert mine.extra_metadata["_mmr_score"] == pytest.approx(
                float(theirs.extra_metadata["_mmr_score"]), abs=1e-5
            )
        if kind == "scored":
            assert mine.extra_metadata["_score"] == pytest.approx(
                float(theirs.extra_metadata["_score"]), abs=1e-5
            )


def test_filtered_parity(stores: tuple[Any, Any]) -> None:
    """A filter on a field that no edge uses: same selection as graph-retriever."""
    gr_store, store = stores
    for kind in ("eager", "mmr"):
        gr_strategy, strategy = _pair(kind, select_k=10, start_k=2, adjacent_k=10)
        expected = gr_traverse(
            "alpha",
            edges=EDGES,
            strategy=gr_strategy,
            store=gr_store,
            metadata_filter={"type": "a"},
        )
        got = hoprag.traverse(
            "alpha", edges=EDGES, strategy=strategy, store=store, filter={"type": "a"}
        )
        assert [n.id for n in got] == [n.id for n in expected]
        assert all(n.metadata["type"] == "a" for n in got)


# -- graph-retriever 0.8.0 bugs, each shown to exist there and to be fixed here ---------------


def _unit2(cos: float) -> list[float]:
    return [cos, math.sqrt(1.0 - cos * cos)]


def _fixed_query(text: str) -> list[float]:
    return [1.0, 0.0]


def _depth_bug_docs() -> list[Document]:
    # R cites C and shares keyword x with X1, X2, X4, X5. With adjacent_k=4, hop 1 keeps the
    # four most similar (X1, C, X4, X5) and drops X2. Hop 2 follows keyword y from X1 and
    # returns Y1 then X2: X2's shortest followed edge is keyword x (depth 1), Y1's is y (2).
    spec = {
        "R": (0.10, {"keywords": ["x"], "cites": ["C"]}),
        "X1": (0.99, {"keywords": ["x", "y"]}),
        "C": (0.98, {"keywords": []}),
        "X4": (0.97, {"keywords": ["x"]}),
        "X5": (0.96, {"keywords": ["x"]}),
        "Y1": (0.95, {"keywords": ["y"]}),
        "X2": (0.90, {"keywords": ["x", "y", "w"]}),
        "W1": (0.50, {"keywords": ["w"]}),
    }
    return [Document(i, i, m, _unit2(c)) for i, (c, m) in spec.items()]


def test_depth_is_per_node_not_per_batch() -> None:
    gr_store, store = _stores(_depth_bug_docs(), _fixed_query)
    edges = [("keywords", "keywords"), ("cites", "$id")]
    params = {"select_k": 20, "start_k": 0, "adjacent_k": 4, "max_depth": 2}
    theirs = gr_traverse(
        "q",
        edges=edges,
        strategy=gr_strategies.Eager(**params),
        store=gr_store,
        initial_root_ids=["R"],
    )
    mine = hoprag.traverse(
        "q", edges=edges, strategy=hoprag.Eager(**params), store=store, initial_root_ids=["R"]
    )
    their_depths = {n.id: n.depth for n in theirs}
    my_nodes = {n.id: n for n in mine}
    # The bug: X2 inherits Y1's depth 2, so graph-retriever never traverses it and misses W1.
    assert their_depths["Y1"] == 2 and their_depths["X2"] == 2
    assert "W1" not in their_depths
    # Correct: X2 is one keyword-x hop from R; W1 is reached through it at depth 2.
    assert my_nodes["X2"].depth == 1
    assert my_nodes["X2"].path.nodes == ("R", "X2")
    assert my_nodes["X2"].path.edges == (hoprag.MetadataEdge("keywords", "x"),)
    assert my_nodes["Y1"].depth == 2
    assert my_nodes["W1"].depth == 2
    assert my_nodes["W1"].path.nodes == ("R", "X2", "W1")


def _filter_bug_docs() -> list[Document]:
    spec = {
        "R": (0.9, {"topic": ["t1"], "related": ["t3"]}),
        "B": (0.8, {"topic": ["t1"]}),
        "D": (0.7, {"topic": ["t1", "t3"]}),
        "E": (0.6, {"topic": ["t3"]}),
    }
    return [Document(i, i, m, _unit2(c)) for i, (c, m) in spec.items()]


def test_filter_on_an_edge_field_does_not_replace_the_edge_value() -> None:
    gr_store, store = _stores(_filter_bug_docs(), _fixed_query)
    edges = [("related", "topic")]
    params = {"select_k": 10, "start_k": 0, "adjacent_k": 10}
    flt = {"topic": "t1"}
    theirs = gr_traverse(
        "q",
        edges=edges,
        strategy=gr_strategies.Eager(**params),
        store=gr_store,
        metadata_filter=flt,
        initial_root_ids=["R"],
    )
    mine = hoprag.traverse(
        "q",
        edges=edges,
        strategy=hoprag.Eager(**params),
        store=store,
        filter=flt,
        initial_root_ids=["R"],
    )
    # The bug: the edge topic=t3 became topic=t1, reaching B, which R does not link to.
    assert "B" in {n.id for n in theirs}
    # Correct: topic contains t3 (the edge) AND t1 (the filter).
    assert [n.id for n in mine] == ["R", "D"]


def test_mmr_lambda_one() -> None:
    docs = graph_documents(60, DIM, seed=5)
    gr_store, store = _stores(docs, HashEmbedding(DIM))
    params = {"select_k": 6, "start_k": 2, "adjacent_k": 5}
    with pytest.raises(ZeroDivisionError):
        gr_traverse(
            "alpha",
            edges=EDGES,
            strategy=gr_strategies.Mmr(lambda_mult=1.0, **params),
            store=gr_store,
        )
    mine = hoprag.traverse(
        "alpha", edges=EDGES, strategy=hoprag.Mmr(lambda_mult=1.0, **params), store=store
    )
    assert len(mine) == 6
    for node in mine:
        assert node.extra_metadata["_mmr_score"] == pytest.approx(node.similarity_score)
        assert isinstance(node.extra_metadata["_redundancy"], float)
    # Pure relevance: the best known candidate one at a time, fetching the neighbours of each
    # pick, which is what Scored by similarity with one pick per iteration does.
    scored = hoprag.Scored(scorer=_similarity, per_iteration_limit=1, **params)
    same = hoprag.traverse("alpha", edges=EDGES, strategy=scored, store=store)
    assert {n.id for n in mine} == {n.id for n in same}


def test_max_traverse_is_honoured() -> None:
    docs = graph_documents(120, DIM, seed=9)
    gr_store, store = _stores(docs, HashEmbedding(DIM))
    base = {"select_k": 40, "start_k": 3, "adjacent_k": 10, "max_depth": 3}
    unlimited = gr_traverse(
        "alpha", edges=EDGES, strategy=gr_strategies.Eager(**base), store=gr_store
    )
    limited = gr_traverse(
        "alpha", edges=EDGES, strategy=gr_strategies.Eager(max_traverse=1, **base), store=gr_store
    )
    # The bug: max_traverse changes nothing in graph-retriever.
    assert [n.id for n in limited] == [n.id for n in unlimited]
    assert len(unlimited) > 13  # more than one node's neighbours were needed for this
    mine = hoprag.traverse(
        "alpha", edges=EDGES, strategy=hoprag.Eager(max_traverse=1, **base), store=store
    )
    assert sum(h.traversed for h in mine.stats.hops) == 1
    assert len(mine) <= 3 + 10
    assert {n.depth for n in mine} <= {0, 1}
    assert len({n.path.nodes[0] for n in mine if n.depth == 1}) == 1


def test_filter_applies_to_initial_roots() -> None:
    docs = graph_documents(60, DIM, seed=11)
    gr_store, store = _stores(docs, HashEmbedding(DIM))
    root = next(d for d in docs if d.metadata["type"] != "a")
    params = {"select_k": 10, "start_k": 2, "adjacent_k": 5, "max_depth": 1}
    theirs = gr_traverse(
        "alpha",
        edges=EDGES,
        strategy=gr_strategies.Eager(**params),
        store=gr_store,
        metadata_filter={"type": "a"},
        initial_root_ids=[root.id],
    )
    # The bug: the root that fails the filter is returned anyway.
    assert root.id in {n.id for n in theirs}
    mine = hoprag.traverse(
        "alpha",
        edges=EDGES,
        strategy=hoprag.Eager(**params),
        store=store,
        filter={"type": "a"},
        initial_root_ids=[root.id],
    )
    assert root.id not in {n.id for n in mine}
    assert mine and all(n.metadata["type"] == "a" for n in mine)
