"""Speculation (`speculation=`): edges asked ahead cut the sequential rounds a traversal waits
for, never change what it returns, stay within their budget, and are reported in stats.
Rounds are counted by a store wrapper (`RoundCountingStore`), with no sleeping."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from wrappers import RoundCountingStore

import hoprag
from hoprag import Beam, Document, Eager, Mmr, Scored, atraverse
from hoprag.engine.speculation import DEFAULT_BUDGET, SLOW_LINK_SECONDS, plan_for
from hoprag.errors import InvalidInputError
from hoprag.stores import MemoryStore
from shared_data import graph_documents

DIM = 16
EDGES = [("keywords", "keywords"), ("cites", "$id"), ("$id", "cites")]
SLOW = 0.02  # what the wrapper reports as the link's round trip for "auto" (20 ms)


def _result(res: list[hoprag.Node]) -> list[tuple[Any, ...]]:
    """What a traversal returned, as compared across modes: ids in order, depths, paths and
    the strategy's scores."""
    return [
        (n.id, n.depth, n.path, sorted((k, repr(v)) for k, v in n.extra_metadata.items()))
        for n in res
    ]


def _doc(doc_id: str, vec: list[float], **meta: Any) -> Document:
    return Document(doc_id, doc_id, meta, vec)


@pytest.fixture
def cut_then_reached() -> RoundCountingStore:
    """A graph where hop 1 cuts B (adjacent_k 1: A is nearer the query) though a followed edge
    (k2) leads to it; hop 2 reaches B again, cited by A, at depth 1 by k2, so B is expanded
    in a third hop (k4, to C)."""
    store = MemoryStore()
    store.add(
        [
            _doc("S", [0.0, 0.0, 1.0], keywords=["k1", "k2"]),
            _doc("A", [0.9, 0.1, 0.0], keywords=["k1"], cites=["B"]),
            _doc("B", [0.8, 0.2, 0.0], keywords=["k2", "k4"]),
            _doc("C", [0.85, 0.1, 0.1], keywords=["k4"]),
        ]
    )
    return RoundCountingStore(store)


STRATEGY = Eager(select_k=10, start_k=0, adjacent_k=1, max_depth=2)
SMALL: dict[str, Any] = {
    "query_embedding": [1.0, 0.0, 0.0],
    "edges": [("keywords", "keywords"), ("cites", "$id")],
    "strategy": STRATEGY,
    "initial_root_ids": ["S"],
}


async def test_a_cut_document_reached_again_is_expanded_without_a_round_of_its_own(
    cut_then_reached: RoundCountingStore,
) -> None:
    store = cut_then_reached
    off = await atraverse(None, store=store, speculation="off", **SMALL)
    assert [(n.id, n.depth) for n in off] == [("S", 0), ("A", 1), ("B", 1), ("C", 2)]
    assert store.rounds == off.stats.rounds == 4  # the root, hop 1, hop 2 (A's), B's hop
    store.reset()
    on = await atraverse(None, store=store, speculation="on", **SMALL)
    assert _result(on) == _result(off)
    assert store.rounds == on.stats.rounds == 3  # B's edge k4 went with hop 2's queries
    asked = [e for kind, arg in store.queries[2] if kind == "adjacent" for e in arg]
    assert hoprag.MetadataEdge("keywords", "k4") in asked
    spec = on.stats.speculation
    assert (spec.issued, spec.used, spec.wasted) == (1, 1, 0)
    assert len(on.stats.hops) == len(off.stats.hops) == 4  # the same hops, one answered ahead


async def test_auto_widens_the_strategys_guesses_only_over_a_slow_link() -> None:
    docs = graph_documents(150, DIM, seed=5)
    inner = MemoryStore()
    inner.add(docs)
    store = RoundCountingStore(inner)
    strategy = Mmr(select_k=12, start_k=2, adjacent_k=4, max_depth=3, prefetch=1)
    seen = {}
    for rtt in (None, SLOW_LINK_SECONDS / 10, SLOW):
        store.round_trip = rtt
        res = await atraverse(
            None, query_embedding=docs[0].embedding, store=store, edges=EDGES, strategy=strategy
        )
        seen[rtt] = (res.stats.speculation.mode, res.stats.speculation.issued, _result(res))
    fast = f"{SLOW_LINK_SECONDS * 100:.1f} ms"
    assert seen[None][0] == "auto (strategy, round trip unknown)"
    assert seen[SLOW_LINK_SECONDS / 10][0] == f"auto (strategy, round trip {fast})"
    assert seen[SLOW][0] == "auto (wide, round trip 20.0 ms)"
    assert seen[None][1] == seen[SLOW_LINK_SECONDS / 10][1] < seen[SLOW][1]
    assert seen[None][2] == seen[SLOW][2]


