"""Restarts of the 3-node RF 3 cluster of `scripts/cassandra up --nodes 3` lose nothing: a node
killed with SIGKILL comes back with `scripts/cassandra restart --node 3`, rejoins, and answers
at ALL for the documents written at QUORUM while it was down; the seed node killed comes back
with `up --nodes 3`, which starts only it; and `down` then `up` keeps a table created just
before, with every document acknowledged at QUORUM or ALL, readable with identical content and
by vector. Runs on 127.0.0.21-23 with its own state directory, beside the
suite's own node; the module stops every JVM it started, also when a test fails."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hoprag import Document
from hoprag.embeddings import HashEmbedding
from hoprag.stores.cassandra.store import CassandraStore
from launcher_run import alive, cluster_env, run_launcher, wait_driver_sees
from shared_data import graph_documents

FIRST_IP = 21  # its own addresses: test_cluster3 uses .4-.6, the soak .31-.33
POINTS = "127.0.0.21:9042,127.0.0.22:9042,127.0.0.23:9042"
ADDRS = ["127.0.0.21", "127.0.0.22", "127.0.0.23"]
DIM = 16


@dataclass
class Cluster:
    env: dict[str, str]
    state: Path
    session: Any = None
    seen: set[int] = field(default_factory=set)

    def pid(self, node: int) -> int:
        """Node `node`'s JVM pid (from its pid file), remembered for the teardown."""
        pid = int((self.state / f"node{node}" / "pid").read_text())
        self.seen.add(pid)
        return pid

    def launcher(self, *args: str) -> subprocess.CompletedProcess[str]:
        r = run_launcher(self.env, *args)
        for f in self.state.glob("node*/pid"):
            self.seen.add(int(f.read_text()))
        return r

    def connect(self) -> Any:
        from hoprag.stores.cassandra.session import connect

        self.disconnect()
        self.session = connect(POINTS)
        assert wait_driver_sees(self.session, ADDRS) == ADDRS
        return self.session

    def disconnect(self) -> None:
        if self.session is not None:
            self.session.cluster.shutdown()
            self.session = None


