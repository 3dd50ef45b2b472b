"""Edge types (what a document links to, and what links to it), edge specs and edge functions."""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hoprag.documents import Document
from hoprag.errors import invalid
from hoprag.validation import is_id, json_value


class FrozenDict(Mapping[str, Any]):
    """An immutable, hashable dict, used for dict-valued edge values."""

    __slots__ = ("_data", "_hash")

    def __init__(self, data: Mapping[str, Any]) -> None:
        self._data = {str(k): _freeze(v) for k, v in data.items()}
        self._hash: int | None = None

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(frozenset(self._data.items()))
        return self._hash

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Mapping) and dict(self._data) == dict(other)

    def __repr__(self) -> str:
        return f"FrozenDict({self._data!r})"


def _freeze(value: Any) -> Any:
    """Make a metadata value hashable: dicts become FrozenDicts, lists tuples."""
    if isinstance(value, FrozenDict):
        return value
    if isinstance(value, Mapping):
        return FrozenDict(value)
    if isinstance(value, list | tuple):
        return tuple(_freeze(v) for v in value)
    return value


def value_key(value: Any) -> Any:
    """A hashable key under which equal metadata values meet: numbers compare by their exact
    value (1 == 1.0, but 2**60 != 2**60 + 1: Python compares an int and a float exactly, and
    hashes equal numbers alike), a bool is not a number (True != 1), lists and dicts compare
    structurally. Edges and every store use this one notion of equality."""
    if isinstance(value, bool):
        return ("b", value)
    if isinstance(value, int | float):
        return ("n", value)
    if isinstance(value, str):
        return ("s", value)
    if value is None:
        return ("z", None)
    if isinstance(value, Mapping):
        return ("d", tuple(sorted((str(k), value_key(v)) for k, v in value.items())))
    if isinstance(value, list | tuple):
        return ("l", tuple(value_key(v) for v in value))
    return ("o", repr(value))


def _json_default(obj: Any) -> Any:
    if isinstance(obj, Mapping):
        return dict(obj)
    return str(obj)


class Edge:
    """Base of the hashable edge types; an edge names the documents it leads to."""

    __slots__ = ()


@dataclass(frozen=True, slots=True, eq=False)
class MetadataEdge(Edge):
    """Leads to documents whose field `incoming_field` equals `value` (or, for a list field,
    contains it). Dotted field names reach into nested dicts. Two edges are equal when their
    fields are and their values are under `value_key` (1 == 1.0, but True != 1)."""

    incoming_field: str
    value: Any
    _key: Any = field(init=False, repr=False, compare=False)
    _hash: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.incoming_field, str) or not self.incoming_field:
            raise invalid("MetadataEdge field", self.incoming_field, "a non-empty string")
        # The value follows the metadata type model (numpy scalars become Python numbers;
        # NaN, sets, ints beyond 64 bits are refused), as stored metadata does.
        value = _freeze(json_value(self.value, what=f"MetadataEdge({self.incoming_field!r}) value"))
        key = (self.incoming_field, value_key(value))
        object.__setattr__(self, "value", value)
        object.__setattr__(self, "_key", key)
        object.__setattr__(self, "_hash", hash(key))

    @classmethod
    def _trusted(cls, incoming_field: str, value: Any) -> MetadataEdge:
        """An edge from a field name that is already valid and a scalar value, without the
        checks (the edge function's hot path: the slots are set through their descriptors)."""
        edge = _new(cls)
        _set_field(edge, incoming_field)
        _set_value(edge, value)
        key = (incoming_field, ("s", value) if type(value) is str else value_key(value))
        _set_key(edge, key)
        _set_hash(edge, hash(key))
        return edge

    def __eq__(self, other: object) -> bool:
        if isinstance(other, MetadataEdge):
            return bool(self._key == other._key)
        return NotImplemented

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self) -> tuple[Any, ...]:
        # Rebuilt through the constructor, so that the cached hash is recomputed: string
        # hashes differ between processes.
        return (type(self), (self.incoming_field, self.value))

    def __repr__(self) -> str:
        return f"MetadataEdge({self.incoming_field!r}, {self.value!r})"

    def describe(self) -> str:
        """Short human form, e.g. `keywords=burrowing`."""
        v = (
            self.value
            if isinstance(self.value, str)
            else json.dumps(self.value, default=_json_default)
        )
        return f"{self.incoming_field}={v}"


