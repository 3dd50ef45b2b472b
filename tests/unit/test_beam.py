"""Beam: path scores, the auxiliary-bonus bound, path preference, pruning before expansion,
the per-hop candidate bound on a high-branching graph, real paths and streaming."""

from __future__ import annotations

import dataclasses
import math
import zlib
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from wrappers import RecordingStore

from hoprag import (
    Beam,
    Document,
    Eager,
    IdEdge,
    Importance,
    MetadataEdge,
    MetadataEdgeFunction,
    Node,
    Prune,
    Recency,
    StartBoost,
    astream,
    atraverse,
)
from hoprag.embeddings import HashEmbedding
from hoprag.errors import InvalidInputError
from hoprag.stores import MemoryStore
from shared_data import graph_documents

DIM = 16
QUERY = [1.0] + [0.0] * (DIM - 1)
NOW = "2025-01-01T00:00:00Z"


def at_similarity(sim: float, seed: int, dim: int = DIM) -> list[float]:
    """A unit vector whose cosine similarity to QUERY (the first axis) is exactly `sim`."""
    rng = np.random.default_rng(seed)
    u = rng.standard_normal(dim)
    u[0] = 0.0
    u /= np.linalg.norm(u)
    v = np.zeros(dim)
    v[0] = sim
    return [float(x) for x in v + math.sqrt(1.0 - sim * sim) * u]


def doc(doc_id: str, sim: float, **metadata: Any) -> Document:
    return Document(
        doc_id, f"text of {doc_id}", metadata, at_similarity(sim, zlib.crc32(doc_id.encode()))
    )


def store_of(docs: list[Document]) -> MemoryStore:
    store = MemoryStore(HashEmbedding(DIM))
    store.add(docs)
    return store


async def run(store: Any, strategy: Beam, edges: Any = (), **kw: Any) -> list[Node]:
    return await atraverse(
        None, store=store, edges=list(edges), strategy=strategy, query_embedding=QUERY, **kw
    )


def ids(nodes: list[Node]) -> list[str]:
    return [n.id for n in nodes]


# -- parameters -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "word"),
    [
        ({"beam_width": 0}, ValueError, "beam_width"),
        ({"beam_width": 2.0}, InvalidInputError, "beam_width"),
        ({"max_depth": -1}, ValueError, "max_depth"),
        ({"adjacent_k": -1}, ValueError, "adjacent_k"),
        ({"path_preference": "company"}, InvalidInputError, "path_preference"),
        ({"path_preference": ["company", 3]}, InvalidInputError, "path_preference"),
        ({"type_field": ""}, InvalidInputError, "type_field"),
        ({"signals": [0.5]}, InvalidInputError, "signals"),
        ({"signals": StartBoost()}, InvalidInputError, "signals"),
        ({"prune": "no"}, InvalidInputError, "prune"),
        ({"decay": 1.0}, ValueError, "decay"),
        ({"decay": -0.1}, ValueError, "decay"),
        ({"max_bonus": 2}, ValueError, "max_bonus"),
        ({"preference_weight": float("nan")}, ValueError, "preference_weight"),
        ({"max_edges_per_node": 0}, ValueError, "max_edges_per_node"),
        ({"beam_wdith": 3}, InvalidInputError, "beam_wdith"),
        ({"lexical_weight": 1.5}, ValueError, "lexical_weight"),
        ({"lexical_k": -1}, ValueError, "lexical_k"),
        ({"edge_weights": {"mentions": 0}}, InvalidInputError, r"edge_weights\['mentions'\]"),
        ({"edge_weights": {"mentions": 1.2}}, InvalidInputError, "edge_weights"),
        ({"edge_weights": {"": 0.5}}, InvalidInputError, "field names"),
        ({"edge_weights": [0.5]}, InvalidInputError, "mapping of target field"),
    ],
)
def test_bad_parameters(kwargs: dict[str, Any], error: type, word: str) -> None:
    with pytest.raises(error, match=word):
        Beam(**kwargs)