def _wait_gone(pid: int, timeout: float = 10) -> bool:
    """Wait (bounded) until process `pid` is gone; whether it is."""
    deadline = time.monotonic() + timeout
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    return not alive(pid)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    state = tmp_path_factory.mktemp("restart") / "state"
    env = cluster_env(state, FIRST_IP)
    c = Cluster(env, state)
    try:
        up = c.launcher("up", "--nodes", "3", "--heap", "768M")
        assert up.returncode == 0, up.stderr[-3000:]
        c.connect()
        yield c
    finally:
        c.disconnect()
        c.launcher("down")
        # Belt and braces: no JVM this module started may outlive it.
        for pid in c.seen:
            if alive(pid):
                os.killpg(pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while any(alive(p) for p in c.seen) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not [p for p in c.seen if alive(p)], "a node JVM outlived the module"


def _rows_at(session: Any, keyspace: str, table: str, level: str) -> dict[str, tuple[str, Any]]:
    """Every row of the table read at consistency `level`: id -> (content, metadata)."""
    from cassandra import ConsistencyLevel
    from cassandra.query import SimpleStatement

    read = SimpleStatement(
        f"SELECT id, content, metadata FROM {keyspace}.{table}",
        consistency_level=getattr(ConsistencyLevel, level),
    )
    rows = list(session.execute(read))
    assert len(rows) == len({r.id for r in rows})
    return {r.id: (r.content, json.loads(r.metadata)) for r in rows}


def _expected(docs: list[Document]) -> dict[str, tuple[str, Any]]:
    return {d.id: (d.content, d.metadata) for d in docs}


def _nodetool_status(cluster: Cluster, node: int) -> dict[str, str]:
    """`nodetool status` on node `node`: address -> its two-letter state (UN, DN, ...)."""
    r = cluster.launcher("nodetool", "--node", str(node), "status")
    assert r.returncode == 0, r.stdout + r.stderr[-2000:]
    states = {}
    for line in r.stdout.splitlines():
        parts = line.split()
        if len(parts) > 1 and parts[1] in ADDRS:
            states[parts[1]] = parts[0]
    return states


async def test_a_killed_node_restarted_rejoins_and_answers_for_writes_it_missed(
    cluster: Cluster,
) -> None:
    """Node 3 killed (SIGKILL), 60 documents written at QUORUM while it is down, node 3
    brought back by `restart --node 3`: all three nodes are UN, and every document (those of
    before and those written while it was down) reads back at QUORUM and at ALL."""
    s = cluster.session
    store = CassandraStore(
        HashEmbedding(DIM),
        keyspace="rejoin",
        table="docs",
        session=s,
        replication_factor=3,
        write_consistency="QUORUM",
    )
    docs = graph_documents(110, DIM, seed=5)
    before, during = docs[:50], docs[50:]
    await store.aadd(before)

    victim = cluster.pid(3)
    log = cluster.state / "node3" / "logs" / "system.log"
    assert log.read_text(errors="replace").count("Startup complete") == 1
    os.kill(victim, signal.SIGKILL)
    assert _wait_gone(victim)
    assert wait_driver_sees(s, ADDRS[:2]) == ADDRS[:2]

    await store.aadd(during)  # two replicas of three acknowledge each write

    refused = cluster.launcher("up", "--nodes", "1")
    assert refused.returncode == 1 and "a different cluster is running" in refused.stderr
    back = cluster.launcher("restart", "--node", "3")
    assert back.returncode == 0, back.stdout + back.stderr[-3000:]
    assert back.stdout.strip().splitlines()[-1] == POINTS
    assert "node(s) 3 back in the 3-node cluster" in back.stdout
    new_pid = cluster.pid(3)
    assert new_pid != victim and alive(new_pid)
    assert all(alive(cluster.pid(i)) for i in (1, 2))
    # The restarted node logged to its own file, after its first start.
    assert log.read_text(errors="replace").count("Startup complete") == 2

    assert _nodetool_status(cluster, 1) == dict.fromkeys(ADDRS, "UN")
    assert _nodetool_status(cluster, 3) == dict.fromkeys(ADDRS, "UN")
    assert wait_driver_sees(s, ADDRS) == ADDRS
    want = _expected(docs)
    assert _rows_at(s, "rejoin", "docs", "QUORUM") == want
    assert _rows_at(s, "rejoin", "docs", "ALL") == want

    status = cluster.launcher("status")
    assert status.returncode == 0
    assert [line for line in status.stdout.splitlines() if "answers" in line] and all(
        f"node {i}: pid" in status.stdout for i in (1, 2, 3)
    )


async def test_up_brings_back_a_killed_seed_node_with_its_data(cluster: Cluster) -> None:
    """Node 1 (the seed) killed, 30 more documents written at QUORUM, then `up --nodes 3`
    starts only node 1 again (nodes 2 and 3 keep their JVMs): all three are UN and every
    document reads back at ALL."""
    s = cluster.session
    store = CassandraStore(
        HashEmbedding(DIM),
        keyspace="rejoin",
        table="seed",
        session=s,
        replication_factor=3,
        write_consistency="QUORUM",
    )
    docs = graph_documents(60, DIM, seed=9)
    await store.aadd(docs[:30])
    seed, others = cluster.pid(1), [cluster.pid(i) for i in (2, 3)]
    os.kill(seed, signal.SIGKILL)
    assert _wait_gone(seed)
    assert wait_driver_sees(s, ADDRS[1:]) == ADDRS[1:]
    await store.aadd(docs[30:])

    back = cluster.launcher("up", "--nodes", "3")
    assert back.returncode == 0, back.stdout + back.stderr[-3000:]
    assert back.stdout.strip().splitlines()[-1] == POINTS
    assert "node(s) 1 back in the 3-node cluster" in back.stdout
    assert "node 2 restarting" not in back.stdout and "node 3 restarting" not in back.stdout
    assert [cluster.pid(i) for i in (2, 3)] == others and alive(cluster.pid(1))
    assert cluster.pid(1) != seed

    assert _nodetool_status(cluster, 2) == dict.fromkeys(ADDRS, "UN")
    assert wait_driver_sees(s, ADDRS) == ADDRS
    assert _rows_at(s, "rejoin", "seed", "ALL") == _expected(docs)


async def test_restart_of_a_running_node_stops_it_and_starts_it_again_with_its_data(
    cluster: Cluster,
) -> None:
    """`restart --node 2` while node 2 runs: it gets a new JVM, the other two keep theirs, all
    three are UN, and the documents acknowledged at ALL before the restart read back at ALL."""
    if not all(alive(cluster.pid(i)) for i in (1, 2, 3)):
        again = cluster.launcher("up", "--nodes", "3")
        assert again.returncode == 0, again.stderr[-3000:]
        cluster.connect()
    s = cluster.session
    store = CassandraStore(
        HashEmbedding(DIM),
        keyspace="rejoin",
        table="running",
        session=s,
        replication_factor=3,
        write_consistency="ALL",
    )
    docs = graph_documents(40, DIM, seed=13)
    await store.aadd(docs)
    before = {i: cluster.pid(i) for i in (1, 2, 3)}

    back = cluster.launcher("restart", "--node", "2")
    assert back.returncode == 0, back.stdout + back.stderr[-3000:]
    assert back.stdout.strip().splitlines()[-1] == POINTS
    assert not alive(before[2]) and alive(cluster.pid(2)) and cluster.pid(2) != before[2]
    assert [cluster.pid(i) for i in (1, 3)] == [before[1], before[3]]

    assert _nodetool_status(cluster, 1) == dict.fromkeys(ADDRS, "UN")
    assert wait_driver_sees(s, ADDRS) == ADDRS
    assert _rows_at(s, "rejoin", "running", "ALL") == _expected(docs)


async def test_down_then_up_keeps_a_fresh_table_and_every_acknowledged_document(
    cluster: Cluster,
) -> None:
    """A keyspace and two tables created with CassandraStore right before `down` (documents
    acknowledged at QUORUM in one, at ALL in the other) are all there after `up`: same ids,
    contents, metadata and embeddings at ALL, and every document found by vector."""
    if not all(alive(cluster.pid(i)) for i in (1, 2, 3)):
        again = cluster.launcher("up", "--nodes", "3")  # brings back the stopped nodes
        assert again.returncode == 0, again.stderr[-3000:]
        cluster.connect()
    s = cluster.session
    written: dict[str, list[Document]] = {}
    for table, level, seed in (("fresh_q", "QUORUM", 21), ("fresh_all", "ALL", 22)):
        store = CassandraStore(
            HashEmbedding(DIM),
            keyspace="keep",
            table=table,
            session=s,
            replication_factor=3,
            write_consistency=level,
        )
        written[table] = graph_documents(120, DIM, seed=seed)
        await store.aadd(written[table])
    pids = [cluster.pid(i) for i in (1, 2, 3)]
    cluster.disconnect()

    down = cluster.launcher("down")
    assert down.returncode == 0, down.stderr[-3000:]
    assert not any(alive(p) for p in pids)
    logs = [cluster.state / f"node{i}" / "logs" / "system.log" for i in (1, 2, 3)]
    sizes = [f.stat().st_size for f in logs]
    up = cluster.launcher("up", "--nodes", "3", "--heap", "768M")
    assert up.returncode == 0, up.stderr[-3000:]
    assert "already running" not in up.stdout
    # `up` returned only once every node had logged the other two UP in this run (their logs
    # also hold the sightings of earlier runs, which must not count).
    for i, (f, size) in enumerate(zip(logs, sizes, strict=True)):
        with f.open("rb") as fh:
            fh.seek(size)
            new = fh.read().decode(errors="replace")
        for j, addr in enumerate(ADDRS):
            if j != i:
                assert re.search(rf"/{re.escape(addr)}:7000 (is now|has restarted, now) UP", new)
    assert not set(pids) & {cluster.pid(i) for i in (1, 2, 3)}
    # Node 1 came up knowing two stopped peers; its superuser set-up retries were once a
    # busy loop (hundreds of thousands of log lines in seconds): they must stay paced.
    for i in (1, 2, 3):
        text = (cluster.state / f"node{i}" / "logs" / "system.log").read_text(errors="replace")
        assert text.count("skipped default role setup") < 1000
    s = cluster.connect()

    tables = {
        r.table_name
        for r in s.execute(
            "SELECT table_name FROM system_schema.tables WHERE keyspace_name = 'keep'"
        )
    }
    assert {"fresh_q", "fresh_all"} <= tables
    for table, docs in written.items():
        assert _rows_at(s, "keep", table, "ALL") == _expected(docs)
        store = CassandraStore(
            HashEmbedding(DIM), keyspace="keep", table=table, session=s, ann_overquery=4
        )
        by_id = {d.id: d for d in docs}
        q = await store.aprepare(docs[0].embedding)
        got = await q.aget([d.id for d in docs])
        assert [h.id for h in got] == [d.id for d in docs]
        for h in got:
            stored = np.asarray(h.document.embedding, dtype=np.float32)
            assert np.array_equal(stored, np.asarray(by_id[h.id].embedding, dtype=np.float32))
        # By vector: a search as wide as the table returns every document once...
        every = await q.asearch(k=len(docs))
        assert sorted(h.id for h in every) == sorted(by_id)
        # ...and each of ten documents' own embedding finds that document first.
        for d in docs[:10]:
            top = await (await store.aprepare(d.embedding)).asearch(k=3)
            assert top[0].id == d.id
            assert top[0].document.content == d.content
