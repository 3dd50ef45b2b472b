"""The edge planner's choices (`stores/cassandra/plans.py`) without a node: each edge's plan
from its holders, the pool's size from the table's documents, counts read once per run, and
what `TraversalStats` makes of the plans (`explain()`, `store_queries`). The node tests are
tests/integration/test_edge_plans_cassandra.py."""

from __future__ import annotations

from collections.abc import Iterable
from typing import NoReturn

import pytest

from hoprag import Document, MetadataEdge
from hoprag.errors import InvalidInputError
from hoprag.stats import EdgePlan, HopStats, TraversalStats
from hoprag.stores.base import Hit, by_score
from hoprag.stores.cassandra.config import CassandraConfig
from hoprag.stores.cassandra.holders import ALL
from hoprag.stores.cassandra.layouts import Clause
from hoprag.stores.cassandra.plans import (
    Planner,
    PlanReads,
    edge_label,
    pool_size,
    single_token,
)


class Counts:
    """A count reader over a fixed table, recording what each read asked."""

    def __init__(self, table: dict[str, int]) -> None:
        self.table = table
        self.asked: list[set[str]] = []

    async def __call__(self, tokens: Iterable[str]) -> dict[str, int]:
        wanted = set(tokens)
        self.asked.append(wanted)
        return {t: self.table.get(t, 0) for t in wanted}


@pytest.mark.parametrize(
    ("total", "hub", "k", "size"),
    [
        (1_000_000, 2000, 10, 1000),  # 15,000 wanted, capped at guards.MAX_K
        (10_000, 300, 10, 1000),
        (300, 100, 5, 45),  # 3 * 5 * 300 / 100
        (100, 2000, 10, 11),  # never below k + 1
        (0, 2000, 10, 11),
        (12, 1, 1000, 1000),  # k + 1 is past Cassandra's largest LIMIT
    ],
)
def test_the_pool_expects_three_times_k_holders_of_the_smallest_hub(
    total: int, hub: int, k: int, size: int
) -> None:
    assert pool_size(total, hub, k) == size


def test_each_edge_is_planned_by_its_holders() -> None:
    planner = Planner(Counts({}), hub_holders=100)
    holders = [0, 1, 99, 100, 5000, None]
    assert planner.choose(holders, pool_usable=True) == [
        "none", "search", "search", "pool", "pool", "search",
    ]  # fmt: skip
    # Without a usable pool (a filter checked after the read, a cassio table) hubs are searched.
    assert planner.choose(holders, pool_usable=False) == [
        "none", "search", "search", "search", "search", "search",
    ]  # fmt: skip
    # With read_holders, few holders are read whole, pool or not; without hubs, no pool.
    reading = Planner(Counts({}), hub_holders=100, read_holders=50)
    held = [0, 1, 50, 51, 100, None]
    assert reading.choose(held, pool_usable=True) == [
        "none", "read", "read", "search", "pool", "search",
    ]  # fmt: skip
    assert reading.choose(held, pool_usable=False)[:4] == ["none", "read", "read", "search"]
    no_hubs = Planner(Counts({}), hub_holders=0, read_holders=5)
    assert no_hubs.choose([5, 6, 10**6], pool_usable=True) == ["read", "search", "search"]


def _hits(scores: dict[str, float]) -> list[Hit]:
    return [Hit(Document(i, i), s) for i, s in scores.items()]


class FakeReads:
    """A hop's reads over fixed answers: each edge's holders (a complete read returns at most
    the LIMIT of them, in no order) and what a filtered search returns."""

    def __init__(self, holders: dict[str, dict[str, float]]) -> None:
        self.holders = holders
        self.calls: list[tuple[str, list[str], int]] = []

    async def complete(self, owns: list[list[Clause]], limit: int) -> list[list[Hit]]:
        tokens = [own[0][1][0] for own in owns]
        self.calls.append(("complete", tokens, limit))
        return [_hits(self.holders[t])[::-1][:limit] for t in tokens]

    async def search(self, owns: list[list[Clause]]) -> list[list[Hit]]:
        tokens = [own[0][1][0] for own in owns]
        self.calls.append(("search", tokens, 0))
        return [by_score(_hits(self.holders[t]))[:2] for t in tokens]

    def io(self) -> PlanReads:
        async def unused(*_: object) -> NoReturn:
            raise AssertionError("no pool in this hop")

        return PlanReads(self.search, unused, unused, None, False, CLAUSE, self.complete)


CLAUSE = "tokens CONTAINS ?"


async def test_an_edge_read_whole_keeps_its_k_best_and_one_whose_count_lags_is_searched() -> None:
    scores = {
        "a": {"d1": 0.1, "d2": 0.9, "d3": 0.5, "d0": 0.5},
        "b": {"d4": 0.3, "d5": 0.2, "d6": 0.8, "d7": 0.7, "d8": 0.6, "d9": 0.1, "e0": 0.0},
    }
    reads = FakeReads(scores)
    # b's count says 2 of its 7: the read (one LIMIT for both: a's 4 + k) comes back full, so
    # b may have more holders than it read and is searched after all.
    planner = Planner(Counts({ALL: 9, "a": 4, "b": 2}), hub_holders=0, read_holders=4)
    edges = [MetadataEdge("f", "a"), MetadataEdge("f", "b")]
    owns = [[(CLAUSE, ("a",))], [(CLAUSE, ("b",))]]
    out, pool = await planner.read(edges, owns, 2, reads.io())
    assert pool is None
    assert [[h.id for h in hits] for hits in out] == [["d2", "d0"], ["d6", "d7"]]  # ties by id
    assert reads.calls == [("complete", ["a", "b"], 4 + 2), ("search", ["b"], 0)]
    plans, notes = planner.take()
    assert [(p.plan, p.holders, p.rows) for p in plans] == [("read", 4, 2), ("search", 2, 2)]
    assert notes["read_rows"] == 4 + 6 and notes["read_kept"] == 2
    assert notes["read_searched"] == 1 and notes["plan_read"] == 1
    assert notes["plan_rounds"] == 2  # the counts, then the search after the full read


