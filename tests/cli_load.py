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


def interrupt_after(
    args: list[str], session: Any, keyspace: str, table: str, written: int
) -> tuple[int, str]:
    """Start the load, wait until its catalog row says at least `written` documents are in,
    send SIGINT and return (exit code, stderr). Fails if the load ends on its own first."""
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=os.environ | {"PYTHONUNBUFFERED": "1"})  # fmt: skip
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
