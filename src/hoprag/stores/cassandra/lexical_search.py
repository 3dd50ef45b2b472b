"""A CassandraStore table's lexical search (`CassandraQuery.alexical`), read from the tables
of its lexical index (`lexicon.py`): one burst of the counters and each query term's postings,
BM25 computed client-side as MemoryStore computes it (`hoprag.lexical`), then the hits read by
id through the run's prepared query, which checks its filter."""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable, Sequence

import anyio

from hoprag.lexical import Posting, best, bm25_among, bm25_totals
from hoprag.recording import Call
from hoprag.stores.base import Hit, LexicalHit
from hoprag.stores.cassandra import lexicon
from hoprag.stores.cassandra.executor import Executor
from hoprag.stores.cassandra.guards import GET_CHUNK
from hoprag.stores.cassandra.layouts import Layout

Get = Callable[[list[str]], Awaitable[Sequence[Hit]]]
"""The run's read by id: the documents that exist and pass its filter."""


class LexicalSearch:
    """The lexical index reads of one table, for one run's limiter."""

    def __init__(self, executor: Executor, layout: Layout, limiter: anyio.CapacityLimiter) -> None:
        self.executor = executor
        self.layout = layout
        self.limiter = limiter

    async def postings(
        self, query: Counter[str], *, counters: bool, limit: int | None = None
    ) -> tuple[tuple[int, int], dict[str, list[Posting]]]:
        """The table's counters (documents, total length; (0, 0) unless `counters`) and each
        query term's postings (at most `limit` rows of each): one read each, in one burst."""
        layout = self.layout
        terms = list(query)
        calls: list[Call] = []
        if counters:
            calls.append((lexicon.stats_query(layout.keyspace), [layout.table]))
        postings = lexicon.postings_query(layout.keyspace, limited=limit is not None)
        bound = [] if limit is None else [limit]
        calls += [(postings, [layout.table, t, *bound]) for t in terms]
        pages = await self.executor.burst(calls, "lexical search", self.limiter)
        stats = pages.pop(0) if counters else []
        held = {
            t: [(r[0], r[1], r[2] or 0) for r in rows] for t, rows in zip(terms, pages, strict=True)
        }
        return (int(stats[0][0] or 0), int(stats[0][1] or 0)) if stats else (0, 0), held

    async def ranked(
        self, query: Counter[str], k: int, get: Get, max_holders: int | None = None
    ) -> list[LexicalHit]:
        """The `k` best documents for `query` that `get` returns, by BM25 with the table's
        statistics (terms held by more than `max_holders` left out: of each, one row more than
        that is read, enough to know): every holder ranked, then read by id in rank order
        until `k` pass."""
        limit = None if max_holders is None else max_holders + 1
        (documents, length), held = await self.postings(query, counters=True, limit=limit)
        totals = bm25_totals(query, held.__getitem__, documents, length, max_holders=max_holders)
        ranked = best(totals, len(totals))
        found: list[LexicalHit] = []
        step = max(k, GET_CHUNK)
        for start in range(0, len(ranked), step):
            chunk = ranked[start : start + step]
            hits = {h.id: h for h in await get([i for i, _ in chunk])}
            found += [LexicalHit(hits[i].document, hits[i].score, s) for i, s in chunk if i in hits]
            if len(found) >= k:
                break
        return found[:k]

    async def among(
        self, query: Counter[str], k: int, get: Get, max_holders: int | None = None
    ) -> list[LexicalHit]:
        """The `k` best holders of the query's terms that `get` returns, by BM25 with their own
        statistics (`bm25_among`, terms held by more than `max_holders` of them left out): the
        postings in one burst, then every holder read by id."""
        _, held = await self.postings(query, counters=False)
        holders = sorted({doc_id for found in held.values() for doc_id, _, _ in found})
        passing = {h.id: h for h in await get(holders)} if holders else {}
        ranked = best(bm25_among(query, held.__getitem__, passing.__contains__, max_holders), k)
        return [LexicalHit(passing[i].document, passing[i].score, s) for i, s in ranked]
