"""`scripts/cassandra up --nodes 3` brings up three nodes that see each other, and `down` stops
them all. Runs beside the suite's own node, on 127.0.0.4-6 with its own state directory."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
LAUNCHER = REPO / "scripts" / "cassandra"


def _launcher(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(LAUNCHER), *args],
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=600,
        check=False,
    )


def _pids(state: Path) -> list[int]:
    return [int(p.read_text()) for p in sorted(state.glob("node*/pid"))]


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.split(") ", 1)[1][0] != "Z"


def test_three_nodes_accept_quorum_writes_and_down_stops_them_all(tmp_path: Path) -> None:
    from cassandra import ConsistencyLevel
    from cassandra.query import SimpleStatement

    from hoprag.stores.cassandra.session import connect

    env = {k: v for k, v in os.environ.items() if k != "HOPRAG_CASSANDRA"}
    env |= {
        "HOPRAG_CASSANDRA_HOME": str(tmp_path / "c3"),
        "HOPRAG_CASSANDRA_FIRST_IP": "4",
        "HOPRAG_NO_DOCKER": "1",
    }
    up = _launcher(env, "up", "--nodes", "3", "--heap", "768M")
    session: Any = None
    try:
        assert up.returncode == 0, up.stderr[-3000:]
        points = up.stdout.strip().splitlines()[-1]
        assert points == "127.0.0.4:9042,127.0.0.5:9042,127.0.0.6:9042"
        pids = _pids(tmp_path / "c3")
        assert len(pids) == 3 and all(_alive(p) for p in pids)

        session = connect(points)
        hosts = session.cluster.metadata.all_hosts()
        assert sorted(h.address for h in hosts if h.is_up) == [
            "127.0.0.4",
            "127.0.0.5",
            "127.0.0.6",
        ]
        session.execute(
            "CREATE KEYSPACE rf3 WITH replication = "
            "{'class': 'SimpleStrategy', 'replication_factor': 3}"
        )
        session.execute("CREATE TABLE rf3.kv (k text PRIMARY KEY, v int)")
        write = SimpleStatement(
            "INSERT INTO rf3.kv (k, v) VALUES (%s, %s)", consistency_level=ConsistencyLevel.QUORUM
        )
        for i in range(20):
            session.execute(write, (f"k{i}", i))
        # Reading at ALL proves every one of the three replicas answers.
        read = SimpleStatement("SELECT k, v FROM rf3.kv", consistency_level=ConsistencyLevel.ALL)
        assert sorted(r.v for r in session.execute(read)) == list(range(20))
    finally:
        if session is not None:
            session.cluster.shutdown()
        down = _launcher(env, "down")
    assert down.returncode == 0, down.stderr
    assert not any(_alive(p) for p in pids), "a node JVM survived `scripts/cassandra down`"
    status = _launcher(env, "status")
    assert status.returncode == 3 and "not running" in status.stdout
