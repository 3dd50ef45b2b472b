"""Queries and rounds are counted by the round that sends them (#50 part 17, #51): a
`hoprag.engine.rounds.Round` counts what was added to it, rounds run inside another round count
on its hop, and a traversal started from a scope reports the scope's rounds and queries on hop
0 (MemoryStore; the same on the node in tests/integration/test_scopes_cassandra.py). No module
of src/hoprag counts a query by hand."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from hoprag import Eager, Scope, asearch, atraverse
from hoprag.embeddings.hash import HashEmbedding
from hoprag.engine.rounds import Round, Rounds
from hoprag.stats import TraversalStats
from hoprag.stores import MemoryStore
from hoprag.testing.data import COMPLIANCE_DIM, compliance_documents

SRC = Path(__file__).resolve().parents[2] / "src" / "hoprag"
KEYWORDS = [("keywords", "keywords")]
BIRDS_2 = Scope(start={"type": "bird"}, edges=KEYWORDS, max_depth=2)
"""On the compliance documents: anchors d2 (wings, claws) and d3 (wings); hop 1 follows
`wings` and `claws` (d9; d0, d6); hop 2 follows the new values `fur`, `scales`, `legs` (d1,
d8; d5, d7; d10): 10 members, whose keywords take 7 values (fur, claws, wings, scales, fins,
legs, hooves)."""


@pytest.fixture
def small() -> MemoryStore:
    store = MemoryStore(HashEmbedding(COMPLIANCE_DIM))
    store.add(compliance_documents())
    return store


# -- the round object ----------------------------------------------------------------------


async def _hits(n: int) -> list[int]:
    return list(range(n))


async def test_a_round_counts_what_was_added_to_it_when_it_is_sent() -> None:
    stats = TraversalStats()
    rnd = Round.open(stats)
    three = rnd.add("adjacent", lambda: _hits(3), count=3)
    one = rnd.add("get", lambda: _hits(1))
    rnd.beside(lambda: _hits(0))  # in flight, but no query of the round
    assert stats.total_queries == 0 and stats.rounds == 0  # nothing sent yet
    await rnd.run()
    assert (three.value, one.value) == ([0, 1, 2], [0])
    assert stats.hops[0].queries == {"search": 0, "get": 1, "adjacent": 3}
    assert (stats.rounds, stats.total_queries, stats.hops[0].rounds) == (1, 4, 1)


async def test_a_round_that_sends_no_query_waits_for_no_round() -> None:
    stats = TraversalStats()
    rnd = Round.open(stats)
    rnd.beside(lambda: _hits(2))
    await rnd.run()
    assert (stats.rounds, stats.total_queries) == (0, 0)


async def test_rounds_inside_a_round_count_on_its_hop_which_waits_for_its_longest_branch() -> None:
    stats = TraversalStats()
    outer = Round.open(stats)
    outer.add("get", lambda: _hits(1))

    async def three_rounds(inner: Rounds) -> None:
        for kind, n in [("filter", 1), ("match", 2), ("match", 3)]:
            rnd = inner.open()
            rnd.add(kind, lambda: _hits(0), count=n)
            await rnd.run()

    async def one_round(inner: Rounds) -> None:
        rnd = inner.open()
        rnd.add("lexical", lambda: _hits(0))
        await rnd.run()

    first, second = outer.within(), outer.within()
    outer.beside(lambda: three_rounds(first))
    outer.beside(lambda: one_round(second))
    await outer.run()
    (hop,) = stats.hops  # the inner rounds are no hops of the run
    assert hop.queries == {
        "search": 0,
        "get": 1,
        "adjacent": 0,
        "filter": 1,
        "match": 5,
        "lexical": 1,
    }
    assert hop.rounds == stats.rounds == 3 and stats.total_queries == 8
    assert [h.rounds for h in first.hops] == [1, 1, 1] and first.rounds == 3
    assert [h.queries.get("match", 0) for h in first.hops] == [0, 2, 3]


async def test_rounds_opened_on_a_run_are_its_hops_in_order() -> None:
    stats = TraversalStats()
    rounds = Rounds(stats)
    for n in (1, 2):
        rnd = rounds.open()
        rnd.add("match", lambda: _hits(0), count=n)
        await rnd.run()
    assert [h.depth for h in stats.hops] == [0, 1] and rounds.hops == stats.hops
    assert (stats.rounds, stats.total_queries) == (2, 3)


# -- a traversal started from a scope --------------------------------------------------------


async def test_a_scoped_traversal_counts_the_scopes_rounds_and_queries(
    small: MemoryStore,
) -> None:
    """The scope's 3 sequential rounds (anchors; hop 1; hop 2 with the ranking reads) run in
    hop 0 beside the roots' get; hop 1 reads the 7 keyword values of the 10 starts."""
    strategy = Eager(select_k=20, start_k=10, adjacent_k=10, max_depth=1)
    res = await atraverse(
        "wings",
        store=small,
        edges=KEYWORDS,
        strategy=strategy,
        scope=BIRDS_2,
        initial_root_ids=["d11"],  # no keywords: no edge of its own
        speculation="off",
    )
    stats = res.stats
    hop0, hop1 = stats.hops
    # anchors: 1 filtered read; hop 1: wings, claws; hop 2: fur, scales, legs read by the
    # expansion and again (filtered, scored) by the ranking, and 1 get of the earlier members
    scope_queries = {"filter": 1, "match": 2 + 3 + 3, "get": 1}
    assert {k: v for k, v in hop0.queries.items() if v} == {**scope_queries, "get": 1 + 1}
    assert hop0.rounds == 3 and hop0.notes["scope_size"] == 10
    members = {"d2", "d3", "d0", "d6", "d9", "d1", "d8", "d5", "d7", "d10"}
    assert {n.id for n in res if n.depth == 0} == members | {"d11"}
    assert {k: v for k, v in hop1.queries.items() if v} == {"adjacent": 7} and hop1.rounds == 1
    assert stats.rounds == 3 + 1
    assert stats.total_queries == 11 + 7
    assert stats.queries_by_kind == {"search": 0, "get": 2, "adjacent": 7, "filter": 1, "match": 8}
    # the same scope searched: the same 3 rounds (its expansion ranks as it reads)
    searched = await asearch("wings", store=small, k=10, scope=BIRDS_2)
    assert searched.stats.rounds == hop0.rounds == 3


