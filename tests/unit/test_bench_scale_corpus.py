"""Pure parts of scripts/bench_scale.py: its corpus generator is deterministic for a seed and a
size and prefix-stable (document i is the same in every size), its keyword degrees follow a
power law (a few very common keywords, a long tail), its links point only to earlier
documents (so they exist in every size), its bounds on rows and rounds do not depend on the
corpus size, bad flag values exit 2 naming the flag, and a case whose store fails is recorded
as failed while the other cases are still measured."""

from __future__ import annotations

import collections
import math
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from hoprag.errors import StoreError

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    sys.path.insert(0, str(SCRIPTS))
    try:
        import bench_scale
    finally:
        sys.path.remove(str(SCRIPTS))
    return bench_scale


def _plain(docs: list) -> list[tuple]:
    return [(d.id, d.content, d.metadata) for d in docs]


def test_the_same_seed_and_size_give_the_same_documents_and_another_seed_others(
    bench: ModuleType,
) -> None:
    a = _plain(list(bench.corpus(7, 2500)))
    assert a == _plain(list(bench.corpus(7, 2500)))
    assert len(a) == 2500 and len({d[0] for d in a}) == 2500
    other = _plain(list(bench.corpus(8, 2500)))
    assert sum(x != y for x, y in zip(a, other, strict=True)) > 2000


def test_a_smaller_size_is_a_prefix_of_a_larger_one_across_block_boundaries(
    bench: ModuleType,
) -> None:
    big = _plain(list(bench.corpus(30, 4200)))
    for size in (1, 999, 1000, 1001, 2500):
        assert _plain(list(bench.corpus(30, size))) == big[:size], size


def test_links_point_to_earlier_documents_and_anchors_lie_below_the_smallest_size(
    bench: ModuleType,
) -> None:
    docs = list(bench.corpus(30, 5000))
    for i, d in enumerate(docs):
        assert d.id == bench.doc_id(i)
        assert all(link < d.id for link in d.metadata["links"]), d
        assert len(d.metadata["links"]) <= bench.LINKS_MAX
        assert 1 <= len(d.metadata["keywords"]) <= bench.KW_MAX
        assert 0 <= d.metadata["n"] < bench.N_RANGE
    for q in range(bench.parse_args([]).queries):
        assert all(a < bench.doc_id(bench.MIN_SIZE) for a in bench.anchors(q)), q


def test_keyword_degrees_follow_a_power_law_with_a_few_common_keywords_and_a_long_tail(
    bench: ModuleType,
) -> None:
    docs = list(bench.corpus(30, 10_000))
    degree = collections.Counter(k for d in docs for k in d.metadata["keywords"])
    # The most common keyword is in several percent of the documents ...
    assert degree["k1"] > 0.05 * len(docs)
    # ... and most keywords that occur at all are in one or two documents.
    values = list(degree.values())
    assert sum(v <= 2 for v in values) > 0.7 * len(values)
    # Degree against rank on log-log axes: a straight line of slope about -1.
    ranks = np.arange(1, 65)
    degrees = np.array([max(degree[f"k{r}"], 1) for r in ranks])
    slope = np.polyfit(np.log(ranks), np.log(degrees), 1)[0]
    assert -1.2 < slope < -0.7, slope
    # The links' in-degrees are skewed too: the oldest documents are cited most.
    cited = collections.Counter(link for d in docs for link in d.metadata["links"])
    assert cited[bench.doc_id(0)] > 20 * np.median(list(cited.values()))


