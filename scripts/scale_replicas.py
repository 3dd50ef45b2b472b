"""Load a local cluster at a lower replication factor, then raise it (bench_scale.py's
`--load-replication-factor`).

On one machine every replica does a row's whole write work (its memtable, its SAI vector
graph, its flushes and compactions), so three nodes loading at replication factor 3 do three
times the node work of a load at 1. Loaded at 1, the keyspace flushed on every node, ALTERed to
the target factor and repaired in full from one node, the missing replicas arrive by
entire-SSTable streaming with their SAI index files (Cassandra 5.0 streams them whole to a node
that owns every range the SSTable covers, as every node does at RF 3 on three nodes), so no
replica rebuilds an index. docs/benchmarks.md has the figures.

Only nodes that `scripts/cassandra` started (under `HOPRAG_CASSANDRA_HOME`) can be flushed and
repaired here: the commands go through its `nodetool`."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from hoprag.stores.cassandra.bulk import resume_point
from hoprag.stores.cassandra.catalog import CATALOG_TABLE, LoadCatalog
from hoprag.stores.cassandra.schema import execute_ddl_all, replication_map

TOOL = Path(__file__).resolve().parent / "cassandra"
REPAIR_TIMEOUT_S = 3 * 3600


def keyspace_factor(session: Any, keyspace: str) -> int:
    """The keyspace's replication factor as the schema says (0 when it does not exist)."""
    row = session.execute(
        "SELECT replication FROM system_schema.keyspaces WHERE keyspace_name = %s", (keyspace,)
    ).one()
    return int(dict(row[0]).get("replication_factor", 0)) if row else 0


def set_factor(session: Any, keyspace: str, factor: int) -> None:
    """ALTER the keyspace to `factor` replicas (SimpleStrategy) and wait for every live node."""
    execute_ddl_all(session, [f"ALTER KEYSPACE {keyspace} WITH replication = "
                              f"{replication_map(factor)}"])  # fmt: skip


def needs_load(session: Any, keyspace: str, table: str, source: str, embedding: str) -> bool:
    """Whether the library's loader would write anything into `table` (its load catalogue does
    not say a load of this `source` completed)."""
    prior = LoadCatalog(session, keyspace).get(table)
    where = f"{keyspace}.{table}"
    return resume_point(
        prior, source=source, embedding_name=embedding, restart=False, where=where
    ) is not None  # fmt: skip


def nodetool(node: int, *args: str, timeout: float) -> str | None:
    """Run `scripts/cassandra nodetool --node N ARGS`; None when it succeeded, else the end of
    what it said."""
    done = subprocess.run(
        [sys.executable, str(TOOL), "nodetool", "--node", str(node), *args],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, check=False, timeout=timeout,
    )  # fmt: skip
    return None if done.returncode == 0 else (done.stderr or done.stdout).strip()[-400:]


def raise_factor(
    session: Any, keyspace: str, factor: int, nodes: int, table: str | None = None
) -> dict[str, Any]:
    """Flush `table` and the load catalogue (or, with no table, the whole keyspace) on each of
    the `nodes` local nodes, ALTER the keyspace to `factor` and run a full repair of the same
    tables from node 1; the seconds each step took and the first failure (then the table may
    lack replicas: the caller must not measure it). Tables written only before the factor was
    lowered keep every replica (lowering it deletes nothing) and are not repaired."""
    tables = [] if table is None else [table, CATALOG_TABLE]
    out: dict[str, Any] = {"factor": factor, "tables": tables or "all", "error": None}
    t0 = time.monotonic()
    for n in range(1, nodes + 1):
        if error := nodetool(n, "flush", keyspace, *tables, timeout=1800):
            out["error"] = f"flush on node {n}: {error}"
            return out
    out["flush_s"] = round(time.monotonic() - t0, 1)
    set_factor(session, keyspace, factor)
    t1 = time.monotonic()
    if error := nodetool(1, "repair", "--full", keyspace, *tables, timeout=REPAIR_TIMEOUT_S):
        out["error"] = f"repair: {error}"
    out["repair_s"] = round(time.monotonic() - t1, 1)
    out["seconds"] = round(time.monotonic() - t0, 1)
    return out
