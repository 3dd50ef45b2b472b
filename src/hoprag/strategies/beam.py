"""Beam: path search. Expand one hop at a time, score every candidate path, keep only the best
`beam_width` paths for the next hop, and return the best-scoring nodes with their paths.

Scoring (all numbers are plain floats; `sim(v)` is the cosine similarity of document `v` to
the query, -1 when the store gave none):

- relevance of a path `v0 -> v1 -> ... -> vd` (`_relevance`):
  `R(v0) = sim(v0) + lexical_weight * lex(v0)` and
  `R(vi) = w(ei) * ((1 - decay) * sim(vi) + decay * R(v(i-1)))`. `lex(v0)` is the start's
  BM25 score (a lexical start, `lexical_k`) over the best such score among the starts, else
  0; `w(ei)` is the weight of the edge that reached `vi` (`edge_weights` by the edge's
  target field, `"$id"` for id edges; 1 when not listed). With no lexical weight and no edge
  weights this is the weighted mean `sum_i (1 - decay) * decay**(d - i) * sim(vi)` (with
  weight `decay**d` on `sim(v0)`): the end node's own relevance counts most and an ancestor
  `j` hops up counts `decay**j` as much, and `R` stays in [-1, 1]. A start's lexical strength
  so carries over to the documents reached from it (for multi-hop questions, a bridge
  document is unlike the question; its parent's score is what ranks it).
- bonus (`_bonus`): `B = sum_s w_s * f_s + w_p * f_p`, each `f` in [0, 1]: the signals
  (`StartBoost`, `Importance`, `Recency`, or any `Signal`) and the path preference
  (`f_p` = length of the longest common prefix of the path's node types and
  `path_preference`, divided by `min(len(path), len(path_preference))`). When the weights
  sum to more than `max_bonus` they are all scaled down by the same factor, so
  `0 <= B <= max_bonus` always.
- path score (`_path_score`): `S = R + B`. Hence a path whose relevance is more than
  `max_bonus` below another's can never outrank it: the auxiliary signals only reorder
  near-ties (relevance gaps of at most `max_bonus`, 0.05 by default).

Search, per hop: hop 0 scores the start nodes (vector search plus initial roots). At each
next hop the beam's nodes are expanded; each expanded node `u` asks for its outgoing edges
(pruned edges dropped; at most `max_edges_per_node` not-yet-followed edges when set), the
coordinator fetches `adjacent_k` documents per edge, and `u` keeps at most `adjacent_k` new
documents in total: those whose path through `u` scores best. A document kept by several
expanded nodes takes the best-scoring of those paths. So a hop has at most
`beam_width * adjacent_k` candidates whatever the branching. The hop's `beam_width`
best-scoring candidates that may be expanded (not leaves, below `max_depth`) form the next
beam. When the beam is empty, the `select_k` best-scoring candidates of all hops are admitted,
best first (ties: higher relevance, shallower, discovered earlier)."""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from hoprag.documents import Node, Path, known_similarity
from hoprag.edges import MISSING, Edge, edge_sort_key, nested_get, target_field
from hoprag.errors import InvalidInputError
from hoprag.strategies.base import RunState, Strategy, _check_int
from hoprag.strategies.signals import Signal, SignalContext

NodePredicate = Callable[[Node], bool]
EdgePredicate = Callable[[Edge], bool]


@dataclasses.dataclass(frozen=True, slots=True)
class Prune:
    """Predicates that cut branches before they are expanded, so they cost no queries.

    - `node(node) -> True`: drop the node: it is not a candidate, not returned, never
      expanded. It is evaluated on a newly found document (with the path that reached it)
      before it competes for the beam; start nodes included.
    - `edge(edge) -> True`: never follow this edge (a `MetadataEdge(field, value)` or an
      `IdEdge(id)`): it is never sent to the store.
    - `leaf(node) -> True`: keep the node as a candidate (it may be returned) but never expand
      it; it does not take a place in the beam.
    """

    node: NodePredicate | None = None
    edge: EdgePredicate | None = None
    leaf: NodePredicate | None = None

    def __post_init__(self) -> None:
        for name in ("node", "edge", "leaf"):
            fn = getattr(self, name)
            if fn is not None and not callable(fn):
                raise InvalidInputError(
                    f"Prune.{name} must be a callable returning bool, got {fn!r}"
                )


