"""`scripts/cassandra up --nodes 3` brings up three nodes that see each other, `hoprag load
--consistency` takes effect (ALL fails with a node stopped, QUORUM succeeds), a traversal over
an RF 3 keyspace survives one node being killed mid-stream, and `down` stops them all. Runs
beside the suite's own node, on 127.0.0.4-6 with its own state directory.

Each test that needs all three nodes (or two) first restarts the cluster when an earlier test
left fewer running, so the tests pass in any order; a test that stops a node to check
something restarts the cluster before it ends."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from cli_load import interrupt_after, load_command
from hoprag import Eager, astream, atraverse
from hoprag.embeddings import HashEmbedding
from hoprag.stores.cassandra.store import CassandraStore
from launcher_run import alive, cluster_env, run_launcher, wait_driver_sees
from shared_data import graph_documents, write_articles_jsonl

POINTS = "127.0.0.4:9042,127.0.0.5:9042,127.0.0.6:9042"


@dataclass
class Cluster:
    env: dict[str, str]
    state: Path
    up: subprocess.CompletedProcess[str]
    session: Any

    def pids(self) -> list[int]:
        return [int(p.read_text()) for p in sorted(self.state.glob("node*/pid"))]

    def alive(self) -> int:
        """How many of the three node JVMs are running."""
        return sum(alive(p) for p in self.pids())

    def restart(self) -> None:
        """Bring every node back: `up --nodes 3` starts only the stopped ones again (same
        data) while the others run, or the whole cluster when none runs; then a fresh driver
        session that sees all three. (A `down` then `up` of all three, as this once did, took
        twice as long; test_cluster_restart checks both ways of coming back.)"""
        from hoprag.stores.cassandra.session import connect

        if self.session is not None:
            self.session.cluster.shutdown()
            self.session = None
        self.up = run_launcher(self.env, "up", "--nodes", "3", "--heap", "768M")
        assert self.up.returncode == 0, self.up.stderr[-3000:]
        self.session = connect(POINTS)
        wait_driver_sees(self.session, ["127.0.0.4", "127.0.0.5", "127.0.0.6"])

    def ensure(self, nodes: int = 3) -> Cluster:
        """Restart the cluster when fewer than `nodes` of its nodes are running."""
        if self.alive() < nodes:
            self.restart()
        return self


def _stop_node(pid: int) -> None:
    """Stop one node as `scripts/cassandra down` does: SIGTERM to its process group (a clean
    shutdown that tells the other nodes), SIGKILL if it is still there after 60 s."""
    os.killpg(pid, signal.SIGTERM)
    deadline = time.monotonic() + 60
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    if alive(pid):
        os.killpg(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(pid)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    from hoprag.stores.cassandra.session import connect

    state = tmp_path_factory.mktemp("c3") / "state"
    env = cluster_env(state)
    up = run_launcher(env, "up", "--nodes", "3", "--heap", "768M")
    c = Cluster(env, state, up, None)
    try:
        assert up.returncode == 0, up.stderr[-3000:]
        c.session = connect(POINTS)
        yield c
    finally:
        if c.session is not None:
            c.session.cluster.shutdown()
        run_launcher(env, "down")


def test_three_nodes_see_each_other_and_accept_quorum_writes(cluster: Cluster) -> None:
    from cassandra import ConsistencyLevel
    from cassandra.query import SimpleStatement

    cluster.ensure(3)
    assert cluster.up.stdout.strip().splitlines()[-1] == POINTS
    pids = cluster.pids()
    assert len(pids) == 3 and all(alive(p) for p in pids)
    s = cluster.session
    # The node the driver asks lists the other two as peers. `up` returns once every node has
    # logged every other as UP; the peers table can lag that by a moment (seen once in a full
    # suite run: one peer listed right after `up`), so this waits for it too...
    deadline = time.monotonic() + 60
    while True:
        peers = sorted(str(r.peer) for r in s.execute("SELECT peer FROM system.peers_v2"))
        if len(peers) == 2 or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert len(peers) == 2, peers
    # ...and the driver, which opens its pools to discovered nodes in the background, ends up
    # connected to all three.
    want = ["127.0.0.4", "127.0.0.5", "127.0.0.6"]
    assert wait_driver_sees(s, want) == want
    s.execute(
        "CREATE KEYSPACE IF NOT EXISTS rf3 WITH replication = "
        "{'class': 'SimpleStrategy', 'replication_factor': 3}"
    )
    s.execute("CREATE TABLE IF NOT EXISTS rf3.kv (k text PRIMARY KEY, v int)")
    write = SimpleStatement(
        "INSERT INTO rf3.kv (k, v) VALUES (%s, %s)", consistency_level=ConsistencyLevel.QUORUM
    )
    for i in range(20):
        s.execute(write, (f"k{i}", i))
    # Reading at ALL proves every one of the three replicas answers.
    read = SimpleStatement("SELECT k, v FROM rf3.kv", consistency_level=ConsistencyLevel.ALL)
    assert sorted(r.v for r in s.execute(read)) == list(range(20))


def test_load_consistency_all_fails_with_a_node_stopped_and_quorum_succeeds(
    cluster: Cluster, tmp_path: Path
) -> None:
    """`--consistency` reaches Cassandra: with all three nodes up a load at ALL succeeds; with
    one stopped (by this test) the same load at ALL fails with a one-line error, where the
    default level would have succeeded, and at QUORUM it succeeds and every document is then
    read back at QUORUM. The node is restarted before the test ends."""
    from cassandra import ConsistencyLevel
    from cassandra.query import SimpleStatement

    cluster.ensure(3)
    f = tmp_path / "articles.jsonl"
    ids = write_articles_jsonl(f, 300)

    def load(table: str, level: str) -> subprocess.CompletedProcess[str]:
        args = load_command(str(f), "cons", table, POINTS, "--replication-factor", "3",
                            "--consistency", level)  # fmt: skip
        return subprocess.run(args, capture_output=True, text=True, check=False, timeout=600)

    first = load("allup", "ALL")
    assert first.returncode == 0, first.stderr[-3000:]
    assert "loaded 300 documents into cons.allup" in first.stdout

    victim = cluster.pids()[2]  # node 3, 127.0.0.6
    try:
        _stop_node(victim)
        assert wait_driver_sees(cluster.session, ["127.0.0.4", "127.0.0.5"]) == [
            "127.0.0.4",
            "127.0.0.5",
        ]
        at_all = load("arts", "ALL")
        assert at_all.returncode == 1, at_all.stdout + at_all.stderr[-3000:]
        assert "Traceback" not in at_all.stderr
        (line,) = at_all.stderr.strip().splitlines()
        assert line.startswith("hoprag: error: ")
        assert "not enough live replicas for the requested consistency" in line
        assert "consistency level ALL" in line and "cons.hoprag_catalog" in line

        at_quorum = load("arts", "QUORUM")
        assert at_quorum.returncode == 0, at_quorum.stderr[-3000:]
        assert "loaded 300 documents into cons.arts" in at_quorum.stdout
        read = SimpleStatement(
            "SELECT id FROM cons.arts", consistency_level=ConsistencyLevel.QUORUM
        )
        rows = [r.id for r in cluster.session.execute(read)]
        assert len(rows) == len(set(rows)) == 300 and sorted(rows) == ids
        catalog = SimpleStatement(
            "SELECT written, complete FROM cons.hoprag_catalog WHERE table_name = 'arts'",
            consistency_level=ConsistencyLevel.QUORUM,
        )
        row = cluster.session.execute(catalog).one()
        assert row.written == 300 and row.complete
    finally:
        cluster.restart()
    assert cluster.alive() == 3


async def test_a_traversal_survives_a_node_killed_mid_stream(cluster: Cluster) -> None:
    cluster.ensure(3)
    store = CassandraStore(
        HashEmbedding(16),
        keyspace="trav",
        table="docs",
        session=cluster.session,
        replication_factor=3,
        write_consistency="ALL",  # searches run at ONE: every replica needs every row
    )
    await store.aadd(graph_documents(300, 16, seed=11))
    edges = [("keywords", "keywords"), ("cites", "$id")]
    strategy = Eager(select_k=40, start_k=3, adjacent_k=6, max_depth=3)
    before = await atraverse("content 12", store=store, edges=edges, strategy=strategy)
    assert len(before) == 40

    victim = cluster.pids()[2]  # node 3, 127.0.0.6
    got = []
    async with astream("content 12", store=store, edges=edges, strategy=strategy) as stream:
        async for node in stream:
            got.append(node)
            if len(got) == 1:
                os.kill(victim, signal.SIGKILL)
    assert not alive(victim)
    # Every row lives on all three replicas, so the same documents come back.
    assert sorted(n.id for n in got) == sorted(n.id for n in before)
    assert len(stream.stats.hops) >= 2


def test_an_interrupted_load_resumes_on_the_cluster(cluster: Cluster, tmp_path: Path) -> None:
    """DESIGN §7 on the cluster: `hoprag load` into an RF 3 keyspace at QUORUM, interrupted
    part-way (SIGINT) and run again, ends with every document once, read back at QUORUM. Run
    after the test above, node 3 is dead all along (two replicas of three take each write);
    run alone, all three are up."""
    from cassandra import ConsistencyLevel
    from cassandra.query import SimpleStatement

    s = cluster.ensure(2).session
    f = tmp_path / "articles.jsonl"
    ids = write_articles_jsonl(f, 1200)
    args = load_command(str(f), "loadrf3", "arts", POINTS,
                        "--replication-factor", "3", "--consistency", "QUORUM")  # fmt: skip
    code, err = interrupt_after(args, s, "loadrf3", "arts", 200)
    assert code == 130, err
    rf = s.execute(
        "SELECT replication FROM system_schema.keyspaces WHERE keyspace_name = 'loadrf3'"
    ).one()
    assert rf.replication["replication_factor"] == "3"

    again = subprocess.run(args, capture_output=True, text=True, check=False, timeout=600)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "resuming: the first" in again.stderr
    read = SimpleStatement("SELECT id FROM loadrf3.arts", consistency_level=ConsistencyLevel.QUORUM)
    rows = [r.id for r in s.execute(read)]
    assert len(rows) == len(set(rows)) == 1200
    assert sorted(rows) == ids
    catalog = SimpleStatement(
        "SELECT written, complete FROM loadrf3.hoprag_catalog WHERE table_name = 'arts'",
        consistency_level=ConsistencyLevel.QUORUM,
    )
    row = s.execute(catalog).one()
    assert row.written == 1200 and row.complete


def test_down_stops_every_node(cluster: Cluster) -> None:
    pids = cluster.pids()
    down = run_launcher(cluster.env, "down")
    assert down.returncode == 0, down.stderr
    assert not any(alive(p) for p in pids), "a node JVM survived `scripts/cassandra down`"
    status = run_launcher(cluster.env, "status")
    assert status.returncode == 3 and "not running" in status.stdout
