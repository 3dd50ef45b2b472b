"""Moved to `hoprag.integrations.langchain` (the framework integrations' package); this module
re-exports its public names for one release."""

from hoprag.integrations.langchain import (
    GraphRetriever,
    node_to_langchain,
)

__all__ = [
    "GraphRetriever",
    "node_to_langchain",
]
