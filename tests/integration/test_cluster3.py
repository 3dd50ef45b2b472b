"""The 3-node RF 3 cluster of `scripts/cassandra up --nodes 3`, one for the whole module, on
127.0.0.4-6 with its own state directory beside the suite's own node: the three nodes see each
other; a traversal survives a node killed mid-stream; `hoprag load --consistency` takes effect
(ALL fails with a node down, QUORUM succeeds) and an interrupted load resumes with a node down;
the killed node comes back with `restart --node 3` and answers at ALL for every write it
missed; the seed killed comes back with `up --nodes 3`, which starts only it; `restart` of a
running node keeps its data; `down` then `up` keeps a table created just before; `down` stops
every node. The module stops every JVM it started, also when a test fails.

The tests run in file order and each one leaves the cluster as the next expects (node 3 is
killed by the traversal test and brought back by the rejoin test: one start instead of two
clusters and a restart per test, as the two modules this replaces had). Each test first puts
the cluster in the state it needs when an earlier test did not, so any one passes alone."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cli_load import interrupt_after, load_command
from hoprag import Document, Eager, astream, atraverse
from hoprag.embeddings import HashEmbedding
from hoprag.stores.cassandra.store import CassandraStore
from launcher_run import alive, cluster_env, run_launcher, wait_driver_sees
from shared_data import graph_documents, write_articles_jsonl

POINTS = "127.0.0.4:9042,127.0.0.5:9042,127.0.0.6:9042"
ADDRS = ["127.0.0.4", "127.0.0.5", "127.0.0.6"]
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

    def running(self) -> list[int]:
        """The nodes (1-3) whose JVM is alive."""
        return [i for i in (1, 2, 3) if (self.state / f"node{i}" / "pid").exists()
                and alive(self.pid(i))]  # fmt: skip

    def launcher(self, *args: str) -> subprocess.CompletedProcess[str]:
        r = run_launcher(self.env, *args)
        for f in self.state.glob("node*/pid"):
            self.seen.add(int(f.read_text()))
        return r

    def connect(self) -> Any:
        """A fresh driver session, once it counts every running node as up."""
        from hoprag.stores.cassandra.session import connect

        self.disconnect()
        self.session = connect(POINTS)
        want = [ADDRS[i - 1] for i in self.running()]
        assert wait_driver_sees(self.session, want) == want
        return self.session

    def disconnect(self) -> None:
        if self.session is not None:
            self.session.cluster.shutdown()
            self.session = None

    def ensure(self, nodes: tuple[int, ...] = (1, 2, 3)) -> Any:
        """Exactly `nodes` running: `up --nodes 3` starts the stopped ones (same data, the
        others keep their JVMs), then node 3 is killed if it should not run; the session."""
        if set(nodes) - set(self.running()):
            up = self.launcher("up", "--nodes", "3", "--heap", "768M")
            assert up.returncode == 0, up.stdout + up.stderr[-3000:]
            self.connect()
        if 3 not in nodes and 3 in self.running():
            kill(self, 3)
        return self.session


def kill(cluster: Cluster, node: int) -> int:
    """SIGKILL node `node` and wait until it is gone and the driver counts it down; its pid."""
    pid = cluster.pid(node)
    os.kill(pid, signal.SIGKILL)
    assert _wait_gone(pid)
    want = [ADDRS[i - 1] for i in cluster.running()]
    assert wait_driver_sees(cluster.session, want) == want
    return pid


def _wait_gone(pid: int, timeout: float = 10) -> bool:
    """Wait (bounded) until process `pid` is gone; whether it is."""
    deadline = time.monotonic() + timeout
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    return not alive(pid)


def _wait_logged_down(cluster: Cluster, node: int, by: tuple[int, ...]) -> None:
    """Wait (bounded, 180 s) until each node in `by` has last logged node `node` DOWN: only
    then does a coordinator refuse a write at ALL as unavailable instead of timing out on it."""
    addr = re.escape(f"{ADDRS[node - 1]}:7000")
    pattern = re.compile(rf"/{addr} (is now DOWN|is now UP|has restarted, now UP)")
    logs = [cluster.state / f"node{i}" / "logs" / "system.log" for i in by]
    deadline = time.monotonic() + 180
    while True:
        last = [(pattern.findall(f.read_text(errors="replace")) or ["?"])[-1] for f in logs]
        if all(s == "is now DOWN" for s in last) or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert all(s == "is now DOWN" for s in last), last


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    state = tmp_path_factory.mktemp("c3") / "state"
    c = Cluster(cluster_env(state), state)
    try:
        up = c.launcher("up", "--nodes", "3", "--heap", "768M")
        assert up.returncode == 0, up.stderr[-3000:]
        assert up.stdout.strip().splitlines()[-1] == POINTS
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


def _ids_at(session: Any, keyspace: str, table: str, level: str) -> list[str]:
    """The ids of every row read at consistency `level`, sorted (duplicates kept)."""
    from cassandra import ConsistencyLevel
    from cassandra.query import SimpleStatement

    read = SimpleStatement(f"SELECT id FROM {keyspace}.{table}",
                           consistency_level=getattr(ConsistencyLevel, level))  # fmt: skip
    return sorted(r.id for r in session.execute(read))


def _catalog_at_quorum(session: Any, keyspace: str, table: str) -> Any:
    from cassandra import ConsistencyLevel
    from cassandra.query import SimpleStatement

    catalog = SimpleStatement(
        f"SELECT written, complete FROM {keyspace}.hoprag_catalog WHERE table_name = %s",
        consistency_level=ConsistencyLevel.QUORUM,
    )
    return session.execute(catalog, (table,)).one()


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


def _store(session: Any, keyspace: str, table: str, level: str, **kw: Any) -> CassandraStore:
    return CassandraStore(HashEmbedding(DIM), keyspace=keyspace, table=table, session=session,
                          replication_factor=3, write_consistency=level, **kw)  # fmt: skip


def test_three_nodes_see_each_other_and_accept_quorum_writes(cluster: Cluster) -> None:
    from cassandra import ConsistencyLevel
    from cassandra.query import SimpleStatement

    s = cluster.ensure()
    assert cluster.running() == [1, 2, 3]
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
    assert wait_driver_sees(s, ADDRS) == ADDRS
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


def _load(f: Path, table: str, level: str) -> subprocess.CompletedProcess[str]:
    """`hoprag load` of `f` into cons.`table` (RF 3) at consistency `level`."""
    args = load_command(str(f), "cons", table, POINTS, "--replication-factor", "3",
                        "--consistency", level)  # fmt: skip
    return subprocess.run(args, capture_output=True, text=True, check=False, timeout=600)


def test_a_load_at_consistency_all_succeeds_with_every_node_up(
    cluster: Cluster, tmp_path: Path
) -> None:
    s = cluster.ensure()
    f = tmp_path / "articles.jsonl"
    ids = write_articles_jsonl(f, 300)
    first = _load(f, "allup", "ALL")
    assert first.returncode == 0, first.stderr[-3000:]
    assert "loaded 300 documents into cons.allup" in first.stdout
    assert _ids_at(s, "cons", "allup", "ALL") == ids


def test_a_table_loaded_at_rf1_and_raised_to_rf3_is_whole_on_every_node(
    cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """bench_scale.py's `--load-replication-factor 1` (scripts/scale_replicas.py): rows written
    while the keyspace has one replica, then the keyspace flushed on each node, ALTERed to RF 3
    and repaired in full, are all on every node: a count at ONE coordinated by each node finds
    every row, and each node's vector search gives the same ids."""
    from cassandra import ConsistencyLevel
    from cassandra.query import SimpleStatement

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
    try:
        import scale_replicas
    finally:
        sys.path.pop(0)
    for key in ("HOPRAG_CASSANDRA_HOME", "HOPRAG_CASSANDRA_FIRST_IP", "HOPRAG_NO_DOCKER"):
        monkeypatch.setenv(key, cluster.env[key])  # nodetool goes to this module's nodes
    s = cluster.ensure()
    s.execute("DROP KEYSPACE IF EXISTS lever", timeout=120)
    docs = graph_documents(300, DIM, seed=7)
    store = CassandraStore(HashEmbedding(DIM), keyspace="lever", table="docs", session=s,
                           replication_factor=1)  # fmt: skip
    store.add(docs)
    assert scale_replicas.keyspace_factor(s, "lever") == 1

    raised = scale_replicas.raise_factor(s, "lever", 3, nodes=3)
    assert raised["error"] is None, raised
    assert raised["repair_s"] >= 0 and scale_replicas.keyspace_factor(s, "lever") == 3
    count = SimpleStatement(
        "SELECT count(*) FROM lever.docs", consistency_level=ConsistencyLevel.ONE
    )
    ann = SimpleStatement("SELECT id FROM lever.docs ORDER BY embedding ANN OF %s LIMIT 5",
                          consistency_level=ConsistencyLevel.ONE)  # fmt: skip
    hosts = sorted(s.cluster.metadata.all_hosts(), key=lambda h: h.address)
    assert [s.execute(count, host=h).one()[0] for h in hosts] == [300, 300, 300]
    vector = HashEmbedding(DIM)(docs[0].content)
    tops = {tuple(r.id for r in s.execute(ann, (vector,), host=h)) for h in hosts}
    assert len(tops) == 1 and len(next(iter(tops))) == 5, tops


