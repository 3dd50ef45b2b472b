"""Pure parts of scripts/bench_scope.py: the id check against the naive plan (ties allowed,
nothing else), the cases it builds on the whole films dataset (their last-hop values and
sizes, the Meryl Streep scope checked against SQL over movies.db), and its naive plan, which
on MemoryStore returns what hoprag's exact plan returns."""

from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType

import pytest

from films_sql import films_sharing_a_director_with
from hoprag import asearch
from hoprag.datasets.films import load_films, movies_db_path
from hoprag.embeddings.hash import HashEmbedding
from hoprag.stores import MemoryStore

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    sys.path.insert(0, str(SCRIPTS))
    try:
        import bench_scope
    finally:
        sys.path.remove(str(SCRIPTS))
    return bench_scope


def _naive(bench: ModuleType, ranked: list[tuple[str, float]], k: int) -> object:
    return bench.NaiveResult([i for i, _ in ranked[:k]], ranked, len(ranked), 1, 2, 2)


def test_the_id_check_accepts_the_naive_order_and_swaps_among_tied_scores_only(
    bench: ModuleType,
) -> None:
    ranked = [("a", 0.9), ("b", 0.8), ("c", 0.8), ("d", 0.5)]
    nv = _naive(bench, ranked, 2)  # top 2: a, b; b and c tie at the cut
    assert bench.agrees(["a", "b"], nv, 2) is None
    assert bench.agrees(["a", "c"], nv, 2) is None  # the tie cut the other way
    assert "missing ['a']" in bench.agrees(["b", "c"], nv, 2)
    assert "not in score order" in bench.agrees(["b", "a"], nv, 2)
    assert "1 results" in bench.agrees(["a"], nv, 2)
    assert "outside" in bench.agrees(["a", "zz"], nv, 2)
    assert bench.agrees(["a", "c", "b", "d"], _naive(bench, ranked, 10), 10) is None


def test_the_cases_on_all_films_have_1_10_48_and_100_values_and_two_2_hop_scopes(
    bench: ModuleType,
) -> None:
    docs = list(load_films())
    ix = bench.Index(docs)
    cases = bench.make_cases(docs)
    got = []
    for c in cases:
        anchors = set(c.scope.ids) or ix.by["cast"][c.scope.start["cast"]]
        got.append((c.depth, *ix.expand(anchors, c.specs, c.depth)))
    assert [c.name for c in cases][:4] == [
        "1 value: director of Annie Hall",
        "directors of Leo G. Carroll's films",
        "directors of Meryl Streep's films",
        "directors of Liam Neeson's films",
    ]
    assert [(d, v) for d, _, v in got] == [(1, 1), (1, 10), (1, 48), (1, 100), (2, 96), (2, 1353)]
    assert got[0][1] == 44 and got[2][1] == 491 and got[4][1] == 1170 and got[5][1] == 8137
    anchors, shared = films_sharing_a_director_with(movies_db_path(), "Meryl Streep")
    assert got[2][1] == len(anchors | shared)


async def test_the_naive_plan_ranks_what_hoprags_exact_plan_ranks_on_memory_store(
    bench: ModuleType,
) -> None:
    docs = list(load_films(limit=1000))
    emb = HashEmbedding(64)
    store = MemoryStore(emb)
    await store.aadd(docs)
    vector = emb("crime in the city")
    for case in bench.make_cases(docs):
        for flt in bench.FILTERS:
            nv = await bench.naive_search(store, case, vector, 10, flt)
            res = await asearch(
                None, store=store, k=10, scope=case.scope, filter=flt, query_embedding=vector,
                plan="exact",
            )  # fmt: skip
            assert bench.agrees([n.id for n in res], nv, 10) is None, (case.name, flt)
            assert nv.scope_size == res.stats.scope_size, (case.name, flt)
            assert nv.rounds == case.depth + 1 or nv.last_values == 0, (case.name, flt)
