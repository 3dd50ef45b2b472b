#!/usr/bin/env python
"""Benchmark: Beam path search on a graph whose unbounded 3-hop expansion from one start is
hundreds of millions of paths, on MemoryStore and on CassandraStore, side by side.

The graph: `--docs` documents (random unit vectors of `--dim` dimensions) in sectors of
~`--sector-size` documents and with 3 tags each out of docs/40 tags (~120 documents per tag);
edges `sector -> sector` and `tags -> tags`, so every document has ~860 neighbours.

1. Counts the paths of an unbounded expansion from the start, hop by hop, from the adjacency
   (walks along edges that never step from a document to itself: `1' A^h e_start` with
   `A = M M' - D`, M the document x value incidence; computed, not enumerated).
2. Enumerates those 3-hop paths exhaustively, scoring each, under a time cap (`--cap`,
   default 10 s), and shows that it does not finish.
3. Runs Beam (beam_width 10, adjacent_k 10, max_depth 3) from the same start on MemoryStore
   and on CassandraStore (loaded with `CassandraStore.aadd`): median time, queries, rows,
   candidates per hop against the bound beam_width x adjacent_k, peak traced memory
   (tracemalloc), and whether both return the same ids.

    HOPRAG_CASSANDRA=127.0.0.1:9042 python scripts/bench_beam.py [--docs 20000] [--dim 32]
        [--no-cassandra] [--keep]

The Cassandra table lives in keyspace `hoprag_bench`; it is reused when it already holds the
documents and dropped at the end unless `--keep`."""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
import tracemalloc
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from benchlib import text_table

from hoprag import Beam, Document, MetadataEdge, Node, TraversalResult, atraverse

EDGES = [("sector", "sector"), ("tags", "tags")]
START = "d0"


