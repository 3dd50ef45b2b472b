"""Input checks shared by the coordinator and every store. Each raises `InvalidInputError`
naming the argument, the bad value and what is allowed, so the same bad input gets the same
error from every store. None of them does I/O."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, overload

import numpy as np
from numpy.typing import NDArray

from hoprag.documents import Document
from hoprag.errors import InvalidInputError, invalid

F32_MAX = float(np.finfo(np.float32).max)
"""Stores keep float32 vectors: a component beyond this would become infinity."""

MAX_K = 1000
"""The most rows one vector search (a start search or an edge's adjacency) may ask for, on every
store: Cassandra 5.0 refuses an ANN query with a LIMIT above 1000 (`sai.vector_search.max_top_k`),
and the other stores refuse what it refuses, so that the same call gets the same error."""

MAX_ID_BYTES = 65_535
"""The longest document id, in bytes of UTF-8: Cassandra refuses a longer partition key, and
every store refuses what it refuses, before anything is written."""

MAX_DIMENSION = 8192
"""The largest vector dimension a table holds (SAI's default vector term limit: 32 KiB of
float32)."""

MIN_NORM = 1e-9
MAX_NORM = 1e9
"""A vector's Euclidean norm must lie in MIN_NORM..MAX_NORM: the product of two squared norms
then stays within float32's normal range (about 1.2e-38..3.4e38), so a cosine computed in
float32 neither underflows nor overflows."""


def check_int(name: str, value: Any, *, minimum: int = 0, maximum: int | None = None) -> int:
    """`value` as an int in `minimum..maximum` (no upper bound when `maximum` is None)."""
    span = f"{minimum}..{maximum}" if maximum is not None else f">= {minimum}"
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise invalid(name, value, f"an int {span}")
    if value < minimum or (maximum is not None and value > maximum):
        raise invalid(name, value, f"an int {span}")
    return int(value)


def check_optional_int(name: str, value: Any, *, minimum: int = 0) -> int | None:
    """`check_int`, with None allowed (meaning "no limit")."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
        raise invalid(name, value, f"an int >= {minimum} or None")
    return int(value)


def check_fraction(name: str, value: Any) -> float:
    """`value` as a float in [0, 1]."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise invalid(name, value, "a number in [0, 1]")
    if not 0.0 <= float(value) <= 1.0:
        raise invalid(name, value, "a number in [0, 1]")
    return float(value)


def check_k(k: Any, *, maximum: int | None = None, what: str = "k") -> int:
    """A result count: an int >= 0 (0 asks for nothing), at most `maximum` when given."""
    return check_int(what, k, minimum=0, maximum=maximum)


class CheckedVector(Sequence[float]):
    """A vector that `check_vector` accepted, kept as its read-only float64 `array`. Given one,
    `check_vector` checks only its dimension, so a query vector checked at a call's entry is
    not checked again by every query a store prepares for that call (a scoped search prepares
    up to three). Make one with `checked_vector`."""

    __slots__ = ("array",)

    def __init__(self, array: NDArray[np.float64]) -> None:
        array.flags.writeable = False
        self.array = array

    def __len__(self) -> int:
        return int(self.array.shape[0])

    @overload
    def __getitem__(self, i: int) -> float: ...
    @overload
    def __getitem__(self, i: slice) -> list[float]: ...
    def __getitem__(self, i: int | slice) -> float | list[float]:
        if isinstance(i, slice):
            out: list[float] = self.array[i].tolist()
            return out
        return float(self.array[i])

    def __iter__(self) -> Iterator[float]:
        return iter(self.array.tolist())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, CheckedVector):
            return bool(np.array_equal(self.array, other.array))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"CheckedVector(<{len(self)} floats>)"


def checked_vector(vec: Any, *, what: str) -> CheckedVector:
    """`vec` checked as `check_vector` checks it (any dimension), as a `CheckedVector`; one
    already checked is returned as it is."""
    if isinstance(vec, CheckedVector):
        return vec
    return CheckedVector(check_vector(vec, what=what))


def check_vector(vec: Any, *, dimension: int | None = None, what: str) -> NDArray[np.float64]:
    """`vec` as a new one-dimensional float64 array (a copy: changing `vec` later changes
    nothing), of length `dimension` when given, finite, within float32's range and with a
    Euclidean norm in `MIN_NORM..MAX_NORM` (outside it, cosine similarity in float32, as
    Cassandra computes it, underflows to 0 or overflows: a zero vector is refused too). A
    `CheckedVector` is checked for its dimension only, and its (read-only) array returned."""
    allowed = f"a sequence of {dimension or 'N'} finite floats, not all zero"
    if isinstance(vec, CheckedVector):
        check_dimension(vec.array, dimension, what)
        return vec.array
    if vec is None or isinstance(vec, str | bytes | Mapping):
        raise invalid(what, vec, allowed)
    try:
        arr = np.array(vec, dtype=np.float64)
    except (TypeError, ValueError):
        raise invalid(what, vec, allowed) from None
    if arr.ndim != 1 or arr.shape[0] == 0:
        raise invalid(what, vec, allowed)
    check_dimension(arr, dimension, what)
    if not np.isfinite(arr).all():
        raise InvalidInputError(
            f"{what} contains NaN or infinity", argument=what, allowed="finite floats"
        )
    if not arr.any():
        raise InvalidInputError(
            f"{what} is a zero vector; cosine similarity is undefined for it",
            argument=what,
            allowed="a vector with a non-zero component",
        )
    top = float(np.abs(arr).max())
    if top > F32_MAX:
        raise InvalidInputError(
            f"{what} has a value beyond the float32 range", argument=what, allowed="float32"
        )
    # Scaled by the largest component, so the norm itself neither underflows nor overflows.
    norm = top * float(np.linalg.norm(arr / top))
    if not MIN_NORM <= norm <= MAX_NORM:
        raise InvalidInputError(
            f"{what} has norm {norm:.3g}; cosine similarity of such a vector underflows or "
            f"overflows in float32 (scores would be NaN or 0): scale it to a norm in "
            f"{MIN_NORM:g}..{MAX_NORM:g} (e.g. normalize it to 1)",
            argument=what,
            value=f"<vector of norm {norm:.3g}>",
            allowed=f"a vector with norm in {MIN_NORM:g}..{MAX_NORM:g}",
        )
    return arr


def check_dimension(arr: NDArray[Any], dimension: int | None, what: str) -> None:
    """`arr` has `dimension` entries (any number when None), else `InvalidInputError`."""
    if dimension is not None and arr.shape[0] != dimension:
        raise InvalidInputError(
            f"{what} has dimension {arr.shape[0]}, but the store holds vectors of dimension "
            f"{dimension}",
            argument=what,
            value=f"<vector of {arr.shape[0]}>",
            allowed=f"{dimension} floats",
        )


def check_ids(ids: Any, *, what: str = "ids") -> list[str]:
    """`ids` as a list of non-empty strings (without lone surrogates), duplicates removed
    (first occurrence kept)."""
    if isinstance(ids, str | bytes | Mapping) or not isinstance(ids, Iterable):
        raise invalid(what, ids, "a sequence of id strings (wrap a single id in a list)")
    out: dict[str, None] = {}
    for i in ids:
        if not isinstance(i, str) or not i:
            raise invalid(f"every id in {what}", i, "a non-empty string")
        if not i.isascii():
            check_text(i, f"every id in {what}")
        if len(i) * 4 > MAX_ID_BYTES:
            _check_id_length(i, f"every id in {what}")
        out[i] = None
    return list(out)


def is_id(value: str) -> bool:
    """Whether a string can be a document id (non-empty, at most `MAX_ID_BYTES` of UTF-8): a
    stored value that cannot name a document (an id edge's `""` or a huge string) makes no
    edge instead of failing every read that reaches it."""
    if not value:
        return False
    return len(value) * 4 <= MAX_ID_BYTES or len(value.encode("utf-8", "surrogatepass")) <= (
        MAX_ID_BYTES
    )


def _check_id_length(value: str, what: str) -> None:
    """Refuse an id longer than `MAX_ID_BYTES` of UTF-8 (the caller checked it is text)."""
    size = len(value.encode("utf-8"))
    if size > MAX_ID_BYTES:
        raise InvalidInputError(
            f"{what} has {size:,} bytes of UTF-8, more than the {MAX_ID_BYTES:,} an id may have "
            "(Cassandra's partition key limit, which every store keeps)",
            argument=what,
            value=f"<an id of {size} bytes>",
            allowed=f"an id of at most {MAX_ID_BYTES} bytes of UTF-8",
        )


def check_text(value: str, what: str) -> str:
    """`value` (a str) unless it holds a lone surrogate (`"\\ud800"`): such a string has no
    UTF-8 form, so no store can write it or send it in a query."""
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise invalid(what, value, "text without lone surrogates (valid Unicode)") from None
    return value


def _check_path_bytes(path: str, what: str) -> None:
    if len(path) * 4 > MAX_FIELD_BYTES and len(path.encode("utf-8")) > MAX_FIELD_BYTES:
        raise invalid(what, path, f"a field name of at most {MAX_FIELD_BYTES} bytes (UTF-8)")


def check_field(field: Any, *, what: str = "filter field") -> str:
    """A metadata field name: a non-empty string of dotted parts (each non-empty, none
    starting with '$', which is reserved), without '=' or control characters, at most
    `MAX_FIELD_BYTES` bytes."""
    allowed = "a non-empty field name (dotted for nested fields, no '=' or control characters)"
    if not isinstance(field, str) or not field:
        raise invalid(what, field, allowed)
    parts = field.split(".")
    if any(not part for part in parts):
        raise invalid(what, field, allowed)
    if "=" in field or any(ord(c) < 32 for c in field):
        raise invalid(what, field, allowed)
    if any(part.startswith("$") for part in parts):
        hint = "names starting with '$' are reserved"
        if field == "$id":
            hint = (
                "the document id is not a metadata field: read documents by id with "
                "get(ids) (or a traversal's initial_root_ids), or add the id to the metadata "
                "under a plain name"
            )
        raise invalid(what, field, "a field name whose parts do not start with '$'", hint=hint)
    check_text(field, what)
    _check_path_bytes(field, what)
    return field


# --- the metadata type model ----------------------------------------------------------------

MIN_INT = -(2**63)
MAX_INT = 2**63 - 1
"""Metadata ints must lie in the signed 64-bit range (JSON numbers beyond it are not kept
exactly by most JSON readers, and range filters compare on this range)."""

MAX_DEPTH = 32
"""Metadata nests at most this many dicts/lists deep (the metadata mapping itself is level 0)."""

MAX_FIELD_BYTES = 256
"""A metadata field's dotted name (or a filter/edge field) is at most this long in UTF-8: a
store's index refuses longer terms."""

METADATA_TYPES = (
    "JSON: a dict with str keys, list, str, int in -2**63..2**63-1, finite float, bool or None"
)

_PLAIN = frozenset({str, bool, int, float, type(None)})


Where = Callable[[str], str]
"""Names the value at a field path in an error message (path "" is the whole value)."""


def _metadata_of(doc: str) -> Where:
    return lambda path: f"metadata field {path!r} of {doc}" if path else f"metadata of {doc}"


def _named(what: str) -> Where:
    return lambda path: f"{what} (at {path!r})" if path else what


def _show_int(value: int) -> str:
    bits = abs(value).bit_length()
    if bits < 10_000:
        return repr(value) if bits < 200 else f"an int of {len(str(abs(value)))} digits"
    return f"an int of about {int(bits * 0.30103) + 1} digits"


def _bad_int(where: str, value: int) -> InvalidInputError:
    allowed = "an int in -2**63..2**63-1 (a 64-bit int)"
    return InvalidInputError(
        f"{where} must be {allowed}, got {_show_int(value)}; store larger numbers as a str "
        "or a float",
        argument=where,
        value=value,
        allowed=allowed,
    )


_NOT_SCALAR: Any = object()


def _scalar(value: Any, where: Where, path: str) -> Any:
    """A metadata scalar as the plain Python value every store keeps (numpy and other int,
    float, bool and str subclasses converted), `_NOT_SCALAR` for anything else, or raise."""
    t = type(value)
    if t is str:
        if value.isascii():
            return value
        return check_text(value, where(path))
    if t is bool or value is None:
        return value
    if t is int:
        if MIN_INT <= value <= MAX_INT:
            return value
        raise _bad_int(where(path), value)
    if t is float:
        if math.isfinite(value):
            return value
        raise invalid(where(path), value, "a finite number (JSON has no NaN or infinity)")
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, int | np.integer):
        return _scalar(int(value), where, path)
    if isinstance(value, float | np.floating):
        return _scalar(float(value), where, path)
    if isinstance(value, str):
        return _scalar(str.__getitem__(value, slice(None)), where, path)
    return _NOT_SCALAR


def _reject(value: Any, where: str) -> InvalidInputError:
    hint = ""
    if isinstance(value, set | frozenset):
        hint = "JSON has no sets: use a list"
    elif isinstance(value, np.ndarray):
        hint = "convert an array with .tolist()"
    elif isinstance(value, bytes | bytearray):
        hint = "decode bytes to str"
    return invalid(where, value, METADATA_TYPES, hint=hint)


_KEY_ALLOWED = (
    "a non-empty str without '.', '=' or control characters, not starting with '$' "
    "(a '.' in a field name addresses a nested dict; '$' names are reserved)"
)


def _check_key(key: Any, where: Where, path: str) -> tuple[str, str]:
    """A dict key of metadata and the dotted path it makes: a plain name (no '.', which
    addresses nesting, no '=' or control characters, not starting with '$': reserved)."""
    if type(key) is not str:
        if not isinstance(key, str):
            raise invalid(f"a key of {where(path)}", key, _KEY_ALLOWED)
        key = str.__getitem__(key, slice(None))
    if (
        not key
        or "." in key
        or "=" in key
        or key[0] == "$"
        or (not key.isprintable() and any(ord(c) < 32 for c in key))
    ):
        hint = "nest a dict instead, e.g. {'a': {'b': 1}}" if "." in key else ""
        raise invalid(f"a key of {where(path)}", key, _KEY_ALLOWED, hint=hint)
    full = f"{path}.{key}" if path else key
    if not key.isascii():
        check_text(key, f"a key of {where(path)}")
    _check_path_bytes(full, f"a key of {where(path)}")
    return key, full


def _value(value: Any, where: Where, path: str, depth: int) -> Any:
    scalar = _scalar(value, where, path)
    if scalar is not _NOT_SCALAR:
        return scalar
    if not isinstance(value, Mapping | list | tuple):
        raise _reject(value, where(path))
    if depth >= MAX_DEPTH:
        raise invalid(where(path), "<nested deeper>", f"nested at most {MAX_DEPTH} levels deep")
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for k, item in value.items():
            key, full = _check_key(k, where, path)
            out[key] = _value(item, where, full, depth + 1)
        return out
    return [_value(item, where, f"{path}[{i}]", depth + 1) for i, item in enumerate(value)]


def check_metadata(metadata: Any, *, doc: str = "a document") -> dict[str, Any]:
    """A copy of `metadata` in the metadata type model (docs/stores.md, "Metadata types"):
    JSON values only; numpy scalars and str/int/float/bool subclasses become the plain Python
    value, tuples become lists. Anything else raises `InvalidInputError` naming `doc`, the
    field path, the bad value and what is allowed. The copy shares no container with
    `metadata`."""
    if not isinstance(metadata, Mapping):
        raise invalid(f"metadata of {doc}", metadata, "a mapping (dict) of field name to value")
    out: dict[str, Any] = _value(metadata, _metadata_of(doc), "", 0)
    return out


def json_value(value: Any, *, what: str) -> Any:
    """`value` checked against the metadata type model and normalized as `check_metadata`
    does (a dict's keys follow the same rules); `what` names it in errors."""
    return _value(value, _named(what), "", 1)


def check_json(value: Any, *, where: str) -> None:
    """Raise unless `value` is in the metadata type model (see `check_metadata`)."""
    json_value(value, what=where)


def check_documents(documents: Any) -> list[Document]:
    """The documents as a list of fresh Documents, each with a non-empty string id, string
    content (neither with lone surrogates) and metadata in the type model (`check_metadata`,
    copied and normalized). Later duplicates of an id replace earlier ones (upsert)."""
    if isinstance(documents, Document):
        raise invalid("documents", documents, "an iterable of Documents (wrap one in a list)")
    if isinstance(documents, str | bytes | Mapping) or not isinstance(documents, Iterable):
        raise invalid("documents", documents, "an iterable of Documents")
    by_id: dict[str, Document] = {}
    for n, doc in enumerate(documents):
        if not isinstance(doc, Document):
            raise invalid(f"documents[{n}]", doc, "a hoprag Document")
        if not isinstance(doc.id, str) or not doc.id:
            raise invalid(f"documents[{n}].id", doc.id, "a non-empty string")
        check_text(doc.id, f"documents[{n}].id")
        if len(doc.id) * 4 > MAX_ID_BYTES:
            _check_id_length(doc.id, f"documents[{n}].id")
        if not isinstance(doc.content, str):
            raise invalid(f"content of document {doc.id!r}", doc.content, "a string")
        check_text(doc.content, f"content of document {doc.id!r}")
        metadata = check_metadata(doc.metadata, doc=f"document {doc.id!r}")
        by_id.pop(doc.id, None)
        by_id[doc.id] = _document(doc.id, doc.content, metadata, doc.embedding)
    return list(by_id.values())


def _document(id: str, content: str, metadata: dict[str, Any], embedding: Any) -> Document:
    """A Document from checked parts, without `Document.__post_init__`'s checks again (the
    embedding is checked by the store with `check_vector`)."""
    doc: Document = object.__new__(Document)
    doc.id = id
    doc.content = content
    doc.metadata = metadata
    doc.embedding = embedding
    return doc
