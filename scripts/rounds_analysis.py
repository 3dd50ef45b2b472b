#!/usr/bin/env python
"""Where a traversal's sequential rounds come from, on MemoryStore (no node, no link).

    HF_HUB_OFFLINE=1 python scripts/rounds_analysis.py [--embedding minilm] [--queries 10]

FOLDOC with `scripts/bench.py`'s embeddings and queries, in a MemoryStore (its round counts are
those of CassandraStore on the same data, docs/benchmarks.md). Per case (Eager d2, Eager d3,
Mmr d2 with adjacent_k 10):

* the rounds per query with `speculation` "off", "strategy", "wide", "on", and "on" with a
  budget large enough never to run out: what reading ahead could save at best;
* for Eager, how many hops passed between the round in which a document expanded at a hop was
  first returned by any read and that hop ("1": it was first seen in the round just before,
  so no read ahead based on the documents in hand could have asked its edges sooner).

Rounds are counted by a store wrapper, as the unit tests count them."""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

import bench

import hoprag
from hoprag import Document
from hoprag.stores import Hit, MemoryStore, PreparedQuery, Store

CASES = ("Eager d2 k10", "Eager d3 k10", "Mmr d2 k10")
UNBOUNDED = 1_000_000


class FirstSeen(Store):
    """MemoryStore behind a wrapper that numbers rounds (a round starts when a read is sent
    while none is in flight) and notes the round in which each document was first returned."""

    def __init__(self, inner: MemoryStore) -> None:
        self.inner = inner
        self.embedding = inner.embedding
        self.round = 0
        self.in_flight = 0
        self.first: dict[str, int] = {}

    def reset(self) -> None:
        self.round, self.first = 0, {}

    async def aprepare(self, embedding: Any, filter: Any = None, **kw: Any) -> PreparedQuery:
        return _Query(self, await self.inner.aprepare(embedding, filter, **kw))

    async def aadd(self, documents: Iterable[Document]) -> None:
        await self.inner.aadd(documents)


class _Query(PreparedQuery):
    def __init__(self, store: FirstSeen, inner: PreparedQuery) -> None:
        self.store, self.inner = store, inner
        self.embedding, self.filter = inner.embedding, inner.filter
        self.include_embeddings, self.limiter = inner.include_embeddings, inner.limiter

    async def _read(self, call: Any) -> Any:
        s = self.store
        if s.in_flight == 0:
            s.round += 1
        s.in_flight += 1
        try:
            await asyncio.sleep(0)  # a checkpoint: reads sent together are in flight together
            got = await call()
        finally:
            s.in_flight -= 1
        pages = got if got and isinstance(got[0], list) else [got]
        for hits in pages:
            for h in hits:
                s.first.setdefault(h.id, s.round)
        return got

    async def asearch(self, *, k: int) -> list[Hit]:
        return await self._read(lambda: self.inner.asearch(k=k))  # type: ignore[no-any-return]

    async def aget(self, ids: Sequence[str]) -> list[Hit]:
        return await self._read(lambda: self.inner.aget(ids))  # type: ignore[no-any-return]

    async def aadjacent(self, edge: Any, *, k: int) -> list[Hit]:
        return (await self.aadjacent_many([edge], k=k))[0]

    async def aadjacent_many(self, edges: Sequence[Any], *, k: int) -> list[list[Hit]]:
        return await self._read(lambda: self.inner.aadjacent_many(edges, k=k))  # type: ignore[no-any-return]


def eager_gaps(result: hoprag.TraversalResult, first: dict[str, int], max_depth: int) -> Counter:
    """Per expanded node of an Eager run without speculation: its expansion hop minus the
    round it was first returned in (hop h is round h + 1; Eager admits a hop's nodes in
    order, `hops[h].kept` of them, and expands those below `max_depth` at hop h + 1)."""
    gaps: Counter = Counter()
    i = 0
    hops = result.stats.hops
    for h, hop in enumerate(hops):
        for node in result[i : i + hop.kept]:
            if node.depth < max_depth and h + 1 < len(hops):
                gaps[(h + 1) + 1 - first[node.id]] += 1
        i += hop.kept
    return gaps


async def amain(args: argparse.Namespace) -> None:
    ds = bench.make_dataset("foldoc", args.foldoc, args.embedding, args.queries)
    inner = MemoryStore()
    inner.add(ds.docs)
    store = FirstSeen(inner)
    cases = [c for c in bench.cases_for(False, False) if c.name in CASES]
    modes: list[Any] = ["off", "strategy", "wide", "on", UNBOUNDED]
    for case in cases:
        strategy = case.strategies()[0]
        print(f"\n{case.name} (floor {case.depth + 1} rounds)")
        gaps: Counter = Counter()
        for mode in modes:
            rounds, queries = [], []
            for q in ds.queries:
                store.reset()
                res = await hoprag.atraverse(
                    None,
                    query_embedding=ds.query_vectors[q],
                    store=store,
                    edges=ds.edges,
                    strategy=strategy,
                    speculation=mode,
                )
                assert store.round == res.stats.rounds
                rounds.append(res.stats.rounds)
                queries.append(res.stats.total_queries)
                if mode == "off" and case.kind == "eager":
                    gaps += eager_gaps(res, store.first, case.depth)
            name = "on, unbounded" if mode == UNBOUNDED else mode
            print(
                f"  {name:14} rounds {statistics.mean(rounds):5.1f} "
                f"[{' '.join(map(str, rounds))}], queries {statistics.mean(queries):6.1f}"
            )
        if gaps:
            total = sum(gaps.values())
            shown = ", ".join(f"{g}: {n}" for g, n in sorted(gaps.items()))
            print(
                f"  expansions by hops since first seen: {shown}; {gaps[1]} of {total} "
                f"({gaps[1] / total:.0%}) first seen in the round just before"
            )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--embedding", choices=["minilm", "hash"], default="minilm")
    ap.add_argument("--queries", type=int, default=10, help="FOLDOC queries (max 20)")
    ap.add_argument("--foldoc", type=int, default=None, help="FOLDOC documents (default all)")
    args = ap.parse_args()
    if not 1 <= args.queries <= 20:
        ap.error(f"--queries must be in 1..20, got {args.queries}")
    asyncio.run(amain(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
