"""The traversal coordinator: one async loop that fans out each hop's store queries
concurrently, turns hits into nodes with depth and path, and streams what the strategy admits.

`astream` is the implementation; `atraverse` collects it and `traverse` runs `atraverse` on an
event loop (`hoprag.sync.run_sync`). A run prepares its query once (`Store.aprepare`). Every
hop is one `hoprag.engine.rounds.Round` (`_Run._hop`: its queries, wall time and trace span). Hop 0
asks its start sources (`hoprag.engine.rounds.StartSource`: the vector search `VectorStart`, or
what a caller's `scope` gives, the initial roots `RootStart`, the lexical search
`LexicalStart`), all in one round. Each later hop reads top to bottom: the new edges of the
chosen nodes (`_new_edges`), what to ask (`_plan`), asking it (`_ask`), merging and ranking
(`_merge`), and new nodes with their shortest paths (`_to_nodes`). Which edges were followed
from where, and which of them a new node is credited to, is the run's
`hoprag.engine.frontier.Frontier`, shared with the scope expansion."""

from __future__ import annotations

import contextlib
import functools
import math
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Iterable, Sequence
from types import TracebackType
from typing import Any, TypeVar

import anyio

from hoprag import telemetry
from hoprag.documents import Node, Path
from hoprag.edges import (
    ID_FIELD,
    Edge,
    EdgeFunction,
    Edges,
    EdgeSpec,
    IdEdge,
    MetadataEdge,
    MetadataEdgeFunction,
    parse_edges,
    unheld_fields,
)
from hoprag.embeddings.base import aembed_query_vector
from hoprag.engine.frontier import Frontier, split_edges
from hoprag.engine.rounds import EdgeReads, Round, Slot, StartSource, StartSources
from hoprag.engine.speculation import Speculation, check_speculation, plan_for
from hoprag.errors import TraversalTimeoutError, invalid
from hoprag.filters import Filter
from hoprag.stats import HopStats, TraversalResult, TraversalStats
from hoprag.stores.base import DEFAULT_MAX_CONCURRENCY, Hit, PreparedQuery, Store, hit_node
from hoprag.strategies.base import RunState, Strategy, shown_number
from hoprag.sync import run_sync
from hoprag.validation import check_ids, check_int

T = TypeVar("T")

ON_TIMEOUT = ("raise", "partial")
LEXICAL_SCORE_DEPTH = 60
"""With a strategy's `lexical_k`, the lexical search's hits whose BM25 scores the other starts
(vector matches, roots) take, when among them; only the first `lexical_k` become starts."""
"""What a traversal does at its `timeout`: raise `TraversalTimeoutError`, or end with what it
admitted (`stats.partial`)."""

EdgesArg = Iterable[EdgeSpec] | EdgeFunction


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


class VectorStart:
    """The start search (`StartSource`): the `k` documents most similar to the run's query
    (`PreparedQuery.astart`; with `adjacent_k` > 0 the store may read ahead for the metadata
    edges of its hits), one `search` query."""

    def __init__(self, query: PreparedQuery, k: int, adjacent_k: int) -> None:
        self.query = query
        self.k = k
        self.adjacent_k = adjacent_k

    def read(self, rnd: Round) -> Slot[Sequence[Hit]]:
        """Add the search to `rnd`."""
        call = functools.partial(self.query.astart, k=self.k, adjacent_k=self.adjacent_k)
        return rnd.add("search", call)


class RootStart:
    """The initial roots (`StartSource`): the documents with `ids` that pass the run's filter,
    one `get` query."""

    def __init__(self, query: PreparedQuery, ids: Sequence[str]) -> None:
        self.query = query
        self.ids = list(ids)

    def read(self, rnd: Round) -> Slot[Sequence[Hit]]:
        """Add the read by id to `rnd`."""
        return rnd.add("get", functools.partial(self.query.aget, self.ids))


