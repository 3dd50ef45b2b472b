"""Running `scripts/cassandra` from tests that start clusters of their own (3 nodes, secured),
and telling whether a node's JVM is still alive."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
LAUNCHER = REPO / "scripts" / "cassandra"


def run_launcher(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """`scripts/cassandra ARGS` with `env`, its output captured, no stdin, 10 minutes at most."""
    return subprocess.run(
        [sys.executable, str(LAUNCHER), *args],
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=600,
        check=False,
    )


def flush_if_local(keyspace: str, table: str) -> bool:
    """Flush `keyspace.table` on the suite's node with `scripts/cassandra nodetool flush` when
    that node is one `scripts/cassandra` started (True), else leave it (False: exit 3). A
    flushed table's SAI vector index is built once, on disk, so an ANN search answers the same
    all run long; in the memtable, a flush that the commit log forces at any moment of a long
    run rebuilds it, and an approximate search may then answer differently."""
    r = run_launcher(dict(os.environ), "nodetool", "flush", keyspace, table)
    if r.returncode == 3:
        return False
    assert r.returncode == 0, r.stderr[-2000:]
    return True


def alive(pid: int) -> bool:
    """Whether process `pid` exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.split(") ", 1)[1][0] != "Z"


def cluster_env(state: Path, first_ip: int = 4) -> dict[str, str]:
    """The environment for a 3-node test cluster of its own: state under `state`, nodes on
    127.0.0.`first_ip` and the next two (beside the suite's own node; each module that starts
    a cluster has addresses of its own, so that two test workers can run them at once), the
    local JVM even where Docker answers."""
    env = {k: v for k, v in os.environ.items() if k != "HOPRAG_CASSANDRA"}
    env |= {
        "HOPRAG_CASSANDRA_HOME": str(state),
        "HOPRAG_CASSANDRA_FIRST_IP": str(first_ip),
        "HOPRAG_NO_DOCKER": "1",
    }
    return env


def wait_driver_sees(session: Any, want: list[str], timeout: float = 60) -> list[str]:
    """Wait (bounded) until the driver counts exactly the nodes `want` as up; returns the
    addresses it counts as up when it stops waiting."""
    deadline = time.monotonic() + timeout
    while True:
        up = sorted(h.address for h in session.cluster.metadata.all_hosts() if h.is_up)
        if up == want or time.monotonic() > deadline:
            return up
        time.sleep(0.5)