def build(n: int, dim: int, sector_size: int, seed: int) -> tuple[np.ndarray, list[dict]]:
    """Unit vectors and metadata (`sector`, three `tags`, a `type`)."""
    rng = np.random.default_rng(seed)
    vecs = rng.standard_normal((n, dim))
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    n_sectors, n_tags = max(1, n // sector_size), max(3, n // 40)
    types = ("company", "person", "product", "event")
    meta = []
    for i in range(n):
        tags = sorted({f"t{int(t)}" for t in rng.choice(n_tags, 3, replace=False)})
        meta.append(
            {"sector": f"s{int(rng.integers(n_sectors))}", "tags": tags, "type": types[i % 4]}
        )
    return vecs, meta


def incidence(meta: list[dict]) -> tuple[np.ndarray, np.ndarray, int]:
    """(document index, value index) pairs of the edge values, and the number of values."""
    values: dict[tuple[str, str], int] = {}
    rows, cols = [], []
    for i, m in enumerate(meta):
        for field, vals in (("sector", [m["sector"]]), ("tags", m["tags"])):
            for v in vals:
                rows.append(i)
                cols.append(values.setdefault((field, v), len(values)))
    return np.asarray(rows), np.asarray(cols), len(values)


def count_paths(meta: list[dict], start: int, hops: int) -> list[int]:
    """Paths of 1..hops edges from `start` in an unbounded expansion, from the adjacency."""
    rows, cols, n_values = incidence(meta)
    n = len(meta)
    per_doc = np.bincount(rows, minlength=n).astype(np.float64)  # self-links to remove

    def step(v: np.ndarray) -> np.ndarray:  # A v with A = M M' - D
        by_value = np.bincount(cols, weights=v[rows], minlength=n_values)
        return np.bincount(rows, weights=by_value[cols], minlength=n) - per_doc * v

    v = np.zeros(n)
    v[start] = 1.0
    counts = []
    for _ in range(hops):
        v = step(v)
        counts.append(round(float(v.sum())))
    return counts


def enumerate_paths(
    meta: list[dict], sims: np.ndarray, start: int, cap: float
) -> tuple[int, float, tuple[int, ...] | None]:
    """Enumerate and score (sum of similarities) every 3-hop path from `start` until `cap`
    seconds pass; return (paths enumerated, seconds, the best path or None if unfinished)."""
    postings: dict[tuple[str, str], list[int]] = {}
    for i, m in enumerate(meta):
        postings.setdefault(("sector", m["sector"]), []).append(i)
        for t in m["tags"]:
            postings.setdefault(("tags", t), []).append(i)
    keys = [[("sector", m["sector"]), *(("tags", t) for t in m["tags"])] for m in meta]

    def neighbours(i: int) -> list[int]:
        return [j for k in keys[i] for j in postings[k] if j != i]

    t0 = time.perf_counter()
    deadline = t0 + cap
    count, best, best_path = 0, -np.inf, (start,)
    for a in neighbours(start):
        for b in neighbours(a):
            if time.perf_counter() > deadline:
                return count, time.perf_counter() - t0, None
            sab = sims[start] + sims[a] + sims[b]
            for c in neighbours(b):
                path = (start, a, b, c)
                score = sab + sims[c]
                count += 1
                if score > best:
                    best, best_path = score, path
    return count, time.perf_counter() - t0, best_path


def documents(vecs: np.ndarray, meta: list[dict]) -> list[Document]:
    return [
        Document(f"d{i}", f"document {i}", m, [float(x) for x in vecs[i]])
        for i, m in enumerate(meta)
    ]


class Measure:
    """Beam runs on one store: median time, stats of the last run, peak traced memory, and the
    median latency of one adjacency query on the same store for scale."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.load_seconds: float | None = None
        self.single: list[float] = []
        self.times: list[float] = []
        self.result: TraversalResult | None = None
        self.peak_bytes = 0


async def measure(
    name: str, store: Any, strategy: Beam, query: Sequence[float], repeats: int
) -> Measure:
    out = Measure(name)

    async def once() -> TraversalResult:
        return await atraverse(
            None,
            store=store,
            edges=EDGES,
            strategy=strategy,
            query_embedding=query,
            initial_root_ids=(START,),
        )

    await once()  # warm-up (prepared statements, indexes, caches)
    for _ in range(repeats):
        t0 = time.perf_counter()
        out.result = await once()
        out.times.append(time.perf_counter() - t0)
    tracemalloc.start()
    await once()
    out.peak_bytes = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    edge = MetadataEdge("sector", "s1")
    for _ in range(repeats):
        t0 = time.perf_counter()
        await store.aadjacent(edge, query, k=strategy.adjacent_k, include_embeddings=False)
        out.single.append(time.perf_counter() - t0)
    return out


async def cassandra_store(
    docs: list[Document], dim: int, table: str, reload: bool
) -> tuple[Any, float | None]:
    """The bench table (loaded with `aadd` unless it already holds the documents) and the
    load time (None when reused)."""
    from hoprag.stores.cassandra.store import CassandraStore

    store = CassandraStore(
        lambda _: [1.0] * dim,
        keyspace="hoprag_bench",
        table=table,
        contact_points=os.environ.get("HOPRAG_CASSANDRA"),
        dimension=dim,
    )
    await store.asetup()
    session = store.session
    have = session.execute(f"SELECT COUNT(*) FROM hoprag_bench.{table}").one()[0]
    if not reload and have == len(docs):
        return store, None
    t0 = time.perf_counter()
    await store.aadd(docs)
    return store, time.perf_counter() - t0


def hop_figures(result: TraversalResult) -> tuple[list[int], list[int], dict[str, int], int]:
    stats = result.stats
    return (
        [h.candidates for h in stats.hops],
        [h.traversed for h in stats.hops],
        stats.queries_by_kind,
        stats.total_rows,
    )


def ids(result: TraversalResult | None) -> list[str]:
    return [n.id for n in result or []]


def show_path(node: Node) -> str:
    steps = [
        f"{i}({s:.3f})"
        for i, s in zip(node.path.nodes, node.extra_metadata["_path_scores"], strict=True)
    ]
    return " -> ".join(steps)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=20_000)
    parser.add_argument("--dim", type=int, default=32)
    parser.add_argument("--sector-size", type=int, default=500)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cap", type=float, default=10.0, help="exhaustive enumeration cap, s")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--beam-width", type=int, default=10)
    parser.add_argument("--adjacent-k", type=int, default=10)
    parser.add_argument("--no-cassandra", action="store_true")
    parser.add_argument("--reload", action="store_true", help="reload the Cassandra table")
    parser.add_argument("--keep", action="store_true", help="keep the Cassandra table")
    args = parser.parse_args()

    vecs, meta = build(args.docs, args.dim, args.sector_size, args.seed)
    rng = np.random.default_rng(args.seed + 100)
    query = rng.standard_normal(args.dim)
    query = (query / np.linalg.norm(query)).tolist()
    sims = vecs @ np.asarray(query)
    start = int(START[1:])

    print(f"graph: {args.docs} documents, {args.dim} dimensions, edges {EDGES}")
    counts = count_paths(meta, start, 3)
    print("\nunbounded expansion from one start (paths computed from the adjacency):")
    print(text_table([("hops", "paths"), *((str(h + 1), f"{c:,}") for h, c in enumerate(counts))]))

    done, secs, best_path = enumerate_paths(meta, sims, start, args.cap)
    rate = done / secs if secs else float("inf")
    print(
        f"\nexhaustive 3-hop enumeration: {done:,} paths scored in {secs:.1f} s "
        f"({100 * done / counts[2]:.2f}% of {counts[2]:,}), "
        + (
            f"finished; best path {best_path}"
            if best_path
            else f"did NOT finish; at {rate:,.0f} paths/s it needs "
            f"~{counts[2] / rate / 60:,.0f} min"
        )
    )

    strategy = Beam(
        beam_width=args.beam_width, adjacent_k=args.adjacent_k, max_depth=3, start_k=0, select_k=10
    )
    bound = strategy.beam_width * strategy.adjacent_k
    docs = documents(vecs, meta)

    from hoprag.stores import MemoryStore

    mstore = MemoryStore()
    t0 = time.perf_counter()
    await mstore.aadd(docs)
    loaded = time.perf_counter() - t0
    memory = await measure("MemoryStore", mstore, strategy, query, args.repeats)
    memory.load_seconds = loaded
    runs = [memory]

    cstore = None
    if not args.no_cassandra:
        name = f"beam_{args.docs}_{args.dim}_s{args.seed}"
        cstore, loaded_c = await cassandra_store(docs, args.dim, name, args.reload)
        cassandra = await measure("CassandraStore", cstore, strategy, query, args.repeats)
        cassandra.load_seconds = loaded_c
        runs.append(cassandra)

    header = ("", *(r.name for r in runs))
    rows: list[tuple[str, ...]] = [header]

    def row(label: str, fn: Callable[[Measure], str]) -> None:
        rows.append((label, *(fn(r) for r in runs)))

    row("load (aadd)", lambda r: "reused" if r.load_seconds is None else f"{r.load_seconds:.1f} s")
    row("Beam median", lambda r: f"{statistics.median(r.times) * 1e3:.1f} ms")
    row("Beam max", lambda r: f"{max(r.times) * 1e3:.1f} ms")
    row("one adjacency query, median", lambda r: f"{statistics.median(r.single) * 1e3:.1f} ms")
    row("queries (get/adjacent)", lambda r: "{get}/{adjacent}".format(**hop_figures(r.result)[2]))
    row("rows read", lambda r: f"{hop_figures(r.result)[3]:,}")
    row("expanded per hop", lambda r: " ".join(map(str, hop_figures(r.result)[1][1:])))
    row("candidates per hop", lambda r: " ".join(map(str, hop_figures(r.result)[0])))
    row(f"peak candidates/hop (bound {bound})", lambda r: str(max(hop_figures(r.result)[0][1:])))
    row("peak traced memory", lambda r: f"{r.peak_bytes / 2**20:.2f} MiB")
    row("same ids as MemoryStore", lambda r: str(ids(r.result) == ids(memory.result)))
    print(f"\n{strategy!r}\n")
    print(text_table(rows))
    assert memory.result is not None
    print("\nbest paths:")
    for node in memory.result[:5]:
        print(f"  {node.extra_metadata['_path_score']:.3f}  {show_path(node)}")
    print("\n" + memory.result.stats.explain())
    for r in runs:
        peak = max(hop_figures(r.result)[0][1:])
        assert peak <= bound, (r.name, peak, bound)

    if cstore is not None:
        if not args.keep:
            cstore.session.execute(f"DROP TABLE IF EXISTS hoprag_bench.{cstore.table}")
        await cstore.aclose()


if __name__ == "__main__":
    asyncio.run(main())