class LexicalStart:
    """The lexical starts (`StartSource`): the best `k` hits of one BM25 search of `text`
    (`PreparedQuery.alexical`, one `lexical` query asking `depth` hits); the BM25 scores of
    all `depth` are kept in `scores` for the other starts."""

    def __init__(self, query: PreparedQuery, text: str, k: int, depth: int) -> None:
        self.query = query
        self.text = text
        self.k = k
        self.depth = depth
        self.scores: dict[str, float] = {}

    def read(self, rnd: Round) -> Slot[Sequence[Hit]]:
        """Add the lexical search to `rnd`."""
        return rnd.add("lexical", self._hits)

    async def _hits(self) -> Sequence[Hit]:
        hits = list(await self.query.alexical(self.text, k=self.depth))
        self.scores = {h.id: float(h.lexical) for h in hits}
        return hits[: self.k]


class _Ask:
    """What one hop asks the store: the metadata and id edges to query (the hop's own, then
    the speculative ones) and the results already at hand from an earlier hop's prefetch."""

    __slots__ = ("cached", "ids", "meta", "speculative")

    def __init__(
        self,
        cached: dict[Edge, list[Hit]],
        meta: list[MetadataEdge],
        ids: list[IdEdge],
        speculative: Sequence[Edge],
    ) -> None:
        self.cached = cached
        self.meta = meta
        self.ids = ids
        self.speculative = speculative


