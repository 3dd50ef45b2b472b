"""`CassandraQuery`: one run's prepared query on a CassandraStore.

Made by `CassandraStore.aprepare`, which checks and packs the query vector once
(`vectors.PackedVector`: encoded once, bound in every statement) and compiles the filter once
(`hoprag.filters.compile_filter`, into branches of ANDed conditions: an OR of ANDs); the query
translates each branch's equalities into the layout's bound values once. Each call then only
adds its own part. The statements (all values bound; see `layouts.py` for the texts):

* start search: per filter branch one `SELECT ... ORDER BY embedding ANN OF ? LIMIT ?`, the
  branch's equalities ANDed in as `tokens CONTAINS ?` clauses (cassio tables:
  `metadata_s[?] = ?`). SAI has no OR, IN or NOT, so a filter with `$in` or `$or` runs one
  query per branch, all in one burst (`Executor.burst`), merged by score to the top k with
  duplicates removed. A branch whose equalities include another's is not sent: the other's
  read holds its rows.
* `$ne`, `$nin` and `$exists` are checked after the read by the shared evaluator
  (`hoprag.filters.matches`) on the decoded metadata. A vector search could then come back
  with fewer than k rows that pass while better passing rows were beyond its LIMIT, so a
  branch whose read came back full with fewer than k passing rows is read again with twice
  the LIMIT (at most `guards.MAX_K` = 1000 rows): the result is then the one MemoryStore
  gives, unless even the 1000 nearest rows of a branch hold fewer than k that pass.
* a metadata edge: the same queries with the edge's own condition ANDed in (a filter on the
  edge's field never replaces the edge's value: both clauses are kept). `aadjacent_many`
  sends all of a hop's edges, times the filter's branches, as one burst;
* lexical search (a table with the lexical index, `lexicon.py`): one burst of the table's
  counter row and one postings partition read per query term, BM25 computed client-side,
  then reads by id in rank order until k pass the filter;
* ids: primary-key reads `WHERE id IN ?` in chunks of `GET_CHUNK` ids, one burst. A filter on
  them is checked client-side (Cassandra refuses an indexed-column restriction together with
  `IN` on the partition key): by the shared evaluator on hoprag's table, by the branches'
  equalities on cassio's strings.

A range runs on the node through the typed column of a declared number or date field
(`n_year >= ?`, `fields.py`), ANDed like an equality; a range on an undeclared field is refused
by `aprepare` (`Layout.check_filter`, naming the command that declares it), so no filter is
ever answered by a full scan. Documents whose declared field holds a list are read through the
field's list marker as one more branch, and checked after the read. Every query holds a slot
of the run's `limiter` and of the store's shared bound while in flight. Scores are plain
cosine in [-1, 1]: with `include_embeddings` computed in float64 from the decoded vector,
otherwise Cassandra's `similarity_cosine` ((1 + cos) / 2) mapped back."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import anyio

from hoprag.edges import MetadataEdge
from hoprag.errors import invalid, one_error
from hoprag.filters import (
    COMPLETE_READ_ALLOWED,
    CompiledFilter,
    FilterPlan,
    check_complete_read,
    condition_label,
)
from hoprag.lexical import check_lexical_text, check_max_holders, tokenize
from hoprag.recording import Call
from hoprag.stats import EdgePlan
from hoprag.stores.base import Hit, LexicalHit, PreparedQuery
from hoprag.stores.cassandra import lexicon, sets
from hoprag.stores.cassandra.executor import Executor
from hoprag.stores.cassandra.guards import GET_CHUNK, MAX_K
from hoprag.stores.cassandra.layouts import Clause, Layout
from hoprag.stores.cassandra.lexical_search import LexicalSearch
from hoprag.stores.cassandra.plans import Planner, PlanReads
from hoprag.stores.cassandra.pool import Pool, answer_edges, read_pool
from hoprag.stores.cassandra.vectors import PackedVector
from hoprag.validation import check_ids, check_int, check_k, check_vector

MAX_COMPLETE_ROWS = 1_000_000
"""The largest `limit` of one complete read (`amatching`, `afiltered`)."""


def _score(hit: Hit) -> float:
    """A hit's sort key (unscored hits last)."""
    return hit.score if hit.score is not None else float("-inf")