@pytest.mark.timeout(900)
def test_bench_scale_loads_at_rf1_raises_to_rf3_and_a_second_run_reuses_it(
    cluster: Cluster, tmp_path: Path
) -> None:
    """`scripts/bench_scale.py --replication-factor 3 --load-replication-factor 1`, run as the
    README and docs/benchmarks.md show it (here `--quick --load-only --dim 16`): the 10k size is
    loaded at one replica, raised to three, and every node then counts all 10,000 rows at ONE;
    the JSON says at which factor it was loaded; a second run reuses the table untouched."""
    from cassandra import ConsistencyLevel
    from cassandra.query import SimpleStatement

    s = cluster.ensure()
    s.execute("DROP KEYSPACE IF EXISTS hoprag_scale", timeout=120)
    out = tmp_path / "scale.json"
    script = Path(__file__).resolve().parents[2] / "scripts" / "bench_scale.py"
    argv = [sys.executable, str(script), "--quick", "--load-only", "--dim", "16",
            "--replication-factor", "3", "--load-replication-factor", "1",
            "--contact-points", POINTS, "--json", str(out)]  # fmt: skip

    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run(argv, env={**os.environ, **cluster.env}, stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, check=False, timeout=800)  # fmt: skip

    first = run()
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    load = json.loads(out.read_text())["sizes"][0]["load"]
    assert (load["complete"], load["written"], load["load_replication_factor"]) == (True, 10_000, 1)
    assert load["raised"]["error"] is None and load["raised"]["factor"] == 3, load["raised"]
    ks = "SELECT replication FROM system_schema.keyspaces WHERE keyspace_name = 'hoprag_scale'"
    assert dict(s.execute(ks).one()[0])["replication_factor"] == "3"
    count = SimpleStatement("SELECT count(*) FROM hoprag_scale.n10000_d16",
                            consistency_level=ConsistencyLevel.ONE)  # fmt: skip
    hosts = sorted(s.cluster.metadata.all_hosts(), key=lambda h: h.address)
    assert [s.execute(count, host=h, timeout=120).one()[0] for h in hosts] == [10_000] * 3

    second = run()
    assert second.returncode == 0, second.stdout[-3000:] + second.stderr[-3000:]
    again = json.loads(out.read_text())["sizes"][0]["load"]
    assert again["already_complete"] is True and "raised" not in again, again
    assert "raising hoprag_scale" not in second.stdout