class _Run:
    """The state of one traversal call (never shared between calls)."""

    def __init__(
        self,
        *,
        query: PreparedQuery,
        edge_fn: EdgeFunction,
        state: RunState,
        strategy: Strategy,
        stats: TraversalStats,
        speculation: int | str,
        query_text: str | None = None,
        first: StartSource | None = None,
    ) -> None:
        self.query = query
        self.edge_fn = edge_fn
        self.state = state
        self.strategy = strategy
        self.stats = stats
        self.discovered: set[str] = set()
        self.trace_parent: Any = None
        """The run's retrieval span, parent of its hop spans (None: tracing is off)."""
        self.root_ids: list[str] = []
        self.held_fields: set[str] = set()
        """The top-level metadata fields of the documents read (`note_fields`)."""
        self.frontier = Frontier(edge_fn)
        self.followed = self.frontier.followed
        # Edges asked ahead and their results, kept until those edges are really followed.
        self.speculation = Speculation(plan_for(speculation, None), stats.speculation)
        self._speculation_arg = speculation
        self._edges_of = self.frontier.edges_of
        # The start search: the caller's (a scope's best members), or the prepared query's.
        # With metadata edges to read, the store may read ahead for them (`PreparedQuery.astart`).
        if first is None and strategy.start_k > 0:
            ahead = strategy.adjacent_k if _reads_metadata_edges(edge_fn) else 0
            first = VectorStart(query, strategy.start_k, ahead)
        self.first = first
        self.lexical: LexicalStart | None = None
        if strategy.lexical_k > 0:
            assert query_text is not None  # checked with the arguments
            depth = max(strategy.lexical_k, LEXICAL_SCORE_DEPTH)
            self.lexical = LexicalStart(query, query_text, strategy.lexical_k, depth)

    def _node(self, hit: Hit, path: Path, edges: Edges) -> Node:
        self.held_fields.update(hit.document.metadata)
        return hit_node(hit, path, edges)

    # -- hop 0 ------------------------------------------------------------------------------

    async def _start_hits(self, rnd: Round) -> list[Hit]:
        """The start sources' hits, all asked in round `rnd`: the start search's (or the
        caller's first source's), then the initial roots', then the lexical search's."""
        sources: list[StartSource] = [] if self.first is None else [self.first]
        if self.root_ids:
            sources.append(RootStart(self.query, self.root_ids))
        slots = [source.read(rnd) for source in sources]
        if self._speculation_arg == "auto":
            rnd.beside(self._measure_link)
        if self.lexical is not None:
            slots.append(self.lexical.read(rnd))
        await rnd.send()
        self.state.look_ahead_factor = self.speculation.plan.width
        return [hit for slot in slots for hit in slot.value]

    async def _measure_link(self) -> None:
        """Plan `speculation="auto"` from the store's round trip (in flight with the start
        search, so it costs no round of its own)."""
        rtt = await self.query.around_trip()
        self.speculation = Speculation(plan_for("auto", rtt), self.stats.speculation)

    async def start(self, rnd: Round) -> list[Node]:
        """The start nodes (depth 0): vector search hits, then initial roots, then lexical
        hits, each once; every start among the lexical search's first `LEXICAL_SCORE_DEPTH`
        hits carries its BM25 score (`extra_metadata["_lexical_score"]`)."""
        nodes: dict[str, Node] = {}
        hop = rnd.hop
        for hit in await self._start_hits(rnd):
            hop.rows += 1
            node = nodes.get(hit.id)
            if node is None and hit.id not in self.discovered:
                doc = hit.document
                self.discovered.add(doc.id)
                node = nodes[doc.id] = self._node(hit, Path((doc.id,)), self._edges_of(doc))
        scores = {} if self.lexical is None else self.lexical.scores
        for node in nodes.values():
            score = scores.get(node.id)
            if score is not None:
                node.extra_metadata["_lexical_score"] = score
        return list(nodes.values())

    # -- a hop: what to ask, ask, merge and rank, make nodes --------------------------------

    def _new_edges(self, sources: Sequence[Node]) -> list[Edge]:
        """The edges of this hop's sources not followed before, each with the smallest depth
        at which it is reached."""
        edges_to_follow = self.state.edges_to_follow
        return self.frontier.follow((n.depth, n.path, edges_to_follow(n)) for n in sources)

    def _provisional(self, hit: Hit) -> Node | None:
        """The node a hit in hand would become if a hop reached it now (None: no followed
        edge leads to it)."""
        edges = self._edges_of(hit.document)
        edge = self.frontier.leading_edge((), edges.incoming)
        if edge is None:
            return None
        return self._node(hit, self.frontier.path_to(edge, hit.id), edges)

    def _plan(self, edges: list[Edge]) -> _Ask:
        """What to ask for `edges`: results fetched ahead are taken, the rest is asked together
        with the speculative edges (never on a round trip of their own)."""
        split_edges(edges)  # each edge is one of the two kinds
        spec = self.speculation
        cached = spec.take(edges)
        todo = [e for e in edges if e not in cached]
        speculative = (
            spec.edges(self.state, edges, self.followed, self.discovered, self._provisional)
            if todo
            else []
        )
        meta, ids = split_edges([*todo, *speculative])
        return _Ask(cached, meta, ids, speculative)

    async def _ask(self, ask: _Ask, rnd: Round) -> dict[Edge, list[Hit]]:
        """Every edge's targets: those fetched ahead, and the rest read in round `rnd`."""
        reads = EdgeReads(
            rnd,
            ask.meta,
            ask.ids,
            kind="adjacent",
            read_meta=functools.partial(self.query.aadjacent_many, k=self.strategy.adjacent_k),
            get=self.query.aget,
        )
        await rnd.send()
        return {**ask.cached, **reads.results()}

    def _keep_speculative(self, ask: _Ask, results: dict[Edge, list[Hit]], hop: HopStats) -> None:
        """Store the speculative edges' results for later hops, remember the hits in hand,
        and note what was reused."""
        notes = hop.notes
        spec = self.speculation
        spec.note_hits(
            (hits for e, hits in results.items() if e not in ask.cached), self.discovered
        )
        if ask.speculative:
            spec.keep(ask.speculative, results)
            rows = sum(len(results[e]) for e in ask.speculative)
            notes["speculative_edges"] = notes.get("speculative_edges", 0) + len(ask.speculative)
            notes["speculative_rows"] = notes.get("speculative_rows", 0) + rows
        if ask.cached:
            notes["prefetched_edges"] = notes.get("prefetched_edges", 0) + len(ask.cached)
            taken = sum(len(hits) for hits in ask.cached.values())
            notes["prefetched_rows"] = notes.get("prefetched_rows", 0) + taken

    def _merge(
        self, edges: list[Edge], results: dict[Edge, list[Hit]], hop: HopStats
    ) -> list[tuple[Hit, list[Edge]]]:
        """One entry per document with all the edges that returned it (metadata edges in the
        hop's order, then id edges), best score first, cut to the strategy's `hop_limit`."""
        merged: dict[str, tuple[Hit, list[Edge]]] = {}
        for edge in sorted(edges, key=lambda e: isinstance(e, IdEdge)):  # stable: meta first
            for hit in results[edge]:
                hop.rows += 1
                entry = merged.get(hit.id)
                if entry is None:
                    merged[hit.id] = (hit, [edge])
                else:
                    entry[1].append(edge)
        ranked = sorted(merged.values(), key=_score_of, reverse=True)
        limit = self.state.hop_limit
        return ranked if limit is None else ranked[:limit]

    async def _fetch(self, edges: list[Edge], rnd: Round) -> list[tuple[Hit, list[Edge]]]:
        """The targets of the hop's `edges`, merged and ranked. A prefetched result is exactly
        what the query would return now, so results never depend on the guesses."""
        if self.strategy.adjacent_k <= 0:
            return []
        ask = self._plan(edges)
        results = await self._ask(ask, rnd)
        self._keep_speculative(ask, results, rnd.hop)
        return self._merge(edges, results, rnd.hop)

    def _to_nodes(self, entries: list[tuple[Hit, list[Edge]]]) -> list[Node]:
        """New nodes for the entries not discovered before, each with its shortest path."""
        nodes: list[Node] = []
        for hit, via in entries:
            if hit.id in self.discovered:
                continue
            doc = hit.document  # decoded only now, for a new node
            self.discovered.add(doc.id)
            edges = self._edges_of(doc)
            edge = self.frontier.leading_edge(via, edges.incoming)
            assert edge is not None  # `via` edges are always followed
            nodes.append(self._node(hit, self.frontier.path_to(edge, doc.id), edges))
        return nodes

    # -- the loop ---------------------------------------------------------------------------

    def _close_hop(self, hop: HopStats, nodes: list[Node], emitted: int) -> None:
        """Hand the hop's new nodes to the strategy and record the hop's figures."""
        self.state.iterate(nodes)
        bounded = self.state.hop_candidates
        hop.candidates = len(nodes) if bounded is None else bounded
        hop.dropped = hop.rows - hop.candidates
        hop.notes.update(self.state.take_notes())
        for name, count in self.query.take_notes().items():
            hop.notes[name] = hop.notes.get(name, 0) + count
        hop.plans += self.query.take_plans()
        hop.kept = len(self.state.tracker.selected) - emitted

    async def _next_hop(self, rnd: Round) -> list[Node]:
        """Expand the nodes the strategy chose: their new edges' targets as new nodes."""
        sources = self.state.tracker.pop_to_traverse()
        hop = rnd.hop
        hop.traversed = len(sources)
        edges = self._new_edges(sources)
        hop.edges = len(edges)
        return self._to_nodes(await self._fetch(edges, rnd)) if edges else []

    async def _hop(
        self, deadline: _Deadline, emitted: int, fn: Callable[[Round], Awaitable[list[Node]]]
    ) -> list[Node]:
        """One hop as one round (`hoprag.engine.rounds.Round`, its wall time and trace span, a child
        of the run's retrieval span): `deadline.step(fn, rnd)`, then its new nodes handed to
        the strategy and its figures recorded (`_close_hop`)."""
        rnd = Round.open(self.stats)
        with rnd.timed(self.trace_parent, _shown):
            nodes = await deadline.step(fn, rnd)
            self._close_hop(rnd.hop, nodes, emitted)
        return nodes

    async def run(self, root_ids: Sequence[str], deadline: _Deadline) -> AsyncGenerator[Node, None]:
        """Hop by hop until the strategy is done, yielding each node as it is admitted; each
        hop's queries are cancelled when `deadline` passes."""
        t0 = time.perf_counter()
        self.root_ids = list(root_ids)
        tracker = self.state.tracker
        emitted = 0
        step = self.start
        while True:
            await self._hop(deadline, emitted, step)
            self.stats.seconds = time.perf_counter() - t0
            while emitted < len(tracker.selected):
                if self.stats.first_node_seconds is None:
                    self.stats.first_node_seconds = time.perf_counter() - t0
                emitted += 1
                yield tracker.selected[emitted - 1]
            if tracker.done:
                break
            step = self._next_hop
        self.stats.seconds = time.perf_counter() - t0
        self.note_fields()

    def note_fields(self) -> None:
        """Record in the stats the documents read, their fields, and the fields the edge specs
        name that none of them holds (`hoprag.edges.unheld_fields`)."""
        stats = self.stats
        stats.documents_read = len(self.discovered)
        stats.held_fields = tuple(sorted(self.held_fields))
        if isinstance(self.edge_fn, MetadataEdgeFunction) and self.discovered:
            stats.unheld_fields = tuple(unheld_fields(self.edge_fn.specs, self.held_fields))


