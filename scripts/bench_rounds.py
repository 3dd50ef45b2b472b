#!/usr/bin/env python
"""Sequential rounds over a slow link: hoprag's speculation modes side by side.

    HOPRAG_CASSANDRA=127.0.0.1:9042 HF_HUB_OFFLINE=1 python scripts/bench_rounds.py \\
        [--latency-ms 10] [--modes strategy auto off] [--json F] [--markdown F]

The FOLDOC tables of `scripts/bench.py` (hoprag's table, loaded there if missing) are read
through the benchmark's delay proxy (`tests/delay_proxy.py`, `--latency-ms` each way, 0: the
direct link). Per case (Eager d2, Eager d3, Mmr d2 with adjacent_k 10 by default), every
`--modes` value of `speculation=` runs every query `--reps` times after a warm-up pass, the
modes interleaved (their order rotates per repetition) so that they share the machine's load.
"default" passes no `speculation` argument (so the script runs on code from before the
argument existed, for a before/after run).

Per case and mode: the sequential rounds per traversal (`stats.rounds`, each query's own
figures too), queries, speculative queries issued / used / wasted, p50 / p95 latency, and the
floor, (depth + 1) x the median of one edge query over the same link (`scripts/bench.py`'s
`single_queries`); whether every traversal returned the ids, depths and paths of the first
mode's traversal of the same query. The exit status is 1 when they differ."""

from __future__ import annotations

import argparse
import asyncio
import functools
import gc
import inspect
import json
import multiprocessing
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import bench
from benchlib import load_average, machine_info, summary_ms, text_table

import hoprag
from hoprag.stores.cassandra import vectors
from hoprag.stores.cassandra.store import CassandraStore

DEFAULT_CASES = ("Eager d2 k10", "Eager d3 k10", "Mmr d2 k10")
HAS_SPECULATION = "speculation" in inspect.signature(hoprag.astream).parameters


async def one(
    store: CassandraStore, ds: bench.Dataset, case: bench.Case, q: str, mode: str
) -> dict[str, Any]:
    """One traversal: its time, rounds, queries, speculation counts and what it returned."""
    strategy = case.strategies()[0]
    kwargs: dict[str, Any] = {}
    if mode != "default":
        kwargs["speculation"] = int(mode) if mode.isdigit() else mode
    vectors.install()
    t0 = time.perf_counter()
    stream = hoprag.astream(
        None,
        store=store,
        edges=ds.edges,
        strategy=strategy,
        query_embedding=ds.query_vectors[q],
        **kwargs,
    )
    nodes = [n async for n in stream]
    secs = time.perf_counter() - t0
    st = stream.stats
    spec = getattr(st, "speculation", None)
    return {
        "seconds": secs,
        "rounds": st.rounds,
        "hops": len(st.hops),
        "queries": st.total_queries,
        "issued": spec.issued
        if spec
        else sum(h.notes.get("speculative_edges", 0) for h in st.hops),
        "used": spec.used if spec else sum(h.notes.get("prefetched_edges", 0) for h in st.hops),
        "result": [(n.id, n.depth, list(n.path.nodes)) for n in strategy.finalize(nodes)],
    }


async def measure(
    store: CassandraStore, ds: bench.Dataset, case: bench.Case, modes: list[str], reps: int
) -> dict[str, Any]:
    """Every mode of one case, interleaved per repetition, after a warm-up pass."""
    runs: dict[str, list[dict[str, Any]]] = {m: [] for m in modes}
    for m in modes:  # warm-up: prepared statements, the link's measured round trip
        for q in ds.queries:
            await one(store, ds, case, q, m)
    for rep in range(reps):
        order = modes[rep % len(modes) :] + modes[: rep % len(modes)]
        for m in order:
            for q in ds.queries:
                runs[m].append({"query": q, **await one(store, ds, case, q, m)})
    edge_sets = await bench.edge_samples(store, ds, case)
    search: list[float] = []
    adjacent: list[float] = []
    await bench.single_queries(store, ds, case, edge_sets, search, adjacent)
    one_query = summary_ms(adjacent)["p50"]
    floor = (case.depth + 1) * one_query
    reference = {r["query"]: r["result"] for r in runs[modes[0]]}
    out: dict[str, Any] = {
        "case": case.name,
        "one_query_ms": one_query,
        "floor_ms": floor,
        "modes": {},
    }
    for m in modes:
        rs = runs[m]
        lat = summary_ms([r["seconds"] for r in rs])
        per_query = [rs[i]["rounds"] for i in range(len(ds.queries))]
        same = sum(r["result"] == reference[r["query"]] for r in rs)
        out["modes"][m] = {
            "p50_ms": lat["p50"],
            "p95_ms": lat["p95"],
            "rounds": statistics.mean(r["rounds"] for r in rs),
            "rounds_per_query": per_query,
            "hops": statistics.mean(r["hops"] for r in rs),
            "queries": statistics.mean(r["queries"] for r in rs),
            "issued": statistics.mean(r["issued"] for r in rs),
            "used": statistics.mean(r["used"] for r in rs),
            "floor_ratio": lat["p50"] / floor,
            "same": f"{same}/{len(rs)}",
            "all_same": same == len(rs),
            # What each query returned (first repetition): to compare runs of other code.
            "results": {r["query"]: r["result"] for r in rs[: len(ds.queries)]},
        }
    return out