async def test_wide_guesses_save_mmr_rounds_that_default_guesses_do_not() -> None:
    """Over 10 graphs x 3 queries: every mode's rounds as counted by the wrapper, in total."""
    strategy = Mmr(select_k=12, start_k=2, adjacent_k=4, max_depth=3, prefetch=1)
    total = {"off": 0, "strategy": 0, "wide": 0}
    for seed in range(5, 15):
        docs = graph_documents(150, DIM, seed=seed)
        inner = MemoryStore()
        inner.add(docs)
        store = RoundCountingStore(inner)
        for q in range(3):
            for mode in total:
                store.reset()
                res = await atraverse(
                    None, query_embedding=docs[q].embedding, store=store, edges=EDGES,
                    strategy=strategy, speculation=mode,
                )  # fmt: skip
                assert store.rounds == res.stats.rounds
                total[mode] += store.rounds
    assert total["wide"] < total["strategy"] < total["off"]


async def test_off_sends_no_speculative_query_and_a_budget_bounds_them() -> None:
    docs = graph_documents(150, DIM, seed=5)
    inner = MemoryStore()
    inner.add(docs)
    store = RoundCountingStore(inner)
    strategy = Mmr(select_k=12, start_k=2, adjacent_k=4, max_depth=3)
    kw: dict[str, Any] = {"query_embedding": docs[0].embedding, "store": store, "edges": EDGES}
    off = await atraverse(None, strategy=strategy, speculation="off", **kw)
    asked_off = sum(len(a) for r in store.queries for k, a in r if k == "adjacent")
    assert off.stats.speculation.issued == 0
    assert asked_off == off.stats.queries_by_kind["adjacent"]
    for budget in (1, 3, 10):
        store.reset()
        res = await atraverse(None, strategy=strategy, speculation=budget, **kw)
        spec = res.stats.speculation
        assert 0 < spec.issued <= budget and spec.budget == budget
        assert spec.used + spec.wasted == spec.issued
        assert _result(res) == _result(off)


async def test_explain_states_the_rounds_and_the_speculative_queries(
    cut_then_reached: RoundCountingStore,
) -> None:
    res = await atraverse(None, store=cut_then_reached, speculation="on", **SMALL)
    text = res.stats.explain()
    assert "rounds: 3 sequential, 4 hops" in text
    assert f"speculation: on, 1 queries of a budget of {DEFAULT_BUDGET}, 1 used, 0 wasted" in text


@pytest.mark.parametrize("bad", ["fast", "", -1, 1.5, True, None, ["on"]])
def test_a_bad_speculation_argument_is_refused_naming_it(bad: Any) -> None:
    store = MemoryStore()
    with pytest.raises(InvalidInputError, match="speculation") as info:
        hoprag.astream("q", store=store, edges=EDGES, strategy=Eager(), speculation=bad)
    assert "'auto', 'on', 'wide', 'strategy', 'off' or an int >= 0" in str(info.value)


def test_plans_for_each_mode() -> None:
    assert plan_for("off", SLOW).budget == 0 and plan_for(0, SLOW).budget == 0
    assert not plan_for("strategy", SLOW).look_ahead
    assert plan_for("on", None).look_ahead and plan_for(7, None).budget == 7
    assert plan_for("wide", None).width == 2 and not plan_for("wide", None).look_ahead
    assert plan_for("auto", SLOW).width == 2 and plan_for("auto", None).width == 1
    assert not plan_for("auto", SLOW).look_ahead


# -- the property: on random graphs and parameters, speculation changes rounds, never results --

