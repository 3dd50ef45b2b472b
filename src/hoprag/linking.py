"""Moved to `hoprag.text.linking` (issue #51); this name re-exports it for one release and
will then be removed. Import from `hoprag.text` (or `hoprag.text.linking`) instead.

The names are the same objects as the new module's, so `isinstance` checks and identity hold
across both imports. Patching a name here does not change the new module."""

from __future__ import annotations

from hoprag.text.linking import (
    SKIP_REASONS,
    LinkReport,
    TitleLinker,
    check_link_options,
    link_documents,
)
from hoprag.text.normalisation import normalise

__all__ = [
    "SKIP_REASONS",
    "LinkReport",
    "TitleLinker",
    "check_link_options",
    "link_documents",
    "normalise",
]
