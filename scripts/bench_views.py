#!/usr/bin/env python3
"""What a store view costs per question (docs/reliability.md, "Access-restricted stores").

Loads the 17,472 films (hash:32 vectors, no model needed; the films' declared fields) into a
fresh keyspace on HOPRAG_CASSANDRA (default 127.0.0.1) and into a MemoryStore, then asks the
films tool the five questions of `scripts/demo --films` (with the follow-up's reply where one
is needed) through the store itself and through three views (`VIEWS`; each film gets a
`tenant`). Per question, store and case: the median time of `--runs` calls after one warm-up
call, the CQL statements a call sends, the results, the view's time as a ratio of the plain
store's, and for the view every film passes whether it answered the store's ids. The keyspace
is dropped at the end.

    HOPRAG_CASSANDRA=127.0.0.1:9042 .venv/bin/python scripts/bench_views.py [--runs 5] [--json F]
        [--films N]

The exit status is 1 when the view every film passes answered a question with other ids
than the store (each such case printed as FAIL), 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import statistics
import sys
import time
import uuid
import zlib
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchlib import machine_info, text_table
from films_questions import QUESTIONS, Question

from hoprag.datasets.films import DECLARED_FIELDS, load_films
from hoprag.documents import Document
from hoprag.embeddings.hash import HashEmbedding
from hoprag.stores import MemoryStore, Store
from hoprag.stores.cassandra.session import connect
from hoprag.stores.cassandra.store import CassandraStore
from hoprag.tools import film_search_tool

TENANTS = 10
FILMS = 17_472
VIEWS: dict[str, dict[str, Any] | None] = {
    "store": None,
    "view of all": {"source": "films"},
    "view tenant=t3": {"tenant": "t3"},
    "view year>=1990": {"year": {"$gte": 1990}},
}
"""The cases: the store itself; a view every film passes (the same answers: what ANDing an
access condition costs); one tenant of ten (the benchmark gives each film a `tenant`, `t0`
to `t9` by a CRC of its id); a range on a declared number."""


def with_tenant(doc: Document) -> Document:
    """`doc` with a `tenant` field, one of `TENANTS`, fixed by its id."""
    tenant = f"t{zlib.crc32(doc.id.encode()) % TENANTS}"
    return dataclasses.replace(doc, metadata={**doc.metadata, "tenant": tenant})


async def ask(store: Store, q: Question) -> tuple[float, int, list[str]]:
    """One call of the films tool (and its reply when it asks back): seconds, CQL statements
    sent, the results' ids."""
    tool = film_search_tool(store)
    t0 = time.perf_counter()
    answer = await tool.arun(**q.arguments)
    if answer.is_follow_up and q.reply:
        answer = await tool.arun(**{**q.arguments, **q.reply})
    seconds = time.perf_counter() - t0
    cql = sum(1 for s in answer.statements if s.operation == "cql")
    return seconds, cql, [n.id for n in answer.nodes]


async def measure(stores: dict[str, Store], runs: int) -> list[dict[str, Any]]:
    """Every question through every store and view, `runs` timed calls each."""
    rows = []
    for q in QUESTIONS:
        for kind, base in stores.items():
            for case, access in VIEWS.items():
                store = base if access is None else base.restricted(access)
                await ask(store, q)  # warm-up
                times: list[float] = []
                cql, found = 0, []
                for _ in range(runs):
                    seconds, cql, found = await ask(store, q)
                    times.append(seconds)
                rows.append(
                    {
                        "question": q.key,
                        "store": kind,
                        "case": case,
                        "median_ms": statistics.median(times) * 1000,
                        "cql": cql,
                        "results": len(found),
                        "ids": found,
                    }
                )
    return rows


def print_rows(rows: list[dict[str, Any]]) -> None:
    plain = {(r["question"], r["store"]): r for r in rows if r["case"] == "store"}
    table = [["question", "store", "case", "median ms", "x store", "CQL", "results", "ids"]]
    for r in rows:
        base = plain[(r["question"], r["store"])]
        ratio = r["median_ms"] / base["median_ms"]
        same = ""
        if r["case"] == "view of all":  # every film passes it: the store's answer
            same = "same" if r["ids"] == base["ids"] else "DIFFER"
        table.append(
            [
                r["question"],
                r["store"],
                r["case"],
                f"{r['median_ms']:.1f}",
                f"{ratio:.2f}",
                str(r["cql"]) if r["store"] == "cassandra" else "-",
                str(r["results"]),
                same,
            ]
        )
    print(text_table(table))


def all_views_agree(rows: list[dict[str, Any]]) -> bool:
    """Whether the view every film passes answered each question with the store's ids (a
    line names each one that did not)."""
    plain = {(r["question"], r["store"]): r["ids"] for r in rows if r["case"] == "store"}
    ok = True
    for r in rows:
        if r["case"] == "view of all" and r["ids"] != plain[(r["question"], r["store"])]:
            print(f"FAIL {r['question']} on {r['store']}: the view of all answered other ids")
            ok = False
    return ok


async def run(args: argparse.Namespace) -> bool:
    session = connect(os.environ.get("HOPRAG_CASSANDRA", "127.0.0.1"))
    keyspace = f"bench_views_{uuid.uuid4().hex[:8]}"
    session.execute(
        f"CREATE KEYSPACE {keyspace} WITH replication = "
        "{'class': 'SimpleStrategy', 'replication_factor': 1}",
        timeout=120,
    )
    try:
        emb = HashEmbedding(32)
        docs = [with_tenant(d) for d in load_films(limit=args.films)]
        cassandra = CassandraStore(
            emb, keyspace=keyspace, table="films", session=session, fields=dict(DECLARED_FIELDS)
        )
        print(f"loading {len(docs)} films into {keyspace}.films and a MemoryStore", flush=True)
        await cassandra.aadd(docs)
        memory = MemoryStore(embedding=emb)
        await memory.aadd(docs)
        rows = await measure({"cassandra": cassandra, "memory": memory}, args.runs)
        print_rows(rows)
        ok = all_views_agree(rows)
        if args.json:
            figures = {
                "machine": machine_info(session),
                "runs": args.runs,
                "films": len(docs),
                "ok": ok,
                "rows": rows,
            }
            text = json.dumps(figures, indent=2) + "\n"
            await anyio.Path(args.json).write_text(text)
        return ok
    finally:
        session.execute(f"DROP KEYSPACE IF EXISTS {keyspace}", timeout=300)
        session.cluster.shutdown()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5, help="timed calls per case (default 5)")
    ap.add_argument("--json", help="also write the figures to this file")
    ap.add_argument(
        "--films", type=int, default=FILMS, help=f"load the first N films (default all {FILMS})"
    )
    args = ap.parse_args()
    if not 1 <= args.runs <= 100:
        ap.error(f"--runs must be in 1..100, got {args.runs}")
    if not 1 <= args.films <= FILMS:
        ap.error(f"--films must be in 1..{FILMS}, got {args.films}")
    sys.exit(0 if asyncio.run(run(args)) else 1)


if __name__ == "__main__":
    main()
