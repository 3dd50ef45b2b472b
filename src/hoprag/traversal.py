"""Moved to `hoprag.engine.traversal` (the traversal engine's package); this module re-exports its
public names for one release."""

from hoprag.engine.traversal import (
    LEXICAL_SCORE_DEPTH,
    ON_TIMEOUT,
    EdgesArg,
    LexicalStart,
    RootStart,
    TraversalStream,
    VectorStart,
    astream,
    atraverse,
    traverse,
)

__all__ = [
    "LEXICAL_SCORE_DEPTH",
    "ON_TIMEOUT",
    "EdgesArg",
    "LexicalStart",
    "RootStart",
    "TraversalStream",
    "VectorStart",
    "astream",
    "atraverse",
    "traverse",
]