def _check_number(name: str, value: Any, *, low: float, high: float, high_open: bool) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidInputError(f"{name} must be a number, got {value!r}")
    ok = low <= value < high if high_open else low <= value <= high
    if not ok or math.isnan(value):
        bracket = ")" if high_open else "]"
        raise InvalidInputError(f"{name} must be in [{low}, {high}{bracket}, got {value}")
    return float(value)


def _types(value: Any) -> frozenset[str]:
    if isinstance(value, str):
        return frozenset((value,))
    if isinstance(value, list | tuple | set | frozenset):
        return frozenset(v for v in value if isinstance(v, str))
    return frozenset()


def _check_edge_weights(weights: Any) -> dict[str, float]:
    """`weights` (a mapping, or (field, weight) pairs) as a dict of field name to a weight in
    (0, 1], or InvalidInputError."""
    if isinstance(weights, tuple):
        try:
            weights = dict(weights)
        except (TypeError, ValueError):
            pass
    if not isinstance(weights, Mapping):
        raise InvalidInputError(
            f"edge_weights must be a mapping of target field to weight, e.g. "
            f"{{'$id': 1.0, 'mentions': 0.8}}, got {weights!r}",
            argument="edge_weights",
        )
    out: dict[str, float] = {}
    for field, w in weights.items():
        if not isinstance(field, str) or not field:
            raise InvalidInputError(
                f"edge_weights keys must be field names ('$id' for id edges), got {field!r}",
                argument="edge_weights",
            )
        name = f"edge_weights[{field!r}]"
        out[field] = _check_number(name, w, low=0, high=1, high_open=False)
        if out[field] == 0:
            raise InvalidInputError(
                f"{name} must be in (0, 1], got 0 (to never follow such edges, leave their "
                "spec out or prune them)",
                argument=name,
            )
    return out


_Link = tuple[float, float, Node, Edge]
"""How a new node is reached from one expanded node: (score, relevance, parent, edge)."""


def _best(links: Iterable[_Link]) -> _Link:
    """The best link (by score, then relevance)."""
    return max(links, key=lambda o: (o[0], o[1]))


def _set_path(node: Node, parent: Node, edge: Edge) -> None:
    """Give `node` the path through `parent` by `edge`, and its depth."""
    node.path = parent.path.extend(edge, node.id)
    node.depth = len(node.path.nodes) - 1


def _keepers(
    links: Sequence[dict[str, _Link]], live: Iterable[int], k: int
) -> dict[int, list[str]]:
    """Per new node (index) kept, the expanded nodes whose `k` best-scoring new neighbours it
    is among."""
    per_parent: dict[str, list[tuple[float, float, int]]] = {}
    for i in live:
        for parent_id, (score, rel, _, _) in links[i].items():
            per_parent.setdefault(parent_id, []).append((score, rel, i))
    keepers: dict[int, list[str]] = {}
    for parent_id, entries in per_parent.items():
        entries.sort(key=lambda e: (-e[0], -e[1], e[2]))
        for _, _, i in entries[:k]:
            keepers.setdefault(i, []).append(parent_id)
    return keepers


