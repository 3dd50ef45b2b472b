"""What tests compare of a traversal: its nodes with their depths and paths, and a note summed
over its hops."""

from __future__ import annotations

from typing import Any

import hoprag
from hoprag.stats import TraversalStats


def result_key(res: list[hoprag.Node]) -> list[tuple[Any, ...]]:
    """Each node's id, depth and path (its nodes and edges), in order."""
    return [(n.id, n.depth, n.path.nodes, n.path.edges) for n in res]


def note_total(stats: TraversalStats, name: str) -> int:
    """The note `name` summed over the traversal's hops."""
    return sum(h.notes.get(name, 0) for h in stats.hops)
