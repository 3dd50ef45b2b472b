"""Input checks shared by the coordinator and every store. Each raises `InvalidInputError`
naming the argument, the bad value and what is allowed, so the same bad input gets the same
error from every store. None of them does I/O."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from hoprag.documents import Document
from hoprag.errors import InvalidInputError, invalid

F32_MAX = float(np.finfo(np.float32).max)
"""Stores keep float32 vectors: a component beyond this would become infinity."""


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


def check_vector(vec: Any, *, dimension: int | None = None, what: str) -> NDArray[np.float64]:
    """`vec` as a one-dimensional float64 array, of length `dimension` when given, finite, not
    all zeros (cosine similarity is undefined there) and within float32's range."""
    allowed = f"a sequence of {dimension or 'N'} finite floats, not all zero"
    if vec is None or isinstance(vec, str | bytes | Mapping):
        raise invalid(what, vec, allowed)
    try:
        arr = np.asarray(vec, dtype=np.float64)
    except (TypeError, ValueError):
        raise invalid(what, vec, allowed) from None
    if arr.ndim != 1 or arr.shape[0] == 0:
        raise invalid(what, vec, allowed)
    if dimension is not None and arr.shape[0] != dimension:
        raise InvalidInputError(
            f"{what} has dimension {arr.shape[0]}, but the store holds vectors of dimension "
            f"{dimension}",
            argument=what,
            value=f"<vector of {arr.shape[0]}>",
            allowed=f"{dimension} floats",
        )
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
    if np.abs(arr).max() > F32_MAX:
        raise InvalidInputError(
            f"{what} has a value beyond the float32 range", argument=what, allowed="float32"
        )
    return arr


def check_ids(ids: Any, *, what: str = "ids") -> list[str]:
    """`ids` as a list of non-empty strings, duplicates removed (first occurrence kept)."""
    if isinstance(ids, str | bytes | Mapping) or not isinstance(ids, Iterable):
        raise invalid(what, ids, "a sequence of id strings (wrap a single id in a list)")
    out: dict[str, None] = {}
    for i in ids:
        if not isinstance(i, str) or not i:
            raise invalid(f"every id in {what}", i, "a non-empty string")
        out[i] = None
    return list(out)


def check_field(field: Any, *, what: str = "filter field") -> str:
    """A metadata field name: a non-empty string, dotted parts non-empty, no control
    characters, no '=' (stores use it as a separator)."""
    allowed = "a non-empty field name (dotted for nested fields, no '=' or control characters)"
    if not isinstance(field, str) or not field:
        raise invalid(what, field, allowed)
    if any(not part for part in field.split(".")):
        raise invalid(what, field, allowed)
    if "=" in field or any(ord(c) < 32 for c in field):
        raise invalid(what, field, allowed)
    return field


def check_json(value: Any, *, where: str) -> None:
    """Raise unless `value` is plain JSON: str keys, finite numbers, str/bool/None, lists."""
    stack: list[tuple[str, Any]] = [(where, value)]
    while stack:
        path, v = stack.pop()
        if v is None or isinstance(v, str | bool | int):
            continue
        if isinstance(v, float):
            if not math.isfinite(v):
                raise invalid(path, v, "a finite number (JSON has no NaN or infinity)")
            continue
        if isinstance(v, Mapping):
            for k, item in v.items():
                if not isinstance(k, str):
                    raise invalid(f"a key of {path}", k, "a string")
                stack.append((f"{path}.{k}", item))
            continue
        if isinstance(v, list | tuple):
            stack.extend((f"{path}[{i}]", item) for i, item in enumerate(v))
            continue
        raise invalid(path, v, "JSON (dicts with str keys, lists, str, int, float, bool, None)")


def check_documents(documents: Any) -> list[Document]:
    """The documents as a list, each with a non-empty string id, string content and JSON
    metadata. Later duplicates of an id replace earlier ones (upsert semantics)."""
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
        if not isinstance(doc.content, str):
            raise invalid(f"content of document {doc.id!r}", doc.content, "a string")
        if not isinstance(doc.metadata, Mapping):
            raise invalid(f"metadata of document {doc.id!r}", doc.metadata, "a mapping")
        check_json(doc.metadata, where=f"metadata of document {doc.id!r}")
        by_id.pop(doc.id, None)
        by_id[doc.id] = doc
    return list(by_id.values())
