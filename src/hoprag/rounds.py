"""Moved to `hoprag.engine.rounds` (the traversal engine's package); this module re-exports its
public names for one release."""

from hoprag.engine.rounds import (
    EdgeReads,
    Round,
    Rounds,
    Slot,
    StartSource,
    StartSources,
    T_co,
    gather,
)

__all__ = [
    "EdgeReads",
    "Round",
    "Rounds",
    "Slot",
    "StartSource",
    "StartSources",
    "T_co",
    "gather",
]