STRATEGIES = st.one_of(
    st.builds(
        lambda s, k, a, d: Eager(select_k=s, start_k=k, adjacent_k=a, max_depth=d),
        st.integers(1, 40), st.integers(1, 4), st.integers(1, 6), st.integers(1, 4),
    ),
    st.builds(
        lambda s, k, a, d, p: Mmr(select_k=s, start_k=k, adjacent_k=a, max_depth=d, prefetch=p),
        st.integers(1, 15), st.integers(1, 4), st.integers(1, 6), st.integers(1, 3),
        st.integers(0, 3),
    ),
    st.builds(
        lambda s, k, a, d: Scored(
            scorer=lambda n: n.similarity_score, select_k=s, start_k=k, adjacent_k=a,
            max_depth=d,
        ),
        st.integers(1, 20), st.integers(1, 4), st.integers(1, 6), st.integers(1, 3),
    ),
    st.builds(
        lambda s, w, d: Beam(select_k=s, start_k=2, beam_width=w, max_depth=d),
        st.integers(1, 20), st.integers(1, 4), st.integers(1, 3),
    ),
)  # fmt: skip


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(5, 80),
    n_keywords=st.integers(2, 30),
    strategy=STRATEGIES,
    mode=st.sampled_from(["on", "wide", "strategy", 1, 5, 40, "auto"]),
    query=st.integers(0, 4),
)
async def test_speculation_never_changes_what_a_traversal_returns(
    seed: int, n: int, n_keywords: int, strategy: Any, mode: Any, query: int
) -> None:
    docs = graph_documents(n, DIM, seed=seed, n_keywords=n_keywords)
    inner = MemoryStore()
    inner.add(docs)
    store = RoundCountingStore(inner, round_trip=SLOW)
    kw: dict[str, Any] = {
        "query_embedding": docs[query % n].embedding,
        "store": store,
        "edges": EDGES,
        "strategy": strategy,
    }
    off = await atraverse(None, speculation="off", **kw)
    off_rounds = store.rounds
    store.reset()
    on = await atraverse(None, speculation=mode, **kw)
    assert _result(on) == _result(off)
    assert [h.edges for h in on.stats.hops] == [h.edges for h in off.stats.hops]
    assert store.rounds == on.stats.rounds <= off.stats.rounds == off_rounds
    spec = on.stats.speculation
    assert spec.issued <= spec.budget and spec.used + spec.wasted == spec.issued
    # The run's totals are the sums of the per-hop notes that explain() prints.
    assert spec.issued == sum(h.notes.get("speculative_edges", 0) for h in on.stats.hops)
    assert spec.used == sum(h.notes.get("prefetched_edges", 0) for h in on.stats.hops)
    assert on.stats.total_queries <= off.stats.total_queries + spec.issued


@pytest.mark.parametrize("speculation", ["off", "strategy", "wide", "on"])
@pytest.mark.parametrize(
    "strategy",
    [
        Mmr(select_k=8, start_k=2, adjacent_k=4, max_depth=3),
        Eager(select_k=20, start_k=2, adjacent_k=3, max_depth=3),
    ],
)
async def test_rows_read_counts_each_row_the_store_returned_once(
    speculation: str, strategy: Any
) -> None:
    """A row fetched ahead is counted when the store returns it, not again when a later hop
    takes it (`stats.rows_read`; the benchmark's rows)."""
    store = MemoryStore(hoprag.embeddings.HashEmbedding(DIM))
    store.add(graph_documents(120, DIM, seed=5))
    counting = RoundCountingStore(store)
    result = await atraverse(
        "graph", store=counting, edges=EDGES, strategy=strategy, speculation=speculation
    )
    stats = result.stats
    assert stats.rows_read == counting.rows > 0
    prefetched = sum(h.notes.get("prefetched_rows", 0) for h in stats.hops)
    speculative = sum(h.notes.get("speculative_rows", 0) for h in stats.hops)
    assert stats.rows_read == stats.total_rows - prefetched + speculative
    if speculation == "on" or (speculation == "wide" and isinstance(strategy, Mmr)):
        assert prefetched > 0  # rows fetched ahead were taken: the old sum counted them twice
