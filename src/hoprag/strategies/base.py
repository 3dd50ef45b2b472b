"""The Strategy base: validated parameters and pure selection logic, with per-run state.

A strategy object is immutable configuration. Each traversal calls `strategy.start_run(...)`,
which returns a fresh `RunState` holding everything that changes during that run; the
coordinator feeds it newly discovered nodes and reads back what was admitted and what to
traverse next. Nothing here does I/O."""

from __future__ import annotations

import dataclasses
from abc import ABC, ABCMeta, abstractmethod
from collections.abc import Iterable, Sequence
from typing import Any, ClassVar

from hoprag.documents import Node
from hoprag.edges import Edge
from hoprag.errors import InvalidInputError
from hoprag.validation import MAX_K

DEFAULT_SELECT_K = 5


def _check_int(
    name: str,
    value: Any,
    *,
    allow_none: bool = False,
    minimum: int = 0,
    maximum: int | None = None,
) -> None:
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        kind = "an int or None" if allow_none else "an int"
        raise InvalidInputError(f"{name} must be {kind}, got {value!r}", argument=name)
    if value < minimum:
        raise InvalidInputError(f"{name} must be >= {minimum}, got {value}", argument=name)
    if maximum is not None and value > maximum:
        raise InvalidInputError(
            f"{name} must be <= {maximum} (the most rows one vector search answers, on every "
            f"store), got {value}",
            argument=name,
            value=value,
            allowed=f"an int in {minimum}..{maximum}",
        )


class Tracker:
    """Per-run bookkeeping shared by all strategies: the admitted nodes (at most `select_k`),
    the nodes chosen for the next hop, and the limits `max_depth` and `max_traverse`."""

    def __init__(self, select_k: int, max_depth: int | None, max_traverse: int | None) -> None:
        self.select_k = select_k
        self.max_depth = max_depth
        self.max_traverse = max_traverse
        self.selected: list[Node] = []
        self.to_traverse: dict[str, Node] = {}
        self.traversed_ids: set[str] = set()

    @property
    def remaining(self) -> int:
        """How many more nodes may be admitted."""
        return max(self.select_k - len(self.selected), 0)

    def select(self, nodes: Iterable[Node]) -> int:
        """Admit nodes (in order) while fewer than `select_k` are admitted; return how many
        were admitted. Admitted nodes get `_depth`, `_similarity_score` and `_path`."""
        count = 0
        for node in nodes:
            if len(self.selected) >= self.select_k:
                break
            node.extra_metadata["_depth"] = int(node.depth)
            node.extra_metadata["_similarity_score"] = float(node.similarity_score)
            node.extra_metadata["_path"] = list(node.path.nodes)
            self.selected.append(node)
            count += 1
        return count

    def can_traverse(self, node: Node) -> bool:
        """Whether the node's outgoing edges may still be followed."""
        if node.id in self.traversed_ids:
            return False
        if self.max_depth is not None and node.depth >= self.max_depth:
            return False
        return self.max_traverse is None or len(self.traversed_ids) < self.max_traverse

    def traverse(self, nodes: Iterable[Node]) -> int:
        """Mark nodes for the next hop (skipping visited ones, those at `max_depth` and any
        beyond `max_traverse`); return how many were added."""
        count = 0
        for node in nodes:
            if self.can_traverse(node):
                self.traversed_ids.add(node.id)
                self.to_traverse[node.id] = node
                count += 1
        return count

    def select_and_traverse(self, nodes: Sequence[Node]) -> int:
        """`select` then `traverse` the same nodes; return how many will be traversed."""
        self.select(nodes)
        return self.traverse(nodes)

    @property
    def done(self) -> bool:
        """True when `select_k` nodes are admitted or nothing is left to traverse."""
        return self.remaining == 0 or not self.to_traverse

    def pop_to_traverse(self) -> list[Node]:
        """The nodes to expand in the next hop, in the order they were chosen; clears them."""
        nodes = list(self.to_traverse.values())
        self.to_traverse.clear()
        return nodes


