#!/usr/bin/env python
"""Benchmark: hoprag MemoryStore vs graph-retriever 0.8.0's InMemory adapter, same run.

10k documents of 384 dimensions (random unit vectors) with keyword and citation fields;
Eager depth 2 over keyword and citation edges, and Mmr select_k=10. Prints median latencies,
the speed-up, and whether both return the same ids. Target (DESIGN §6): >= 10x faster.

    python scripts/bench_memory.py [--docs 10000] [--dim 384] [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from graph_retriever import Content
from graph_retriever import traverse as gr_traverse
from graph_retriever.adapters.in_memory import InMemory
from graph_retriever.strategies import Eager as GrEager
from graph_retriever.strategies import Mmr as GrMmr

import hoprag
from hoprag import Document
from hoprag.stores import MemoryStore

EDGES = [("keywords", "keywords"), ("cites", "$id")]


def build(n: int, dim: int, seed: int) -> tuple[np.ndarray, list[dict[str, Any]]]:
    """Unit vectors and metadata: 1-3 keywords out of n/20, up to 3 citations."""
    rng = np.random.default_rng(seed)
    vecs = rng.standard_normal((n, dim)).astype(np.float64)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    n_kw = max(10, n // 20)
    meta = []
    for _ in range(n):
        kws = sorted({f"k{int(x)}" for x in rng.integers(0, n_kw, rng.integers(1, 4))})
        cites = sorted({f"doc{int(x)}" for x in rng.integers(0, n, rng.integers(0, 4))})
        meta.append({"keywords": kws, "cites": cites})
    return vecs, meta


def median_seconds(fn: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    """Median wall time of `fn` over `repeats` runs (after one warm-up) and its last result."""
    result = fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=10_000)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--queries", type=int, default=3)
    args = parser.parse_args()

    vecs, meta = build(args.docs, args.dim, seed=1)
    queries = build(args.queries, args.dim, seed=2)[0]
    qmap = {f"q{i}": [float(x) for x in q] for i, q in enumerate(queries)}

    def embed(text: str) -> list[float]:
        return qmap[text]

    t0 = time.perf_counter()
    rows = vecs.tolist()
    docs = [Document(f"doc{i}", f"content {i}", m, rows[i]) for i, m in enumerate(meta)]
    store = MemoryStore(embedding=embed)
    store.add(docs)
    t_load = time.perf_counter() - t0
    gr_store = InMemory(
        embed,
        [
            Content(id=d.id, content=d.content, embedding=rows[i], metadata=d.metadata)
            for i, d in enumerate(docs)
        ],
    )
    print(f"{args.docs} docs x {args.dim} dims; MemoryStore load {t_load:.2f}s")

    cases = [
        (
            "Eager depth 2",
            dict(select_k=100, start_k=4, adjacent_k=10, max_depth=2),
            GrEager,
            hoprag.Eager,
        ),
        (
            "Mmr select_k=10",
            dict(select_k=10, start_k=4, adjacent_k=10, max_depth=2, lambda_mult=0.5),
            GrMmr,
            hoprag.Mmr,
        ),
    ]
    all_ok = True
    for name, params, gr_cls, hr_cls in cases:
        gr_times, hr_times, same = [], [], True
        gr_strategy, hr_strategy = gr_cls(**params), hr_cls(**params)
        for q in qmap:
            g_t, g_res = median_seconds(
                lambda q=q, s=gr_strategy: gr_traverse(q, edges=EDGES, strategy=s, store=gr_store),
                args.repeats,
            )
            h_t, h_res = median_seconds(
                lambda q=q, s=hr_strategy: hoprag.traverse(q, edges=EDGES, strategy=s, store=store),
                args.repeats,
            )
            gr_times.append(g_t)
            hr_times.append(h_t)
            same &= [n.id for n in g_res] == [n.id for n in h_res]
        g_med, h_med = statistics.median(gr_times), statistics.median(hr_times)
        all_ok &= same
        print(
            f"{name:<16} graph-retriever {g_med * 1000:9.2f} ms   hoprag {h_med * 1000:8.2f} ms   "
            f"speed-up {g_med / h_med:6.1f}x   same ids: {same}   ({len(h_res)} nodes)"
        )
    print("ids identical in every case" if all_ok else "IDS DIFFER")


if __name__ == "__main__":
    main()