def _shown(exc: BaseException) -> BaseException:
    """A hop's error as its trace span shows it (the deadline as a `TimeoutError`)."""
    return TimeoutError("the traversal's timeout") if isinstance(exc, _Expired) else exc


class _Expired(Exception):
    """A traversal step was cancelled at the traversal's deadline."""


class _Deadline:
    """A traversal's `timeout`: every awaited step runs in a cancel scope that ends at the
    deadline (none between steps, so no scope spans a `yield`)."""

    def __init__(self, timeout: float | None) -> None:
        self.timeout = timeout
        self.at: float | None = None

    def start(self) -> None:
        """Start the clock (when iteration starts)."""
        if self.timeout is not None:
            self.at = anyio.current_time() + self.timeout

    async def step(self, fn: Callable[..., Awaitable[T]], *args: Any) -> T:
        """`await fn(*args)`, cancelled and raising `_Expired` at the deadline."""
        if self.at is None:
            return await fn(*args)
        with anyio.CancelScope(deadline=self.at) as scope:
            return await fn(*args)
        assert scope.cancelled_caught
        raise _Expired


class _Trace:
    """A traversal's retrieval span (`hoprag.telemetry`; None when tracing is off), ended with
    the run's figures, the documents it admitted and its error, if any."""

    def __init__(self, query: str | None, strategy: Strategy, store: Store) -> None:
        self.span = telemetry.start_retrieval(
            "traversal",
            query=query,
            top_k=strategy.select_k,
            strategy=type(strategy).__name__,
            store=store,
        )

    async def watch(
        self, nodes: AsyncGenerator[Node, None], stats: TraversalStats
    ) -> AsyncGenerator[Node, None]:
        """`nodes`, passed on; the span ends when they end, fail or are abandoned."""
        found: list[tuple[str, float]] = []
        error: BaseException | None = None
        try:
            async for node in nodes:
                found.append((node.id, node.similarity_score))
                yield node
        except Exception as exc:
            error = exc
            raise
        finally:
            await nodes.aclose()
            telemetry.end_retrieval(self.span, stats, found, error)


