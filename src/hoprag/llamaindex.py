"""Moved to `hoprag.integrations.llamaindex` (the framework integrations' package); this module
re-exports its public names for one release."""

from hoprag.integrations.llamaindex import (
    CONSTRUCTOR_OPTIONS,
    GraphRetriever,
    node_to_llamaindex,
)

__all__ = [
    "CONSTRUCTOR_OPTIONS",
    "GraphRetriever",
    "node_to_llamaindex",
]
