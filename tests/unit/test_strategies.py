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
