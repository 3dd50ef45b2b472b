"""Traversal statistics: per-hop queries, rows, candidates and time (our EXPLAIN/PROFILE)."""

from __future__ import annotations

from dataclasses import dataclass, field

from hoprag.documents import Node
from hoprag.edges import describe_unheld
from hoprag.filters import FilterPlan

_SHOWN = ("search", "get", "adjacent")
"""Query kinds with their own column in `explain()`; others (a scope's `match` and `filter`
reads) are listed after the hop's figures, with the sequential rounds of a hop that waited
for more than one (`rounds=3`: a traversal's start inside a 2-hop scope)."""


@dataclass(frozen=True, slots=True)
class EdgePlan:
    """How a store read one metadata edge of a hop (CassandraStore on a table that keeps
    holder counts: `stores/cassandra/plans.py`): `edge` as `field=value`, `plan` ("search": a
    filtered vector search; "read": every holder read and the best kept; "pool": answered
    from the run's candidate pool; "none": no document holds the value, nothing read),
    `holders` (the documents holding the value; None when not known) and `rows` (the hits it
    gave)."""

    edge: str
    plan: str
    holders: int | None
    rows: int

    def describe(self) -> str:
        """One line for `TraversalStats.explain()`."""
        held = "holders unknown" if self.holders is None else f"{self.holders} holders"
        return f"{self.edge}: {self.plan}, {held}, {self.rows} rows"


@dataclass(slots=True)
class HopStats:
    """One round of store queries. Hop 0 is the start (vector search plus initial roots). `queries`
    counts store operations by kind (`search`, `get`, `adjacent`; a strategy's lexical starts
    add `lexical`, one BM25 search of the query text; a scoped search adds `match`,
    one complete read per edge, and `filter`, a complete filtered read); `rows` the hits the
    store returned; `candidates` the new distinct documents the strategy considered (all new
    documents handed to it, or, for a strategy that bounds them itself like `Beam`, the ones it
    kept); `dropped` the rows that did not become candidates (already discovered, duplicates,
    beyond `adjacent_k`, cut by the strategy's bound); `kept` the nodes admitted right after
    this hop; `seconds` the wall time of the hop; `rounds` the sequential rounds of store
    queries the hop waited for (1 when it sent any query, 0 when it sent none; hop 0 of a
    traversal that starts from a scope waits for the scope's rounds, whose queries its
    `queries` count by kind and whose rows its note `scope_rows` counts); `notes`
    strategy-specific counts (`Beam`: `beam`, `pruned_nodes`, `pruned_edges`,
    `capped_edges`; a store's own, such as `pool_reads`); `plans` how the store read each
    metadata edge, when it plans them (`EdgePlan`). Every figure of `queries` and `rounds` is
    set by the round that sent the queries (`hoprag.engine.rounds.Round`)."""

    depth: int
    edges: int = 0
    traversed: int = 0
    queries: dict[str, int] = field(default_factory=lambda: {"search": 0, "get": 0, "adjacent": 0})
    rows: int = 0
    candidates: int = 0
    dropped: int = 0
    kept: int = 0
    seconds: float = 0.0
    rounds: int = 0
    notes: dict[str, int] = field(default_factory=dict)
    plans: list[EdgePlan] = field(default_factory=list)


@dataclass(slots=True)
class SpeculationStats:
    """A traversal's speculative queries: `mode` as planned, `budget`, `issued` (one per edge
    asked ahead), `used` (those whose results a later hop took instead of a query), and
    `wasted` (issued but never used)."""

    mode: str = "off"
    budget: int = 0
    issued: int = 0
    used: int = 0

    @property
    def wasted(self) -> int:
        """Speculative queries whose results no hop took."""
        return self.issued - self.used

    def describe(self) -> str:
        """One line for `TraversalStats.explain()`."""
        return (
            f"speculation: {self.mode}, {self.issued} queries of a budget of {self.budget}, "
            f"{self.used} used, {self.wasted} wasted"
        )


