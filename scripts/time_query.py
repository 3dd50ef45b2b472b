#!/usr/bin/env python3
"""Where the wall time of `hoprag query` goes, with MiniLM and with hash vectors
(docs/benchmarks.md, "What one `hoprag query` costs").

Loads the first 1000 films twice into `--keyspace` (default `hoprag_time_query`): table
`films_minilm` with MiniLM and `films_hash` with hash:384 vectors (`hoprag load`, so a second run
of this script reuses them). Then runs `hoprag query "space opera" --edges
director:director,genre:genre --json` on each table `--runs` times (default 5, alternating), each
in a fresh process as a user runs it, and prints the median and range of each part of the wall
time:

* start and exit: the interpreter's start and the process's end (wall time less the rest);
* import: `from hoprag.cli import main`, what every command pays before it parses its arguments;
* checks: `check_query_args` (the arguments, with the modules the checks import);
* connect: `open_session` (the connection to the node);
* open table: `open_query_store` (the load catalogue's read, the store over the table);
* model load: `load_sentence_transformer`, the imports of torch and sentence-transformers
  included (the import of sentence-transformers is also timed alone, in a fresh process);
* first embedding: the command's warm-up embedding less the model's load;
* query embedding: embedding the query text in the traversal;
* traversal: the traversal's own `stats.seconds`;
* shutdown: the driver's `cluster.shutdown()`;
* the rest: building the embedding, the traversal's set-up, the output.

A first run of each command, not counted, warms the disk cache. Python's bytecode cache is used
as the environment says (`PYTHONDONTWRITEBYTECODE=1` turns it off: every module, torch's
included, is then compiled from source on every run); `--bytecode-cache DIR` turns it on with
the cache in DIR (`PYTHONPYCACHEPREFIX`), written by the first run, as a normal install has it.

The phases are timed in the command's own process by wrapping what `cmd_query` and the
traversal call (`check_query_args`, `open_session`, `open_query_store`, `warm_up`,
`load_sentence_transformer`, `aembed_query_vector`, `cluster.shutdown`); nothing else of the
command is changed.

    HOPRAG_CASSANDRA=127.0.0.1 .venv/bin/python scripts/time_query.py [--runs 5] \
        [--bytecode-cache /tmp/hoprag-pycache] [--keyspace hoprag_time_query]
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from typing import Any

QUERY = ["space opera", "--edges", "director:director,genre:genre", "--json"]
TABLES = {"minilm": "films_minilm", "hash": "films_hash"}
EMBEDDINGS = {"minilm": "minilm", "hash": "hash:384"}
PHASES = ["start and exit", "import", "checks", "connect", "open table", "model load",
          "first embedding", "query embedding", "traversal", "shutdown", "the rest",
          "wall"]  # fmt: skip


def child(argv: list[str]) -> int:
    """Run `hoprag ARGV` in this process with its phases timed; the timings are the last line
    written to stderr, as JSON."""
    began = time.perf_counter()
    from hoprag.cli import main as hoprag_main

    timings: dict[str, float] = {"import": time.perf_counter() - began}
    import hoprag.cli.query as query
    import hoprag.embeddings.minilm as minilm
    import hoprag.engine.traversal as traversal

    def add(name: str, start: float) -> None:
        timings[name] = timings.get(name, 0.0) + time.perf_counter() - start

    def timed(name: str, fn: Any) -> Any:
        def run(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                add(name, start)

        return run

    async def embed(*args: Any) -> Any:
        start = time.perf_counter()
        try:
            return await query_vector(*args)
        finally:
            add("query embedding", start)

    def connect(args: Any) -> Any:
        session = timed("connect", opened)(args)
        session.cluster.shutdown = timed("shutdown", session.cluster.shutdown)
        return session

    query_vector, opened = traversal.aembed_query_vector, query.open_session
    traversal.aembed_query_vector = embed
    query.open_session = connect
    query.open_query_store = timed("open table", query.open_query_store)
    query.check_query_args = timed("checks", query.check_query_args)
    query.warm_up = timed("warm-up", query.warm_up)
    minilm.load_sentence_transformer = timed("model load", minilm.load_sentence_transformer)
    code = hoprag_main(argv)
    timings["in process"] = time.perf_counter() - began
    print(json.dumps(timings), file=sys.stderr)
    return code


ENV = dict(os.environ)
"""The environment of the commands (see `--bytecode-cache`)."""


def _run(args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, check=False, env=ENV)


def _hoprag(*args: str) -> subprocess.CompletedProcess[str]:
    return _run([sys.executable, "-m", "hoprag.cli", *args])


def load_tables(keyspace: str) -> None:
    """Both tables, loaded unless an earlier run loaded them."""
    for kind, table in TABLES.items():
        r = _hoprag("load", "films", "--limit", "1000", "--table", table, "--embedding",
                    EMBEDDINGS[kind], "--keyspace", keyspace)  # fmt: skip
        if r.returncode != 0:
            raise SystemExit(f"hoprag load films --table {table} failed:\n{r.stderr}")
        print(f"{table}: {r.stdout.strip().splitlines()[-1]}", flush=True)


def one_run(kind: str, keyspace: str) -> dict[str, float]:
    """One `hoprag query` in a fresh process: its phases in seconds."""
    args = ["query", QUERY[0], "--table", TABLES[kind], "--keyspace", keyspace, *QUERY[1:]]
    began = time.perf_counter()
    r = _run([sys.executable, __file__, "--child", *args])
    wall = time.perf_counter() - began
    if r.returncode != 0:
        raise SystemExit(f"hoprag {' '.join(args)} failed:\n{r.stderr}")
    t = json.loads(r.stderr.splitlines()[-1])
    load = t.get("model load", 0.0)
    traversal = float(json.loads(r.stdout)["stats"]["seconds"])
    parts = {
        "import": t["import"],
        "checks": t["checks"],
        "connect": t["connect"],
        "open table": t["open table"],
        "model load": load,
        "first embedding": t["warm-up"] - load,
        "query embedding": t["query embedding"],
        "traversal": traversal,
        "shutdown": t["shutdown"],
    }
    return {
        "start and exit": wall - t["in process"],
        **parts,
        "the rest": t["in process"] - sum(parts.values()),
        "wall": wall,
    }


def import_seconds() -> float:
    """Importing sentence-transformers (and so torch and transformers) in a fresh process."""
    code = ("import time; t = time.perf_counter(); import sentence_transformers; "
            "print(time.perf_counter() - t)")  # fmt: skip
    return float(_run([sys.executable, "-c", code]).stdout)


def _row(name: str, values: list[float]) -> str:
    return (f"{name:<16} {statistics.median(values):8.3f} s   "
            f"({min(values):.3f}-{max(values):.3f})")  # fmt: skip


def _option(name: str, default: str | None) -> str | None:
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


def main() -> int:
    if sys.argv[1:2] == ["--child"]:
        return child(sys.argv[2:])
    runs = int(_option("--runs", "5") or 5)
    keyspace = _option("--keyspace", "hoprag_time_query") or "hoprag_time_query"
    cache = _option("--bytecode-cache", None)
    if cache is not None:
        ENV.pop("PYTHONDONTWRITEBYTECODE", None)
        ENV["PYTHONPYCACHEPREFIX"] = cache
    bytecode = "off" if ENV.get("PYTHONDONTWRITEBYTECODE") else f"on ({cache or 'default'})"
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    print(f"{when}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}, "
          f"bytecode cache {bytecode}", flush=True)  # fmt: skip
    load_tables(keyspace)
    measured: dict[str, list[dict[str, float]]] = {kind: [] for kind in TABLES}
    for kind in TABLES:
        one_run(kind, keyspace)  # not counted: warms the disk cache, writes the bytecode cache
    for _ in range(runs):
        for kind in TABLES:
            measured[kind].append(one_run(kind, keyspace))
    imports = [import_seconds() for _ in range(runs)]
    for kind, rows in measured.items():
        print(f"\nhoprag query with {EMBEDDINGS[kind]}: median of {runs} runs (range)")
        for phase in PHASES:
            if kind == "minilm" or phase not in ("model load", "first embedding"):
                print(_row(phase, [r[phase] for r in rows]))
    print("\n" + _row("import sentence_transformers alone", imports))
    print(f"load average at the end {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
