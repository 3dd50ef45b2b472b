"""Speculative edge reads: the look-ahead that lets a traversal over a slow link wait for fewer
sequential rounds without changing what it returns.

A traversal's latency over a link of round trip `t` is about its sequential rounds times `t`,
on top of the work itself. Rounds beyond the floor (depth + 1) come from strategies that
expand one node at a time (Mmr), and from documents reached by a later hop at the smaller
depth of an edge followed earlier, which are then expanded in yet another round (Eager).
`Speculation` picks edges likely to be followed soon: those of the nodes the strategy expects
to traverse next (`RunState.likely_next`), and, with look-ahead, those of documents a hop
fetched but cut (their metadata is in hand, so their edges are known). The coordinator asks
them in the same burst as the next hop's own queries, never on a round trip of their own. A
speculative result is kept until that edge is really followed, and is exactly what the query
would return then, so the admitted nodes, their order, depth and path never depend on the
guesses. How much this saves, and why most of Eager's extra rounds remain (their documents
are first seen in the round just before), is measured in docs/benchmarks.md.

Every speculative query counts against a budget per traversal (`speculation=`); the counts
used and wasted are in `TraversalStats.speculation`."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from hoprag.documents import Node
from hoprag.edges import Edge, edge_sort_key
from hoprag.errors import InvalidInputError, invalid
from hoprag.stats import SpeculationStats
from hoprag.stores.base import Hit
from hoprag.strategies.base import RunState

DEFAULT_BUDGET = 256
"""Speculative queries one traversal may send at most, unless `speculation=` says otherwise."""

SLOW_LINK_SECONDS = 0.004
"""`speculation="auto"` reads further ahead (`SLOW_LINK_MODE`) when the store's measured round
trip is at least this (4 ms): below it a round costs little more than the queries' own work,
and extra queries would only load the node. (A local node's fastest ping on a busy 2-core
machine was about 1 ms; a link of 5 ms round trips measures at least 5.)"""

MODES = ("auto", "on", "wide", "strategy", "off")


@dataclass(frozen=True, slots=True)
class Plan:
    """What a traversal speculates with: the budget of speculative queries, how many times
    wider than its default the strategy's own guesses may be (`RunState.look_ahead_factor`),
    and whether it reads ahead the edges of documents in hand (cut ones)."""

    budget: int
    width: int
    look_ahead: bool
    mode: str


SLOW_LINK_MODE = "wide"
"""What `speculation="auto"` does over a slow link: wider strategy guesses saved Mmr rounds at
little cost, while reading ahead cut documents ("on") cost this 2-core node more CPU than the
rounds it saved (docs/benchmarks.md, "Round trips over slow links")."""


def plan_for(speculation: Any, round_trip: float | None) -> Plan:
    """The plan for a `speculation=` argument (checked by `check_speculation`):

    - "strategy": only the strategy's own guesses at their default width (Mmr's `prefetch`),
      within `DEFAULT_BUDGET`: what a traversal does on a fast link;
    - "wide": the strategy's guesses twice as wide;
    - "on": "wide", and the edges of documents a hop fetched but cut;
    - "auto" (default): `SLOW_LINK_MODE` when `round_trip` (the store's measured round trip)
      is at least `SLOW_LINK_SECONDS`, else "strategy";
    - "off" or 0: no speculative query;
    - an int: "on" with at most that many speculative queries."""
    if speculation == "off" or speculation == 0:
        return Plan(0, 1, False, "off")
    if speculation == "auto":
        slow = round_trip is not None and round_trip >= SLOW_LINK_SECONDS
        rtt = "unknown" if round_trip is None else f"{round_trip * 1000:.1f} ms"
        base = plan_for(SLOW_LINK_MODE if slow else "strategy", round_trip)
        return dataclasses.replace(base, mode=f"auto ({base.mode}, round trip {rtt})")
    if speculation == "strategy":
        return Plan(DEFAULT_BUDGET, 1, False, "strategy")
    if speculation == "wide":
        return Plan(DEFAULT_BUDGET, 2, False, "wide")
    if speculation == "on":
        return Plan(DEFAULT_BUDGET, 2, True, "on")
    return Plan(int(speculation), 2, True, "on")


def check_speculation(value: Any, *, what: str = "speculation") -> Any:
    """`value` if it is a valid `speculation=` argument, else `InvalidInputError` naming
    `what`."""
    if value in MODES and isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    raise invalid(what, value, f"one of {', '.join(map(repr, MODES))} or an int >= 0")


NodeMaker = Callable[[Hit], Node | None]
"""Makes the node a hit in hand would become if it were reached now (None: it cannot be)."""


class Speculation:
    """One traversal's look-ahead state (never shared between runs): the budget left, the
    results fetched ahead, and the hits in hand that no hop has made a node of yet."""

    # How many hits in hand, best score first, are looked at per burst.
    SCAN = 512

    def __init__(self, plan: Plan, stats: SpeculationStats) -> None:
        """Start with the whole budget of `plan`; `stats` receives the counts."""
        self.plan = plan
        self.stats = stats
        stats.mode, stats.budget = plan.mode, plan.budget
        self.left = plan.budget
        self.prefetched: dict[Edge, list[Hit]] = {}
        self.in_hand: dict[str, Hit] = {}
        self._ranked: list[Hit] | None = None

    def take(self, edges: Iterable[Edge]) -> dict[Edge, list[Hit]]:
        """The fetched-ahead results of `edges` (now followed), removed from the cache."""
        cached = {e: self.prefetched.pop(e) for e in edges if e in self.prefetched}
        self.stats.used += len(cached)
        return cached

    def keep(self, edges: Sequence[Edge], results: dict[Edge, list[Hit]]) -> None:
        """Store the results of speculative `edges` until those edges are followed."""
        for e in edges:
            self.prefetched[e] = results[e]

    def note_hits(self, results: Iterable[list[Hit]], discovered: set[str]) -> None:
        """Remember the hits of a burst that are not nodes yet (with look-ahead only)."""
        if not self.plan.look_ahead:
            return
        for hits in results:
            for hit in hits:
                if hit.id not in discovered and hit.id not in self.in_hand:
                    self.in_hand[hit.id] = hit
                    self._ranked = None

    def _candidates(self, discovered: set[str]) -> list[Hit]:
        if self._ranked is None:
            self._ranked = sorted(self.in_hand.values(), key=_score, reverse=True)
        ranked = [h for h in self._ranked if h.id not in discovered]
        if len(ranked) < len(self._ranked):
            for hit in self._ranked:
                if hit.id in discovered:
                    self.in_hand.pop(hit.id, None)
            self._ranked = ranked
        return ranked[: self.SCAN]

    def _in_hand_nodes(
        self, state: RunState, discovered: set[str], make_node: NodeMaker
    ) -> Iterator[Node]:
        """The hits in hand that the run could traverse if a hop reached them now, as the
        nodes they would become, best score first."""
        tracker = state.tracker
        for hit in self._candidates(discovered):
            if hit.id in tracker.to_traverse:
                continue
            try:
                node = make_node(hit)
            except InvalidInputError:
                continue  # a bad edge function result is raised if the hit becomes a node
            if node is not None and tracker.can_traverse(node):
                yield node

    def edges(
        self,
        state: RunState,
        hop_edges: Sequence[Edge],
        followed: dict[Edge, Any],
        discovered: set[str],
        make_node: NodeMaker,
    ) -> list[Edge]:
        """The speculative edges to ask with a burst that asks `hop_edges`: edges of the
        guesses that are neither followed, fetched ahead nor part of the burst, within the
        budget left (which they use up). The strategy's guesses come first; the hits in hand
        add at most as many edges as the burst asks itself, so a burst at most doubles."""
        if self.left <= 0:
            return []
        taken = set(hop_edges)
        out: list[Edge] = []

        def add(nodes: Iterable[Node], cap: int) -> None:
            for node in nodes:
                for edge in sorted(state.edges_to_follow(node), key=edge_sort_key):
                    if len(out) >= cap:
                        return
                    if edge in taken or edge in followed or edge in self.prefetched:
                        continue
                    taken.add(edge)
                    out.append(edge)

        add(state.likely_next(), self.left)
        if self.plan.look_ahead:
            add(
                self._in_hand_nodes(state, discovered, make_node),
                min(self.left, len(out) + len(hop_edges)),
            )
        self.left -= len(out)
        self.stats.issued += len(out)
        return out


def _score(hit: Hit) -> float:
    s = hit.score
    return s if s is not None and not math.isnan(s) else -math.inf


__all__ = [
    "DEFAULT_BUDGET",
    "MODES",
    "SLOW_LINK_SECONDS",
    "Plan",
    "Speculation",
    "SpeculationStats",
    "check_speculation",
    "plan_for",
]
