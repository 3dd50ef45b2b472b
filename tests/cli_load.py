"""Running `hoprag load` as a subprocess in tests, and interrupting it part-way."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from typing import Any


def load_command(path: str, keyspace: str, table: str, contact: str, *extra: str) -> list[str]:
    """`hoprag load jsonl` of `path` with 32-d hash vectors, in batches of 40."""
    return [sys.executable, "-m", "hoprag.cli", "load", "jsonl", "--path", path, "--table",
            table, "--embedding", "hash:32", "--keyspace", keyspace, "--batch", "40",
            "--contact-points", contact, *extra]  # fmt: skip


# Resets SIGINT in a small Python process that then becomes the command (exec): thread-safe,
# unlike subprocess's preexec_fn in a test process with driver threads.
_SIGINT_DEFAULT = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "os.execv(sys.argv[1], sys.argv[1:])"
)


def start_interruptible(args: list[str], **kwargs: Any) -> subprocess.Popen[str]:
    """Start `args` with SIGINT at its default action, so that Python turns it into
    KeyboardInterrupt as it does in a terminal. A shell without job control starts its
    background commands with SIGINT ignored (`scripts/test ... &`, some CI runners), a child
    inherits that, and Python then leaves it ignored: the interrupt would never arrive."""
    return subprocess.Popen([sys.executable, "-c", _SIGINT_DEFAULT, *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            **kwargs)  # fmt: skip


def interrupt_after(
    args: list[str], session: Any, keyspace: str, table: str, written: int
) -> tuple[int, str]:
    """Start the load, wait until its catalog row says at least `written` documents are in,
    send SIGINT and return (exit code, stderr). Fails if the load ends on its own first."""
    proc = start_interruptible(args, env=os.environ | {"PYTHONUNBUFFERED": "1"})
    deadline = time.monotonic() + 300
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                row = session.execute(
                    f"SELECT written FROM {keyspace}.hoprag_catalog WHERE table_name = %s",
                    (table,),
                ).one()
            except Exception:  # the catalog table may not exist yet
                row = None
            if row is not None and int(row.written or 0) >= written:
                break
            time.sleep(0.05)
        assert proc.poll() is None, "the load finished before it could be interrupted"
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, err