@pytest.mark.parametrize("bad", [-1, 1.5, "20", None, 10_001])
def test_read_holders_must_be_an_int_from_zero_to_ten_thousand(bad: object) -> None:
    with pytest.raises(InvalidInputError, match="read_holders") as caught:
        CassandraConfig(keyspace="k", table="t", read_holders=bad)
    assert "0..10000" in str(caught.value)


async def test_a_runs_counts_are_read_once_per_value_with_the_tables_documents() -> None:
    counts = Counts({ALL: 500, "k=a": 7, "k=b": 0})
    planner = Planner(counts, hub_holders=100)
    assert await planner.holders(["k=a", None, "k=b", "k=a"]) == [7, None, 0, 7]
    assert counts.asked == [{ALL, "k=a", "k=b"}]
    assert planner.total == 500
    assert await planner.holders(["k=b", "k=c"]) == [0, 0]
    assert counts.asked[1] == {"k=c"}  # the table's documents and k=b are known
    assert await planner.holders(["k=a"]) == [7]
    assert len(counts.asked) == 2  # nothing new: no read, no round
    plans, notes = planner.take()
    assert plans == [] and notes == {"holder_reads": 4, "plan_rounds": 2}
    assert planner.take() == ([], {})  # taken once


def test_recorded_plans_are_taken_once_with_their_counts() -> None:
    planner = Planner(Counts({}), hub_holders=10)
    edges = [MetadataEdge("tags", "x"), MetadataEdge("cites", "d1"), MetadataEdge("n", 3)]
    planner.record(edges, ["pool", "none", "search"], [40, 0, 2], [5, 0, 2])
    plans, notes = planner.take()
    assert plans == [
        EdgePlan("tags='x'", "pool", 40, 5),
        EdgePlan("cites='d1'", "none", 0, 0),
        EdgePlan("n=3", "search", 2, 2),
    ]
    assert notes == {"plan_none": 1, "plan_pool": 1}
    assert edge_label(MetadataEdge("a.b", True)) == "a.b=True"


def test_only_a_single_token_clause_is_planned() -> None:
    clause = "tokens CONTAINS ?"
    assert single_token([(clause, ("k=a",))], clause) == "k=a"
    assert single_token([], clause) is None
    assert single_token([(clause, ("k=a",)), (clause, ("k=b",))], clause) is None
    assert single_token([("metadata_s[?] = ?", ("k", "a"))], clause) is None


def test_explain_lists_each_edges_plan_under_its_hop_and_store_queries_count_them() -> None:
    hop = HopStats(depth=1, edges=3, rounds=1)
    hop.queries["adjacent"] = 3
    hop.plans = [EdgePlan("k='a'", "pool", 4000, 10), EdgePlan("c='d'", "none", 0, 0),
                 EdgePlan("k='b'", "search", None, 3)]  # fmt: skip
    hop.notes.update(plan_none=1, holder_reads=3, pool_reads=1, pooled_edges=1, pooled_gets=1)
    stats = TraversalStats(hops=[HopStats(depth=0, rounds=1), hop])
    stats.hops[0].queries["search"] = 1
    text = stats.explain()
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("  1 "))
    assert lines[at + 1 : at + 4] == [
        "      k='a': pool, 4000 holders, 10 rows",
        "      c='d': none, 0 holders, 0 rows",
        "      k='b': search, holders unknown, 3 rows",
    ]
    # 4 asked; the store sent the search, 1 edge search, the pool, its read by id and 3
    # counter reads, and nothing for the edge no document holds.
    assert stats.total_queries == 4
    assert stats.store_queries == 1 + 1 + 1 + 1 + 3


@pytest.mark.parametrize("bad", [-1, 1.5, "2000", None])
def test_hub_holders_must_be_an_int_of_zero_or_more(bad: object) -> None:
    with pytest.raises(InvalidInputError, match="hub_holders"):
        CassandraConfig(keyspace="k", table="t", hub_holders=bad)


def test_rows_read_count_the_holders_an_edge_read_whole_read_and_queries_its_searches() -> None:
    hop = HopStats(depth=1, edges=2, rows=7, rounds=1)
    hop.queries["adjacent"] = 2
    hop.notes.update(plan_read=2, read_rows=40, read_kept=5, read_searched=1, holder_reads=3)
    stats = TraversalStats(hops=[HopStats(depth=0, rounds=1), hop])
    assert stats.rows_read == 7 + 40 - 5  # the hits, and the holders read beyond them
    assert stats.store_queries == 2 + 1 + 3  # the edges' reads, a search after one, counts