def _reads_metadata_edges(edge_fn: EdgeFunction) -> bool:
    """Whether a traversal with `edge_fn` may read metadata edges (any edge function but
    specs whose targets are all ids)."""
    if not isinstance(edge_fn, MetadataEdgeFunction):
        return True
    return any(target != ID_FIELD for _, target in edge_fn.specs)


def _score_of(entry: tuple[Hit, list[Edge]]) -> float:
    score = entry[0].score
    return score if score is not None else float("-inf")


def _check_args(
    query: str | None,
    strategy: Any,
    initial_root_ids: Any,
    query_embedding: Any,
    max_concurrency: Any,
) -> list[str]:
    """Check the arguments that need no store; return the root ids, each once."""
    if not isinstance(strategy, Strategy):
        raise invalid("strategy", strategy, "a hoprag Strategy (Eager, Mmr, Scored, Beam)")
    if query is None and query_embedding is None:
        raise invalid("query", None, "a query text, unless query_embedding is given")
    if query is not None and not isinstance(query, str):
        raise invalid("query", query, "a string (or None with query_embedding)")
    if query is None and strategy.lexical_k > 0:
        raise invalid("query", None, "a query text: the strategy's lexical_k starts search it")
    check_int("max_concurrency", max_concurrency, minimum=1)
    return check_ids(initial_root_ids, what="initial_root_ids")


