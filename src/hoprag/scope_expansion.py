"""Scope expansion: the engine reads a `Scope`'s members hop by hop, one round per hop.

Each round's reads are added to a `hoprag.engine.rounds.Round` (which counts them) by `read_anchors`
and `read_step`, and the members taken from its answers by `take_anchors` and `take_step`.
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
returned it, so its path is that source's path plus the edge (`hoprag.engine.frontier`, which
the traversal credits by too).

The member count is checked after every round: more than `max_size` raises
`ScopeTooLargeError` naming the counts per depth and how to narrow the scope. Every read asks
for at most `max_size + 1` rows per edge, so a huge hop costs no more than that."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from hoprag.documents import Path
from hoprag.edges import Edge, Edges, IdEdge, MetadataEdge
from hoprag.engine.frontier import Frontier, split_edges
from hoprag.engine.rounds import EdgeReads, Round, Slot
from hoprag.errors import InvalidInputError
from hoprag.stats import HopStats
from hoprag.stores.base import Hit, PreparedQuery

if TYPE_CHECKING:
    from hoprag.scopes import Scope

__all__ = ["MAX_SCOPE_SIZE", "Expansion", "HopPlan", "Member", "ScopeTooLargeError"]

MAX_SCOPE_SIZE = 100_000
"""The largest `max_size` a scope may ask for (every member is read, ids and metadata)."""


class ScopeTooLargeError(InvalidInputError):
    """A scope reached more documents than its `max_size`. `reached` is how many were found
    (a lower bound when a single edge alone passed the bound) and `depth` the hop at which the
    bound was passed; nothing was returned and nothing was written."""

    def __init__(self, message: str, *, reached: int, depth: int, max_size: int) -> None:
        super().__init__(message, argument="scope", value=reached, allowed=f"<= {max_size}")
        self.reached = reached
        self.depth = depth
        self.max_size = max_size


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
    """What one hop reads: its metadata and id edges, each followed from (credited to) a
    member of the previous round."""

    depth: int
    meta: list[MetadataEdge] = field(default_factory=list)
    ids: list[IdEdge] = field(default_factory=list)

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
        self.last_round: list[Member] = []
        self.frontier = Frontier(scope.edge_fn)
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

    def read_anchors(self, rnd: Round) -> Slot[Sequence[Hit]]:
        """Add the read of the anchors (depth 0) to `rnd`: one complete filtered read, or one
        `aget` of an ids scope; `take_anchors` takes its hits once `rnd` was sent."""
        if self.anchor_query is not None:
            return rnd.add(
                "filter", functools.partial(self.anchor_query.afiltered, limit=self.limit)
            )
        return rnd.add("get", functools.partial(self.walk.aget, list(self.scope.ids)))

    def take_anchors(self, hits: Sequence[Hit], hop: HopStats) -> None:
        """Add the anchors read (`read_anchors`) as the members at depth 0."""
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
        followed from its first source (see the module docstring)."""
        if self.depth >= self.scope.max_depth:
            return HopPlan(depth=self.depth + 1)
        sources = ((m.depth, m.path, self.edges(m).outgoing) for m in self.last_round)
        meta, ids = split_edges(self.frontier.follow(sources))
        return HopPlan(self.depth + 1, meta, ids)

    def read_step(self, plan: HopPlan, rnd: Round) -> EdgeReads:
        """Add the reads of `plan`'s edges to `rnd`: metadata edges as one `amatching` burst
        (`match` queries, one per edge) and id edges as one `aget`, in flight together."""
        rnd.hop.edges += len(plan.meta) + len(plan.ids)
        return EdgeReads(
            rnd,
            plan.meta,
            plan.ids,
            kind="match",
            read_meta=functools.partial(self.walk.amatching, limit=self.limit),
            get=self.walk.aget,
        )

    def take_step(self, plan: HopPlan, reads: EdgeReads, hop: HopStats) -> None:
        """Add the new members `reads` found (once its round was sent) at `plan.depth`."""
        via: dict[str, list[tuple[Edge, Hit]]] = {}
        for edge, hits in reads.results().items():  # metadata edges first, then id edges
            hop.rows += len(hits)
            if isinstance(edge, MetadataEdge) and len(hits) >= self.limit:
                self._truncated = True
            for hit in hits:
                if hit.id not in self.members:
                    via.setdefault(hit.id, []).append((edge, hit))
        new: list[Member] = []
        for doc_id in sorted(via):
            found = dict(via[doc_id])
            lead = self.frontier.leading_edge(found)
            assert lead is not None  # every edge read was followed
            member = Member(found[lead], plan.depth, self.frontier.path_to(lead, doc_id))
            self.members[doc_id] = member
            new.append(member)
        self._close_round(new, hop)
        self._check(len(self.members), plan.depth)

    # -- helpers ----------------------------------------------------------------------------

    def _close_round(self, new: list[Member], hop: HopStats) -> None:
        self.per_depth.append(len(new))
        self.last_round = new
        hop.notes["scope_new"] = hop.notes.get("scope_new", 0) + len(new)
        hop.notes["scope_size"] = len(self.members)

    def edges(self, member: Member) -> Edges:
        """The member's edges, from the scope's edge function (computed once)."""
        return self.frontier.edges_of(member.hit.document)

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