@dataclass(frozen=True, slots=True)
class IdEdge(Edge):
    """Leads to the document with id `id`."""

    id: str

    @classmethod
    def _trusted(cls, id: str) -> IdEdge:
        """An edge to a string id, without the dataclass constructor (the edge function's hot
        path)."""
        edge = _new(cls)
        _set_id(edge, id)
        return edge

    def describe(self) -> str:
        """Short human form, e.g. `$id=bobcat`."""
        return f"$id={self.id}"


@dataclass(frozen=True, slots=True)
class SearchEdge(Edge):
    """Leads to the documents a lexical search of `text` found from the node it leaves (a
    re-query after the traversal, `hoprag.requery`); no store query follows it."""

    text: str

    def describe(self) -> str:
        """Short human form, e.g. `search=stan lee spouse`."""
        return f"search={self.text}"


# Slot setters of the frozen edge types, for the edge functions' hot path (a direct descriptor
# call costs about half of `object.__setattr__`, which looks the attribute up first).
_new = object.__new__
_set_field = vars(MetadataEdge)["incoming_field"].__set__
_set_value = vars(MetadataEdge)["value"].__set__
_set_key = vars(MetadataEdge)["_key"].__set__
_set_hash = vars(MetadataEdge)["_hash"].__set__
_set_id = vars(IdEdge)["id"].__set__


def edge_sort_key(edge: Edge) -> tuple[int, str, str]:
    """A deterministic order of edges (metadata edges by field and value, then id edges by
    id), so that the edges of a node are queried and numbered the same way in every run."""
    if isinstance(edge, MetadataEdge):
        return (0, edge.incoming_field, repr(edge.value))
    if isinstance(edge, IdEdge):
        return (1, "", edge.id)
    return (2, type(edge).__name__, repr(edge))


SEARCH_FIELD = "$search"
"""What `target_field` names a re-query's `SearchEdge` by."""


def target_field(edge: Edge) -> str:
    """The field `edge` leads to, as Beam's `edge_weights` and the ranking's `edge:` features
    name it: a metadata edge's field, `$id` for an id edge, `$search` for a re-query's."""
    if isinstance(edge, MetadataEdge):
        return edge.incoming_field
    return SEARCH_FIELD if isinstance(edge, SearchEdge) else ID_FIELD


@dataclass(frozen=True, slots=True)
class Edges:
    """A document's edges: `incoming` are the edges that lead to it, `outgoing` the edges it
    leads along (expressed as the incoming edges they match)."""

    incoming: frozenset[Edge]
    outgoing: frozenset[Edge]


# --- Edge specs and edge functions -------------------------------------------------------------

ID_FIELD = "$id"
"""The magic field name that stands for the document id on either side of an edge spec."""

_MISSING = object()
_SCALARS = (str, bool, int, float)