def _pushdown(layout: Layout, compiled: CompiledFilter) -> tuple[tuple[Clause, ...], ...]:
    """The clauses the node answers for each branch of the filter, in branch order, without a
    branch whose clauses include another's (its rows are among the other's, and every row read
    is checked against the whole filter when anything is left to check)."""
    bound = [alt for b in compiled.branches for alt in layout.bind(b)]
    kept: list[tuple[Clause, ...]] = []
    for b in sorted(dict.fromkeys(bound), key=len):
        if not any(set(k) <= set(b) for k in kept):
            kept.append(b)
    return tuple(b for b in dict.fromkeys(bound) if b in kept)


def plan_of(layout: Layout, compiled: CompiledFilter, branch_queries: int) -> FilterPlan:
    """One query per pushed-down branch; conditions the table's indexes answer (tokens for
    equality, a declared field's typed column for a range) and those checked after the read
    (`$ne`, `$exists`, and a range's documents whose field holds a list)."""
    pushed: list[str] = []
    after: list[str] = []
    for c in compiled.conditions:
        options = layout.pushed(c)
        label = condition_label(c)
        if options is None:
            after.append(label)
            continue
        pushed.append(label)
        if len(options) > 1:
            after.append(f"{label} on list values")
    return FilterPlan(branch_queries, tuple(dict.fromkeys(pushed)), tuple(dict.fromkeys(after)))


@dataclass(frozen=True)
class _Reading:
    """One kind of filtered read for `CassandraQuery._read_until_enough`: its operation (for
    errors), the statement of a read under some clauses with some LIMIT, the first LIMIT,
    how many passing rows are enough, the largest LIMIT and the factor it grows by, and the
    query vector the hits are scored against."""

    operation: str
    call: Callable[[list[Clause], int], Call]
    first: int
    wanted: int
    cap: int
    growth: int
    query: PackedVector | None

    def grown(self, limit: int) -> int | None:
        """The next LIMIT after a full read at `limit`, or None at the cap."""
        return min(self.cap, self.growth * limit) if limit < self.cap else None


