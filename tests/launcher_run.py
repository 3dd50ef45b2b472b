"""Running `scripts/cassandra` from tests that start clusters of their own (3 nodes, secured),
and telling whether a node's JVM is still alive."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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


def alive(pid: int) -> bool:
    """Whether process `pid` exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.split(") ", 1)[1][0] != "Z"