async def test_a_traversal_survives_a_node_killed_mid_stream(cluster: Cluster) -> None:
    """Node 3 killed (SIGKILL) after the first result of a traversal over an RF 3 table: the
    traversal returns the same documents as before the kill. Node 3 stays dead for the tests
    after this one, until the rejoin test brings it back."""
    store = _store(cluster.ensure(), "trav", "docs", "ALL")  # searches run at ONE
    await store.aadd(graph_documents(300, 16, seed=11))
    edges = [("keywords", "keywords"), ("cites", "$id")]
    strategy = Eager(select_k=40, start_k=3, adjacent_k=6, max_depth=3)
    before = await atraverse("content 12", store=store, edges=edges, strategy=strategy)
    assert len(before) == 40

    victim = cluster.pid(3)
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


def test_load_consistency_all_fails_with_a_node_down_and_quorum_succeeds(
    cluster: Cluster, tmp_path: Path
) -> None:
    """`--consistency` reaches Cassandra: with node 3 down (logged DOWN by the other two) a
    load at ALL fails with a one-line error, where the default level would have succeeded,
    and at QUORUM it succeeds and every document is then read back at QUORUM."""
    s = cluster.ensure((1, 2))
    _wait_logged_down(cluster, 3, by=(1, 2))
    assert wait_driver_sees(s, ADDRS[:2]) == ADDRS[:2]
    f = tmp_path / "articles.jsonl"
    ids = write_articles_jsonl(f, 300)

    at_all = _load(f, "arts", "ALL")
    assert at_all.returncode == 1, at_all.stdout + at_all.stderr[-3000:]
    assert "Traceback" not in at_all.stderr
    (line,) = at_all.stderr.strip().splitlines()
    assert line.startswith("hoprag: error: ")
    assert "not enough live replicas for the requested consistency" in line
    assert "consistency level ALL" in line and "cons.hoprag_catalog" in line

    at_quorum = _load(f, "arts", "QUORUM")
    assert at_quorum.returncode == 0, at_quorum.stderr[-3000:]
    assert "loaded 300 documents into cons.arts" in at_quorum.stdout
    assert _ids_at(s, "cons", "arts", "QUORUM") == ids
    row = _catalog_at_quorum(s, "cons", "arts")
    assert row.written == 300 and row.complete