def test_defaults_and_immutability() -> None:
    b = Beam()
    assert (b.beam_width, b.max_depth, b.select_k, b.start_k, b.adjacent_k) == (10, 3, 10, 4, 10)
    assert (b.path_preference, b.type_field, b.signals, b.prune) == (None, "type", (), None)
    assert not Beam.needs_embeddings
    with pytest.raises(dataclasses.FrozenInstanceError):
        b.beam_width = 3  # type: ignore[misc]
    assert Beam(path_preference=["a", "b"]).path_preference == ("a", "b")
    assert Beam(path_preference=[]).path_preference is None
    pred = Beam(prune=lambda n: False).prune
    assert isinstance(pred, Prune) and pred.node is not None
    with pytest.raises(InvalidInputError, match=r"Prune\.edge"):
        Prune(edge=3)  # type: ignore[arg-type]


# -- scores ---------------------------------------------------------------------------------


def chain_docs() -> list[Document]:
    """s -> a -> b -> c (a chain over field `next` -> `key`), plus a side branch s -> x."""
    return [
        doc("s", 0.9, next=["ka", "kx"], type="company"),
        doc("a", 0.6, key="ka", next=["kb"], type="person"),
        doc("x", 0.2, key="kx", type="person"),
        doc("b", 0.7, key="kb", next=["kc"], type="company"),
        doc("c", 0.5, key="kc", type="person"),
    ]


CHAIN_EDGES = [("next", "key")]


async def test_path_score_is_the_decayed_mean_of_similarities() -> None:
    decay = 0.4
    result = await run(
        store_of(chain_docs()), Beam(start_k=1, decay=decay, select_k=10), CHAIN_EDGES
    )
    by_id = {n.id: n for n in result}
    assert set(by_id) == {"s", "a", "x", "b", "c"}
    c = by_id["c"]
    assert c.path.nodes == ("s", "a", "b", "c") and c.depth == 3
    r_s = 0.9
    r_a = (1 - decay) * 0.6 + decay * r_s
    r_b = (1 - decay) * 0.7 + decay * r_a
    r_c = (1 - decay) * 0.5 + decay * r_b
    assert c.extra_metadata["_path_scores"] == pytest.approx([r_s, r_a, r_b, r_c], abs=1e-6)
    assert c.extra_metadata["_path_score"] == pytest.approx(r_c, abs=1e-6)
    assert c.extra_metadata["_bonus"] == 0.0
    # Results come best first, with plain floats.
    scores = [n.extra_metadata["_path_score"] for n in result]
    assert scores == sorted(scores, reverse=True)
    for n in result:
        md = n.extra_metadata
        assert type(md["_path_score"]) is float and type(md["_relevance"]) is float
        assert all(type(v) is float for v in md["_path_scores"])
        assert len(md["_path_scores"]) == len(md["_path"]) == n.depth + 1
        assert md["_path_scores"][-1] == md["_path_score"]
        assert md["_path_score"] == pytest.approx(md["_relevance"] + md["_bonus"])


async def test_importance_never_lifts_an_irrelevant_document_over_a_relevant_one() -> None:
    docs = [
        doc("relevant", 0.62, cap=1_000.0, date="1990-01-01"),
        doc("irrelevant", 0.30, cap=3e12, date="2024-12-31"),
        doc("other", 0.5, cap=5e6),
    ]
    signals = [StartBoost(), Importance("cap"), Recency("date", 30, now=NOW)]
    result = await run(store_of(docs), Beam(start_k=3, signals=signals))
    assert ids(result) == ["relevant", "other", "irrelevant"]
    top = result[0].extra_metadata
    low = result[-1].extra_metadata
    assert low["_bonus"] > top["_bonus"]
    # Even with every weight at the cap, the bonus stays within max_bonus.
    loud = [StartBoost(1.0), Importance("cap", 1.0), Recency("date", 30, 1.0, now=NOW)]
    result = await run(store_of(docs), Beam(start_k=3, signals=loud))
    assert ids(result) == ["relevant", "other", "irrelevant"]
    assert all(0.0 <= n.extra_metadata["_bonus"] <= 0.05 + 1e-12 for n in result)


