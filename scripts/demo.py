"""hoprag demo: FOLDOC (the Free On-line Dictionary of Computing) in Cassandra 5.0, queried by
plain vector search and by graph traversal over its cross-references and subject tags.

Run through `scripts/demo`, which installs what is needed and starts Cassandra. By default a few
thousand articles around a handful of seed topics are loaded (`--limit`); `--full` loads all of
them. Embeddings are all-MiniLM-L6-v2, cached on disk, so a second run embeds nothing; loading
is an idempotent upsert, so an interrupted run can simply be started again.

`--films` runs the films demo instead (`demo_films.py`): five structured questions through the
agents' search tool, beside plain vector search, checked by SQL over movies.db."""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections import deque
from collections.abc import Sequence

from hoprag import Document, Mmr, Node, astream
from hoprag.cli import Progress, format_path, make_embedding
from hoprag.datasets.foldoc import read_foldoc
from hoprag.errors import HopragError
from hoprag.stores.cassandra.session import connect
from hoprag.stores.cassandra.store import CassandraStore

SEEDS = ("lisp", "unix", "lambda-calculus", "emacs", "internet", "compiler", "c")
EDGES = [("links", "$id"), ("keywords", "keywords")]
QUESTIONS = [
    "Who designed the first language for artificial intelligence research?",
    "Which people created the operating system written in C at Bell Labs?",
    "What editor is extended in a dialect of Lisp?",
]


def pick(docs: Sequence[Document], limit: int | None) -> list[Document]:
    """All documents, or `limit` of them gathered breadth-first over cross-references (both
    directions) from SEEDS, so the loaded part of the graph is connected."""
    if limit is None or limit >= len(docs):
        return list(docs)
    by_id = {d.id: d for d in docs}
    back: dict[str, list[str]] = {}
    for d in docs:
        for t in d.metadata.get("links", []):
            back.setdefault(t, []).append(d.id)
    seen: dict[str, None] = {}
    queue = deque(s for s in SEEDS if s in by_id)
    while queue and len(seen) < limit:
        i = queue.popleft()
        if i in seen:
            continue
        seen[i] = None
        queue.extend(t for t in by_id[i].metadata.get("links", []) if t in by_id)
        queue.extend(back.get(i, []))
    return [by_id[i] for i in seen]


def show(title: str, rows: list[tuple[str, str]]) -> None:
    print(f"  {title}")
    for left, right in rows:
        print(f"    {left:<34} {right}")


async def ask(store: CassandraStore, question: str, k: int) -> None:
    emb = await asyncio.to_thread(store.embedding.embed_query, question)
    t0 = time.perf_counter()
    hits = await store.asearch(emb, k=k, include_embeddings=False)
    ann_ms = (time.perf_counter() - t0) * 1000
    strategy = Mmr(select_k=k, start_k=2, adjacent_k=12, max_depth=2, lambda_mult=0.6)
    t0 = time.perf_counter()
    nodes: list[Node] = []
    first_ms = None
    async with astream(
        question, store=store, edges=EDGES, strategy=strategy, query_embedding=emb
    ) as stream:
        async for node in stream:
            first_ms = first_ms or (time.perf_counter() - t0) * 1000
            nodes.append(node)
    trav_ms = (time.perf_counter() - t0) * 1000
    plain = {h.document.id for h in hits}
    print(f"\nQ: {question}")
    show(
        f"vector search only (top {k}, {ann_ms:.0f} ms):",
        [(h.document.id, f"cos={h.score:.3f}") for h in hits],
    )
    rows = []
    for n in nodes:
        mark = "" if n.id in plain else "  [not in vector top-k]"
        rows.append(
            (n.id, f"depth {n.depth}  cos={n.similarity_score:.3f}  {format_path(n)}{mark}")
        )
    show(
        f"graph traversal, MMR over links and subjects ({trav_ms:.0f} ms, first node after "
        f"{first_ms or 0:.0f} ms, {stream.stats.total_queries} queries):",
        rows,
    )
    new = sum(1 for n in nodes if n.id not in plain)
    print(f"  -> {new} of {len(nodes)} traversal results were reached only through the graph")


async def main_async(args: argparse.Namespace) -> None:
    t0 = time.perf_counter()
    data = read_foldoc()
    docs = pick(data.documents, None if args.full else args.limit)
    print(
        f"FOLDOC: {len(data.documents)} articles, {data.stats.links} resolved cross-references; "
        f"loading {len(docs)} ({time.perf_counter() - t0:.1f}s to parse)"
    )
    embedding = make_embedding(args.embedding)
    session = connect()
    try:
        store = CassandraStore(embedding, keyspace=args.keyspace, table="foldoc", session=session)
        progress = Progress(len(docs), label="load")
        t0 = time.perf_counter()
        done = 0
        for i in range(0, len(docs), 512):
            batch = docs[i : i + 512]
            await store.aadd(batch, progress=lambda d, _t, b=done: progress.update(b + d))
            done += len(batch)
        progress.close()
        took = time.perf_counter() - t0
        print(f"{len(docs)} documents embedded and written in {took:.1f}s")
        # Warm up (statement preparation, connections) so the timings below are the queries'.
        await store.asearch(await asyncio.to_thread(embedding.embed_query, "warm up"), k=1)
        for q in args.question or QUESTIONS:
            await ask(store, q, args.k)
    finally:
        session.cluster.shutdown()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--limit", type=int, default=2000, help="articles to load (default 2000)")
    ap.add_argument("--full", action="store_true", help="load all of FOLDOC")
    ap.add_argument("--keyspace", default="hoprag_demo")
    ap.add_argument("--embedding", default="minilm", help="minilm (default) or hash[:DIM]")
    ap.add_argument("-k", type=int, default=8, help="results per question")
    ap.add_argument("--question", action="append", help="ask this instead (repeatable)")
    films = ap.add_argument_group("the films demo")
    films.add_argument("--films", action="store_true", help="run the films demo instead")
    films.add_argument("--table", help="films table (default films, films_hash_DIM for hash)")
    films.add_argument("--json", metavar="FILE", help="write the films demo's figures as JSON")
    args = ap.parse_args()
    if args.films and (args.question or args.full):
        ap.error("--question and --full are for the FOLDOC demo, not --films")
    if not args.films and (args.table or args.json):
        ap.error("--table and --json are for the films demo: add --films")
    try:
        if args.films:
            import demo_films

            asyncio.run(demo_films.run(args))
        else:
            asyncio.run(main_async(args))
    except KeyboardInterrupt:
        sys.exit("\ninterrupted; run the demo again to resume (loading is idempotent)")
    except HopragError as exc:
        sys.exit(f"demo: error: {exc}")


if __name__ == "__main__":
    main()
