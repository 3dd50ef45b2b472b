#!/usr/bin/env python3
"""Time declared fields on the films table (docs/cassandra.md, "Declared fields").

Loads the 17,472 films (hash:32 vectors, no model needed) into a fresh keyspace twice: once
with the films' declared fields (as `hoprag load films` does) and once without, then declares
the same fields on the second table with the migration (`declare_fields`: add columns,
backfill, index, wait), and times a few `aresolve` calls. Prints one line per phase; the
keyspace is dropped at the end.

    HOPRAG_CASSANDRA=127.0.0.1:9042 .venv/bin/python scripts/bench_fields.py
"""

from __future__ import annotations

import os
import statistics
import time
import uuid

from hoprag import datasets
from hoprag.embeddings.hash import HashEmbedding
from hoprag.stores.cassandra.session import connect
from hoprag.stores.cassandra.store import CassandraStore


def main() -> None:
    session = connect(os.environ.get("HOPRAG_CASSANDRA", "127.0.0.1"))
    ks = f"bench_fields_{uuid.uuid4().hex[:8]}"
    session.execute(
        f"CREATE KEYSPACE {ks} WITH replication = "
        "{'class': 'SimpleStrategy', 'replication_factor': 1}",
        timeout=120,
    )
    fields = dict(datasets.DATASETS["films"].fields)
    docs = list(datasets.load("films"))
    emb = HashEmbedding(32)
    try:
        for table, declared in (("films_declared", fields), ("films_plain", {})):
            t0 = time.monotonic()
            store = CassandraStore(emb, keyspace=ks, table=table, session=session, fields=declared)
            t1 = time.monotonic()
            for i in range(0, len(docs), 256):
                store.add(docs[i : i + 256])
            t2 = time.monotonic()
            print(f"{table}: set-up {t1 - t0:.1f}s, load {len(docs)} docs {t2 - t1:.1f}s")
        store = CassandraStore(emb, keyspace=ks, table="films_plain", session=session)
        t0 = time.monotonic()
        store.declare_fields(fields)
        print(f"films_plain: declare {len(fields)} fields (migration) {time.monotonic() - t0:.1f}s")
        t0 = time.monotonic()
        store.declare_fields(fields)
        print(f"films_plain: declare again (nothing to do) {time.monotonic() - t0:.2f}s")
        for text in ("fonda", "jane fonda", "john", "meryl streep"):
            times = []
            for _ in range(5):
                t0 = time.monotonic()
                got = store.resolve(text, ["cast", "director", "writer"], limit=10)
                times.append(time.monotonic() - t0)
            print(
                f"aresolve {text!r}: median {statistics.median(times) * 1000:.0f} ms, "
                f"{len(got)} candidates, first {got[0].value if got else None!r}"
            )
    finally:
        time.sleep(1.0)
        session.execute(f"DROP KEYSPACE IF EXISTS {ks}", timeout=120)
        session.cluster.shutdown()


if __name__ == "__main__":
    main()
