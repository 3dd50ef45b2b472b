"""Scored: admits the best-scoring discovered nodes by a user scorer, a few per hop."""

from __future__ import annotations

import dataclasses
import heapq
import itertools
import math
from collections.abc import Callable, Sequence

from hoprag.documents import Node
from hoprag.errors import InvalidInputError
from hoprag.strategies.base import RunState, Strategy, _check_int


class _ScoredRun(RunState):
    strategy: Scored

    def __init__(self, strategy: Scored, query_embedding: Sequence[float] | None) -> None:
        super().__init__(strategy, query_embedding)
        self._heap: list[tuple[float, int, Node]] = []
        self._seq = itertools.count()

    def iterate(self, nodes: Sequence[Node]) -> None:
        scorer = self.strategy.scorer
        for node in nodes:
            score = float(scorer(node))
            if math.isnan(score):
                raise InvalidInputError(f"scorer returned NaN for node {node.id!r}")
            node.extra_metadata["_score"] = score
            heapq.heappush(self._heap, (-score, next(self._seq), node))
        tracker = self.tracker
        limit = tracker.remaining
        if self.strategy.per_iteration_limit:
            limit = min(limit, self.strategy.per_iteration_limit)
        # Like graph-retriever, the per-iteration limit counts traversed nodes; unlike it, no
        # more than select_k nodes are ever admitted, so an admitted node is never withdrawn.
        while limit > 0 and self._heap and tracker.remaining > 0:
            _, _, node = heapq.heappop(self._heap)
            limit -= tracker.select_and_traverse([node])


@dataclasses.dataclass(frozen=True, kw_only=True)
class Scored(Strategy):
    """Each iteration admits and traverses the highest-`scorer` nodes discovered so far (at most
    `per_iteration_limit` traversals per iteration when set); results are ordered by score,
    which is recorded as `_score`."""

    scorer: Callable[[Node], float]
    per_iteration_limit: int | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if not callable(self.scorer):
            raise InvalidInputError(f"scorer must be a callable Node -> float, got {self.scorer!r}")
        _check_int("per_iteration_limit", self.per_iteration_limit, allow_none=True, minimum=1)

    def finalize(self, selected: Sequence[Node]) -> list[Node]:
        """Admitted nodes by descending `_score` (stable)."""
        return sorted(selected, key=lambda n: n.extra_metadata["_score"], reverse=True)

    def start_run(self, query_embedding: Sequence[float] | None) -> RunState:
        """A fresh per-call state."""
        return _ScoredRun(self, query_embedding)