class RunState(ABC):
    """Mutable state of one traversal run for one strategy."""

    def __init__(self, strategy: Strategy, query_embedding: Sequence[float] | None) -> None:
        self.strategy = strategy
        self.query_embedding = query_embedding
        self.tracker = Tracker(strategy.select_k, strategy.max_depth, strategy.max_traverse)
        self.look_ahead_factor = 1
        """Set by the coordinator: how much wider than its default a strategy's `likely_next`
        may guess (2 when the run reads ahead over a slow link, see `hoprag.engine.speculation`)."""

    @abstractmethod
    def iterate(self, nodes: Sequence[Node]) -> None:
        """Take the newly discovered nodes of a hop (possibly none) and admit / choose nodes to
        traverse through `self.tracker`."""

    # Hooks the coordinator calls; the defaults are graph-retriever's rules (Eager, Mmr, Scored).

    def edges_to_follow(self, node: Node) -> Iterable[Edge]:
        """The outgoing edges of `node` (chosen for traversal) whose targets the coordinator
        should fetch. Default: all of them. A strategy may drop edges here (pruning, caps), so
        that they never reach the store."""
        return node.outgoing_edges

    def likely_next(self) -> Sequence[Node]:
        """After `iterate`: nodes this run will probably traverse after the current hop (a
        guess). The coordinator fetches the targets of their edges together with the hop's own
        queries and uses them only if those edges really are followed later, so a guess never
        changes the results; a right one saves a round trip. A guess may be
        `look_ahead_factor` times wider than the strategy's default. Default: none."""
        return ()

    @property
    def hop_limit(self) -> int | None:
        """The most documents (best query similarity first, already-discovered ones included)
        a hop's fetched results are cut to before new nodes are made; None: no cut. Default
        `adjacent_k`, graph-retriever's "most new documents fetched per hop"."""
        return self.strategy.adjacent_k

    @property
    def hop_candidates(self) -> int | None:
        """After `iterate`: how many of the hop's new nodes the strategy kept as candidates,
        when it bounds them itself (reported as `HopStats.candidates`); None: all of them."""
        return None

    def take_notes(self) -> dict[str, int]:
        """Strategy-specific counts for the current hop (e.g. pruned edges), returned and
        cleared; the coordinator adds them to `HopStats.notes`."""
        return {}


class _StrategyMeta(ABCMeta):
    """Names unknown and missing parameters of a strategy as `InvalidInputError`, listing the
    allowed ones, instead of the dataclass's bare `TypeError`."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        if dataclasses.is_dataclass(cls):
            fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
            allowed = ", ".join(sorted(n for n in fields if not n.startswith("_")))
            if args:
                raise InvalidInputError(
                    f"{cls.__name__} takes keyword parameters only ({allowed}), got {args!r}"
                )
            unknown = sorted(set(kwargs) - set(fields))
            if unknown:
                raise InvalidInputError(
                    f"{cls.__name__} got unknown parameter(s) {', '.join(unknown)}; "
                    f"allowed: {allowed}",
                    argument=unknown[0],
                    allowed=allowed,
                )
            missing = sorted(
                n
                for n, f in fields.items()
                if n not in kwargs
                and f.default is dataclasses.MISSING
                and f.default_factory is dataclasses.MISSING
            )
            if missing:
                raise InvalidInputError(
                    f"{cls.__name__} needs the parameter(s) {', '.join(missing)}",
                    argument=missing[0],
                )
        return super().__call__(*args, **kwargs)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Strategy(ABC, metaclass=_StrategyMeta):
    """How a traversal chooses nodes. Parameters keep graph-retriever 0.8's names: `select_k`
    nodes are returned; `start_k` come from the vector search (plus any initial roots);
    `adjacent_k` is the most documents fetched per hop; `max_depth` bounds the hops from a
    start node and `max_traverse` the number of nodes whose edges are followed (None: no
    limit). `lexical_k` more start nodes come from the store's lexical (BM25) search of the
    query text (0, the default: none; the store must keep a lexical index, as MemoryStore and a
    CassandraStore made with `lexical=True` do); every start's BM25 score, when the lexical
    search's first `hoprag.engine.traversal.LEXICAL_SCORE_DEPTH` hits hold it, is in
    `extra_metadata["_lexical_score"]`. Instances are immutable and reusable; run state lives
    in `start_run`'s result."""

    needs_embeddings: ClassVar[bool] = False
    """Whether the strategy needs document embeddings (stores may skip reading them if not)."""

    select_k: int = DEFAULT_SELECT_K
    start_k: int = 4
    adjacent_k: int = 10
    max_depth: int | None = None
    max_traverse: int | None = None
    lexical_k: int = 0

    def __post_init__(self) -> None:
        _check_int("select_k", self.select_k)
        _check_int("start_k", self.start_k, maximum=MAX_K)
        _check_int("lexical_k", self.lexical_k)
        _check_int("adjacent_k", self.adjacent_k, maximum=MAX_K)
        _check_int("max_depth", self.max_depth, allow_none=True)
        _check_int("max_traverse", self.max_traverse, allow_none=True)

    def finalize(self, selected: Sequence[Node]) -> list[Node]:
        """The admitted nodes in the order `atraverse` returns them (default: admission
        order). A pure function of the nodes and their `extra_metadata`."""
        return list(selected)

    @abstractmethod
    def start_run(self, query_embedding: Sequence[float] | None) -> RunState:
        """A fresh per-call state for one traversal."""


def check_unit_interval(name: str, value: Any) -> float:
    """Return `value` as a float, or raise if it is not a number in [0, 1] (compared as given,
    so an int of any size is refused, not overflowed)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidInputError(f"{name} must be a number in [0, 1], got {value!r}")
    if not 0 <= value <= 1:  # NaN compares false too
        raise InvalidInputError(f"{name} must be in [0, 1], got {shown_number(value)}")
    return float(value)


def shown_number(value: int | float) -> str:
    """`value` for an error message: an int too long to read is shown by its size."""
    if isinstance(value, int) and abs(value) >= 10**20:
        return f"an int of {len(str(abs(value))) if value.bit_length() < 10_000 else 'many'} digits"
    return str(value)
