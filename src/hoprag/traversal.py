"""The traversal coordinator: one async loop that fans out each hop's store queries
concurrently, turns hits into nodes with depth and path, and streams what the strategy admits.

`astream` is the implementation; `atraverse` collects it and `traverse` runs `atraverse` on an
event loop (in a worker thread when called from inside a running loop)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import time
from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Awaitable,
    Callable,
    Iterable,
    Mapping,
    Sequence,
)
from types import TracebackType
from typing import Any

import anyio

from hoprag.documents import Document, Node, Path
from hoprag.edges import (
    Edge,
    EdgeFunction,
    EdgeSpec,
    IdEdge,
    MetadataEdge,
    edge_sort_key,
    parse_edges,
)
from hoprag.embeddings.base import aembed_query, check_vector
from hoprag.stats import HopStats, TraversalResult, TraversalStats
from hoprag.stores.base import Filter, Hit
from hoprag.strategies.base import RunState, Strategy

DEFAULT_MAX_CONCURRENCY = 16

EdgesArg = Iterable[EdgeSpec] | EdgeFunction


class _Followed:
    """A followed edge: its depth (1 + the depth of the node it was followed from) and that
    node's path."""

    __slots__ = ("depth", "order", "source_path")

    def __init__(self, depth: int, source_path: Path, order: int) -> None:
        self.depth = depth
        self.source_path = source_path
        self.order = order


class TraversalStream:
    """An async iterator of admitted nodes with the run's `stats`. Use `async with` or
    `aclose()` to stop early; any in-flight store queries are cancelled."""

    def __init__(self, gen: AsyncGenerator[Node, None], stats: TraversalStats) -> None:
        self._gen = gen
        self.stats = stats

    def __aiter__(self) -> AsyncIterator[Node]:
        return self

    async def __anext__(self) -> Node:
        return await self._gen.__anext__()

    async def aclose(self) -> None:
        """Stop the traversal; nothing more is fetched."""
        await self._gen.aclose()

    async def __aenter__(self) -> TraversalStream:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