async def test_importance_reorders_near_ties() -> None:
    docs = [doc("small", 0.800, cap=2e6), doc("big", 0.790, cap=2e12), doc("mid", 0.2, cap=1e9)]
    plain = await run(store_of(docs), Beam(start_k=3))
    assert ids(plain)[:2] == ["small", "big"]
    weighted = await run(store_of(docs), Beam(start_k=3, signals=[Importance("cap")]))
    assert ids(weighted)[:2] == ["big", "small"]
    assert weighted[0].extra_metadata["_bonus"] == pytest.approx(0.02)


async def test_recency_reorders_near_ties() -> None:
    docs = [
        doc("old", 0.800, date="2015-06-01"),
        doc("new", 0.795, date="2024-12-01T08:00:00+01:00"),
        doc("undated", 0.7),
    ]
    plain = await run(store_of(docs), Beam(start_k=3))
    assert ids(plain) == ["old", "new", "undated"]
    recent = await run(store_of(docs), Beam(start_k=3, signals=[Recency("date", 90, now=NOW)]))
    assert ids(recent) == ["new", "old", "undated"]
    assert recent[-1].extra_metadata["_bonus"] == 0.0


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    sims=st.lists(st.floats(min_value=-0.95, max_value=0.95), min_size=2, max_size=8, unique=True),
    caps=st.lists(st.floats(min_value=0, max_value=1e15), min_size=8, max_size=8),
    days=st.lists(st.integers(min_value=0, max_value=20_000), min_size=8, max_size=8),
    weights=st.tuples(*[st.floats(min_value=0, max_value=1)] * 3),
    max_bonus=st.floats(min_value=0, max_value=0.2),
)
async def test_bonus_never_overturns_a_gap_above_max_bonus(
    sims: list[float],
    caps: list[float],
    days: list[int],
    weights: tuple[float, float, float],
    max_bonus: float,
) -> None:
    docs = [
        doc(f"d{i}", s, cap=caps[i], date=float(days[i] * 86400), type="t")
        for i, s in enumerate(sims)
    ]
    strategy = Beam(
        start_k=len(docs),
        select_k=len(docs),
        max_bonus=max_bonus,
        path_preference=["t"],
        preference_weight=min(1.0, weights[0] * 2),
        signals=[
            StartBoost(weights[0]),
            Importance("cap", weights[1]),
            Recency("date", 365, weights[2], now=NOW),
        ],
    )
    result = await run(store_of(docs), strategy)
    assert len(result) == len(docs)
    for i, a in enumerate(result):
        md = a.extra_metadata
        assert -1e-12 <= md["_bonus"] <= max_bonus + 1e-12
        for b in result[i + 1 :]:
            # a ranks above b, so b's relevance is not more than max_bonus above a's.
            assert b.extra_metadata["_relevance"] <= md["_relevance"] + max_bonus + 1e-9


# -- path preference ------------------------------------------------------------------------


def fork_docs(sim_a: float = 0.5, sim_b: float = 0.5) -> list[Document]:
    """root -> a (type person) -> a2, root -> b (type org) -> b2; a and b equally relevant."""
    return [
        doc("root", 0.9, next=["ka", "kb"], type="company"),
        doc("a", sim_a, key="ka", next=["ka2"], type="person"),
        doc("b", sim_b, key="kb", next=["kb2"], type="org"),
        doc("a2", 0.4, key="ka2", type="company"),
        doc("b2", 0.4, key="kb2", type="company"),
    ]


async def test_preferred_path_survives_a_beam_of_width_one() -> None:
    store = store_of(fork_docs())
    base = Beam(start_k=1, beam_width=1, select_k=10)
    plain = await run(store, base, CHAIN_EDGES)
    assert "a2" in ids(plain) and "b2" not in ids(plain)
    preferred = await run(
        store,
        dataclasses.replace(base, path_preference=["company", "org", "company"]),
        CHAIN_EDGES,
    )
    assert "b2" in ids(preferred) and "a2" not in ids(preferred)
    b2 = next(n for n in preferred if n.id == "b2")
    assert b2.path.nodes == ("root", "b", "b2")
    assert b2.extra_metadata["_bonus"] == pytest.approx(0.03)
    # The same retriever serves another product by passing another preference.
    other = await run(
        store,
        dataclasses.replace(base, path_preference=["company", "person"]),
        CHAIN_EDGES,
    )
    assert "a2" in ids(other) and "b2" not in ids(other)


