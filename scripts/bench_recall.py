#!/usr/bin/env python
"""Recall of small-k vector searches on freshly loaded tables, with and without
`CassandraStore(ann_overquery=...)`.

    HOPRAG_CASSANDRA=127.0.0.1:9042 python scripts/bench_recall.py [--tables 8] [--k 3]

Loads the same documents (300 x 16-d hash vectors by default) into `--tables` fresh tables with
the default concurrent loader, then asks each table for the top k of `--queries` queries,
plain (`LIMIT k`) and over-queried (`LIMIT k * f`, best k kept), and counts the answers that
are not the exact top k (computed with MemoryStore). The vector graphs are still in the
memtables, built by concurrent inserts: the case where ANN is weakest. The scratch keyspace is
dropped at the end."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from hoprag.embeddings import HashEmbedding
from hoprag.stores import MemoryStore
from hoprag.stores.cassandra.schema import keyspace_statements, replication_map
from hoprag.stores.cassandra.session import connect
from hoprag.stores.cassandra.store import CassandraStore
from shared_data import graph_documents


async def run(args: argparse.Namespace) -> dict[int, int]:
    session = connect(args.contact_points)
    ks = f"bench_recall_{uuid.uuid4().hex[:8]}"
    for stmt in keyspace_statements(ks, replication_map()):
        session.execute(stmt, timeout=120)
    emb = HashEmbedding(args.dim)
    docs = graph_documents(args.docs, args.dim, seed=3)
    exact = MemoryStore(emb)
    exact.add(docs)
    factors = (1, 2, 4)
    misses = dict.fromkeys(factors, 0)
    try:
        for t in range(args.tables):
            table = f"t{t}"
            await CassandraStore(emb, keyspace=ks, table=table, session=session).aadd(docs)
            stores = {
                f: CassandraStore(emb, keyspace=ks, table=table, session=session, ann_overquery=f)
                for f in factors
            }
            for i in range(args.queries):
                q = emb(f"query {i}")
                want = [h.document.id for h in await exact.asearch(q, k=args.k)]
                for f, store in stores.items():
                    got = await store.asearch(q, k=args.k, include_embeddings=False)
                    misses[f] += sorted(h.document.id for h in got) != sorted(want)
    finally:
        session.execute(f"DROP KEYSPACE IF EXISTS {ks}", timeout=120)
        session.cluster.shutdown()
    return misses


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tables", type=int, default=8)
    ap.add_argument("--queries", type=int, default=30)
    ap.add_argument("--docs", type=int, default=300)
    ap.add_argument("--dim", type=int, default=16)
    ap.add_argument("--k", type=int, default=3)
    ap.add_argument("--contact-points", default=os.environ.get("HOPRAG_CASSANDRA", "127.0.0.1"))
    args = ap.parse_args()
    for name in ("tables", "queries", "docs", "dim", "k"):
        if getattr(args, name) < 1:
            ap.error(f"--{name} must be at least 1, got {getattr(args, name)}")
    if args.k * 4 > min(args.docs, 1000):
        ap.error(f"--k {args.k} needs at least {args.k * 4} documents (it searches up to 4k)")
    misses = asyncio.run(run(args))
    total = args.tables * args.queries
    print(f"{args.tables} fresh tables of {args.docs} x {args.dim}-d, {total} searches:")
    for f, n in misses.items():
        print(
            f"  ann_overquery {f} (LIMIT {args.k * f}): {n} of {total} not the exact top {args.k}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