class _Run:
    """The state of one traversal call (never shared between calls)."""

    def __init__(
        self,
        *,
        store: Any,
        edge_fn: EdgeFunction,
        state: RunState,
        strategy: Strategy,
        filter: Filter | None,
        query_embedding: list[float],
        limiter: anyio.CapacityLimiter,
        stats: TraversalStats,
    ) -> None:
        self.store = store
        self.edge_fn = edge_fn
        self.state = state
        self.strategy = strategy
        self.filter = dict(filter) if filter else None
        self.qe = query_embedding
        self.limiter = limiter
        self.stats = stats
        self.include = strategy.needs_embeddings
        self.discovered: set[str] = set()
        self.followed: dict[Edge, _Followed] = {}
        # Targets of edges fetched ahead for nodes the strategy expected to traverse next
        # (`RunState.likely_next`), kept until those edges are really followed.
        self.prefetched: dict[Edge, list[Hit]] = {}

    def _node(self, hit: Hit, path: Path, edges: Any) -> Node:
        doc: Document = hit.document
        return Node(
            id=doc.id,
            content=doc.content,
            depth=len(path.nodes) - 1,
            similarity_score=float(hit.score) if hit.score is not None else float("nan"),
            embedding=doc.embedding,
            metadata=doc.metadata,
            incoming_edges=edges.incoming,
            outgoing_edges=edges.outgoing,
            path=path,
        )

    async def _limited(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        """`fn(...)` within the traversal's `max_concurrency` store calls. A free slot is
        taken without a checkpoint: the store call that follows yields anyway."""
        limiter = self.limiter
        try:
            limiter.acquire_nowait()
        except anyio.WouldBlock:
            await limiter.acquire()
        try:
            return await fn(*args, **kwargs)
        finally:
            limiter.release()

    async def start(self, hop: HopStats, root_ids: Sequence[str]) -> list[Node]:
        results: dict[str, list[Hit]] = {"search": [], "roots": []}

        async def search() -> None:
            results["search"] = await self._limited(
                self.store.asearch,
                self.qe,
                k=self.strategy.start_k,
                filter=self.filter,
                include_embeddings=self.include,
            )

        async def roots() -> None:
            results["roots"] = await self._limited(
                self.store.aget,
                list(root_ids),
                filter=self.filter,
                embedding=self.qe,
                include_embeddings=self.include,
            )

        if self.strategy.start_k > 0:
            hop.queries["search"] += 1
        if root_ids:
            hop.queries["get"] += 1
        if self.strategy.start_k > 0 and root_ids:
            async with anyio.create_task_group() as tg:
                tg.start_soon(search)
                tg.start_soon(roots)
        elif self.strategy.start_k > 0:  # one query: no task to spawn before the first node
            await search()
        elif root_ids:
            await roots()
        nodes: list[Node] = []
        for hit in [*results["search"], *results["roots"]]:
            hop.rows += 1
            if hit.id in self.discovered:
                continue
            doc = hit.document
            self.discovered.add(doc.id)
            nodes.append(self._node(hit, Path((doc.id,)), self.edge_fn(doc)))
        return nodes

    def _new_edges(self, sources: Sequence[Node]) -> list[Edge]:
        new: dict[Edge, _Followed] = {}
        for node in sources:
            for edge in sorted(self.state.edges_to_follow(node), key=edge_sort_key):
                if edge in self.followed:
                    continue
                depth = node.depth + 1
                seen = new.get(edge)
                if seen is None or depth < seen.depth:
                    new[edge] = _Followed(depth, node.path, len(self.followed) + len(new))
        self.followed.update(new)
        return list(new)

    def _speculative_edges(self, edges: list[Edge]) -> list[Edge]:
        """Edges of the nodes the strategy expects to traverse next that are neither followed
        nor fetched yet nor part of this hop."""
        guess = self.state.likely_next()
        if not guess:
            return []
        taken = set(edges)
        out: list[Edge] = []
        for node in guess:
            for edge in sorted(self.state.edges_to_follow(node), key=edge_sort_key):
                if edge in taken or edge in self.followed or edge in self.prefetched:
                    continue
                taken.add(edge)
                out.append(edge)
        return out

    async def _fetch(
        self, edges: list[Edge], hop: HopStats, speculative: Sequence[Edge] = ()
    ) -> list[tuple[Hit, list[Edge]]]:
        """The targets of the hop's `edges`, merged (one entry per document with all the edges
        that returned it), best first, cut to the strategy's `hop_limit`. Targets fetched ahead
        in an earlier hop are taken from `prefetched`; the `speculative` edges are queried
        together with this hop's own queries (never on their own round trip) and kept for
        later. A prefetched result is exactly what the query would return now, so results
        never depend on the guesses."""
        k = self.strategy.adjacent_k
        other = [e for e in edges if not isinstance(e, MetadataEdge | IdEdge)]
        if other:
            raise TypeError(f"Unsupported edge type {type(other[0]).__name__}: {other[0]!r}")
        if k <= 0:
            return []
        cached = {e: self.prefetched.pop(e) for e in edges if e in self.prefetched}
        todo = [e for e in edges if e not in cached]
        if not todo:
            speculative = ()
        asked = [*todo, *speculative]
        meta = [e for e in asked if isinstance(e, MetadataEdge)]
        ids = [e for e in asked if isinstance(e, IdEdge)]
        meta_results: list[list[Hit]] = [[] for _ in meta]
        id_results: list[Hit] = []

        async def one(i: int) -> None:
            meta_results[i] = await self._limited(
                self.store.aadjacent,
                meta[i],
                self.qe,
                k=k,
                filter=self.filter,
                include_embeddings=self.include,
            )

        async def many() -> None:
            got = await self._limited(
                self.store.aadjacent_many,
                meta,
                self.qe,
                k=k,
                filter=self.filter,
                include_embeddings=self.include,
            )
            meta_results[:] = list(got)

        async def get() -> None:
            nonlocal id_results
            id_results = await self._limited(
                self.store.aget,
                [e.id for e in ids],
                filter=self.filter,
                embedding=self.qe,
                include_embeddings=self.include,
            )

        batched = getattr(self.store, "aadjacent_many", None) is not None
        calls: list[Callable[[], Awaitable[None]]] = []
        if meta:
            hop.queries["adjacent"] += len(meta)
            if batched:
                calls.append(many)
            else:
                calls.extend(functools.partial(one, i) for i in range(len(meta)))
        if ids:
            hop.queries["get"] += 1
            calls.append(get)
        if len(calls) == 1:  # one store call: no task group to set up
            await calls[0]()
        elif calls:
            async with anyio.create_task_group() as tg:
                for call in calls:
                    tg.start_soon(call)

        results: dict[Edge, list[Hit]] = dict(cached)
        results.update(zip(meta, meta_results, strict=True))
        by_id = {hit.id: hit for hit in id_results}
        for e in ids:
            hit = by_id.get(e.id)  # type: ignore[attr-defined]
            results[e] = [hit] if hit is not None else []
        if speculative:
            spec_rows = 0
            for e in speculative:
                self.prefetched[e] = results[e]
                spec_rows += len(results[e])
            hop.notes["speculative_edges"] = hop.notes.get("speculative_edges", 0) + len(
                speculative
            )
            hop.notes["speculative_rows"] = hop.notes.get("speculative_rows", 0) + spec_rows
        if cached:
            hop.notes["prefetched_edges"] = hop.notes.get("prefetched_edges", 0) + len(cached)

        # Merge: one entry per document (all the edges that returned it), best first:
        # metadata edges in the hop's order, then the id edges' documents.
        merged: dict[str, tuple[Hit, list[Edge]]] = {}
        for edge in sorted(edges, key=lambda e: isinstance(e, IdEdge)):  # stable: meta first
            for hit in results[edge]:
                hop.rows += 1
                entry = merged.get(hit.id)
                if entry is None:
                    merged[hit.id] = (hit, [edge])
                else:
                    entry[1].append(edge)
        ranked = sorted(
            merged.values(),
            key=lambda e: e[0].score if e[0].score is not None else float("-inf"),
            reverse=True,
        )
        limit = self.state.hop_limit
        return ranked if limit is None else ranked[:limit]

    def _to_nodes(self, entries: list[tuple[Hit, list[Edge]]]) -> list[Node]:
        nodes: list[Node] = []
        followed = self.followed
        for hit, via in entries:
            if hit.id in self.discovered:
                continue
            doc = hit.document  # decoded only now, for a new node
            self.discovered.add(doc.id)
            edges = self.edge_fn(doc)
            incoming = edges.incoming
            # The followed edges that lead here: look up whichever side is smaller (a hub
            # document can have thousands of incoming edges).
            if len(followed) < len(incoming):
                leading: Iterable[Edge] = [e for e in followed if e in incoming]
            else:
                leading = incoming
            best: tuple[int, int, Edge] | None = None
            for edge in (*via, *leading):
                f = followed.get(edge)
                if f is not None and (best is None or (f.depth, f.order) < best[:2]):
                    best = (f.depth, f.order, edge)
            assert best is not None  # `via` edges are always followed
            path = followed[best[2]].source_path.extend(best[2], doc.id)
            nodes.append(self._node(hit, path, edges))
        return nodes

    async def run(self, root_ids: Sequence[str]) -> AsyncGenerator[Node, None]:
        t0 = t_hop = time.perf_counter()
        tracker = self.state.tracker
        emitted = 0
        hop = HopStats(depth=0)
        self.stats.hops.append(hop)
        nodes = await self.start(hop, root_ids)
        while True:
            self.state.iterate(nodes)
            bounded = self.state.hop_candidates
            hop.candidates = len(nodes) if bounded is None else bounded
            hop.dropped = hop.rows - hop.candidates
            hop.notes.update(self.state.take_notes())
            hop.kept = len(tracker.selected) - emitted
            hop.seconds = time.perf_counter() - t_hop
            self.stats.seconds = time.perf_counter() - t0
            while emitted < len(tracker.selected):
                if self.stats.first_node_seconds is None:
                    self.stats.first_node_seconds = time.perf_counter() - t0
                node = tracker.selected[emitted]
                emitted += 1
                yield node
            if tracker.done:
                break
            t_hop = time.perf_counter()
            sources = tracker.pop_to_traverse()
            hop = HopStats(depth=len(self.stats.hops), traversed=len(sources))
            self.stats.hops.append(hop)
            edges = self._new_edges(sources)
            hop.edges = len(edges)
            if edges:
                fetched = await self._fetch(edges, hop, self._speculative_edges(edges))
                nodes = self._to_nodes(fetched)
            else:
                nodes = []
        self.stats.seconds = time.perf_counter() - t0


def _check_filter(filter: Any) -> Filter | None:
    if filter is None:
        return None
    if not isinstance(filter, Mapping):
        raise TypeError(f"filter must be a mapping of field -> value, got {filter!r}")
    for key in filter:
        if not isinstance(key, str) or not key:
            raise ValueError(f"filter field names must be non-empty strings, got {key!r}")
    return filter


def astream(
    query: str | None,
    *,
    store: Any,
    edges: EdgesArg,
    strategy: Strategy,
    filter: Filter | None = None,
    initial_root_ids: Sequence[str] = (),
    query_embedding: Sequence[float] | None = None,
    max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
) -> TraversalStream:
    """Traverse from the documents most similar to `query` (or `query_embedding`) plus
    `initial_root_ids`, following `edges`, and yield each node as `strategy` admits it.

    `filter` is ANDed into every store query (start search, roots, every edge); at most
    `max_concurrency` store queries are in flight at once. Arguments are checked here, before
    anything is fetched."""
    if not isinstance(strategy, Strategy):
        raise TypeError(f"strategy must be a hoprag Strategy (Eager, Mmr, ...), got {strategy!r}")
    edge_fn = parse_edges(edges)
    flt = _check_filter(filter)
    if isinstance(initial_root_ids, str):
        raise TypeError("initial_root_ids must be a sequence of ids, not a single string")
    root_ids = list(dict.fromkeys(initial_root_ids))
    if not all(isinstance(i, str) and i for i in root_ids):
        raise TypeError(f"initial_root_ids must be non-empty strings, got {root_ids!r}")
    if query is None and query_embedding is None:
        raise ValueError("give a query text or a query_embedding")
    if isinstance(max_concurrency, bool) or not isinstance(max_concurrency, int):
        raise TypeError(f"max_concurrency must be an int, got {max_concurrency!r}")
    if max_concurrency < 1:
        raise ValueError(f"max_concurrency must be >= 1, got {max_concurrency}")
    qe = check_vector(query_embedding, what="query_embedding") if query_embedding else None
    stats = TraversalStats()

    async def gen() -> AsyncGenerator[Node, None]:
        emb = qe
        if emb is None:
            emb = await aembed_query(store.embedding, query)  # type: ignore[arg-type]
        run = _Run(
            store=store,
            edge_fn=edge_fn,
            state=strategy.start_run(emb),
            strategy=strategy,
            filter=flt,
            query_embedding=emb,
            limiter=anyio.CapacityLimiter(max_concurrency),
            stats=stats,
        )
        agen = run.run(root_ids)
        try:
            async for node in agen:
                yield node
        finally:
            await agen.aclose()

    return TraversalStream(gen(), stats)


async def atraverse(
    query: str | None,
    *,
    store: Any,
    edges: EdgesArg,
    strategy: Strategy,
    filter: Filter | None = None,
    initial_root_ids: Sequence[str] = (),
    query_embedding: Sequence[float] | None = None,
    max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
) -> TraversalResult:
    """Run a traversal to the end and return the admitted nodes in the strategy's final order
    (Scored: by score; others: admission order) as a `TraversalResult` with `.stats`."""
    stream = astream(
        query,
        store=store,
        edges=edges,
        strategy=strategy,
        filter=filter,
        initial_root_ids=initial_root_ids,
        query_embedding=query_embedding,
        max_concurrency=max_concurrency,
    )
    nodes = [node async for node in stream]
    return TraversalResult(strategy.finalize(nodes), stream.stats)


def traverse(
    query: str | None,
    *,
    store: Any,
    edges: EdgesArg,
    strategy: Strategy,
    filter: Filter | None = None,
    initial_root_ids: Sequence[str] = (),
    query_embedding: Sequence[float] | None = None,
    max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
) -> TraversalResult:
    """Synchronous `atraverse`. Outside an event loop it runs one; inside a running loop (e.g.
    a notebook) it runs in a worker thread with its own loop, blocking the caller until done."""
    call = functools.partial(
        atraverse,
        query,
        store=store,
        edges=edges,
        strategy=strategy,
        filter=filter,
        initial_root_ids=initial_root_ids,
        query_embedding=query_embedding,
        max_concurrency=max_concurrency,
    )
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return anyio.run(call)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(anyio.run, call).result()
