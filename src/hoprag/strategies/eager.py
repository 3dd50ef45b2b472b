"""Eager: breadth-first, admits every discovered node hop by hop."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from hoprag.documents import Node
from hoprag.strategies.base import RunState, Strategy


class _EagerRun(RunState):
    def iterate(self, nodes: Sequence[Node]) -> None:
        self.tracker.select_and_traverse(nodes)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Eager(Strategy):
    """Breadth-first: every newly discovered node is admitted (until `select_k`) and traversed
    (within `max_depth` / `max_traverse`), hop by hop, nearest hits first within a hop."""

    def start_run(self, query_embedding: Sequence[float] | None) -> RunState:
        """A fresh per-call state."""
        return _EagerRun(self, query_embedding)