def _check_timeout(timeout: Any, on_timeout: Any) -> float | None:
    """The traversal's timeout in seconds (None: none)."""
    if on_timeout not in ON_TIMEOUT:
        raise invalid("on_timeout", on_timeout, f"one of {', '.join(map(repr, ON_TIMEOUT))}")
    if timeout is None:
        return None
    allowed = "a finite number of seconds > 0, or None"
    if isinstance(timeout, bool) or not isinstance(timeout, int | float):
        raise invalid("timeout", timeout, allowed)
    seconds = float(timeout) if abs(timeout) < 1e300 else math.inf  # an int float() overflows
    if not math.isfinite(seconds) or seconds <= 0:
        raise invalid("timeout", shown_number(timeout), allowed)
    return seconds


async def _prepare(
    store: Store,
    query: str | None,
    query_embedding: Sequence[float] | None,
    filter: Filter | None,
    strategy: Strategy,
    max_concurrency: int,
) -> PreparedQuery:
    """The run's prepared query (the query text embedded first when no vector is given; an
    embedded vector is checked once, by the embedding step, not again by the store)."""
    emb: Sequence[float] | None = query_embedding
    if emb is None:
        emb = await aembed_query_vector(store.embedding, query)  # type: ignore[arg-type]
    return await store.aprepare(
        emb, filter, include_embeddings=strategy.needs_embeddings, max_concurrency=max_concurrency
    )


def astream(
    query: str | None,
    *,
    store: Store,
    edges: EdgesArg,
    strategy: Strategy,
    filter: Filter | None = None,
    initial_root_ids: Sequence[str] = (),
    query_embedding: Sequence[float] | None = None,
    max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
    timeout: float | None = None,
    on_timeout: str = "raise",
    scope: StartSources | None = None,
    speculation: int | str = "auto",
) -> TraversalStream:
    """Traverse from the documents most similar to `query` (or `query_embedding`) plus
    `initial_root_ids`, following `edges`, and yield each node as `strategy` admits it.

    `filter` is ANDed into every store query (start search, roots, every edge); at most
    `max_concurrency` store queries are in flight at once. `timeout` (seconds, from the start
    of iteration) bounds the whole traversal: at the deadline its in-flight queries are
    cancelled and `TraversalTimeoutError` is raised, or, with `on_timeout="partial"`, the
    stream ends with what was admitted and `stats.partial` is True. The strategy, edges,
    roots and limits are checked here; the query vector and the filter are checked once by
    the store (`Store.aprepare`) when iteration starts, before anything is fetched. Bad input
    raises `InvalidInputError`.

    With `scope` (a `hoprag.Scope`: anything with a `start_source`,
    `hoprag.engine.rounds.StartSources`), the start search is the best `start_k` members of the
    scope that pass `filter`; the traversal may then leave the scope, and `filter` still
    applies to every node. The scope's rounds run inside hop 0's round: hop 0 counts their
    queries by kind and waits for their sequential rounds (`HopStats.rounds`), so
    `stats.rounds` and `stats.total_queries` include them.

    `speculation` asks edges ahead, in the same bursts as each hop's own queries, so that
    fewer sequential rounds are waited for over a slow link (`hoprag.engine.speculation`); it never
    changes the admitted nodes, their order, depth or path. "strategy" asks the edges of the
    nodes the strategy expects to traverse next (Mmr's `prefetch`); "wide" twice as many of
    those; "on" also those of documents a hop fetched but cut; "auto" (default) is "wide"
    when the store's measured round trip (`PreparedQuery.around_trip`, asked beside the
    start search) is at least 4 ms and "strategy" otherwise; "off" (or 0) sends no
    speculative query; an int is "on" with that budget of speculative queries (otherwise
    256). `stats.speculation` counts them; `stats.rounds` the rounds waited for."""
    speculation = check_speculation(speculation)
    root_ids = _check_args(query, strategy, initial_root_ids, query_embedding, max_concurrency)
    if scope is not None and not isinstance(scope, StartSources):
        raise invalid("scope", scope, "a hoprag Scope or None")
    deadline = _Deadline(_check_timeout(timeout, on_timeout))
    edge_fn = parse_edges(edges)
    stats = TraversalStats()

    async def gen() -> AsyncGenerator[Node, None]:
        deadline.start()
        trace = _Trace(query, strategy, store)
        nodes = run_all(trace) if trace.span is None else trace.watch(run_all(trace), stats)
        async with contextlib.aclosing(nodes):
            async for node in nodes:
                yield node

    async def run_all(trace: _Trace) -> AsyncGenerator[Node, None]:
        admitted = 0
        try:
            with telemetry.attached(trace.span):
                prepared = await deadline.step(
                    _prepare, store, query, query_embedding, filter, strategy, max_concurrency
                )
            stats.filters["filter"] = prepared.filter_plan
            first = None
            if scope is not None and strategy.start_k > 0:
                first = scope.start_source(
                    store, prepared, stats, k=strategy.start_k, max_concurrency=max_concurrency
                )
            run = _Run(
                query=prepared,
                edge_fn=edge_fn,
                state=strategy.start_run(prepared.embedding),
                strategy=strategy,
                stats=stats,
                speculation=speculation,
                query_text=query,
                first=first,
            )
            run.trace_parent = trace.span
            agen = run.run(root_ids, deadline)
            try:
                async for node in agen:
                    admitted += 1
                    yield node
            finally:
                await agen.aclose()
        except _Expired:
            if on_timeout == "partial":
                stats.partial = True
                return
            raise TraversalTimeoutError(
                f"the traversal did not finish within its timeout of {timeout} s "
                f"({admitted} nodes admitted, {len(stats.hops)} hops started); its queries "
                "were cancelled (on_timeout='partial' returns what was admitted)"
            ) from None

    return TraversalStream(gen(), stats)


