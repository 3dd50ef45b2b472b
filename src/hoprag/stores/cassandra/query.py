"""`CassandraQuery`: one run's prepared query on a CassandraStore.

Made by `CassandraStore.aprepare`, which checks and packs the query vector once
(`vectors.PackedVector`: encoded once, bound in every statement) and compiles the filter once;
the query translates the filter's conditions into the layout's bound values once. Each call then
only adds its own part. The statements (all values bound; see `layouts.py` for the texts):

* start search: one `SELECT ... ORDER BY embedding ANN OF ? LIMIT ?`, the filter's conditions
  ANDed in as `tokens CONTAINS ?` clauses (cassio tables: `metadata_s[?] = ?`);
* a metadata edge: the same query with the edge's own condition plus the filter's (a filter on
  the edge's field never replaces the edge's value: both clauses are kept). `aadjacent_many`
  sends all of a hop's edges as one burst (`Executor.burst`);
* ids: primary-key reads `WHERE id IN ?` in chunks of `GET_CHUNK` ids, one burst. A filter on
  them is checked client-side against the stored tokens (Cassandra refuses an indexed-column
  restriction together with `IN` on the partition key), with the semantics of `CONTAINS`.

Every query holds a slot of the run's `limiter` and of the store's shared bound while in
flight. Scores are plain cosine in [-1, 1]: with `include_embeddings` computed in float64 from
the decoded vector, otherwise Cassandra's `similarity_cosine` ((1 + cos) / 2) mapped back."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import anyio

from hoprag.edges import MetadataEdge
from hoprag.errors import invalid
from hoprag.filters import Condition
from hoprag.stores.base import Hit, PreparedQuery
from hoprag.stores.cassandra import sets
from hoprag.stores.cassandra.executor import Call, Executor
from hoprag.stores.cassandra.guards import MAX_K
from hoprag.stores.cassandra.layouts import Bound, Layout
from hoprag.stores.cassandra.vectors import PackedVector
from hoprag.validation import check_ids, check_int, check_k

GET_CHUNK = 100
"""Ids per `IN` read."""
MAX_COMPLETE_ROWS = 1_000_000
"""The largest `limit` of one complete read (`amatching`, `afiltered`)."""


def _score(hit: Hit) -> float:
    """A hit's sort key (unscored hits last)."""
    return hit.score if hit.score is not None else float("-inf")