def test_an_interrupted_load_resumes_on_the_cluster(cluster: Cluster, tmp_path: Path) -> None:
    """DESIGN §7 on the cluster: `hoprag load` into an RF 3 keyspace at QUORUM with node 3
    down, interrupted part-way (SIGINT) and run again, ends with every document once, read
    back at QUORUM."""
    s = cluster.ensure((1, 2))
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
    assert _ids_at(s, "loadrf3", "arts", "QUORUM") == ids
    row = _catalog_at_quorum(s, "loadrf3", "arts")
    assert row.written == 1200 and row.complete


async def test_a_killed_node_restarted_rejoins_and_answers_for_writes_it_missed(
    cluster: Cluster,
) -> None:
    """Node 3 killed (SIGKILL; by the traversal test, or here when it runs alone), 60
    documents written at QUORUM while it is down, node 3 brought back by `restart --node 3`:
    all three nodes are UN, and every document reads back at QUORUM and at ALL."""
    if not {1, 2} <= set(cluster.running()):
        cluster.ensure()
    store = _store(cluster.session, "rejoin", "docs", "QUORUM")
    docs = graph_documents(110, DIM, seed=5)
    before, during = docs[:50], docs[50:]
    await store.aadd(before)
    if 3 in cluster.running():
        victim = kill(cluster, 3)
    else:
        victim = int((cluster.state / "node3" / "pid").read_text())
    s = cluster.session
    assert wait_driver_sees(s, ADDRS[:2]) == ADDRS[:2]
    await store.aadd(during)  # two replicas of three acknowledge each write

    log = cluster.state / "node3" / "logs" / "system.log"
    starts = log.read_text(errors="replace").count("Startup complete")
    refused = cluster.launcher("up", "--nodes", "1")
    assert refused.returncode == 1 and "a different cluster is running" in refused.stderr
    back = cluster.launcher("restart", "--node", "3")
    assert back.returncode == 0, back.stdout + back.stderr[-3000:]
    assert back.stdout.strip().splitlines()[-1] == POINTS
    assert "node(s) 3 back in the 3-node cluster" in back.stdout
    new_pid = cluster.pid(3)
    assert new_pid != victim and alive(new_pid)
    assert cluster.running() == [1, 2, 3]
    # The restarted node logged to its own file, once more than before.
    assert log.read_text(errors="replace").count("Startup complete") == starts + 1

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
    store = _store(cluster.ensure(), "rejoin", "seed", "QUORUM")
    docs = graph_documents(60, DIM, seed=9)
    await store.aadd(docs[:30])
    others = [cluster.pid(i) for i in (2, 3)]
    seed = kill(cluster, 1)
    s = cluster.session
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
    s = cluster.ensure()
    store = _store(s, "rejoin", "running", "ALL")
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
    s = cluster.ensure()
    written: dict[str, list[Document]] = {}
    for table, level, seed in (("fresh_q", "QUORUM", 21), ("fresh_all", "ALL", 22)):
        written[table] = graph_documents(120, DIM, seed=seed)
        await _store(s, "keep", table, level).aadd(written[table])
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
    for f in logs:
        assert f.read_text(errors="replace").count("skipped default role setup") < 1000
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


def test_down_stops_every_node(cluster: Cluster) -> None:
    cluster.ensure()
    pids = [cluster.pid(i) for i in (1, 2, 3)]
    cluster.disconnect()
    down = cluster.launcher("down")
    assert down.returncode == 0, down.stderr
    assert not any(alive(p) for p in pids), "a node JVM survived `scripts/cassandra down`"
    status = cluster.launcher("status")
    assert status.returncode == 3 and "not running" in status.stdout
