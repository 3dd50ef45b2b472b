"""The store contract: what a traversal needs from a vector store.

A run starts with `await store.aprepare(embedding, filter, ...)`, which checks the query vector
and compiles the filter once and returns a `PreparedQuery`; every store call of the run goes
through that object (start search, reads by id, one edge's or a whole hop's adjacency). So a
store validates and packs its inputs once per run, not once per edge.

Every score is the cosine similarity (in [-1, 1]) between the query embedding and the
document's embedding. `include_embeddings=False` lets a store skip reading and decoding vectors
when the strategy does not need them (Eager, Scored); `document.embedding` is then None.

`max_concurrency` bounds the queries a prepared query has in flight at once: every query it
sends holds one slot of its `limiter` while it runs. `Store` and `PreparedQuery` are Protocols
with default methods: subclass them to inherit `aadjacent_many` (fans out `aadjacent`) and the
one-call conveniences (`asearch`, `aget`, `aadjacent` on the store itself). The shipped
compliance suite, `hoprag.testing`, checks any store against this contract.

`aresolve` (entity resolution: the values a typed name may mean) and `adelete` (removing
documents, by id or by filter) have defaults that raise NotImplementedError, so stores written
before them keep working. `check_delete` is the one check of `adelete`'s arguments, so every
store refuses the same input with the same error. `aholders` (how many documents hold each of
some metadata edges' values) defaults to "unknown" (None per edge); `check_holder_edges` is
its one check of the edges."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import anyio

from hoprag.documents import Document, Node, Path
from hoprag.edges import Edges, MetadataEdge
from hoprag.errors import InvalidInputError, invalid, one_error
from hoprag.filters import (
    CompiledFilter,
    Filter,
    FilterPlan,
    check_complete_read,
    compile_filter,
    condition_label,
)
from hoprag.resolve import Candidate
from hoprag.stats import EdgePlan
from hoprag.sync import run_sync
from hoprag.validation import MAX_K, check_ids, check_k

__all__ = [
    "DEFAULT_MAX_CONCURRENCY",
    "Candidate",
    "DeleteRequest",
    "Filter",
    "Hit",
    "LexicalHit",
    "PreparedQuery",
    "Store",
    "check_delete",
    "check_holder_edges",
]

DEFAULT_MAX_CONCURRENCY = 16
"""Queries one run has in flight at most, unless the caller says otherwise."""


@dataclass(frozen=True, slots=True)
class Hit:
    """A document returned by a store with its cosine similarity to the query embedding
    (None when the query was prepared without an embedding)."""

    document: Document
    score: float | None

    @property
    def id(self) -> str:
        """The document's id. A store's own Hit type may give it without decoding the
        document, so the coordinator uses it to merge and drop hits."""
        return self.document.id


def hit_node(hit: Hit, path: Path, edges: Edges, depth: int | None = None) -> Node:
    """The node of a hit reached by `path` (at `depth`, default the path's), with the
    document's `edges`; its similarity NaN when the hit has no score."""
    doc = hit.document
    return Node(
        id=doc.id,
        content=doc.content,
        depth=path.depth if depth is None else depth,
        similarity_score=float(hit.score) if hit.score is not None else float("nan"),
        embedding=doc.embedding,
        metadata=doc.metadata,
        incoming_edges=edges.incoming,
        outgoing_edges=edges.outgoing,
        path=path,
    )


def by_score(hits: Iterable[Hit]) -> list[Hit]:
    """The hits best score first (unscored last), equal scores by id: the order a vector
    search ranks them in."""
    return sorted(hits, key=lambda h: (-(h.score if h.score is not None else -math.inf), h.id))


@dataclass(frozen=True, slots=True)
class LexicalHit(Hit):
    """A hit of a lexical search: `score` is the cosine similarity to the query embedding as
    for every hit, `lexical` the BM25 score that ranked it (`hoprag.lexical`)."""

    lexical: float = 0.0


@dataclass(frozen=True, slots=True)
class DeleteRequest:
    """What `adelete` was asked to remove: the checked `ids` (duplicates dropped) or, when
    they are None, every document passing the compiled `filter`."""

    ids: list[str] | None
    filter: CompiledFilter | None


DELETE_ALLOWED = "ids=[...] (a sequence of id strings) or filter={...}, one of the two"


def check_delete(ids: object, filter: object) -> DeleteRequest:
    """`adelete`'s arguments checked the same way by every store: exactly one of `ids` (a
    sequence of id strings; a bare string is refused, unknown ids are not an error) and
    `filter` (a filter that a read of every match can take from an index: not empty, not only
    `$ne`/`$nin`/`$exists`), else InvalidInputError naming the argument."""
    if ids is None and filter is None:
        raise InvalidInputError(
            "adelete needs the documents to delete: ids or a filter",
            argument="ids",
            value=None,
            allowed=DELETE_ALLOWED,
        )
    if ids is not None and filter is not None:
        raise InvalidInputError(
            "adelete takes ids or a filter, not both (to delete some of the ids only when "
            "they pass a filter, delete through a store view)",
            argument="filter",
            value=filter,
            allowed=DELETE_ALLOWED,
        )
    if ids is not None:
        return DeleteRequest(check_ids(ids), None)
    compiled = compile_filter(filter, "filter")
    if compiled.matches_all:
        raise InvalidInputError(
            "a delete by a filter that every document passes would empty the store; name the "
            "documents, or drop the table",
            argument="filter",
            value=filter,
            allowed="a non-empty filter",
        )
    check_complete_read(compiled, "filter", filter)
    return DeleteRequest(None, compiled)


HOLDER_EDGES_ALLOWED = "a sequence of MetadataEdge (a hop's metadata edges)"


def check_holder_edges(edges: object) -> list[MetadataEdge]:
    """`aholders`' edges as a list, the same check in every store: a sequence (not a string
    or a mapping) of `MetadataEdge`, else InvalidInputError naming `edges`."""
    if isinstance(edges, str | bytes) or not isinstance(edges, Sequence):
        raise invalid("edges", edges, HOLDER_EDGES_ALLOWED)
    for edge in edges:
        if not isinstance(edge, MetadataEdge):
            raise invalid(
                "edges", edge, HOLDER_EDGES_ALLOWED,
                hint="an id edge has one holder at most: read it with aget",
            )  # fmt: skip
    return list(edges)


@runtime_checkable
class PreparedQuery(Protocol):
    """One run's query vector and filter, checked and compiled by a store, with the run's
    bound on queries in flight. Made by `Store.aprepare`; never shared between runs."""

    embedding: Sequence[float] | None
    """The checked query vector (None: hits are unscored, only `aget` may be called)."""
    filter: CompiledFilter
    """The compiled filter (`hoprag.filters.compile_filter`), ANDed into every call."""
    include_embeddings: bool
    """Whether hits carry their documents' embeddings."""
    limiter: anyio.CapacityLimiter
    """Every query in flight holds one of its `max_concurrency` slots."""

    @property
    def filter_plan(self) -> FilterPlan:
        """How this store answers `filter` (queries per read, conditions its indexes answer and
        those checked after the read), for `TraversalStats.explain()`. This default says one
        query per read with the store deciding every condition."""
        return FilterPlan(1, tuple(dict.fromkeys(map(condition_label, self.filter.conditions))))

    async def alexical(
        self,
        text: str,
        *,
        k: int,
        filtered_statistics: bool = False,
        max_holders: int | None = None,
    ) -> Sequence[LexicalHit]:
        """The `k` documents passing the filter that BM25 over their content ranks best for
        `text`, best first (`hoprag.lexical`: one tokenizer for every store). BM25's
        statistics are the whole store's, or with `filtered_statistics` (a store view's
        search) those of the documents passing the filter that hold a query term
        (`hoprag.lexical.bm25_among`), so that no score depends on a document the filter
        refuses. With `max_holders`, a query term held by more documents of those statistics
        counts for nothing (`hoprag.lexical.check_max_holders`). This default says the store
        has no lexical index."""
        raise InvalidInputError(
            f"{type(self).__name__} has no lexical index: lexical starts (a strategy's "
            "lexical_k) need a store that keeps one (MemoryStore, or a CassandraStore made "
            "with lexical=True)",
            argument="lexical_k",
            allowed="0 on this store",
        )

    async def around_trip(self) -> float | None:
        """The store's network round trip in seconds, when it has one (a remote store), for a
        traversal's `speculation="auto"`; this default says it is not known (a fast link)."""
        return None

    async def asearch(self, *, k: int) -> list[Hit]:
        """The `k` documents most similar to the query that pass the filter, best first."""
        ...

    async def astart(self, *, k: int, adjacent_k: int) -> list[Hit]:
        """A traversal's start search: `asearch(k=k)`, the run going on to read edges with
        `adjacent_k`. A store may read more here to answer those edges with fewer queries
        (CassandraStore's `candidate_pool`); this default does not. `adjacent_k` is checked
        as the traversal's (an int in 0..1000) by every store."""
        check_k(adjacent_k, maximum=MAX_K, what="adjacent_k")
        return await self.asearch(k=k)

    def take_notes(self) -> dict[str, int]:
        """Counts of what the store did for the run since the last call (for a hop's
        `HopStats.notes`), then forgotten; this default has none."""
        return {}

    def without_plans(self) -> None:
        """Read every edge without planning it by whole-store holder counts (a store view's
        run: the counts, and the plans chosen from them, would tell of documents outside the
        view); this default plans none."""
        return None

    def take_plans(self) -> list[EdgePlan]:
        """How the store read each metadata edge since the last call (for a hop's
        `HopStats.plans`), then forgotten; this default plans none."""
        return []

    async def aget(self, ids: Sequence[str]) -> list[Hit]:
        """The documents with these ids that exist and pass the filter, in the order of `ids`
        (each once), scored when the query has an embedding."""
        ...

    async def aadjacent(self, edge: MetadataEdge, *, k: int) -> list[Hit]:
        """The `k` documents most similar to the query whose field `edge.incoming_field`
        equals (or, for a list, contains) `edge.value` and that pass the filter, best first.
        The filter is ANDed with the edge: a filter on the same field never replaces it."""
        ...

    async def aadjacent_many(self, edges: Sequence[MetadataEdge], *, k: int) -> list[list[Hit]]:
        """`aadjacent` for every edge of a hop, results in the order of `edges`. The default
        runs one `aadjacent` per edge concurrently; each holds a slot while it queries, so at
        most `max_concurrency` are in flight. Stores with a cheaper batch override it."""
        results: list[list[Hit]] = [[] for _ in edges]
        if not edges:
            return results

        async def one(i: int) -> None:
            results[i] = await self.aadjacent(edges[i], k=k)

        if len(edges) == 1:
            await one(0)
            return results
        with one_error():
            async with anyio.create_task_group() as tg:
                for i in range(len(edges)):
                    tg.start_soon(one, i)
        return results

    # -- complete sets (scopes, `hoprag.Scope`) ----------------------------------------------

    async def amatching(self, edges: Sequence[MetadataEdge], *, limit: int) -> list[list[Hit]]:
        """For each edge, every document (unranked, in no particular order) whose field
        `edge.incoming_field` equals (or contains) `edge.value` and that passes the filter,
        but at most `limit` of them (ask for one more than you accept to detect "too many").
        Scored when the query has an embedding. Results in the order of `edges`, as one round
        of concurrent queries. There is no default: a top-k read cannot stand in for it."""
        raise NotImplementedError(
            f"{type(self).__name__} does not implement amatching, which scopes need"
        )

    async def afiltered(self, *, limit: int) -> list[Hit]:
        """Every document (unranked) that passes the filter, at most `limit` of them; the
        filter must not be empty (that would be a read of the whole store). Scored when the
        query has an embedding. No default (see `amatching`)."""
        raise NotImplementedError(
            f"{type(self).__name__} does not implement afiltered, which scopes need"
        )


@runtime_checkable
class Store(Protocol):
    """What the coordinator needs from a store: `aprepare` and `aadd`. The other methods have
    defaults that prepare a query for a single call."""

    embedding: Any
    """The embedding model: a callable `str -> Sequence[float]` or a LangChain `Embeddings`."""

    async def aprepare(
        self,
        embedding: Sequence[float] | None,
        filter: Filter | CompiledFilter | None = None,
        *,
        include_embeddings: bool = True,
        max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
    ) -> PreparedQuery:
        """Check `embedding` (dimension, finite, non-zero) and compile `filter` once, raising
        `InvalidInputError` for bad input; the result serves every call of one run. A
        `hoprag.validation.CheckedVector` is checked for its dimension only and a
        `CompiledFilter` is taken as compiled (`compile_filter` returns it), so a caller that
        checked them at its entry does not pay for the checks again."""
        ...

    async def aadd(self, documents: Iterable[Document]) -> None:
        """Insert or replace documents (by id), embedding those without an embedding."""
        ...

    async def aresolve(
        self,
        text: str,
        fields: Sequence[str],
        *,
        limit: int = 10,
        filter: Filter | CompiledFilter | None = None,
    ) -> list[Candidate]:
        """The values of `fields` that `text` may mean, best first (`hoprag.resolve`: exact
        matches of the normalised text, then values holding all its words), each with the
        number of documents carrying it; at most `limit` (1..100). With `filter`, only the
        documents passing it are counted, and a value none of them carries is left out (how a
        store view resolves). The text reaches a store only as a bound value. The default
        raises NotImplementedError: stores that resolve override it (MemoryStore: any field;
        CassandraStore: declared entity fields)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement aresolve")

    async def adelete(
        self, ids: Sequence[str] | None = None, *, filter: Filter | CompiledFilter | None = None
    ) -> int:
        """Delete the documents with these `ids` (unknown ones are skipped), or every document
        passing `filter`, with everything derived from them (index entries, statistics), and
        return how many were deleted; `check_delete` says what is refused. The default raises
        NotImplementedError: stores that delete override it."""
        raise NotImplementedError(f"{type(self).__name__} does not implement adelete")

    async def aholders(self, edges: Sequence[MetadataEdge]) -> list[int | None]:
        """How many documents hold each edge's value in its field (equal to it, or a list
        containing it: the documents `aadjacent` chooses among without a filter), in the order
        of `edges`, in one round of reads; None for an edge whose count the store does not
        know. Counts are of the whole store, before any filter, and kept by every write
        (docs/stores.md, "Holder counts"). The default knows none; a store view answers None
        for every edge (its counts would tell of documents outside it)."""
        return [None] * len(check_holder_edges(edges))

    def delete(
        self, ids: Sequence[str] | None = None, *, filter: Filter | CompiledFilter | None = None
    ) -> int:
        """Sync `adelete` (works inside and outside a running event loop)."""

        async def call() -> int:
            return await self.adelete(ids, filter=filter)

        return run_sync(call)

    def restricted(self, access_filter: Filter | CompiledFilter) -> Store:
        """A view of this store that answers as if the documents outside `access_filter` did
        not exist, whatever filter, ids or scope a caller passes (`hoprag.stores.views`)."""
        from hoprag.stores.views import RestrictedStore

        return RestrictedStore(self, access_filter)

    async def asearch(
        self,
        embedding: Sequence[float],
        *,
        k: int,
        filter: Filter | None = None,
        include_embeddings: bool = True,
    ) -> list[Hit]:
        """One `PreparedQuery.asearch`."""
        query = await self.aprepare(embedding, filter, include_embeddings=include_embeddings)
        return await query.asearch(k=k)

    async def aget(
        self,
        ids: Sequence[str],
        *,
        filter: Filter | CompiledFilter | None = None,
        embedding: Sequence[float] | None = None,
        include_embeddings: bool = True,
    ) -> list[Hit]:
        """One `PreparedQuery.aget` (scored when `embedding` is given)."""
        query = await self.aprepare(embedding, filter, include_embeddings=include_embeddings)
        return await query.aget(ids)

    async def aadjacent(
        self,
        edge: MetadataEdge,
        embedding: Sequence[float],
        *,
        k: int,
        filter: Filter | None = None,
        include_embeddings: bool = True,
    ) -> list[Hit]:
        """One `PreparedQuery.aadjacent`."""
        query = await self.aprepare(embedding, filter, include_embeddings=include_embeddings)
        return await query.aadjacent(edge, k=k)

    async def aadjacent_many(
        self,
        edges: Sequence[MetadataEdge],
        embedding: Sequence[float],
        *,
        k: int,
        filter: Filter | None = None,
        include_embeddings: bool = True,
        max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
    ) -> list[list[Hit]]:
        """One `PreparedQuery.aadjacent_many`."""
        query = await self.aprepare(
            embedding,
            filter,
            include_embeddings=include_embeddings,
            max_concurrency=max_concurrency,
        )
        return await query.aadjacent_many(edges, k=k)
