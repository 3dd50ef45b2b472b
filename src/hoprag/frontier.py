"""Moved to `hoprag.engine.frontier` (the traversal engine's package); this module re-exports its
public names for one release."""

from hoprag.engine.frontier import (
    Followed,
    Frontier,
    split_edges,
)

__all__ = [
    "Followed",
    "Frontier",
    "split_edges",
]