async def test_preference_does_not_exclude_clearly_more_relevant_paths() -> None:
    store = store_of(fork_docs(sim_a=0.7, sim_b=0.5))
    result = await run(
        store,
        Beam(start_k=1, beam_width=1, select_k=10, path_preference=["company", "org"]),
        CHAIN_EDGES,
    )
    assert "a2" in ids(result) and "b2" not in ids(result)
    assert "b" in ids(result)  # found, scored, returned; just not expanded


# -- pruning before expansion ---------------------------------------------------------------


def prune_docs() -> list[Document]:
    return [
        doc("s", 0.9, next=["ka", "kb"], cites=["c1"], type="company"),
        doc("a", 0.6, key="ka", next=["ka2"], type="press"),
        doc("b", 0.5, key="kb", next=["kb2"], type="person"),
        doc("c1", 0.4, next=["kc2"], type="paper"),
        doc("a2", 0.5, key="ka2", type="person"),
        doc("b2", 0.5, key="kb2", type="person"),
        doc("c2", 0.5, key="kc2", type="person"),
    ]


PRUNE_EDGES = [("next", "key"), ("cites", "$id")]


def queried(store: RecordingStore) -> set[Any]:
    """Every edge value sent to the store: metadata edges and the ids of id edges."""
    out: set[Any] = set()
    for kind, arg, _ in store.calls:
        if kind == "adjacent":
            out.add(arg)
        elif kind == "get":
            out.update(IdEdge(i) for i in arg)
    return out


async def test_pruned_edges_and_nodes_issue_no_query() -> None:
    plain = RecordingStore(store_of(prune_docs()))
    full = await run(plain, Beam(start_k=1, select_k=10), PRUNE_EDGES)
    assert {"a", "a2", "b2", "c1", "c2"} <= set(ids(full))
    assert {MetadataEdge("key", "ka2"), IdEdge("c1")} <= queried(plain)

    pruning = RecordingStore(store_of(prune_docs()))
    strategy = Beam(
        start_k=1,
        select_k=10,
        prune=Prune(
            node=lambda n: n.metadata.get("type") == "press",
            edge=lambda e: isinstance(e, IdEdge),
        ),
    )
    result = await atraverse(
        None, store=pruning, edges=PRUNE_EDGES, strategy=strategy, query_embedding=QUERY
    )
    sent = queried(pruning)
    assert IdEdge("c1") not in sent  # pruned edge: never reaches the store
    assert MetadataEdge("key", "ka2") not in sent  # edge of a pruned node: never queried
    assert MetadataEdge("key", "kb2") in sent
    assert set(ids(result)) == {"s", "b", "b2"}
    notes = [h.notes for h in result.stats.hops]  # type: ignore[attr-defined]
    assert notes[1]["pruned_edges"] == 1 and notes[1]["pruned_nodes"] == 1


async def test_leaf_nodes_are_returned_but_never_expanded() -> None:
    store = RecordingStore(store_of(prune_docs()))
    strategy = Beam(start_k=1, select_k=10, prune=Prune(leaf=lambda n: n.id == "a"))
    result = await run(store, strategy, PRUNE_EDGES)
    assert "a" in ids(result) and "a2" not in ids(result)
    assert MetadataEdge("key", "ka2") not in queried(store)


async def test_a_plain_callable_prunes_nodes() -> None:
    result = await run(
        store_of(prune_docs()),
        Beam(start_k=1, select_k=10, prune=lambda n: n.id == "b"),
        PRUNE_EDGES,
    )
    assert "b" not in ids(result) and "b2" not in ids(result) and "a2" in ids(result)


# -- bounded candidates on a high-branching graph ---------------------------------------------


def hub_documents(n: int = 3000, dim: int = DIM, seed: int = 5) -> list[Document]:
    """Every document shares `group` with ~n/6 others, `zone` with ~n/10 and each of its three
    `tags` with ~n/13: from one start there are ~1,500 one-hop, ~2M two-hop and ~3G
    three-hop paths."""
    rng = np.random.default_rng(seed)
    vecs = rng.standard_normal((n, dim))
    return [
        Document(
            f"h{i}",
            f"hub doc {i}",
            {
                "group": int(rng.integers(0, 6)),
                "zone": int(rng.integers(0, 10)),
                "tags": sorted({f"t{int(t)}" for t in rng.integers(0, 40, 3)}),
            },
            [float(x) for x in vecs[i]],
        )
        for i in range(n)
    ]