class _BeamRun(RunState):
    strategy: Beam

    def __init__(self, strategy: Beam, query_embedding: Sequence[float] | None) -> None:
        super().__init__(strategy, query_embedding)
        self._now = datetime.now(UTC)
        self._hop = 0
        self._pool: dict[str, Node] = {}
        self._relevance: dict[str, float] = {}
        self._start_strength: dict[str, float] = {}
        # Edges asked this hop -> the expanded nodes that asked them (in beam order).
        self._asked_by: dict[Edge, list[Node]] = {}
        self._asked: set[Edge] = set()
        self._notes: dict[str, int] = {}
        self._candidates: int | None = None
        self._prune = strategy.prune if isinstance(strategy.prune, Prune) else None
        weights = [s.weight for s in strategy.signals]
        pref_weight = strategy.preference_weight if strategy.path_preference else 0.0
        total = sum(weights) + pref_weight
        scale = min(1.0, strategy.max_bonus / total) if total > 0 else 0.0
        self._signals = [(s, w * scale) for s, w in zip(strategy.signals, weights, strict=True)]
        self._pref_weight = pref_weight * scale
        self._edge_weights = dict(strategy.edge_weights)

    # -- coordinator hooks -----------------------------------------------------------------

    @property
    def hop_limit(self) -> int | None:
        """No hop-wide cut: Beam bounds candidates per expanded node instead."""
        return None

    @property
    def hop_candidates(self) -> int | None:
        """The candidates kept at the last hop (after pruning and the per-node bound)."""
        return self._candidates

    def take_notes(self) -> dict[str, int]:
        """This hop's `beam`, `pruned_nodes`, `pruned_edges` and `capped_edges` counts."""
        notes, self._notes = self._notes, {}
        return notes

    def _note(self, key: str, n: int) -> None:
        if n:
            self._notes[key] = self._notes.get(key, 0) + n

    def edges_to_follow(self, node: Node) -> Iterable[Edge]:
        """The node's outgoing edges minus pruned ones; of those not followed yet in this run,
        at most `max_edges_per_node`, in `edge_sort_key` order."""
        prune = self._prune
        edges = sorted(node.outgoing_edges, key=edge_sort_key)
        if prune is not None and prune.edge is not None:
            kept = [e for e in edges if not prune.edge(e)]
            self._note("pruned_edges", len(edges) - len(kept))
            edges = kept
        cap = self.strategy.max_edges_per_node
        if cap is not None:
            fresh = [e for e in edges if e not in self._asked]
            if len(fresh) > cap:
                self._note("capped_edges", len(fresh) - cap)
                dropped = set(fresh[cap:])
                edges = [e for e in edges if e not in dropped]
        for edge in edges:
            self._asked_by.setdefault(edge, []).append(node)
        self._asked.update(edges)
        return edges

    # -- scoring ---------------------------------------------------------------------------

    def _context(self, extra: Sequence[Node] = ()) -> SignalContext:
        return SignalContext(
            now=self._now,
            start_strength=self._start_strength,
            seen=[*self._pool.values(), *extra],
        )

    def _conformance(self, node: Node, path: Path) -> float:
        pref = self.strategy.path_preference
        assert pref is not None
        field = self.strategy.type_field
        n = min(len(path.nodes), len(pref))
        match = 0
        for i in range(n):
            step = node if i == len(path.nodes) - 1 else self._pool[path.nodes[i]]
            value = nested_get(step.metadata, field)
            if value is MISSING or pref[i] not in _types(value):
                break
            match += 1
        return match / n

    def _bonus(self, node: Node, path: Path, ctx: SignalContext) -> float:
        total = 0.0
        for signal, weight in self._signals:
            if weight == 0.0:
                continue
            v = signal.value(node, path, ctx)
            if isinstance(v, bool) or not isinstance(v, int | float) or math.isnan(v):
                raise InvalidInputError(
                    f"{signal!r} returned {v!r} for node {node.id!r}; want [0, 1]"
                )
            total += weight * min(max(float(v), 0.0), 1.0)
        if self._pref_weight:
            total += self._pref_weight * self._conformance(node, path)
        return min(total, self.strategy.max_bonus)

    def _relevance_via(self, node: Node, parent: Node, edge: Edge) -> float:
        decay = self.strategy.decay
        rel = (1.0 - decay) * known_similarity(node) + decay * self._relevance[parent.id]
        return self._edge_weight(edge) * rel

    def _edge_weight(self, edge: Edge) -> float:
        return self._edge_weights.get(target_field(edge), 1.0)

    # -- one hop ---------------------------------------------------------------------------

    def _start(self, nodes: Sequence[Node]) -> list[Node]:
        prune = self._prune
        kept = [n for n in nodes if prune is None or prune.node is None or not prune.node(n)]
        self._note("pruned_nodes", len(nodes) - len(kept))
        sims = [known_similarity(n) for n in kept]
        lo, hi = min(sims, default=0.0), max(sims, default=0.0)
        lexical = [float(n.extra_metadata.get("_lexical_score", 0.0)) for n in kept]
        top = max(lexical, default=0.0)
        weight = self.strategy.lexical_weight
        for n, s, lex in zip(kept, sims, lexical, strict=True):
            self._start_strength[n.id] = 1.0 if hi == lo else (s - lo) / (hi - lo)
            self._relevance[n.id] = s + (weight * lex / top if top > 0 else 0.0)
        return kept

    def _expand(self, nodes: Sequence[Node]) -> list[Node]:
        """Choose each new node's best path through this hop's expanded nodes, prune, and keep
        at most `adjacent_k` per expanded node; return the kept nodes (discovery order)."""
        prune = self._prune
        ctx = self._context(nodes)
        # Every (expanded node, edge) that links to each new node, scored.
        links: list[dict[str, _Link]] = []
        live: list[int] = []
        for i, node in enumerate(nodes):
            links.append(self._links(node, ctx))
            if not links[i]:
                continue
            _, _, parent, edge = _best(links[i].values())
            _set_path(node, parent, edge)
            if prune is not None and prune.node is not None and prune.node(node):
                self._note("pruned_nodes", 1)
                continue
            live.append(i)
        kept: list[Node] = []
        for i, parents in sorted(_keepers(links, live, self.strategy.adjacent_k).items()):
            node = nodes[i]
            _, rel, parent, edge = _best(links[i][p] for p in parents)
            _set_path(node, parent, edge)
            self._relevance[node.id] = rel
            kept.append(node)
        return kept

    def _links(self, node: Node, ctx: Any) -> dict[str, _Link]:
        """Per expanded node that links to `node`: (score, relevance, parent, edge) of its
        best-weighted edge (the first of equal ones)."""
        asked_by = self._asked_by
        options: dict[str, _Link] = {}
        for edge in sorted(node.incoming_edges & asked_by.keys(), key=edge_sort_key):
            for parent in asked_by[edge]:
                if parent.id == node.id:
                    continue
                rel = self._relevance_via(node, parent, edge)
                known = options.get(parent.id)
                if known is not None and known[1] >= rel:
                    continue
                path = parent.path.extend(edge, node.id)
                options[parent.id] = (rel + self._bonus(node, path, ctx), rel, parent, edge)
        return options

    def iterate(self, nodes: Sequence[Node]) -> None:
        kept = self._start(nodes) if self._hop == 0 else self._expand(nodes)
        self._hop += 1
        self._candidates = len(kept)
        self._asked_by = {}
        for node in kept:
            self._pool[node.id] = node
        # The next beam: this hop's best expandable candidates.
        ctx = self._context()
        ranked = sorted(
            enumerate(kept),
            key=lambda e: (
                -(self._relevance[e[1].id] + self._bonus(e[1], e[1].path, ctx)),
                -self._relevance[e[1].id],
                e[0],
            ),
        )
        tracker = self.tracker
        leaf = self._prune.leaf if self._prune is not None else None
        beam = 0
        if tracker.remaining > 0:
            for _, node in ranked:
                if beam >= self.strategy.beam_width:
                    break
                if leaf is not None and leaf(node):
                    continue
                beam += tracker.traverse([node])
        self._note("beam", beam)
        if not tracker.to_traverse:
            self._finish()

    def _finish(self) -> None:
        """Score every candidate against the whole run and admit the `select_k` best."""
        ctx = self._context()
        scores: dict[str, tuple[float, float, float]] = {}
        for node_id, node in self._pool.items():
            rel = self._relevance[node_id]
            bonus = self._bonus(node, node.path, ctx)
            scores[node_id] = (rel + bonus, rel, bonus)
        order = {node_id: i for i, node_id in enumerate(self._pool)}
        ranked = sorted(
            self._pool.values(),
            key=lambda n: (-scores[n.id][0], -scores[n.id][1], n.depth, order[n.id]),
        )
        chosen = ranked[: self.tracker.remaining]
        for node in chosen:
            score, rel, bonus = scores[node.id]
            node.extra_metadata["_path_score"] = float(score)
            node.extra_metadata["_relevance"] = float(rel)
            node.extra_metadata["_bonus"] = float(bonus)
            node.extra_metadata["_path_scores"] = [float(scores[i][0]) for i in node.path.nodes]
        self.tracker.select(chosen)