def _proxy(host: str, port: int, target: str, delay: float, ready: Any, stop: Any) -> None:
    """The delay proxy, in a process of its own: in this one it would wait for the GIL while
    the traversals decode rows, and so hold packets longer than `delay`."""
    sys.path.insert(0, bench.TESTS_DIR)
    from delay_proxy import DelayProxy

    with DelayProxy((host, port), (target, port), delay):
        ready.set()
        stop.wait()


def start_proxy(target: str, port: int, delay: float) -> tuple[Any, Any]:
    """Start the proxy process (on `bench.PROXY_HOST`); its process and stop event."""
    ctx = multiprocessing.get_context("spawn")
    ready, stop = ctx.Event(), ctx.Event()
    proc = ctx.Process(target=_proxy, args=(bench.PROXY_HOST, port, target, delay, ready, stop))
    proc.daemon = True
    proc.start()
    if not ready.wait(60):
        proc.terminate()
        raise SystemExit("the delay proxy did not start within 60 s")
    return proc, stop


def table(results: list[dict[str, Any]], modes: list[str], link: float) -> list[list[str]]:
    """The report's rows (header first)."""
    rows = [
        [
            "case",
            "mode",
            "rounds (floor)",
            "per query",
            "queries",
            "spec. issued / used / wasted",
            "p50 / p95 ms",
            "one query ms",
            "floor ms",
            "/ floor",
            f"x faster than {modes[0]}",
            "same results",
        ]
    ]
    for r in results:
        base = r["modes"][modes[0]]["p50_ms"]
        depth = int(r["case"].split(" d")[1][0])
        for m in modes:
            f = r["modes"][m]
            rows.append(
                [
                    r["case"],
                    m,
                    f"{f['rounds']:.1f} ({depth + 1})",
                    " ".join(map(str, f["rounds_per_query"])),
                    f"{f['queries']:.1f}",
                    f"{f['issued']:.1f} / {f['used']:.1f} / {f['issued'] - f['used']:.1f}",
                    f"{f['p50_ms']:.0f} / {f['p95_ms']:.0f}",
                    f"{r['one_query_ms']:.1f}",
                    f"{r['floor_ms']:.0f}",
                    f"{f['floor_ratio']:.2f}",
                    f"{base / f['p50_ms']:.2f}",
                    f["same"],
                ]
            )
    return rows


def compare(info: dict[str, Any], other: dict[str, Any], name: str) -> bool:
    """Print, per case and mode, for how many queries this run returned what every mode of
    `other` (another run's --json, e.g. of the code before) returned; True if all did."""
    theirs = {c["case"]: c for c in other["cases"]}
    ok = True
    for case in info["cases"]:
        ref = theirs.get(case["case"])
        if ref is None:
            continue
        ref_results = [f["results"] for f in ref["modes"].values() if "results" in f]
        for mode, f in case["modes"].items():
            mine = json.loads(json.dumps(f["results"]))  # as the other run's JSON holds it
            same = sum(all(r.get(q) == res for r in ref_results) for q, res in mine.items())
            ok = ok and same == len(mine)
            print(f"  {case['case']} {mode}: {same}/{len(mine)} queries as in {name}")
    return ok


def markdown(rows: list[list[str]]) -> str:
    """The rows as a Markdown table."""
    head, *body = rows
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(r) + " |" for r in body]
    return "\n".join(lines)