HUB_EDGES = [("group", "group"), ("zone", "zone"), ("tags", "tags")]


@pytest.mark.parametrize(("beam_width", "adjacent_k"), [(1, 3), (4, 5), (10, 10)])
async def test_peak_candidates_per_hop_stay_within_beam_width_times_adjacent_k(
    beam_width: int, adjacent_k: int
) -> None:
    store = store_of(hub_documents())
    strategy = Beam(beam_width=beam_width, adjacent_k=adjacent_k, max_depth=3, start_k=4)
    result = await run(store, strategy, HUB_EDGES)
    stats = result.stats  # type: ignore[attr-defined]
    hops = stats.hops
    assert len(hops) == 4
    for hop in hops[1:]:
        assert hop.traversed <= beam_width
        assert 0 < hop.candidates <= beam_width * adjacent_k
    # The store returned more than the bound: the bound, not the graph, limited the hop.
    assert hops[1].rows > beam_width * adjacent_k
    assert max(h.candidates for h in hops[1:]) <= beam_width * adjacent_k
    assert stats.peak_candidates == max(h.candidates for h in hops)
    assert max(n.depth for n in result) >= 1


async def test_one_node_with_many_edges_adds_at_most_adjacent_k() -> None:
    hub = doc("hub", 0.9, tags=[f"t{i}" for i in range(40)])
    spokes = [doc(f"s{i}", 0.1 + i / 100, tags=[f"t{i}"]) for i in range(40)]
    result = await run(
        store_of([hub, *spokes]), Beam(start_k=1, adjacent_k=5, max_depth=1), [("tags", "tags")]
    )
    hop = result.stats.hops[1]  # type: ignore[attr-defined]
    # Each tag edge returns its spoke and the hub itself (already discovered).
    assert (hop.queries["adjacent"], hop.rows, hop.candidates) == (40, 80, 5)
    assert set(ids(result)) == {"hub", "s39", "s38", "s37", "s36", "s35"}


async def test_edge_cap_bounds_queries_per_node() -> None:
    hub = doc("hub", 0.9, tags=[f"t{i}" for i in range(40)])
    spokes = [doc(f"s{i}", 0.5, tags=[f"t{i}"]) for i in range(40)]
    store = RecordingStore(store_of([hub, *spokes]))
    result = await run(
        store,
        Beam(start_k=1, max_edges_per_node=5, max_depth=1),
        [("tags", "tags")],
    )
    adjacent = [c for c in store.calls if c[0] == "adjacent"]
    assert len(adjacent) == 5
    assert {c[1].value for c in adjacent} == {"t0", "t1", "t10", "t11", "t12"}  # sorted order
    assert result.stats.hops[1].notes["capped_edges"] == 35  # type: ignore[attr-defined]


# -- paths, streaming, runs -----------------------------------------------------------------


@pytest.fixture(scope="module")
def graph() -> tuple[list[Document], MemoryStore]:
    docs = graph_documents(300, DIM, seed=21)
    return docs, store_of(docs)


GRAPH_EDGES = [("keywords", "keywords"), ("cites", "$id"), ("$id", "cites")]