class CassandraQuery(PreparedQuery):
    """A CassandraStore's prepared query (see the module docstring).

    `branch_queries` is the number of queries each vector search or edge sends (one per
    filter branch pushed down), `post_filter` the operators checked after the read (`$nin`
    counts as `$ne`)."""

    @classmethod
    def checked(
        cls,
        executor: Executor,
        layout: Layout,
        embedding: Sequence[float] | None,
        compiled: CompiledFilter,
        *,
        dimension: int | None,
        include_embeddings: bool,
        max_concurrency: int,
        overquery: int,
        pool: int = 0,
        planner: Planner | None = None,
    ) -> CassandraQuery:
        """A run's query on a set-up table: `compiled` refused when it holds what the table
        cannot answer exactly (ranges on undeclared fields, anything but equality on a cassio
        table), `embedding` checked against the table's `dimension` and packed."""
        layout.check_filter(compiled)
        vector = None
        if embedding is not None:
            arr = check_vector(embedding, dimension=dimension, what="query embedding")
            vector = PackedVector(arr)
        limiter = anyio.CapacityLimiter(max_concurrency)
        return cls(
            executor,
            layout,
            vector,
            compiled,
            include_embeddings,
            limiter,
            overquery=overquery,
            pool=pool,
            planner=planner,
        )

    def __init__(
        self,
        executor: Executor,
        layout: Layout,
        embedding: PackedVector | None,
        compiled: CompiledFilter,
        include_embeddings: bool,
        limiter: anyio.CapacityLimiter,
        *,
        overquery: int = 1,
        pool: int = 0,
        planner: Planner | None = None,
    ) -> None:
        self.embedding: PackedVector | None = embedding
        self.filter = compiled
        self.include_embeddings = include_embeddings
        self.limiter = limiter
        self._executor = executor
        self._layout = layout
        self._overquery = overquery
        self._bound = _pushdown(layout, compiled)
        self._residual = not compiled.only_equality
        self.branch_queries = len(self._bound)
        self.post_filter: tuple[str, ...] = tuple(
            sorted({c.op for c in compiled.conditions if c.op != "$eq"})
        )
        # A score is computed by Cassandra (one more bound vector) when vectors are not read.
        self._head: list[Any] = [] if include_embeddings or embedding is None else [embedding]
        self._texts: dict[tuple[str, ...], str] = {}
        self._pool_size = pool
        self._pool: Pool | None = None
        self._notes: Counter[str] = Counter()
        self._planner = planner
        self._plans: list[EdgePlan] = []

    async def around_trip(self) -> float | None:
        """The store's link round trip in seconds (`Executor.around_trip`: the fastest recent
        ping, one sent at most once a second per store)."""
        return await self._executor.around_trip()

    @property
    def filter_plan(self) -> FilterPlan:
        """How the table answers the run's filter (`plan_of`)."""
        return plan_of(self._layout, self.filter, self.branch_queries)

    def _vector(self, what: str) -> PackedVector:
        """The query vector, which `what` needs."""
        if self.embedding is None:
            raise invalid("embedding", None, f"a query vector for {what}")
        return self.embedding

    def _edge_bound(self, edge: Any) -> list[Clause]:
        """The edge's own clauses."""
        if not isinstance(edge, MetadataEdge):
            raise invalid("edge", edge, "a MetadataEdge (id edges are read with aget)")
        own = self._layout.clauses(edge.incoming_field, edge.value)
        return list(dict.fromkeys(own))

    def _ann_call(self, clauses: Sequence[Clause], qv: PackedVector, limit: int) -> Call:
        """The text and values of a vector search under these clauses."""
        shape = tuple(text for text, _ in clauses)
        text = self._texts.get(shape)
        if text is None:
            text = self._texts[shape] = self._layout.ann_query(shape, self.include_embeddings)
        params = self._head.copy()
        for _, values in clauses:
            params.extend(values)
        params.append(qv)
        params.append(limit)
        return text, params

    def _passes(self, row: Any) -> bool:
        """Whether a row read by a vector search passes what was not pushed down."""
        return self._layout.matches(row, self.filter, self._bound)

    def _jobs(self, owns: Sequence[Sequence[Clause]]) -> list[tuple[int, list[Clause]]]:
        """One read per (own, filter branch): the own clauses and the branch's others."""
        return [
            (i, [*own, *(c for c in branch if c not in own)])
            for i, own in enumerate(owns)
            for branch in self._bound
        ]

    async def _read_until_enough(
        self, owns: Sequence[Sequence[Clause]], reading: _Reading
    ) -> list[dict[str, Hit]]:
        """The one filtered-read loop of the store: for each of `owns` (an edge's clauses, or
        none), the hits passing the filter, by id in the order read. Every (own, branch) read
        goes in one burst; when something is checked after the read, a read that came back full
        (as many rows as its LIMIT) with fewer than `reading.wanted` passing rows is sent
        again in the next burst with its LIMIT grown (`reading.grown`) until the cap."""
        found: list[dict[str, Hit]] = [{} for _ in owns]
        pending = [(job, reading.first) for job in self._jobs(owns)]
        while pending:
            calls = [reading.call(clauses, lim) for (_, clauses), lim in pending]
            pages = await self._executor.burst(calls, reading.operation, self.limiter)
            again = []
            for ((i, clauses), lim), rows in zip(pending, pages, strict=True):
                passed = self._absorb(found[i], rows, reading.query)
                full = len(rows) >= lim
                grown = reading.grown(lim)
                if self._residual and full and passed < reading.wanted and grown is not None:
                    again.append(((i, clauses), grown))
            pending = again
        return found

    def _absorb(self, seen: dict[str, Hit], rows: list[Any], query: PackedVector | None) -> int:
        """Add the rows passing the filter to `seen` (the first hit of an id stays); how many
        passed."""
        passed = [r for r in rows if self._passes(r)] if self._residual else rows
        for hit in self._layout.hits(
            passed, include_embeddings=self.include_embeddings, query=query
        ):
            seen.setdefault(hit.id, hit)
        return len(passed)

    async def _ann(
        self, owns: Sequence[Sequence[Clause]], qv: PackedVector, k: int, operation: str
    ) -> list[list[Hit]]:
        """For each of `owns` the `k` best rows passing the filter, best first: vector
        searches with LIMIT `k` times the overquery, doubled on a read again (see the module
        docstring)."""
        reading = _Reading(
            operation,
            lambda clauses, lim: self._ann_call(clauses, qv, lim),
            first=min(MAX_K, k * self._overquery),
            wanted=k,
            cap=MAX_K,
            growth=2,
            query=qv,
        )
        out = []
        for seen in await self._read_until_enough(owns, reading):
            hits = list(seen.values())
            hits.sort(key=_score, reverse=True)
            out.append(hits[:k])
        return out

    async def asearch(self, *, k: int) -> list[Hit]:
        """The `k` (0..1000) documents most similar to the query that pass the filter."""
        k = check_k(k, maximum=MAX_K)
        qv = self._vector("a vector search")
        if k == 0:
            return []
        (hits,) = await self._ann([[]], qv, k, "vector search")
        return hits

    async def astart(self, *, k: int, adjacent_k: int) -> list[Hit]:
        """The start search; with the store's `candidate_pool`, the run's pool is read in the
        same round (`pool.py`), unless the run reads no edges, the pool would be no larger
        than the search, or the filter holds conditions checked after the read (the pool
        reads no metadata to check them on)."""
        k = check_k(k, maximum=MAX_K)
        adjacent_k = check_k(adjacent_k, maximum=MAX_K, what="adjacent_k")
        size = self._pool_size
        if size <= k or adjacent_k == 0 or not self._pool_usable():
            return await self.asearch(k=k)
        hits: list[Hit] = []

        async def search() -> None:
            hits.extend(await self.asearch(k=k))

        with one_error():
            async with anyio.create_task_group() as tg:
                tg.start_soon(search)
                self._pool = await self._read_pool(size)
        return hits

    def _pool_usable(self) -> bool:
        """Whether a candidate pool can answer this run's edges (no filter condition checked
        after the read, which the pool reads no metadata for; a layout with a pool read)."""
        return not self._residual and self._layout.pool_query(()) is not None

    async def _read_pool(self, size: int) -> Pool:
        """The run's pool of `size` (`pool.read_pool`), its reads and rows noted."""
        pool, reads, rows = await read_pool(
            self._executor, self._layout, self._bound, self._vector("a candidate pool"), size,
            self.limiter,
        )  # fmt: skip
        self._notes.update(pool_reads=reads, pool_rows=rows)
        return pool

    def take_notes(self) -> dict[str, int]:
        """What the candidate pool did since the last call: `pool_reads` and `pool_rows` (its
        own read), `pooled_edges` (edges it answered, with no search of their own),
        `pooled_rows` (those edges' hits), `pooled_gets` and `pooled_get_rows` (the reads by
        id for them and their rows, each row once)."""
        if self._planner is not None:
            self._plans, planned = self._planner.take()
            self._notes.update(planned)
        notes, self._notes = dict(self._notes), Counter()
        return notes

    def without_plans(self) -> None:
        """No edge plans for this run (`PreparedQuery.without_plans`): no counts are read."""
        self._planner = None

    def take_plans(self) -> list[EdgePlan]:
        """Each metadata edge's plan (`plans.py`) since the last `take_notes`, then forgotten."""
        plans, self._plans = self._plans, []
        return plans

    async def aadjacent(self, edge: MetadataEdge, *, k: int) -> list[Hit]:
        """The `k` best documents whose `edge.incoming_field` equals (or contains)
        `edge.value` and that pass the filter."""
        return (await self.aadjacent_many([edge], k=k))[0]

    async def aadjacent_many(self, edges: Sequence[MetadataEdge], *, k: int) -> list[list[Hit]]:
        """`aadjacent` for every edge of a hop, results in the order of `edges`, sent as one
        burst (one query per edge and filter branch). Every edge is checked before anything is
        sent."""
        k = check_k(k, maximum=MAX_K)
        owns = [self._edge_bound(e) for e in edges]
        if not owns or k == 0:
            return [[] for _ in owns]
        qv = self._vector("adjacency")
        if self._planner is not None:
            return await self._planned(self._planner, edges, owns, qv, k)
        pool = self._pool
        if pool is None:
            return await self._ann(owns, qv, k, "adjacent query")
        return await self._pooled(pool, owns, qv, k)

    async def _planned(
        self,
        planner: Planner,
        edges: Sequence[MetadataEdge],
        owns: list[list[Clause]],
        qv: PackedVector,
        k: int,
    ) -> list[list[Hit]]:
        """`aadjacent_many` by the edges' plans (`Planner.read`), the run's pool kept."""

        async def search(rest: list[list[Clause]]) -> list[list[Hit]]:
            return await self._ann(rest, qv, k, "adjacent query")

        async def pooled(pool: Pool, rest: list[list[Clause]]) -> list[list[Hit]]:
            return await self._pooled(pool, rest, qv, k)

        reads = PlanReads(
            search, pooled, self._read_pool, self._pool, self._pool_usable(),
            self._layout.condition_clause, self._complete,
        )  # fmt: skip
        out, self._pool = await planner.read(edges, owns, k, reads)
        return out

    async def _pooled(
        self, pool: Pool, owns: list[list[Clause]], qv: PackedVector, k: int
    ) -> list[list[Hit]]:
        """`aadjacent_many` with the run's pool (`pool.answer_edges`), what it did noted."""

        async def search(rest: list[list[Clause]]) -> list[list[Hit]]:
            return await self._ann(rest, qv, k, "adjacent query")

        out, notes = await answer_edges(pool, owns, k, search, self.aget)
        self._notes.update(notes)
        return out

    async def aget(self, ids: Sequence[str]) -> list[Hit]:
        """The documents with these ids that exist and pass the filter, in the order of `ids`
        (each once), scored when the query has an embedding."""
        id_list = check_ids(ids)
        if not id_list:
            return []
        qv, inc = self.embedding, self.include_embeddings
        check = not self.filter.matches_all
        with_score = qv is not None and not inc
        text = self._layout.get_query(inc, with_score, check)
        calls: list[Call] = [
            (text, [qv, chunk] if with_score else [chunk])
            for chunk in (id_list[i : i + GET_CHUNK] for i in range(0, len(id_list), GET_CHUNK))
        ]
        found: dict[str, Hit] = {}
        for rows in await self._executor.burst(calls, "read by id", self.limiter):
            if check:
                rows = [r for r in rows if self._layout.matches(r, self.filter, self._bound)]
            for hit in self._layout.hits(rows, include_embeddings=inc, query=qv):
                found[hit.id] = hit
        return [found[i] for i in id_list if i in found]

    # -- lexical search --------------------------------------------------------------------

    async def alexical(
        self,
        text: str,
        *,
        k: int,
        filtered_statistics: bool = False,
        max_holders: int | None = None,
    ) -> list[LexicalHit]:
        """`Store`'s lexical search (`lexicon.py`: one burst of the table's counters and each
        term's postings, BM25 computed as MemoryStore does, then read by id in rank order
        until `k` pass the filter; with `filtered_statistics`, every holder of a query term
        read by id for `bm25_among`). With `max_holders`, a term's postings are read to one row
        beyond it (in full with `filtered_statistics`)."""
        k, text, most = check_k(k), check_lexical_text(text), check_max_holders(max_holders)
        if not self._layout.lexical:
            raise lexicon.no_lexical_index(self._layout.fq)
        query = Counter(tokenize(text))
        if k == 0 or not query:
            return []
        search = LexicalSearch(self._executor, self._layout, self.limiter)
        among = search.among if filtered_statistics else search.ranked
        return await among(query, k, self.aget, most)

    # -- complete sets (scopes) -------------------------------------------------------------

    async def _complete(self, owns: Sequence[Sequence[Clause]], limit: int) -> list[list[Hit]]:
        """For each of `owns` (an edge's clauses, or none) every row passing the filter, at
        most `limit`: one paged equality read per filter branch, all in one burst, unioned.
        When something is checked after the read, a branch whose read came back full with
        fewer than `limit` passing rows is read again with four times the LIMIT (at most
        `MAX_COMPLETE_ROWS`), so the set is complete up to `limit`."""
        if not all(owns) and not all(self._bound):  # afiltered checked the filter already
            raise invalid("filter", self._labels(), COMPLETE_READ_ALLOWED)
        scored = self.embedding is not None

        def call(clauses: list[Clause], lim: int) -> Call:
            shape = [text for text, _ in clauses]
            text = sets.match_query(self._layout, shape, self.include_embeddings, scored)
            return text, sets.match_params(self._head, clauses, lim)

        reading = _Reading(
            "complete read",
            call,
            first=limit,
            wanted=limit,
            cap=MAX_COMPLETE_ROWS,
            growth=4,
            query=self.embedding,
        )
        return [
            list(seen.values())[:limit] for seen in await self._read_until_enough(owns, reading)
        ]

    async def amatching(self, edges: Sequence[MetadataEdge], *, limit: int) -> list[list[Hit]]:
        """Every document each edge leads to that passes the filter, at most `limit` per edge,
        in the order of `edges`: one paged SAI equality read per edge, all in one burst
        (`sets.py`). Every edge is checked before anything is sent."""
        limit = check_int("limit", limit, minimum=0, maximum=MAX_COMPLETE_ROWS)
        owns = [self._edge_bound(e) for e in edges]
        if not owns or limit == 0:
            return [[] for _ in owns]
        return await self._complete(owns, limit)

    async def afiltered(self, *, limit: int) -> list[Hit]:
        """Every document that passes the (non-empty) filter, at most `limit`: one paged SAI
        equality read."""
        limit = check_int("limit", limit, minimum=0, maximum=MAX_COMPLETE_ROWS)
        check_complete_read(self.filter, "filter", self._labels())
        if limit == 0:
            return []
        return (await self._complete([[]], limit))[0]

    def _labels(self) -> list[list[str]]:
        """The filter's branches as 'field operator' lists, for an error message."""
        return [[condition_label(c) for c in b] for b in self.filter.branches]
