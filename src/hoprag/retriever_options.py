"""Moved to `hoprag.integrations.retriever_options` (the framework integrations' package); this
module re-exports its public names for one release."""

from hoprag.integrations.retriever_options import (
    CALL_OPTIONS,
    RetrieverOptions,
    check_edges,
    check_k,
    check_option_names,
    check_store,
    check_strategy,
)

__all__ = [
    "CALL_OPTIONS",
    "RetrieverOptions",
    "check_edges",
    "check_k",
    "check_option_names",
    "check_store",
    "check_strategy",
]
