"""Traversal semantics: every strategy, depth/path invariants (hypothesis on random graphs),
filters in every query, nothing fetched twice, stats, and extra_metadata types."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from wrappers import RecordingStore

import hoprag
from hoprag import (
    Document,
    Eager,
    IdEdge,
    MetadataEdge,
    MetadataEdgeFunction,
    Mmr,
    Node,
    Scored,
    TraversalResult,
    atraverse,
)
from hoprag.embeddings import HashEmbedding
from hoprag.errors import InvalidInputError
from hoprag.stores import MemoryStore
from shared_data import graph_documents

DIM = 16
EDGES = [("keywords", "keywords"), ("cites", "$id"), ("$id", "cites")]


@pytest.fixture(scope="module")
def docs() -> list[Document]:
    return graph_documents(200, DIM, seed=13)


@pytest.fixture(scope="module")
def memory(docs: list[Document]) -> MemoryStore:
    store = MemoryStore(HashEmbedding(DIM))
    store.add(docs)
    return store


def _check_paths(result: list[Node], docs: list[Document], edges: Any, starts: set[str]) -> None:
    """Every path is a real chain of edges from a start node and depth == len(path) - 1."""
    fn = MetadataEdgeFunction(edges)
    by_id = {d.id: d for d in docs}
    for node in result:
        path = node.path
        assert node.depth == len(path.nodes) - 1 == path.depth
        assert path.nodes[-1] == node.id
        assert path.nodes[0] in starts
        assert len(set(path.nodes)) == len(path.nodes)
        for a, edge, b in zip(path.nodes[:-1], path.edges, path.nodes[1:], strict=True):
            assert edge in fn(by_id[a]).outgoing
            assert edge in fn(by_id[b]).incoming
        assert node.extra_metadata["_path"] == list(path.nodes)
        assert node.extra_metadata["_depth"] == node.depth


def _plain(value: Any) -> bool:
    if isinstance(value, list):
        return all(type(v) in (str, int, float) for v in value)
    return type(value) in (str, int, float)


@pytest.mark.parametrize(
    "strategy",
    [
        Eager(select_k=25, max_depth=2),
        Mmr(select_k=10, max_depth=3, lambda_mult=0.3),
        Scored(scorer=lambda n: n.similarity_score - 0.1 * n.depth, select_k=10, max_depth=2),
    ],
    ids=["eager", "mmr", "scored"],
)
async def test_strategies_run_with_paths_and_plain_metadata(
    memory: MemoryStore, docs: list[Document], strategy: hoprag.Strategy
) -> None:
    result = await atraverse("alpha beta", store=memory, edges=EDGES, strategy=strategy)
    assert isinstance(result, TraversalResult) and isinstance(result, list)
    assert len(result) == strategy.select_k
    assert len({n.id for n in result}) == len(result)
    assert max(n.depth for n in result) >= 1
    assert all(n.depth <= (strategy.max_depth or 99) for n in result)
    starts = {h.document.id for h in memory.search(_qe(), k=strategy.start_k)}
    _check_paths(result, docs, EDGES, starts)
    for node in result:
        assert all(_plain(v) for v in node.extra_metadata.values()), node.extra_metadata
        assert node.metadata is next(d for d in docs if d.id == node.id).metadata or (
            node.metadata == next(d for d in docs if d.id == node.id).metadata
        )
    if isinstance(strategy, Mmr):
        assert all(
            "_mmr_score" in n.extra_metadata and "_redundancy" in n.extra_metadata for n in result
        )
        assert result[0].extra_metadata["_redundancy"] == 0.0
    if isinstance(strategy, Scored):
        scores = [n.extra_metadata["_score"] for n in result]
        assert scores == sorted(scores, reverse=True)
        assert scores[0] == pytest.approx(result[0].similarity_score - 0.1 * result[0].depth)


def _qe() -> list[float]:
    return HashEmbedding(DIM)("alpha beta")


async def test_mmr_lambda_trades_relevance_for_diversity(memory: MemoryStore) -> None:
    def spread(nodes: list[Node]) -> float:
        m = np.asarray([n.embedding for n in nodes])
        m = m / np.linalg.norm(m, axis=1, keepdims=True)
        sims = m @ m.T
        return float(sims[np.triu_indices(len(nodes), 1)].mean())

    relevant = await atraverse(
        "alpha", store=memory, edges=EDGES, strategy=Mmr(select_k=8, lambda_mult=1.0)
    )
    diverse = await atraverse(
        "alpha", store=memory, edges=EDGES, strategy=Mmr(select_k=8, lambda_mult=0.0)
    )
    assert spread(diverse) < spread(relevant)
    assert np.mean([n.similarity_score for n in relevant]) > np.mean(
        [n.similarity_score for n in diverse]
    )


async def test_min_mmr_score_stops_selection(memory: MemoryStore) -> None:
    result = await atraverse(
        "alpha", store=memory, edges=EDGES, strategy=Mmr(select_k=20, min_mmr_score=0.2)
    )
    assert all(n.extra_metadata["_mmr_score"] >= 0.2 for n in result)
    assert len(result) < 20


async def test_max_depth_zero_and_start_k_zero(memory: MemoryStore, docs: list[Document]) -> None:
    only_starts = await atraverse(
        "alpha", store=memory, edges=EDGES, strategy=Eager(select_k=10, start_k=3, max_depth=0)
    )
    assert [n.depth for n in only_starts] == [0, 0, 0]
    assert len(only_starts.stats.hops) == 1
    roots = await atraverse(
        "alpha",
        store=memory,
        edges=EDGES,
        strategy=Eager(select_k=50, start_k=0, max_depth=1),
        initial_root_ids=[docs[0].id, "missing"],
    )
    assert roots[0].id == docs[0].id and roots[0].path.nodes == (docs[0].id,)
    assert {n.path.nodes[0] for n in roots} == {docs[0].id}


async def test_filter_is_anded_into_every_query(memory: MemoryStore) -> None:
    store = RecordingStore(memory)
    flt = {"type": "b"}
    result = await atraverse(
        "alpha",
        store=store,
        edges=EDGES,
        strategy=Eager(select_k=30, max_depth=3),
        filter=flt,
        initial_root_ids=["doc1", "doc2"],
    )
    assert result and all(n.metadata["type"] == "b" for n in result)
    assert {kind for kind, _, _ in store.calls} == {"search", "get", "adjacent"}
    assert all(f == flt for _, _, f in store.calls)


async def test_nothing_is_fetched_twice(memory: MemoryStore) -> None:
    store = RecordingStore(memory)
    result = await atraverse(
        "alpha", store=store, edges=EDGES, strategy=Eager(select_k=200, max_depth=4)
    )
    adjacent = [e for kind, e, _ in store.calls if kind == "adjacent"]
    assert len(adjacent) == len(set(adjacent)) > 10
    got_ids = [i for kind, ids, _ in store.calls if kind == "get" for i in ids]
    assert len(got_ids) == len(set(got_ids))
    assert len({n.id for n in result}) == len(result)
    # Stats agree with what the store saw.
    stats = result.stats
    assert stats.queries_by_kind["adjacent"] == len(adjacent)
    assert stats.queries_by_kind["search"] == 1
    assert stats.queries_by_kind["get"] == sum(1 for c in store.calls if c[0] == "get")
    assert stats.total_kept == len(result)
    assert all(h.seconds >= 0 and h.candidates <= h.rows for h in stats.hops)
    assert [h.depth for h in stats.hops] == list(range(len(stats.hops)))
    assert "hop" in stats.explain()


async def test_custom_edge_function() -> None:
    store = MemoryStore(HashEmbedding(DIM))
    store.add([Document(f"n{i}", f"node {i}", {"next": f"n{i + 1}"}) for i in range(6)])

    def chain(doc: Document) -> hoprag.Edges:
        nxt = doc.metadata.get("next")
        return hoprag.Edges(frozenset({IdEdge(doc.id)}), frozenset({IdEdge(nxt)} if nxt else ()))

    result = await atraverse(
        None,
        query_embedding=HashEmbedding(DIM)("x"),
        store=store,
        edges=chain,
        strategy=Eager(select_k=10, start_k=0, max_depth=3),
        initial_root_ids=["n0"],
    )
    assert [n.id for n in result] == ["n0", "n1", "n2", "n3"]
    assert result[-1].path.nodes == ("n0", "n1", "n2", "n3")


async def test_bad_arguments_raise_invalid_input_before_any_query(memory: MemoryStore) -> None:
    # Store-independent arguments are checked when the stream is made ...
    with pytest.raises(InvalidInputError, match="strategy"):
        hoprag.astream("q", store=memory, edges=EDGES, strategy="eager")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="edge spec"):
        hoprag.astream("q", store=memory, edges=[("a",)], strategy=Eager())  # type: ignore[list-item]
    with pytest.raises(InvalidInputError, match="query"):
        hoprag.astream(None, store=memory, edges=EDGES, strategy=Eager())
    with pytest.raises(InvalidInputError, match="max_concurrency"):
        hoprag.astream("q", store=memory, edges=EDGES, strategy=Eager(), max_concurrency=0)
    with pytest.raises(InvalidInputError, match="initial_root_ids"):
        hoprag.astream("q", store=memory, edges=EDGES, strategy=Eager(), initial_root_ids="n0")
    # ... the vector and the filter once by the store, when iteration starts: nothing is sent.
    store = RecordingStore(memory)
    bad: list[dict[str, Any]] = [
        {"filter": [1]},
        {"filter": {"type": {"$regex": "x"}}},
        {"filter": {"": "x"}},
        {"query_embedding": [math.nan] * DIM},
        {"query_embedding": [0.0] * DIM},
        {"query_embedding": [1.0] * (DIM + 1)},
    ]
    for kwargs in bad:
        with pytest.raises(InvalidInputError):
            await atraverse("q", store=store, edges=EDGES, strategy=Eager(), **kwargs)
    assert store.calls == []


# -- property test on random graphs ------------------------------------------------------------


@st.composite
def graphs(draw: st.DrawFn) -> tuple[list[Document], list[float], hoprag.Strategy, list[str]]:
    n = draw(st.integers(2, 25))
    seed = draw(st.integers(0, 10_000))
    rng = np.random.default_rng(seed)
    vecs = rng.standard_normal((n + 1, 6))
    docs = []
    for i in range(n):
        kws = draw(st.lists(st.sampled_from("abcdef"), max_size=3, unique=True))
        cites = draw(st.lists(st.integers(0, n - 1), max_size=2, unique=True))
        docs.append(
            Document(
                f"d{i}", "", {"keywords": kws, "cites": [f"d{c}" for c in cites]}, list(vecs[i])
            )
        )
    params = {
        "select_k": draw(st.integers(1, 30)),
        "start_k": draw(st.integers(0, 4)),
        "adjacent_k": draw(st.integers(1, 8) | st.just(30)),
        "max_depth": draw(st.none() | st.integers(0, 4)),
        "max_traverse": draw(st.none() | st.integers(0, 10)),
    }
    kind = draw(st.sampled_from(["eager", "mmr", "scored"]))
    strategy: hoprag.Strategy
    if kind == "eager":
        strategy = Eager(**params)
    elif kind == "mmr":
        strategy = Mmr(lambda_mult=draw(st.floats(0, 1)), **params)
    else:
        strategy = Scored(
            scorer=lambda node: node.similarity_score,
            per_iteration_limit=draw(st.none() | st.integers(1, 3)),
            **params,
        )
    roots = draw(st.lists(st.sampled_from([d.id for d in docs]), max_size=2, unique=True))
    return docs, list(vecs[n]), strategy, roots


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs())
def test_paths_are_real_shortest_chains(
    case: tuple[list[Document], list[float], hoprag.Strategy, list[str]],
) -> None:
    docs, qe, strategy, roots = case
    store = MemoryStore()
    store.add(docs)
    result = hoprag.traverse(
        None,
        query_embedding=qe,
        store=store,
        edges=EDGES,
        strategy=strategy,
        initial_root_ids=roots,
    )
    starts = {h.document.id for h in store.search(qe, k=strategy.start_k)} | set(roots)
    assert len(result) <= strategy.select_k
    assert len({n.id for n in result}) == len(result)
    _check_paths(result, docs, EDGES, starts)
    if strategy.max_depth is not None:
        assert all(n.depth <= strategy.max_depth for n in result)
    traversed = sum(h.traversed for h in result.stats.hops)
    if strategy.max_traverse is not None:
        assert traversed <= strategy.max_traverse
    # Shortest: when Eager ran to exhaustion and no edge query was cut short by adjacent_k,
    # every admitted node within max_depth was traversed and every followed edge returned all
    # its matches, so no admitted node can sit more than one hop below another that links to
    # it. (With truncation a node's depth comes from a followed edge that matches it even if
    # that edge's top-k did not include it: graph-retriever's rule, kept for parity. Such a
    # node can be discovered late with a small depth, after nodes it links to were streamed.)
    exhausted = len(result) < strategy.select_k and strategy.max_traverse is None
    if isinstance(strategy, Eager) and exhausted and strategy.adjacent_k >= len(docs):
        fn = MetadataEdgeFunction(EDGES)
        by_id = {d.id: d for d in docs}
        limit = strategy.max_depth if strategy.max_depth is not None else 99
        for node in result:
            for other in result:
                if other.depth < limit and fn(by_id[other.id]).outgoing & node.incoming_edges:
                    assert node.depth <= other.depth + 1, (node.id, other.id)


def test_metadata_edge_types_in_nodes(memory: MemoryStore) -> None:
    result = hoprag.traverse("alpha", store=memory, edges=EDGES, strategy=Eager(select_k=10))
    for node in result:
        assert all(
            isinstance(e, MetadataEdge | IdEdge) for e in node.incoming_edges | node.outgoing_edges
        )