async def test_paths_are_real_chains_through_expanded_nodes(
    graph: tuple[list[Document], MemoryStore],
) -> None:
    docs, store = graph
    strategy = Beam(beam_width=3, adjacent_k=4, select_k=25, max_depth=3)
    result = await atraverse("gamma delta", store=store, edges=GRAPH_EDGES, strategy=strategy)
    assert len(result) == 25 and len(set(ids(result))) == 25
    assert max(n.depth for n in result) == 3
    fn = MetadataEdgeFunction(GRAPH_EDGES)
    by_id = {d.id: d for d in docs}
    starts = {h.document.id for h in store.search(HashEmbedding(DIM)("gamma delta"), k=4)}
    for node in result:
        path = node.path
        assert node.depth == len(path.nodes) - 1 == node.extra_metadata["_depth"]
        assert node.extra_metadata["_path"] == list(path.nodes)
        assert path.nodes[0] in starts and path.nodes[-1] == node.id
        assert len(set(path.nodes)) == len(path.nodes)
        for a, edge, b in zip(path.nodes[:-1], path.edges, path.nodes[1:], strict=True):
            assert edge in fn(by_id[a]).outgoing and edge in fn(by_id[b]).incoming
    # Each hop expands at most beam_width nodes.
    assert all(h.traversed <= 3 for h in result.stats.hops)


async def test_streaming_yields_the_same_nodes_and_stops_early(
    graph: tuple[list[Document], MemoryStore],
) -> None:
    _, store = graph
    strategy = Beam(beam_width=4, adjacent_k=5, select_k=12)
    full = await atraverse("alpha", store=store, edges=GRAPH_EDGES, strategy=strategy)
    stream = astream("alpha", store=store, edges=GRAPH_EDGES, strategy=strategy)
    streamed = [n async for n in stream]
    assert ids(streamed) == ids(full)
    assert stream.stats.total_queries == full.stats.total_queries  # type: ignore[attr-defined]
    assert stream.stats.first_node_seconds is not None
    async with astream("alpha", store=store, edges=GRAPH_EDGES, strategy=strategy) as s:
        first = await s.__anext__()
    assert first.id == full[0].id


async def test_runs_are_independent_and_deterministic(
    graph: tuple[list[Document], MemoryStore],
) -> None:
    _, store = graph
    strategy = Beam(beam_width=2, adjacent_k=3, signals=[StartBoost()])
    a = await atraverse("beta", store=store, edges=GRAPH_EDGES, strategy=strategy)
    b = await atraverse("beta", store=store, edges=GRAPH_EDGES, strategy=strategy)
    assert ids(a) == ids(b)
    assert [n.extra_metadata for n in a] == [n.extra_metadata for n in b]
    assert vars(strategy) == vars(Beam(beam_width=2, adjacent_k=3, signals=[StartBoost()]))


async def test_filter_reaches_every_query_and_results(
    graph: tuple[list[Document], MemoryStore],
) -> None:
    _, inner = graph
    store = RecordingStore(inner)
    result = await atraverse(
        "alpha",
        store=store,
        edges=GRAPH_EDGES,
        strategy=Beam(beam_width=3, adjacent_k=4),
        filter={"type": "b"},
    )
    assert result and all(n.metadata["type"] == "b" for n in result)
    assert all(f == {"type": "b"} for _, _, f in store.calls)


async def test_max_depth_zero_and_select_k_zero(
    graph: tuple[list[Document], MemoryStore],
) -> None:
    _, store = graph
    starts = await atraverse(
        "alpha", store=store, edges=GRAPH_EDGES, strategy=Beam(max_depth=0, start_k=3)
    )
    assert len(starts) == 3 and all(n.depth == 0 for n in starts)
    assert len(starts.stats.hops) == 1  # type: ignore[attr-defined]
    none = await atraverse("alpha", store=store, edges=GRAPH_EDGES, strategy=Beam(select_k=0))
    assert none == []


async def test_wide_beam_finds_what_eager_finds_at_depth_one(
    graph: tuple[list[Document], MemoryStore],
) -> None:
    """With room for everything, Beam at depth 1 returns exactly Eager's nodes."""
    _, store = graph
    eager = await atraverse(
        "alpha",
        store=store,
        edges=GRAPH_EDGES,
        strategy=Eager(select_k=1000, start_k=3, adjacent_k=1000, max_depth=1),
    )
    beam = await atraverse(
        "alpha",
        store=store,
        edges=GRAPH_EDGES,
        strategy=Beam(select_k=1000, start_k=3, adjacent_k=1000, max_depth=1, beam_width=3),
    )
    assert set(ids(beam)) == set(ids(eager))


# -- lexical starts and edge weights ---------------------------------------------------------


