#!/usr/bin/env python
"""Bulk-load rate, side by side: hoprag's `CassandraStore.add` vs LangChain's
`langchain_community.vectorstores.Cassandra.add_documents`, same node, same documents, same
(precomputed, looked-up) embeddings, each into a fresh table of a scratch keyspace.

    HOPRAG_CASSANDRA=127.0.0.1:9042 python scripts/bench_load.py [--docs 5000] [--dim 384]

LangChain runs with the driver's own vector codec (as its users run it); hoprag's numpy codec
(`hoprag.stores.cassandra.vectors`) is installed only for the hoprag run. `--langchain-fast`
adds a LangChain run with that codec installed too, to separate codec from concurrency.
Prints docs/s for each, the ratio and the client CPU per document (process time, which
includes the driver's IO thread). The scratch keyspace is dropped at the end.

On a node whose CPU is the bottleneck both loaders run at the rate the node can insert into
its SAI vector index (every insert adds the vector to the memtable's graph index): measured at
~200-270 inserts/s of 384-d vectors on a 2-vCPU shared machine whatever the client
concurrency, so the wall-clock ratio there says little; the client CPU per document shows the
client-side difference."""

from __future__ import annotations

import argparse
import os
import sys
import time
import uuid
from typing import Any

import numpy as np
from benchlib import LookupEmbeddings


def make_docs(
    n: int, dim: int
) -> tuple[list[tuple[str, str, dict[str, Any]]], dict[str, list[float]]]:
    rng = np.random.default_rng(0)
    vecs = rng.standard_normal((n, dim)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    rows, table = [], {}
    for i in range(n):
        text = f"document {i} about topic {i % 97}"
        meta = {"type": f"t{i % 5}", "n": i, "keywords": [f"k{i % 40}", f"k{(i * 7) % 40}"]}
        rows.append((f"doc{i}", text, meta))
        table[text] = vecs[i].tolist()
    return rows, table


def run_hoprag(
    session: Any, ks: str, rows: list, emb: LookupEmbeddings, dim: int
) -> tuple[float, float]:
    from hoprag import Document
    from hoprag.stores.cassandra import vectors
    from hoprag.stores.cassandra.store import CassandraStore

    store = CassandraStore(emb, keyspace=ks, table="hoprag_docs", session=session, dimension=dim)
    docs = [Document(i, t, m) for i, t, m in rows]
    t0, c0 = time.perf_counter(), time.process_time()
    store.add(docs)
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
    vectors.uninstall()
    return elapsed, cpu


def run_langchain(
    session: Any, ks: str, rows: list, emb: LookupEmbeddings, table: str
) -> tuple[float, float]:
    from langchain_community.vectorstores import Cassandra
    from langchain_core.documents import Document as LCDocument

    store = Cassandra(embedding=emb, session=session, keyspace=ks, table_name=table)
    docs = [LCDocument(id=i, page_content=t, metadata=m) for i, t, m in rows]
    t0, c0 = time.perf_counter(), time.process_time()
    store.add_documents(docs)
    return time.perf_counter() - t0, time.process_time() - c0


def count(session: Any, ks: str, table: str) -> int:
    return session.execute(f"SELECT count(*) FROM {ks}.{table}").one()[0]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", type=int, default=5000)
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--contact-points", default=os.environ.get("HOPRAG_CASSANDRA", "127.0.0.1"))
    ap.add_argument("--langchain-fast", action="store_true")
    args = ap.parse_args()

    from hoprag.stores.cassandra import vectors
    from hoprag.stores.cassandra.schema import keyspace_statements, replication_map
    from hoprag.stores.cassandra.session import connect

    session = connect(args.contact_points)
    ks = f"bench_load_{uuid.uuid4().hex[:8]}"
    for stmt in keyspace_statements(ks, replication_map()):
        session.execute(stmt)
    rows, table = make_docs(args.docs, args.dim)
    emb = LookupEmbeddings(table)
    results: dict[str, tuple[float, float]] = {}
    try:
        vectors.uninstall()
        results["langchain Cassandra.add_documents"] = run_langchain(
            session, ks, rows, emb, "lc_docs"
        )
        assert count(session, ks, "lc_docs") == args.docs
        results["hoprag CassandraStore.add"] = run_hoprag(session, ks, rows, emb, args.dim)
        assert count(session, ks, "hoprag_docs") == args.docs
        if args.langchain_fast:
            vectors.install()
            results["langchain + hoprag's numpy codec"] = run_langchain(
                session, ks, rows, emb, "lc_docs_fast"
            )
            vectors.uninstall()
    finally:
        base = results.get("langchain Cassandra.add_documents", (0.0, 0.0))[0]
        print(f"{args.docs} documents, {args.dim} dimensions, node {args.contact_points}")
        print(f"  {'loader':<36} {'wall':>9} {'rate':>15} {'vs LC':>6} {'client CPU/doc':>15}")
        for name, (secs, cpu) in results.items():
            ratio = f"x{base / secs:5.2f}" if base else ""
            print(
                f"  {name:<36} {secs:7.2f} s {args.docs / secs:8.0f} docs/s {ratio:>6} "
                f"{cpu / args.docs * 1e6:10.0f} µs"
            )
        session.execute(f"DROP KEYSPACE IF EXISTS {ks}", timeout=120)
        session.cluster.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
