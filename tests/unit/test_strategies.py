"""Strategy parameters: validated on construction, immutable, reusable across runs."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from hoprag import Eager, Mmr, Scored, Strategy
from hoprag.errors import InvalidInputError


def _sim(node: Any) -> float:
    return float(node.similarity_score)


@pytest.mark.parametrize(
    ("factory", "kwargs", "error"),
    [
        (Eager, {"selectk": 3}, InvalidInputError),
        (Eager, {"select_k": -1}, ValueError),
        (Eager, {"start_k": -2}, ValueError),
        (Eager, {"adjacent_k": -1}, ValueError),
        (Eager, {"max_depth": -1}, ValueError),
        (Eager, {"max_traverse": -1}, ValueError),
        (Eager, {"select_k": 2.5}, InvalidInputError),
        (Eager, {"select_k": True}, InvalidInputError),
        (Eager, {"lambda_mult": 0.5}, InvalidInputError),
        (Mmr, {"lambda_mult": 1.5}, ValueError),
        (Mmr, {"lambda_mult": -0.1}, ValueError),
        (Mmr, {"lambda_mult": float("nan")}, ValueError),
        (Mmr, {"lambda_mult": "0.5"}, InvalidInputError),
        (Mmr, {"min_mmr_score": "high"}, InvalidInputError),
        (Scored, {}, InvalidInputError),
        (Scored, {"scorer": 3}, InvalidInputError),
        (Scored, {"scorer": _sim, "per_iteration_limit": 0}, ValueError),
    ],
)
def test_bad_parameters(factory: type[Strategy], kwargs: dict[str, Any], error: type) -> None:
    with pytest.raises(error) as err:
        factory(**kwargs)
    name = list(kwargs)[-1] if kwargs else "scorer"
    assert name.split("_")[0] in str(err.value)


def test_defaults_match_graph_retriever() -> None:
    s = Mmr()
    assert (s.select_k, s.start_k, s.adjacent_k, s.max_depth, s.max_traverse) == (
        5,
        4,
        10,
        None,
        None,
    )
    assert s.lambda_mult == 0.5 and s.min_mmr_score == float("-inf")
    assert Mmr.needs_embeddings and not Eager.needs_embeddings and not Scored.needs_embeddings


def test_immutable_and_replaceable() -> None:
    s = Eager(select_k=3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.select_k = 4  # type: ignore[misc]
    assert dataclasses.replace(s, select_k=4).select_k == 4
    with pytest.raises(ValueError):
        dataclasses.replace(s, select_k=-4)


def test_run_state_is_per_call() -> None:
    s = Mmr(select_k=2)
    a = s.start_run([1.0, 0.0])
    b = s.start_run([1.0, 0.0])
    assert a is not b and a.tracker is not b.tracker
    assert vars(s) == vars(Mmr(select_k=2))


@pytest.mark.parametrize("lambda_mult", [0.2, 0.5, 0.9])
def test_mmr_prefetch_changes_round_trips_never_results(lambda_mult: float) -> None:
    from hoprag import traverse
    from hoprag.embeddings import HashEmbedding
    from hoprag.stores import MemoryStore
    from shared_data import graph_documents

    store = MemoryStore(embedding=HashEmbedding(16))
    store.add(graph_documents(300, 16, seed=5))
    edges = [("keywords", "keywords"), ("cites", "$id"), ("$id", "cites")]
    trips = {}
    for query in ("alpha", "beta gamma", "delta"):
        runs = {}
        for prefetch in (0, 1, 2, 4):
            strategy = Mmr(
                select_k=10, start_k=3, adjacent_k=6, max_depth=2, lambda_mult=lambda_mult,
                prefetch=prefetch,
            )  # fmt: skip
            res = traverse(query, store=store, edges=edges, strategy=strategy)
            runs[prefetch] = [(n.id, n.depth, n.path.nodes, n.extra_metadata) for n in res]
            rounds = sum(1 for h in res.stats.hops if sum(h.queries.values()))
            trips[prefetch] = trips.get(prefetch, 0) + rounds
        assert runs[1] == runs[0] and runs[2] == runs[0] and runs[4] == runs[0], query
    assert trips[2] < trips[0]
    with pytest.raises(ValueError):
        Mmr(prefetch=-1)


def _direct_mmr(
    query: Any, batches: list[list[Any]], lam: float, select_k: int, one_per_batch: bool
) -> list[tuple[str, float, float]]:
    """MMR recomputed from scratch for every pick (no kept state): the reference for the run's
    incremental redundancy. A candidate's redundancy is its largest similarity to the admitted
    nodes, at least 0 when it arrived before any was admitted (graph-retriever's rule, which
    hoprag keeps). Each batch arrives before the next pick; one pick per batch when every pick
    is traversed (the run then waits for its neighbours), else picks until done."""
    import numpy as np

    def unit(v: Any) -> Any:
        n = np.linalg.norm(v)
        return v / n if n else v

    q = unit(np.asarray(query, dtype=float))
    pool: list[tuple[str, Any, float]] = []
    chosen: list[tuple[str, Any]] = []
    out = []
    for batch in batches:
        floor = 0.0 if not chosen else -np.inf
        pool.extend((n.id, unit(np.asarray(n.embedding, dtype=float)), floor) for n in batch)
        while len(out) < select_k:
            left = [p for p in pool if p[0] not in {c[0] for c in chosen}]
            if not left:
                break
            scored = []
            for i, e, low in left:
                red = max([low, *(float(e @ c) for _, c in chosen)])
                scored.append((lam * float(e @ q) - (1 - lam) * red, red, i, e))
            best = max(scored, key=lambda s: s[0])  # the first of equal scores
            chosen.append((best[2], best[3]))
            out.append((best[2], best[0], best[1]))
            if one_per_batch:
                break
    return out


def _vector_node(node_id: str, embedding: Any) -> Any:
    """A start node with this embedding and nothing else."""
    from hoprag.documents import Node, Path

    edges: frozenset[Any] = frozenset()
    vector = [float(x) for x in embedding]
    return Node(node_id, "", 0, 0.0, vector, {}, edges, edges, Path((node_id,)))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("traversed", [True, False])
def test_mmr_incremental_redundancy_selects_as_the_direct_computation(
    seed: int, traversed: bool
) -> None:
    """The run keeps each candidate's redundancy in growing arrays and updates it per pick;
    it admits what recomputing MMR from scratch admits, with the same scores, across array
    growth (more candidates and picks than the arrays start with), zero vectors included."""
    import numpy as np

    rng = np.random.default_rng(seed)
    dim, lam, select_k = 24, float(rng.uniform(0.1, 0.9)), 30
    sizes = rng.integers(1, 12, size=40)
    batches, n = [], 0
    for size in sizes:
        vecs = rng.normal(size=(int(size), dim))
        vecs[rng.random(int(size)) < 0.05] = 0.0
        batch = [_vector_node(f"d{n + i}", v) for i, v in enumerate(vecs)]
        n += len(batch)
        batches.append(batch)
    query = rng.normal(size=dim).tolist()
    run = Mmr(select_k=select_k, lambda_mult=lam, max_depth=None if traversed else 0).start_run(
        query
    )
    for batch in batches:
        run.iterate(batch)
        run.tracker.pop_to_traverse()
    got = [
        (x.id, x.extra_metadata["_mmr_score"], x.extra_metadata["_redundancy"])
        for x in run.tracker.selected
    ]
    want = _direct_mmr(query, batches, lam, select_k, one_per_batch=traversed)
    assert [g[0] for g in got] == [w[0] for w in want]
    assert np.allclose([g[1:] for g in got], [w[1:] for w in want], rtol=0, atol=1e-12)
    assert len(got) == select_k