@dataclass(slots=True)
class TraversalStats:
    """Per-hop records of one traversal plus totals; filled in as the traversal runs."""

    hops: list[HopStats] = field(default_factory=list)
    first_node_seconds: float | None = None
    """Time from the start of the traversal to the first admitted node."""
    seconds: float = 0.0
    """Total wall time of the traversal so far."""
    partial: bool = False
    """The traversal stopped at its `timeout` (`on_timeout="partial"`): the nodes are those
    admitted by then, and the hop that was running is not complete."""
    plan: str | None = None
    """For `hoprag.search.asearch`: how the result was ranked ("search": a vector search;
    "filtered": a complete filtered read ordered by a field; with a scope "exact" or
    "pushdown", see `hoprag.search`). None for a traversal."""
    scope_size: int | None = None
    """For a scoped search: the documents in the scope (None without one)."""
    filters: dict[str, FilterPlan] = field(default_factory=dict)
    """How the store answered each filter of the run: "filter" (the run's, ANDed into every
    read) and, with a scope, "scope start" (its anchors' filter). See `FilterPlan`."""
    speculation: SpeculationStats = field(default_factory=SpeculationStats)
    """A traversal's speculative queries (`hoprag.engine.speculation`): budget, issued, used,
    wasted."""
    documents_read: int = 0
    """A traversal's documents made nodes (admitted or not)."""
    held_fields: tuple[str, ...] = ()
    """The top-level metadata fields those documents hold, sorted."""
    unheld_fields: tuple[str, ...] = ()
    """The fields the traversal's edge specs name that none of those documents holds (an edge
    that led nowhere: a typo, or `id` for `$id`); set when it read at least one document."""

    @property
    def rounds(self) -> int:
        """Sequential rounds of store queries: the sum of the hops' `rounds` (a round's queries
        are all in flight together, so a hop that sent any waits for one round, or for the
        rounds of a scope it started from; a hop answered wholly by results fetched ahead
        waits for none)."""
        return sum(h.rounds for h in self.hops)

    @property
    def total_queries(self) -> int:
        """All store operations issued."""
        return sum(sum(h.queries.values()) for h in self.hops)

    @property
    def queries_by_kind(self) -> dict[str, int]:
        """Store operations issued, by kind."""
        out: dict[str, int] = {"search": 0, "get": 0, "adjacent": 0}
        for h in self.hops:
            for kind, n in h.queries.items():
                out[kind] = out.get(kind, 0) + n
        return out

    @property
    def total_rows(self) -> int:
        """All hits returned by the store."""
        return sum(h.rows for h in self.hops)

    @property
    def rows_read(self) -> int:
        """The rows the store returned to this run: the hops' rows, less those taken from
        results a speculative query fetched earlier (`prefetched_rows`), plus every
        speculative query's rows (`speculative_rows`, used or not); with a candidate pool,
        plus the pool's rows (`pool_rows`), counting the rows of the edges it answered as the
        rows read by id for them (`pooled_get_rows`, each once) rather than as `pooled_rows`;
        with edge plans, plus the holders read for edges read whole beyond the hits they kept
        (`read_rows` less `read_kept`); plus the rows a scope read for a traversal's start
        (`scope_rows`)."""
        notes = [h.notes for h in self.hops]

        def total(name: str) -> int:
            return sum(n.get(name, 0) for n in notes)

        speculative = total("speculative_rows") - total("prefetched_rows")
        pooled = total("pool_rows") + total("pooled_get_rows") - total("pooled_rows")
        whole = total("read_rows") - total("read_kept")
        return self.total_rows + speculative + pooled + whole + total("scope_rows")

    @property
    def store_queries(self) -> int:
        """The queries the store sent for this run: `total_queries` (each edge asked counts
        one), less the edges a store answered from its candidate pool (`pooled_edges`) and
        those it did not read because no document holds their value (`plan_none`), plus the
        pool's reads and the reads by id behind the edges it answered (`pool_reads`,
        `pooled_gets`; CassandraStore's `candidate_pool` and edge plans) and the holder
        counts it read to plan the edges (`holder_reads`) and the searches of edges read
        whole whose holders outnumbered their count (`read_searched`)."""
        added = ("pool_reads", "pooled_gets", "holder_reads", "read_searched")
        saved = ("pooled_edges", "plan_none")
        change = sum(
            sum(n.get(a, 0) for a in added) - sum(n.get(s, 0) for s in saved)
            for n in (h.notes for h in self.hops)
        )
        return self.total_queries + change

    @property
    def peak_candidates(self) -> int:
        """The most candidates any single hop produced (0 before the first hop)."""
        return max((h.candidates for h in self.hops), default=0)

    @property
    def total_kept(self) -> int:
        """All admitted nodes."""
        return sum(h.kept for h in self.hops)

    def _head(self) -> list[str]:
        """`explain()`'s lines before the table: the plan, the filters, the edges that led
        nowhere, the rounds."""
        head = []
        if self.plan is not None:
            size = "" if self.scope_size is None else f", scope of {self.scope_size} documents"
            head.append(f"plan: {self.plan}{size}, {self.rounds} rounds")
        head += [f"{name}: {p.describe()}" for name, p in self.filters.items() if p.filtered]
        if self.unheld_fields:
            read = f"the {self.documents_read} documents read"
            head.append(describe_unheld(self.unheld_fields, self.held_fields, read))
        if self.plan is None and self.hops:
            head.append(
                f"rounds: {self.rounds} sequential, {len(self.hops)} hops; "
                + self.speculation.describe()
            )
        return head

    def explain(self) -> str:
        """A small text table, one line per hop (followed by a line per metadata edge when the
        store planned them: `EdgePlan`), after the plan of a search, how the store answered
        the run's filters (see `FilterPlan`) and the fields the edges name that no document
        read holds."""
        lines = [*self._head(), "hop  edges  search get adjacent  rows  cand  kept  seconds"]
        for h in self.hops:
            q = h.queries
            other = [(k, v) for k, v in q.items() if k not in _SHOWN and v]
            if h.rounds > 1:
                other.append(("rounds", h.rounds))
            lines.append(
                f"{h.depth:>3} {h.edges:>6} {q.get('search', 0):>7} {q.get('get', 0):>3} "
                f"{q.get('adjacent', 0):>8} {h.rows:>5} {h.candidates:>5} {h.kept:>5} "
                f"{h.seconds:>8.4f}"
                + "".join(f"  {k}={v}" for k, v in [*other, *h.notes.items()] if v)
            )
            lines += [f"      {p.describe()}" for p in h.plans]
        return "\n".join(lines)


class TraversalResult(list[Node]):
    """The admitted nodes (a plain `list[Node]`) with the run's `stats`. Its text form names
    the first ids and the count, in time linear in the number of nodes (a node's own text form
    includes its whole path)."""

    def __init__(self, nodes: list[Node] | None = None, stats: TraversalStats | None = None):
        super().__init__(nodes or [])
        self.stats = stats if stats is not None else TraversalStats()

    def __repr__(self) -> str:
        shown = ", ".join(repr(n.id) for n in self[:8])
        more = f", ... {len(self) - 8} more" if len(self) > 8 else ""
        return f"TraversalResult(ids=[{shown}{more}], nodes={len(self)})"