def _check_path_preference(pref: Any) -> tuple[str, ...] | None:
    """A path preference as a tuple of node types (None when absent or empty)."""
    if pref is None:
        return None
    if isinstance(pref, str) or not isinstance(pref, Sequence):
        raise InvalidInputError(
            f"path_preference must be a sequence of node types, e.g. "
            f"('company', 'person'), got {pref!r}"
        )
    if not all(isinstance(t, str) and t for t in pref):
        raise InvalidInputError(f"path_preference types must be non-empty strings, got {pref!r}")
    return tuple(pref) or None


def _check_signals(signals: Any) -> tuple[Signal, ...]:
    """The signals as a tuple of `Signal` objects."""
    if isinstance(signals, Signal) or not isinstance(signals, Iterable):
        raise InvalidInputError(f"signals must be a sequence of Signal objects, got {signals!r}")
    checked = tuple(signals)
    for s in checked:
        if not isinstance(s, Signal):
            raise InvalidInputError(
                f"signals must be Signal objects (StartBoost, Importance, Recency), got {s!r}"
            )
    return checked


def _check_prune(prune: Any) -> Prune | None:
    """A `Prune`, from a `Prune` or a node predicate."""
    if prune is None or isinstance(prune, Prune):
        return prune
    if not callable(prune):
        raise InvalidInputError(
            f"prune must be a Prune(node=..., edge=..., leaf=...) or a callable "
            f"Node -> bool, got {prune!r}"
        )
    return Prune(node=prune)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Beam(Strategy):
    """Path search: per hop only the `beam_width` best-scoring paths are expanded; a path's
    score is its relevance to the query plus a bounded bonus (see the module docstring for the
    exact formulas). Returns the `select_k` best-scoring nodes of the whole search, best first,
    each with its best path (`path`, `_path`), `_path_score`, `_relevance`, `_bonus` and
    `_path_scores` (the score of each step of `_path`, aligned with it).

    - `beam_width`: paths expanded per hop (>= 1).
    - `max_depth`: hops from a start node (None: until the beam runs dry).
    - `start_k`: start documents from the vector search; `adjacent_k`: documents fetched per
      edge and the most new candidates each expanded node may add (so a hop has at most
      `beam_width * adjacent_k` candidates).
    - `path_preference`: node types (values of metadata field `type_field`; a list value
      matches if it contains the type) that paths earn a bonus for following, as a prefix:
      the path's first node should have type `path_preference[0]`, the second
      `path_preference[1]`, and so on (see `preference_weight`). Other paths are not excluded.
    - `signals`: auxiliary signals (`StartBoost`, `Importance`, `Recency`, any `Signal`).
    - `prune`: a `Prune(node=..., edge=..., leaf=...)`, or a callable `Node -> bool` used as
      `Prune(node=...)`.
    - `decay` in [0, 1): the weight of the parent path's relevance in a node's relevance.
    - `preference_weight`: the bonus weight of a fully conforming path.
    - `max_bonus`: the cap on the total bonus; relevance gaps above it are never overturned.
    - `lexical_weight` in [0, 1]: how much a lexical start's BM25 strength adds to its
      relevance (and, through `decay`, to its descendants').
    - `edge_weights`: target field (`"$id"` for id edges) -> weight in (0, 1] that scales the
      relevance of a step along such an edge (1 for fields not listed). A document reached by
      several edges from one expanded node takes the best-weighted.
    - `max_edges_per_node`: when set, an expanded node queries at most this many edges not
      yet followed in the run (in `edge_sort_key` order: metadata edges by field then value,
      then id edges); the rest are counted as `capped_edges`. Use `Prune(edge=...)` to choose
      which edges to skip instead. None (default): no cap.
    """

    select_k: int = 10
    max_depth: int | None = 3
    beam_width: int = 10
    path_preference: Sequence[str] | None = None
    type_field: str = "type"
    signals: Sequence[Signal] = ()
    prune: Prune | NodePredicate | None = None
    decay: float = 0.3
    preference_weight: float = 0.03
    max_bonus: float = 0.05
    max_edges_per_node: int | None = None
    lexical_weight: float = 0.0
    edge_weights: Mapping[str, float] | tuple[tuple[str, float], ...] = ()

    def __post_init__(self) -> None:
        super().__post_init__()
        _check_int("beam_width", self.beam_width, minimum=1)
        _check_int("max_edges_per_node", self.max_edges_per_node, allow_none=True, minimum=1)
        set_field = functools.partial(object.__setattr__, self)
        set_field("path_preference", _check_path_preference(self.path_preference))
        if not isinstance(self.type_field, str) or not self.type_field:
            raise InvalidInputError(
                f"type_field must be a non-empty field name, got {self.type_field!r}"
            )
        set_field("signals", _check_signals(self.signals))
        set_field("prune", _check_prune(self.prune))
        set_field("decay", _check_number("decay", self.decay, low=0, high=1, high_open=True))
        # Kept as sorted (field, weight) pairs, so that the strategy stays hashable.
        set_field("edge_weights", tuple(sorted(_check_edge_weights(self.edge_weights).items())))
        for name in ("preference_weight", "max_bonus", "lexical_weight"):
            set_field(
                name, _check_number(name, getattr(self, name), low=0, high=1, high_open=False)
            )

    def finalize(self, selected: Sequence[Node]) -> list[Node]:
        """Admitted nodes by descending `_path_score` (stable)."""
        return sorted(selected, key=lambda n: n.extra_metadata["_path_score"], reverse=True)

    def start_run(self, query_embedding: Sequence[float] | None) -> RunState:
        """A fresh per-call state."""
        return _BeamRun(self, query_embedding)