class Id:
    """Stands for the document id in an edge spec, like the string `"$id"`."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Id)

    def __hash__(self) -> int:
        return hash(ID_FIELD)

    def __repr__(self) -> str:
        return "Id()"


EdgeSpec = tuple["str | Id", "str | Id"]
"""`(source, target)`: a document whose field `source` has value v links to documents whose
field `target` has value v. Either side may be `"$id"` / `Id()` for the document id."""

EdgeFunction = Callable[[Document], Edges]
"""Any function from a document to its incoming and outgoing edges; must be deterministic."""


def _check_side(spec: Any, side: Any, name: str) -> str:
    if isinstance(side, Id):
        return ID_FIELD
    what = f"the {name} of edge spec {spec!r}"
    if not isinstance(side, str):
        raise invalid(what, side, "a field name (str) or Id()")
    if not side or side.startswith(".") or side.endswith(".") or ".." in side:
        raise invalid(what, side, "a field name (dotted parts non-empty)")
    if side.startswith("$") and side != ID_FIELD:
        raise invalid(what, side, "a field name or '$id' (only '$id' may start with '$')")
    return side


def nested_get(metadata: Mapping[str, Any], field: str) -> Any:
    """The value at dotted `field` inside `metadata`, or `MISSING` when any part is absent."""
    value: Any = metadata
    for part in field.split("."):
        if not isinstance(value, Mapping):
            return _MISSING
        value = value.get(part, _MISSING)
        if value is _MISSING:
            return _MISSING
    return value


MISSING = _MISSING
"""Sentinel returned by `nested_get` for an absent field."""


class MetadataEdgeFunction:
    """Edges from metadata by a list of `(source, target)` specs (graph-retriever 0.8's
    spelling): list values explode into one edge per element, dotted names reach into nested
    dicts, and `"$id"` / `Id()` stands for the document id."""

    __slots__ = ("specs",)

    def __init__(self, specs: Iterable[EdgeSpec]) -> None:
        if isinstance(specs, str | bytes | Mapping) or not isinstance(specs, Iterable):
            raise invalid("edges", specs, "a list of (source, target) specs or an edge function")
        parsed: list[tuple[str, str]] = []
        for spec in specs:
            if not isinstance(spec, tuple | list) or len(spec) != 2:
                raise invalid(
                    "an edge spec", spec, "a pair (source, target), e.g. ('keywords', 'keywords')"
                )
            parsed.append(
                (_check_side(spec, spec[0], "source"), _check_side(spec, spec[1], "target"))
            )
        self.specs: tuple[tuple[str, str], ...] = tuple(parsed)

    def __repr__(self) -> str:
        return f"MetadataEdgeFunction({list(self.specs)!r})"

    @staticmethod
    def _values(doc: Document, field: str) -> list[Any]:
        if field == ID_FIELD:
            return [doc.id]
        value = nested_get(doc.metadata, field)
        if value is _MISSING or value is None:
            return []
        if isinstance(value, _SCALARS):
            return [value]
        if isinstance(value, list | tuple | set | frozenset):
            return [v for v in value if isinstance(v, _SCALARS)]
        return []

    def __call__(self, doc: Document) -> Edges:
        """The document's incoming edges (its target-field values) and outgoing edges (its
        source-field values, expressed as the incoming edges they match)."""
        incoming: set[Edge] = set()
        outgoing: set[Edge] = set()
        # Within one call, each field's values are read once and each (target, field) edge
        # list is built once: a spec like ("keywords", "keywords") gives the same edges both
        # ways, and a field may serve several specs.
        values: dict[str, list[Any]] = {}
        made: dict[tuple[str, str], list[Edge]] = {}
        for source, target in self.specs:
            for name, into in ((source, outgoing), (target, incoming)):
                edges = made.get((target, name))
                if edges is None:
                    vals = values.get(name)
                    if vals is None:
                        vals = values[name] = self._values(doc, name)
                    if target == ID_FIELD:  # a value that cannot be an id: no edge
                        edges = [IdEdge._trusted(i) for i in map(str, vals) if is_id(i)]
                    else:  # checked spec, scalar values
                        edges = [MetadataEdge._trusted(target, v) for v in vals]
                    made[(target, name)] = edges
                into.update(edges)
        return Edges(frozenset(incoming), frozenset(outgoing))


def parse_edges(edges: Iterable[EdgeSpec] | EdgeFunction | MetadataEdgeFunction) -> EdgeFunction:
    """Turn `edges` (a list of specs, a `MetadataEdgeFunction` or any callable
    `Document -> Edges`) into an edge function; raise `InvalidInputError` on malformed input."""
    if isinstance(edges, MetadataEdgeFunction):
        return edges
    if callable(edges):
        return edges
    return MetadataEdgeFunction(edges)


def unheld_fields(specs: Iterable[tuple[str, str]], held: Collection[str]) -> list[str]:
    """The fields `specs` name, on either side (`$id` aside), whose top-level name is not in
    `held` (the metadata fields some documents hold), each once, in the specs' order: an edge
    on such a field leads nowhere (a typo, or `id` where `$id` was meant)."""
    named = (side for spec in specs for side in spec if side != ID_FIELD)
    return [f for f in dict.fromkeys(named) if f.split(".", 1)[0] not in held]


def describe_unheld(unheld: Sequence[str], held: Collection[str], where: str) -> str:
    """One sentence naming the fields no document `where` describes holds, and those they do
    (`where`: "the 12 documents read")."""
    shown = ", ".join(map(repr, unheld))
    hint = " (the document id is '$id')" if "id" in unheld else ""
    have = sorted(held)
    listed = ", ".join(have[:12]) + (f" and {len(have) - 12} more" if len(have) > 12 else "")
    return f"edges name {shown}{hint}, held by none of {where}; they hold " + (
        listed or "no metadata field"
    )