async def amain(args: argparse.Namespace) -> tuple[dict[str, Any], list[list[str]]]:
    """Measure every case; the figures and the table's rows."""
    from hoprag.stores.cassandra.schema import keyspace_statements, replication_map
    from hoprag.stores.cassandra.session import connect, parse_contact_points

    if args.nagle:  # the direct session too (hoprag's sessions set TCP_NODELAY since #20)
        import hoprag.stores.cassandra.session as session_module

        session_module.SOCKOPTS = None  # type: ignore[assignment]
    session = await anyio.to_thread.run_sync(connect, args.contact_points)
    for stmt in keyspace_statements(bench.KEYSPACE, replication_map()):
        session.execute(stmt, timeout=120)
    session.execute(
        f"CREATE TABLE IF NOT EXISTS {bench.MARKS} (name text PRIMARY KEY, docs int, "
        "fingerprint text, load_seconds double)",
        timeout=120,
    )
    info = {
        "nagle": args.nagle,
        "machine": machine_info(session),
        "load_average_start": load_average(),
        "latency_ms": args.latency_ms,
        "modes": args.modes,
        "reps": args.reps,
        "has_speculation": HAS_SPECULATION,
    }
    print(f"machine: {info['machine']}\nload average: {info['load_average_start']}")
    ds = bench.make_dataset("foldoc", args.foldoc, args.embedding, args.queries)
    tables = await bench.prepare_tables(session, ds, False)
    proxy = None
    remote = session
    if args.latency_ms:
        host, port = parse_contact_points(args.contact_points)[0]
        proxy = start_proxy(host, port, args.latency_ms / 1000)
        sys.path.insert(0, bench.TESTS_DIR)
        from delay_proxy import connect_through

        remote = await anyio.to_thread.run_sync(
            functools.partial(connect_through, bench.PROXY_HOST, port, nodelay=not args.nagle)
        )
        print(
            f"link: {args.latency_ms:g} ms each way through a proxy process on {bench.PROXY_HOST}"
        )
    store = CassandraStore(
        bench.LookupEmbeddings(ds.query_vectors),
        keyspace=bench.KEYSPACE,
        table=tables["ours"].table,
        session=remote,
        dimension=bench.DIM,
    )
    await store.asetup()
    gc.collect()
    gc.freeze()
    results = []
    cases = [c for c in bench.cases_for(False, False) if c.name in args.cases]
    try:
        for case in cases:
            t0 = time.perf_counter()
            r = await measure(store, ds, case, args.modes, args.reps)
            results.append(r)
            figures = ", ".join(
                f"{m} {f['p50_ms']:.0f} ms {f['rounds']:.1f} rounds" for m, f in r["modes"].items()
            )
            print(f"  {case.name}: {figures} [{time.perf_counter() - t0:.0f} s]", flush=True)
    finally:
        if proxy is not None:
            remote.cluster.shutdown()
            proxy[1].set()
            proxy[0].join(timeout=10)
        session.cluster.shutdown()
    info["load_average_end"] = load_average()
    info["cases"] = results
    rows = table(results, args.modes, args.latency_ms)
    print()
    print(text_table(rows))
    return info, rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--latency-ms", type=float, default=10.0, help="ms each way (0: direct link)")
    ap.add_argument(
        "--modes",
        nargs="+",
        default=["strategy", "auto"],
        help="speculation= values to compare; the first is the reference",
    )
    ap.add_argument("--cases", nargs="+", default=list(DEFAULT_CASES), help="bench.py case names")
    ap.add_argument("--queries", type=int, default=10, help="FOLDOC queries (max 20)")
    ap.add_argument("--reps", type=int, default=3, help="measured repetitions per query and mode")
    ap.add_argument("--foldoc", type=int, default=None, help="FOLDOC documents (default all)")
    ap.add_argument("--embedding", choices=["minilm", "hash"], default="minilm")
    ap.add_argument("--contact-points", default=os.environ.get("HOPRAG_CASSANDRA", "127.0.0.1"))
    ap.add_argument(
        "--nagle",
        action="store_true",
        help="sessions without TCP_NODELAY (the driver's default, which hoprag's "
        "sessions had before): for a run of the code from before",
    )
    ap.add_argument("--json", help="write the figures as JSON here")
    ap.add_argument(
        "--compare-with",
        metavar="JSON",
        help="another run's --json: say whether each query returned the same results there",
    )
    ap.add_argument("--markdown", help="write the table as Markdown here")
    args = ap.parse_args()
    if not 0 <= args.latency_ms <= 1000:
        ap.error(f"--latency-ms must be in 0..1000 (ms each way), got {args.latency_ms:g}")
    if not 1 <= args.queries <= 20:
        ap.error(f"--queries must be in 1..20, got {args.queries}")
    if args.reps < 1:
        ap.error(f"--reps must be >= 1, got {args.reps}")
    known = {c.name for c in bench.cases_for(False, False)}
    unknown = [c for c in args.cases if c not in known]
    if unknown:
        ap.error(f"unknown case(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    if not HAS_SPECULATION and args.modes != ["default"]:
        ap.error("this hoprag has no speculation= argument: use --modes default")
    for m in args.modes:
        if m not in ("default", "auto", "on", "wide", "strategy", "off") and not m.isdigit():
            ap.error(f"--modes: {m!r} is not default, auto, on, wide, strategy, off or a budget")
    other = None
    if args.compare_with:  # checked before measuring, not after
        try:
            other = json.loads(Path(args.compare_with).read_text())
            assert all("results" in f for c in other["cases"] for f in c["modes"].values())
        except (OSError, ValueError, KeyError, TypeError, AssertionError) as exc:
            ap.error(
                f"--compare-with {args.compare_with}: not the --json of a bench_rounds run "
                f"with per-query results ({type(exc).__name__}: {exc})"
            )
    info, rows = asyncio.run(amain(args))
    ok = all(f["all_same"] for r in info["cases"] for f in r["modes"].values())
    print("\nsame results in every traversal of every mode" if ok else "\nDIFFERENT RESULTS")
    if other is not None:
        ok = compare(info, other, args.compare_with) and ok
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(info, indent=2, default=str))
    if args.markdown:
        Path(args.markdown).parent.mkdir(parents=True, exist_ok=True)
        Path(args.markdown).write_text(markdown(rows) + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