def test_edge_weights_are_kept_as_sorted_pairs_and_the_strategy_stays_hashable() -> None:
    b = Beam(edge_weights={"mentions": 0.8, "$id": 1.0})
    assert b.edge_weights == (("$id", 1.0), ("mentions", 0.8))
    assert hash(b) == hash(Beam(edge_weights={"$id": 1, "mentions": 0.8}))
    assert b != Beam(edge_weights={"mentions": 0.7, "$id": 1.0})


async def test_an_edge_weight_scales_the_relevance_of_a_step_along_it() -> None:
    docs = [
        doc("s", 0.9, next=["ka"], cites=["b"]),
        doc("a", 0.6, key="ka"),
        doc("b", 0.6),
    ]
    edges = [("next", "key"), ("cites", "$id")]
    strategy = Beam(start_k=1, decay=0.5, max_depth=1, edge_weights={"key": 0.5})
    by_id = {n.id: n for n in await run(store_of(docs), strategy, edges)}
    plain = 0.5 * 0.6 + 0.5 * 0.9
    assert by_id["b"].extra_metadata["_relevance"] == pytest.approx(plain, abs=1e-6)  # "$id": 1
    assert by_id["a"].extra_metadata["_relevance"] == pytest.approx(0.5 * plain, abs=1e-6)
    # The same similarity, half the weight: the id edge's target ranks first.
    assert [n.id for n in await run(store_of(docs), strategy, edges)][:3] == ["s", "b", "a"]


async def test_a_document_reached_by_two_edges_of_one_parent_takes_the_better_weighted() -> None:
    docs = [doc("s", 0.9, next=["ka"], cites=["a"]), doc("a", 0.6, key="ka")]
    edges = [("next", "key"), ("cites", "$id")]
    strategy = Beam(start_k=1, decay=0.5, max_depth=1, edge_weights={"key": 0.5, "$id": 0.9})
    (a,) = [n for n in await run(store_of(docs), strategy, edges) if n.id == "a"]
    assert a.extra_metadata["_relevance"] == pytest.approx(0.9 * (0.3 + 0.45), abs=1e-6)
    assert isinstance(a.path.edges[0], IdEdge)


def lexical_docs() -> list[Document]:
    """`lex` matches the query's words but not its vector; `hub` is the vector's best match;
    `kid` hangs off `lex`, `other` off `hub`, both as similar to the query."""
    return [
        Document("hub", "nothing in common", {"next": ["kh"]}, at_similarity(0.8, 1)),
        Document("lex", "zebra crossing zebra", {"next": ["kl"]}, at_similarity(0.3, 2)),
        Document("kid", "a child", {"key": "kl"}, at_similarity(0.5, 3)),
        Document("other", "another child", {"key": "kh"}, at_similarity(0.5, 4)),
    ]


async def test_a_lexical_starts_strength_adds_to_it_and_carries_to_what_it_reaches() -> None:
    store = store_of(lexical_docs())
    strategy = Beam(start_k=1, lexical_k=1, max_depth=1, decay=0.5, lexical_weight=0.6)
    result = await atraverse("zebra", store=store, edges=CHAIN_EDGES, strategy=strategy,
                             query_embedding=QUERY)  # fmt: skip
    by_id = {n.id: n for n in result}
    assert by_id["lex"].extra_metadata["_lexical_score"] > 0
    assert "_lexical_score" not in by_id["hub"].extra_metadata
    r_lex = 0.3 + 0.6  # its BM25 score is the best of the starts': a strength of 1
    assert by_id["lex"].extra_metadata["_relevance"] == pytest.approx(r_lex, abs=1e-6)
    assert by_id["kid"].extra_metadata["_relevance"] == pytest.approx(
        0.5 * 0.5 + 0.5 * r_lex, abs=1e-6
    )
    assert [n.id for n in result] == ["lex", "hub", "kid", "other"]
    # Without the weight the lexical start is the weakest and its child ranks below the hub's.
    plain = Beam(start_k=1, lexical_k=1, max_depth=1, decay=0.5)
    result = await atraverse("zebra", store=store, edges=CHAIN_EDGES, strategy=plain,
                             query_embedding=QUERY)  # fmt: skip
    assert [n.id for n in result] == ["hub", "other", "kid", "lex"]
