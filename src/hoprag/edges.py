"""Edge types: what a document links to, and what links to it.

Spec parsing and edge functions are added below the types (engine issue)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


def _freeze(value: Any) -> Any:
    """Make a metadata value hashable: dicts become sorted tuples of pairs, lists tuples."""
    if isinstance(value, Mapping):
        return tuple(sorted((str(k), _freeze(v)) for k, v in value.items()))
    if isinstance(value, list | tuple):
        return tuple(_freeze(v) for v in value)
    return value


class Edge:
    """Base of the hashable edge types; an edge names the documents it leads to."""

    __slots__ = ()


@dataclass(frozen=True, slots=True)
class MetadataEdge(Edge):
    """Leads to documents whose field `incoming_field` equals `value` (or, for a list field,
    contains it). Dotted field names reach into nested dicts."""

    incoming_field: str
    value: Any

    def __post_init__(self) -> None:
        if not isinstance(self.incoming_field, str) or not self.incoming_field:
            raise ValueError(f"MetadataEdge field must be a non-empty string, got {self.incoming_field!r}")
        object.__setattr__(self, "value", _freeze(self.value))

    def __repr__(self) -> str:
        return f"MetadataEdge({self.incoming_field!r}, {self.value!r})"

    def describe(self) -> str:
        """Short human form, e.g. `keywords=burrowing`."""
        v = self.value if isinstance(self.value, str) else json.dumps(self.value, default=str)
        return f"{self.incoming_field}={v}"


@dataclass(frozen=True, slots=True)
class IdEdge(Edge):
    """Leads to the document with id `id`."""

    id: str

    def describe(self) -> str:
        """Short human form, e.g. `$id=bobcat`."""
        return f"$id={self.id}"


@dataclass(frozen=True, slots=True)
class Edges:
    """A document's edges: `incoming` are the edges that lead to it, `outgoing` the edges it
    leads along (expressed as the incoming edges they match)."""

    incoming: frozenset[Edge]
    outgoing: frozenset[Edge]