def test_row_and_round_bounds_come_from_the_strategy_parameters_alone(bench: ModuleType) -> None:
    for case in bench.make_cases([1]):
        rows = bench.row_bound(case.kind, case.params)
        rounds = bench.round_bound(case.kind, case.params)
        assert 0 < rows < 10_000 and 1 < rounds <= 101, case
        if case.kind == "beam":
            assert rounds == case.depth + 1
    assert bench.log_uniform(np.array([0.0, 0.999999]), 100).tolist() == [1, 100]
    assert math.isclose(bench.PER_NODE_ROWS, (bench.KW_MAX + 1) * bench.ADJACENT_K + 4)


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["--sizes", "10000,abc"], "--sizes"),
        (["--sizes", "10"], "--sizes"),
        (["--quick", "--sizes", "10000"], "--sizes"),
        (["--concurrency", "0"], "--concurrency"),
        (["--memory-max", "-1"], "--memory-max"),
        (["--max-seconds", "0"], "--max-seconds"),
        (["--queries", "0"], "--queries"),
        (["--reps", "x"], "--reps"),
        (["--dim", "1"], "--dim"),
        (["--contact-points", "10.1.2.3:9042"], "--contact-points"),
        (["--replication-factor", "4"], "--replication-factor"),
        (["--pool", "0"], "--pool"),
        (["--pool", "1001"], "--pool"),
        (["--request-timeout", "0"], "--request-timeout"),
        (["--load-replication-factor", "3"], "--load-replication-factor"),  # above RF 1
        (["--replication-factor", "3", "--load-replication-factor", "0"], "--load-replication"),
        (["--hub-holders", "2000"], "--holder-counts"),  # plans read the tables' counts
        (["--read-holders", "32"], "--holder-counts"),
        (["--holder-counts", "--read-holders", "0"], "--read-holders"),
        (["--holder-counts", "--read-holders", "10001"], "--read-holders"),
        (["--holder-counts", "--read-holders", "x"], "--read-holders"),
    ],
)
def test_a_bad_flag_value_exits_2_naming_the_flag(
    bench: ModuleType, argv: list[str], flag: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        bench.parse_args(argv)
    assert exc.value.code == 2
    assert flag in capsys.readouterr().err


def test_quick_measures_ten_thousand_on_loopback_with_fewer_queries(bench: ModuleType) -> None:
    args = bench.parse_args(["--quick", "--contact-points", "127.0.0.81:9042"])
    assert args.sizes == [10_000] and args.queries < 20 and args.memory_max >= 10_000
    full = bench.parse_args(["--sizes", "10000,100000,1000000", "--concurrency", "1,16"])
    assert full.sizes == [10_000, 100_000, 1_000_000] and full.concurrency == [1, 16]
    assert (full.pool, full.replication_factor) == ([], 1)  # no pool, one replica: the defaults
    three = bench.parse_args(["--pool", "200", "--replication-factor", "3"])
    assert (three.pool, three.replication_factor, three.load_replication_factor) == ([200], 3, 3)
    lever = bench.parse_args(["--replication-factor", "3", "--load-replication-factor", "1"])
    assert (lever.replication_factor, lever.load_replication_factor) == (3, 1)
    planned = bench.parse_args(["--holder-counts", "--hub-holders", "2000", "--read-holders",
                                "32,200"])  # fmt: skip
    assert bench.plan_stores(planned) == [(2000, 0), (0, 32), (0, 200)]
    assert [bench.plans_label(p) for p in bench.plan_stores(planned)] == [
        "cassandra plans 2000", "cassandra plans read 32", "cassandra plans read 200",
    ]  # fmt: skip


def test_loading_below_the_factor_is_refused_on_nodes_the_run_cannot_repair(
    bench: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The raise runs `scripts/cassandra nodetool` on every node: against nodes it did not
    start (no JVM pids found) the run stops before loading, naming the flag; a keyspace left
    at the load factor by a run stopped before the raise is accepted, any other factor not."""
    nodes = {"nodes": ["127.0.0.61", "127.0.0.62", "127.0.0.63"], "replication_factor": 1}
    monkeypatch.setattr(bench, "cluster_info", lambda session: nodes)
    args = bench.parse_args(["--replication-factor", "3", "--load-replication-factor", "1"])
    with pytest.raises(SystemExit, match="--load-replication-factor 1 needs every node"):
        bench.check_cluster(None, args)
    args.node_pids = [101, 102, 103]
    assert bench.check_cluster(None, args) is nodes
    nodes["replication_factor"] = 2
    with pytest.raises(SystemExit, match="has replication factor 2"):
        bench.check_cluster(None, args)


def test_the_load_table_says_at_which_factor_a_size_was_loaded_and_what_raising_it_cost(
    bench: ModuleType,
) -> None:
    raised = {"factor": 3, "error": None, "seconds": 95.4}
    assert bench._raised({"load_replication_factor": 1, "raised": raised}) == (
        " at RF 1, + 95 s to RF 3"
    )
    failed = {"factor": 3, "error": "repair: boom"}
    assert bench._raised({"raised": failed}) == ", raising to RF 3 FAILED"
    assert bench._raised({"raised": None}) == ""


async def test_a_case_whose_store_fails_is_recorded_and_the_other_cases_are_measured(
    bench: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A query that times out on a saturated node (a `StoreError`) fails its case, not the run:
    the case carries the error, the bound check reports it, the table prints it as failed,
    and every other case and the scoped search are still measured (issue #30, the three-node
    run that a client timeout ended with no JSON)."""
    args = bench.parse_args(["--queries", "2", "--reps", "1", "--max-seconds", "30"])
    store, _ = bench.memory_store(bench.GeneratedCorpus(args.seed, 1000), args)
    real = bench.traverse_once

    async def failing(store: object, case: object, vector: list[float]) -> object:
        if case.name == "Mmr d2":  # type: ignore[attr-defined]
            raise StoreError("adjacent query failed: the request timed out on the client side")
        return await real(store, case, vector)

    monkeypatch.setattr(bench, "traverse_once", failing)
    vectors = [bench.HashEmbedding(args.dim)(t) for t in bench.query_texts(args.seed, 2)]
    out = await bench.measure_store("memory", store, bench.make_cases([1]), vectors, args)
    cases = out["cases"]
    assert "timed out" in cases["Mmr d2"]["failed"] and "p50_ms" not in cases["Mmr d2"]
    measured = [name for name, c in cases.items() if "p50_ms" in c]
    assert len(measured) == len(cases) - 1 and "Scoped 2-hop" in measured
    assert "Mmr d2" not in out["first_ids"] and "Mmr d1" in out["first_ids"]
    failures = bench.bound_failures("1k memory", cases)
    assert failures == ["1k memory Mmr d2: StoreError: adjacent query failed: the request "
                        "timed out on the client side"]  # fmt: skip
    rows = bench.case_rows([{"size": 1000, "memory": out}], "memory")
    assert [r for r in rows if r[0] == "Mmr d2"] == [["Mmr d2", "failed", "-", "-"]]


def test_a_resumed_load_says_how_many_documents_it_skips_and_counts_rates_from_there(
    bench: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    """A load resumed from the catalogue says so before the skipped documents are generated
    again (half a million take a while), and its tenths count only what this run wrote."""
    meter = bench.LoadMeter(1_000_000)
    meter.started(500_000)
    assert "resuming: the load catalogue has 500,000 written" in capsys.readouterr().out
    meter.progress(600_000)
    assert [p["docs"] for p in meter.parts()] == [100_000]
    fresh = bench.LoadMeter(1000)
    fresh.started(0)
    assert "resuming" not in capsys.readouterr().out


def test_ctrl_c_ends_the_script_with_exit_130_and_how_to_resume_not_a_traceback(
    bench: ModuleType, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    async def interrupted(args: object) -> dict:
        raise KeyboardInterrupt

    monkeypatch.setattr(bench, "amain", interrupted)
    assert bench.main(["--sizes", "10000", "--load-only"]) == 130
    err = capsys.readouterr().err
    assert "interrupted; run the same command again to resume" in err
    assert "Traceback" not in err


def test_a_run_against_nodes_it_did_not_start_says_the_node_cpu_is_not_measured(
    bench: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    """Node CPU is read from the JVMs `scripts/cassandra` started; against any other node the
    run says so (and how to fix it) instead of leaving the column at "-" unexplained."""

    class Host:
        address = "10.255.255.1"  # no node of scripts/cassandra listens there

    class Metadata:
        def all_hosts(self) -> list[Host]:
            return [Host()]

    class Cluster:
        metadata = Metadata()

    class Session:
        cluster = Cluster()

    assert bench.node_pids_or_say_why_not(Session()) == []
    out = capsys.readouterr().out
    assert "node CPU: not measured" in out and "HOPRAG_CASSANDRA_HOME" in out


def test_the_wait_for_compactions_asks_every_node_that_is_up(bench: ModuleType) -> None:
    """`system_views.sstable_tasks` is per node: on three nodes each one is asked (a node that
    is down is not), and each task says where it runs."""

    class Host:
        def __init__(self, address: str, up: bool) -> None:
            self.address, self.is_up = address, up

    class Row:
        keyspace_name, table_name, kind, completion_ratio = "ks", "t", "compaction", 0.5

    hosts = [Host("127.0.0.61", True), Host("127.0.0.62", False), Host("127.0.0.63", True)]
    asked: list[str] = []

    class Session:
        class cluster:  # the driver's attribute names
            class metadata:
                @staticmethod
                def all_hosts() -> list[Host]:
                    return hosts

        @staticmethod
        def execute(query: str, host: Host) -> list[Row]:
            asked.append(host.address)
            return [Row()] if host.address.endswith("63") else []

    assert bench.node_tasks(Session()) == ["compaction of ks.t at 50% on 127.0.0.63"]
    assert asked == ["127.0.0.61", "127.0.0.63"]


def test_nodes_the_run_did_not_start_are_not_flushed_and_it_says_so(
    bench: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    assert bench.flush_nodes(0, "n10000_d64") == {"flushed": False, "seconds": 0.0, "errors": []}
    assert "not flushed" in capsys.readouterr().out


def test_a_flush_that_fails_is_recorded_per_node(
    bench: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no node running under this HOPRAG_CASSANDRA_HOME, scripts/cassandra's nodetool
    refuses each node: the failure is kept, the size is marked not flushed."""
    monkeypatch.setenv("HOPRAG_CASSANDRA_HOME", str(tmp_path / "nothing-here"))
    done = bench.flush_nodes(2, "n10000_d64")
    assert done["flushed"] is False
    assert [e.split(":")[0] for e in done["errors"]] == ["node 1", "node 2"]
    assert "not running" in done["errors"][0]