async def test_a_scoped_traversal_explains_hop_0s_rounds_and_reads(small: MemoryStore) -> None:
    strategy = Eager(select_k=20, start_k=10, adjacent_k=10, max_depth=0)
    res = await atraverse(
        "wings", store=small, edges=KEYWORDS, strategy=strategy, scope=BIRDS_2, speculation="off"
    )
    lines = res.stats.explain().splitlines()
    assert lines[0] == "scope start: 1 query per read; by the index: type $eq"
    assert lines[1].startswith("rounds: 3 sequential, 1 hops;")
    hop0 = lines[-1]
    assert hop0.split()[:5] == ["0", "0", "0", "1", "0"]  # depth, edges, search, get, adjacent
    for shown in ("filter=1", "match=8", "rounds=3", "scope_size=10"):
        assert shown in hop0
    assert res.stats.rounds == 3 and res.stats.total_queries == 10


async def test_a_scoped_traversal_returns_what_it_returned_before_counting_its_scope(
    small: MemoryStore,
) -> None:
    """Counting changed nothing else: the starts are the scope's best members, with their
    scores, and the traversal leaves the scope from them."""
    strategy = Eager(select_k=10, start_k=3, adjacent_k=10, max_depth=1)
    res = await atraverse(
        "wings", store=small, edges=KEYWORDS, strategy=strategy, scope=BIRDS_2, speculation="off"
    )
    best = await asearch("wings", store=small, k=3, scope=BIRDS_2)
    starts = [n for n in res if n.depth == 0]
    assert [(n.id, n.similarity_score) for n in starts] == [
        (n.id, n.similarity_score) for n in best
    ]


# -- no query counted by hand ----------------------------------------------------------------


def _hand_counts(source: str) -> list[int]:
    """Lines that write a hop's query or round counts directly: an assignment (plain,
    augmented or annotated) to `<x>.queries[...]`, `<x>.queries` or `<x>.rounds`, or a
    mutating call on `<x>.queries` (`update`, `setdefault`, `clear`, `pop`)."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner = node.func.value
            if node.func.attr in ("update", "setdefault", "clear", "pop") and (
                isinstance(owner, ast.Attribute) and owner.attr == "queries"
            ):
                lines.append(node.lineno)
        for target in targets:
            if isinstance(target, ast.Subscript):
                target = target.value
            if isinstance(target, ast.Attribute) and target.attr in ("queries", "rounds"):
                lines.append(target.lineno)
    return lines


def test_no_query_is_counted_outside_the_round_object() -> None:
    offenders = {}
    for path in sorted(SRC.rglob("*.py")):
        if path.name == "rounds.py" or "__pycache__" in path.parts:
            continue
        lines = _hand_counts(path.read_text())
        if lines:
            offenders[str(path.relative_to(SRC))] = lines
    assert offenders == {}


@pytest.mark.parametrize(
    "line",
    [
        'hop.queries["get"] += 1',
        "hop.queries[kind] = hop.queries.get(kind, 0) + n",
        "self.stats.hops[0].queries['search'] = 1",
        "hop.rounds = 3",
        "hop.queries.update(other)",
        "hop.queries = {}",
    ],
)
def test_the_counting_check_sees_a_query_counted_by_hand(line: str) -> None:
    assert _hand_counts(f"def f(hop, kind, n, other, self):\n    {line}\n") == [2]


def test_the_counting_check_lets_reads_of_the_counts_pass() -> None:
    source = "def f(hop):\n    n = hop.queries['get']\n    return n + hop.rounds\n"
    assert _hand_counts(source) == []