class CassandraQuery(PreparedQuery):
    """A CassandraStore's prepared query (see the module docstring)."""

    def __init__(
        self,
        executor: Executor,
        layout: Layout,
        embedding: PackedVector | None,
        conditions: tuple[Condition, ...],
        include_embeddings: bool,
        limiter: anyio.CapacityLimiter,
        *,
        overquery: int = 1,
    ) -> None:
        self.embedding: PackedVector | None = embedding
        self.conditions = conditions
        self.include_embeddings = include_embeddings
        self.limiter = limiter
        self._executor = executor
        self._layout = layout
        self._overquery = overquery
        self._bound = layout.bind(conditions)
        self._bound_set = frozenset(self._bound)
        self._filter_params = [v for c in self._bound for v in c]
        # A score is computed by Cassandra (one more bound vector) when vectors are not read.
        self._head: list[Any] = [] if include_embeddings or embedding is None else [embedding]
        self._texts: dict[int, str] = {}

    def _vector(self, what: str) -> PackedVector:
        """The query vector, which `what` needs."""
        if self.embedding is None:
            raise invalid("embedding", None, f"a query vector for {what}")
        return self.embedding

    def _edge_bound(self, edge: Any) -> list[Bound]:
        """The edge's own bound conditions, less those the filter already has."""
        if not isinstance(edge, MetadataEdge):
            raise invalid("edge", edge, "a MetadataEdge (id edges are read with aget)")
        own = self._layout.conditions(edge.incoming_field, edge.value)
        if len(own) > 1:
            own = list(dict.fromkeys(own))
        return [c for c in own if c not in self._bound_set]

    def _ann_call(self, own: Sequence[Bound], qv: PackedVector, limit: int) -> Call:
        """The text and values of a vector search under `own` conditions and the filter's."""
        n = len(own) + len(self._bound)
        text = self._texts.get(n)
        if text is None:
            text = self._texts[n] = self._layout.ann_query(n, self.include_embeddings)
        params = self._head.copy()
        for c in own:
            params.extend(c)
        params.extend(self._filter_params)
        params.append(qv)
        params.append(limit)
        return text, params

    def _top(self, rows: list[Any], qv: PackedVector, k: int) -> list[Hit]:
        """The `k` best hits of a vector search's rows, best first."""
        hits = self._layout.hits(rows, include_embeddings=self.include_embeddings, query=qv)
        hits.sort(key=_score, reverse=True)
        return hits[:k]

    async def asearch(self, *, k: int) -> list[Hit]:
        """The `k` (0..1000) documents most similar to the query that pass the filter."""
        k = check_k(k, maximum=MAX_K)
        qv = self._vector("a vector search")
        if k == 0:
            return []
        call = self._ann_call((), qv, min(MAX_K, k * self._overquery))
        (rows,) = await self._executor.burst([call], "vector search", self.limiter)
        return self._top(rows, qv, k)

    async def aadjacent(self, edge: MetadataEdge, *, k: int) -> list[Hit]:
        """The `k` best documents whose `edge.incoming_field` equals (or contains)
        `edge.value` and that pass the filter."""
        return (await self.aadjacent_many([edge], k=k))[0]

    async def aadjacent_many(self, edges: Sequence[MetadataEdge], *, k: int) -> list[list[Hit]]:
        """`aadjacent` for every edge of a hop, results in the order of `edges`, sent as one
        burst. Every edge is checked before anything is sent."""
        k = check_k(k, maximum=MAX_K)
        owns = [self._edge_bound(e) for e in edges]
        if not owns or k == 0:
            return [[] for _ in owns]
        qv = self._vector("adjacency")
        limit = min(MAX_K, k * self._overquery)
        calls = [self._ann_call(own, qv, limit) for own in owns]
        pages = await self._executor.burst(calls, "adjacent query", self.limiter)
        return [self._top(rows, qv, k) for rows in pages]

    async def aget(self, ids: Sequence[str]) -> list[Hit]:
        """The documents with these ids that exist and pass the filter, in the order of `ids`
        (each once), scored when the query has an embedding."""
        id_list = check_ids(ids)
        if not id_list:
            return []
        qv, inc, bound = self.embedding, self.include_embeddings, self._bound
        with_score = qv is not None and not inc
        text = self._layout.get_query(inc, with_score, bool(bound))
        calls: list[Call] = [
            (text, [qv, chunk] if with_score else [chunk])
            for chunk in (id_list[i : i + GET_CHUNK] for i in range(0, len(id_list), GET_CHUNK))
        ]
        found: dict[str, Hit] = {}
        for rows in await self._executor.burst(calls, "read by id", self.limiter):
            if bound:
                rows = [r for r in rows if self._layout.matches(r, bound)]
            for hit in self._layout.hits(rows, include_embeddings=inc, query=qv):
                found[hit.id] = hit
        return [found[i] for i in id_list if i in found]

    # -- complete sets (scopes) -------------------------------------------------------------

    async def _complete(self, owns: Sequence[Sequence[Bound]], limit: int) -> list[list[Hit]]:
        """One paged equality read per entry of `owns` (its own conditions plus the filter's),
        at most `limit` rows each, sent as one burst."""
        inc, qv = self.include_embeddings, self.embedding
        calls: list[Call] = []
        for own in owns:
            conds = [*own, *self._bound]
            text = sets.match_query(self._layout, len(conds), inc, qv is not None)
            calls.append((text, sets.match_params(self._head, conds, limit)))
        pages = await self._executor.burst(calls, "complete read", self.limiter)
        return [self._layout.hits(rows, include_embeddings=inc, query=qv) for rows in pages]

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
        if not self._bound:
            raise invalid("filter", {}, "a non-empty filter for a read of every match")
        if limit == 0:
            return []
        return (await self._complete([[]], limit))[0]
