"""Scope expansion: the engine reads a `Scope`'s members hop by hop, one round per hop.

Round 0 reads the anchors: the documents matching the scope's `start` filter
(`PreparedQuery.afiltered`, on a query prepared with that filter) or those with its `ids`
(`aget`). Each later round follows, at once, every edge of the previous round's new members
that was not followed before: metadata edges with one complete read each
(`PreparedQuery.amatching`, one burst for the whole hop, not one per member), id edges with
one `aget`. A document already in the scope is not read again; a new one gets its depth (the
round that reached it) and a path from an anchor.

Paths are deterministic whatever order a store answers in: a round's sources are taken in id
order and each source's edges in `edge_sort_key` order; an edge is credited to the first
source that has it, and a new document to the first credited edge (in that order) that
returned it, so its path is that source's path plus the edge.

The member count is checked after every round: more than `max_size` raises
`ScopeTooLargeError` naming the counts per depth and how to narrow the scope. Every read asks
for at most `max_size + 1` rows per edge, so a huge hop costs no more than that."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from hoprag.documents import Document, Path
from hoprag.edges import Edge, Edges, IdEdge, MetadataEdge, edge_sort_key
from hoprag.errors import invalid
from hoprag.rounds import gather
from hoprag.scopes import MAX_SCOPE_SIZE, Scope, ScopeTooLargeError
from hoprag.stats import HopStats
from hoprag.stores.base import Hit, PreparedQuery

__all__ = ["Expansion", "HopPlan", "Member"]


@dataclass(slots=True)
class Member:
    """A document in a scope: the hit that read it (unscored unless the walk carried the
    query vector), its depth and its path from an anchor."""

    hit: Hit
    depth: int
    path: Path

    @property
    def id(self) -> str:
        """The document id."""
        return self.hit.id


@dataclass(slots=True)
class HopPlan:
    """What one hop reads: its metadata and id edges, in credit order, each with the path of
    the source it is credited to."""

    depth: int
    meta: list[MetadataEdge] = field(default_factory=list)
    ids: list[IdEdge] = field(default_factory=list)
    source: dict[Edge, Path] = field(default_factory=dict)
    order: dict[Edge, int] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.meta or self.ids)


class Expansion:
    """One scope's expansion (see the module docstring). `walk` reads the hops (no filter);
    `anchors` is the query prepared with the scope's `start` filter (None for an ids scope).
    Both hold slots of the same limiter."""

    def __init__(self, scope: Scope, walk: PreparedQuery, anchors: PreparedQuery | None) -> None:
        self.scope = scope
        self.walk = walk
        self.anchor_query = anchors
        self.members: dict[str, Member] = {}
        self.per_depth: list[int] = []
        self.frontier: list[Member] = []
        self.followed: set[Edge] = set()
        self.edges_of: dict[str, Edges] = {}
        self._truncated = False  # a read stopped at its limit: the count is a lower bound

    @property
    def limit(self) -> int:
        """Rows asked per read: one more than the scope may hold."""
        return min(self.scope.max_size, MAX_SCOPE_SIZE) + 1

    @property
    def depth(self) -> int:
        """The depth of the deepest round read so far (-1 before the anchors)."""
        return len(self.per_depth) - 1

    # -- round 0 ----------------------------------------------------------------------------

    async def read_anchors(self, hop: HopStats) -> None:
        """Read the anchors (depth 0)."""
        if self.anchor_query is not None:
            hop.queries["filter"] = hop.queries.get("filter", 0) + 1
            hits = await self.anchor_query.afiltered(limit=self.limit)
        else:
            hop.queries["get"] += 1
            hits = await self.walk.aget(list(self.scope.ids))
        hop.rows += len(hits)
        self._truncated = len(hits) >= self.limit
        self._check(len(hits), 0)
        new: list[Member] = []
        for hit in sorted(hits, key=lambda h: h.id):
            if hit.id not in self.members:
                member = Member(hit, 0, Path((hit.id,)))
                self.members[hit.id] = member
                new.append(member)
        self._close_round(new, hop)

    # -- later rounds -----------------------------------------------------------------------

    def plan(self) -> HopPlan:
        """The next hop's edges: those of the last round's members not followed before, each
        credited to its first source (see the module docstring)."""
        plan = HopPlan(depth=self.depth + 1)
        if self.depth >= self.scope.max_depth:
            return plan
        for member in self.frontier:  # in id order
            for edge in sorted(self._edges(member).outgoing, key=edge_sort_key):
                if edge in self.followed or edge in plan.source:
                    continue
                if isinstance(edge, MetadataEdge):
                    plan.meta.append(edge)
                elif isinstance(edge, IdEdge):
                    plan.ids.append(edge)
                else:
                    raise invalid(
                        "an edge", edge, "a MetadataEdge or IdEdge (from the edge function)"
                    )
                plan.source[edge] = member.path
                plan.order[edge] = len(plan.order)
        return plan

    async def step(self, plan: HopPlan, hop: HopStats) -> None:
        """Read `plan`'s edges (metadata edges as one `amatching` burst and id edges as one
        `aget`, both in flight together) and add the new members at `plan.depth`."""
        self.followed.update(plan.source)
        hop.edges += len(plan.source)
        meta_hits: list[list[Hit]] = []
        id_hits: list[Hit] = []

        async def read_meta() -> None:
            nonlocal meta_hits
            meta_hits = await self.walk.amatching(plan.meta, limit=self.limit)

        async def read_ids() -> None:
            nonlocal id_hits
            id_hits = await self.walk.aget([e.id for e in plan.ids])

        calls: list[Callable[[], Awaitable[None]]] = []
        if plan.meta:
            hop.queries["match"] = hop.queries.get("match", 0) + len(plan.meta)
            calls.append(read_meta)
        if plan.ids:
            hop.queries["get"] += 1
            calls.append(read_ids)
        await gather(calls)
        best: dict[str, tuple[int, Edge, Hit]] = {}
        for edge, hits in zip(plan.meta, meta_hits, strict=True):
            hop.rows += len(hits)
            self._truncated = self._truncated or len(hits) >= self.limit
            for hit in hits:
                self._credit(best, plan, edge, hit)
        by_id = {hit.id: hit for hit in id_hits}
        hop.rows += len(id_hits)
        for id_edge in plan.ids:
            target = by_id.get(id_edge.id)
            if target is not None:
                self._credit(best, plan, id_edge, target)
        new: list[Member] = []
        for doc_id in sorted(best):
            _, via, found = best[doc_id]
            member = Member(found, plan.depth, plan.source[via].extend(via, doc_id))
            self.members[doc_id] = member
            new.append(member)
        self._close_round(new, hop)
        self._check(len(self.members), plan.depth)

    def _credit(
        self, best: dict[str, tuple[int, Edge, Hit]], plan: HopPlan, edge: Edge, hit: Hit
    ) -> None:
        """Note that `edge` reached `hit`'s document, keeping the first edge in credit order."""
        if hit.id in self.members:
            return
        order = plan.order[edge]
        seen = best.get(hit.id)
        if seen is None or order < seen[0]:
            best[hit.id] = (order, edge, hit)

    # -- helpers ----------------------------------------------------------------------------

    def _close_round(self, new: list[Member], hop: HopStats) -> None:
        self.per_depth.append(len(new))
        self.frontier = new
        hop.notes["scope_new"] = hop.notes.get("scope_new", 0) + len(new)
        hop.notes["scope_size"] = len(self.members)

    def _edges(self, member: Member) -> Edges:
        """The member's edges, from the scope's edge function (computed once)."""
        edges = self.edges_of.get(member.id)
        if edges is None:
            doc: Document = member.hit.document
            edges = self.scope.edge_fn(doc)
            if not isinstance(edges, Edges):
                raise invalid(
                    f"the edge function's result for document {doc.id!r}",
                    edges,
                    "an Edges(incoming=frozenset, outgoing=frozenset)",
                )
            self.edges_of[member.id] = edges
        return edges

    def edges(self, member: Member) -> Edges:
        """The member's edges (for the nodes a search returns)."""
        return self._edges(member)

    def _check(self, reached: int, depth: int) -> None:
        """Raise `ScopeTooLargeError` when `reached` documents exceed the scope's bound."""
        size = self.scope.max_size
        if reached <= size:
            return
        counts = [*self.per_depth]
        if len(counts) <= depth:
            counts.append(max(0, reached - sum(counts)))
        shown = ", ".join(f"depth {d}: {n}" for d, n in enumerate(counts))
        at_least = "at least " if self._truncated else ""
        raise ScopeTooLargeError(
            f"the scope {self.scope.describe()} reached {at_least}{reached} documents by depth "
            f"{depth} ({shown}), more than its max_size of {size}; narrow it: a smaller "
            "max_depth, a start filter (or ids) matching fewer anchors, fewer or more specific "
            f"edges, or a larger max_size (at most {MAX_SCOPE_SIZE})",
            reached=reached,
            depth=depth,
            max_size=size,
        )
