"""Moved to `hoprag.text.phrases` (issue #51); this name re-exports it for one release and
will then be removed. Import from `hoprag.text` (or `hoprag.text.phrases`) instead.

The names are the same objects as the new module's. Patching a name here does not change the
new module."""

from __future__ import annotations

from hoprag.text.phrases import CONNECTORS, link_phrases, phrases_in

__all__ = ["CONNECTORS", "link_phrases", "phrases_in"]
