"""The edge planner's choices (`stores/cassandra/plans.py`) without a node: each edge's plan
from its holders, the pool's size from the table's documents, counts read once per run, and
what `TraversalStats` makes of the plans (`explain()`, `store_queries`). The node tests are
tests/integration/test_edge_plans_cassandra.py."""

from __future__ import annotations

from collections.abc import Iterable

import pytest

from hoprag import MetadataEdge
from hoprag.errors import InvalidInputError
from hoprag.stats import EdgePlan, HopStats, TraversalStats
from hoprag.stores.cassandra.config import CassandraConfig
from hoprag.stores.cassandra.holders import ALL
from hoprag.stores.cassandra.plans import Planner, edge_label, pool_size, single_token


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
