"""Helpers shared by the benchmark scripts in scripts/: precomputed-embedding lookup, latency
summaries, plain-text tables, the machine/version description, load-average checks and the
local nodes whose CPU a run can read.

The scripts import it as a sibling module (`from benchlib import ...`); run them from the
repository root (`python scripts/bench.py`), which puts scripts/ on `sys.path`."""

from __future__ import annotations

import datetime as _dt
import importlib.metadata
import math
import os
import platform
import statistics
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

NO_NODE_CPU = (
    "node CPU: not measured (the contact points are not nodes that scripts/cassandra started "
    "under this HOPRAG_CASSANDRA_HOME; give it the HOPRAG_CASSANDRA_HOME and "
    "HOPRAG_CASSANDRA_FIRST_IP the nodes were started with)"
)


class LookupEmbeddings:
    """A LangChain-shaped embedding (also a plain callable) that returns precomputed vectors
    by text, near-free, so that every loader and retriever pays the same (nothing) for
    embedding. Unknown texts (dimension probes) get the first vector of the table."""

    def __init__(self, table: dict[str, list[float]]) -> None:
        if not table:
            raise ValueError("LookupEmbeddings needs at least one vector")
        self.table = table
        self._fallback = next(iter(table.values()))
        self.dim = len(self._fallback)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """The stored vectors of `texts`, in order."""
        return [self.table[t] for t in texts]

    def embed_query(self, text: str) -> list[float]:
        """The stored vector of `text` (or the fallback for a probe text)."""
        return self.table.get(text) or self._fallback

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        """Async `embed_documents` (no I/O, so no thread)."""
        return self.embed_documents(texts)

    async def aembed_query(self, text: str) -> list[float]:
        """Async `embed_query` (no I/O, so no thread)."""
        return self.embed_query(text)

    def __call__(self, text: str) -> list[float]:
        return self.embed_query(text)


def percentile(values: Sequence[float], q: float) -> float:
    """The `q`-th percentile (0..100) with linear interpolation between closest ranks."""
    if not values:
        return math.nan
    xs = sorted(values)
    pos = (len(xs) - 1) * q / 100.0
    lo, hi = math.floor(pos), math.ceil(pos)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def summary_ms(seconds: Sequence[float]) -> dict[str, float]:
    """Median, p95, min and count of a sample of durations in seconds, as milliseconds."""
    if not seconds:
        return {"p50": math.nan, "p95": math.nan, "min": math.nan, "n": 0}
    return {
        "p50": statistics.median(seconds) * 1e3,
        "p95": percentile(seconds, 95) * 1e3,
        "min": min(seconds) * 1e3,
        "n": len(seconds),
    }


def text_table(rows: Sequence[Sequence[str]]) -> str:
    """A plain-text table: the first row is the header, the first column left-aligned."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for k, r in enumerate(rows):
        lines.append(
            "  ".join(
                c.ljust(w) if i == 0 else c.rjust(w)
                for i, (c, w) in enumerate(zip(r, widths, strict=True))
            )
        )
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def load_average() -> tuple[float, float, float]:
    """The 1, 5 and 15 minute load averages."""
    return os.getloadavg()


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def machine_info(session: Any = None) -> dict[str, Any]:
    """Where and with what a benchmark ran: date, CPU, cores, memory, Python and package
    versions, and (given a driver session) the Cassandra release."""
    mem_gib = math.nan
    try:
        with open("/proc/meminfo", encoding="utf-8") as f:
            mem_gib = int(f.readline().split()[1]) / 2**20
    except (OSError, ValueError, IndexError):
        pass
    info: dict[str, Any] = {
        "date": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "memory_gib": round(mem_gib, 1),
        "python": platform.python_version(),
        "packages": {
            d: _version(d)
            for d in (
                "hoprag",
                "cassandra-driver",
                "cassio",
                "graph-retriever",
                "langchain-graph-retriever",
                "langchain-community",
                "sentence-transformers",
                "torch",
            )
        },
    }
    if session is not None:
        row = session.execute("SELECT release_version FROM system.local").one()
        info["cassandra"] = row[0]
    return info


def local_node_pids(session: Any) -> list[int]:
    """The JVM pids of the nodes `scripts/cassandra` started here (under this
    HOPRAG_CASSANDRA_HOME), when the session talks to those nodes only; else none."""
    tool = Path(__file__).resolve().parent / "cassandra"
    done = subprocess.run([sys.executable, str(tool), "pids"], stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, check=False)  # fmt: skip
    pairs = [ln.split() for ln in done.stdout.splitlines()] if done.returncode == 0 else []
    local = {p[0]: int(p[1]) for p in pairs if len(p) == 2 and p[1].isdigit()}
    hosts = {str(h.address) for h in session.cluster.metadata.all_hosts()}
    return list(local.values()) if hosts and hosts <= set(local) else []


def node_pids_or_say_why_not(session: Any) -> list[int]:
    """`local_node_pids`, printing `NO_NODE_CPU` when there are none, so that a run without
    the nodes' CPU says so instead of showing it as "-"."""
    pids = local_node_pids(session)
    if not pids:
        print(NO_NODE_CPU, flush=True)
    return pids