async def atraverse(
    query: str | None,
    *,
    store: Store,
    edges: EdgesArg,
    strategy: Strategy,
    filter: Filter | None = None,
    initial_root_ids: Sequence[str] = (),
    query_embedding: Sequence[float] | None = None,
    max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
    timeout: float | None = None,  # noqa: ASYNC109 (a deadline with a partial mode)
    on_timeout: str = "raise",
    scope: StartSources | None = None,
    speculation: int | str = "auto",
) -> TraversalResult:
    """Run a traversal to the end and return the admitted nodes in the strategy's final order
    (Scored: by score; others: admission order) as a `TraversalResult` with `.stats` (see
    `astream` for the arguments)."""
    stream = astream(
        query,
        store=store,
        edges=edges,
        strategy=strategy,
        filter=filter,
        initial_root_ids=initial_root_ids,
        query_embedding=query_embedding,
        max_concurrency=max_concurrency,
        timeout=timeout,
        on_timeout=on_timeout,
        scope=scope,
        speculation=speculation,
    )
    nodes = [node async for node in stream]
    return TraversalResult(strategy.finalize(nodes), stream.stats)


def traverse(
    query: str | None,
    *,
    store: Store,
    edges: EdgesArg,
    strategy: Strategy,
    filter: Filter | None = None,
    initial_root_ids: Sequence[str] = (),
    query_embedding: Sequence[float] | None = None,
    max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
    timeout: float | None = None,
    on_timeout: str = "raise",
    scope: StartSources | None = None,
    speculation: int | str = "auto",
) -> TraversalResult:
    """Synchronous `atraverse` (`hoprag.sync.run_sync`: works inside and outside a running
    event loop)."""
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
        timeout=timeout,
        on_timeout=on_timeout,
        scope=scope,
        speculation=speculation,
    )
    return run_sync(call)
