"""Input checks run before anything reaches Cassandra. Each raises `InvalidInputError` with a
message that names the problem; none of them does I/O."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from hoprag.documents import Document
from hoprag.errors import InvalidInputError
from hoprag.stores.cassandra.vectors import F32_MAX

MAX_K = 1000
"""Cassandra 5.0 refuses an ANN query with a LIMIT above 1000 (`sai.vector_search.max_top_k`)."""

_SCALARS = (str, bool, int, float)


def check_k(k: object, *, what: str = "k") -> int:
    """`k` as an int in 0..1000 (0 asks for nothing and sends no query; above 1000 Cassandra
    refuses the ANN query)."""
    if isinstance(k, bool) or not isinstance(k, int | np.integer):
        raise InvalidInputError(f"{what} must be an integer in 0..{MAX_K}, got {k!r}")
    if not 0 <= int(k) <= MAX_K:
        raise InvalidInputError(
            f"{what} must be in 0..{MAX_K} (Cassandra answers at most {MAX_K} rows per vector "
            f"search), got {k}"
        )
    return int(k)


MAX_OVERQUERY = 16


def check_overquery(value: object, *, what: str = "ann_overquery") -> int:
    """`value` as the over-query factor of vector searches (an int in 1..MAX_OVERQUERY)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_OVERQUERY:
        raise InvalidInputError(f"{what} must be an int in 1..{MAX_OVERQUERY}, got {value!r}")
    return value


def check_vector(vec: object, dimension: int, *, what: str) -> list[float]:
    """`vec` as a list of floats of length `dimension`, finite and not all zeros."""
    return check_vector_array(vec, dimension, what=what).tolist()


def check_vector_array(vec: object, dimension: int, *, what: str) -> np.ndarray:
    """`check_vector`, returning the float64 array."""
    if vec is None or isinstance(vec, str | bytes):
        raise InvalidInputError(f"{what} must be a sequence of {dimension} floats, got {vec!r}")
    try:
        arr = np.asarray(vec, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"{what} is not a sequence of numbers: {exc}") from None
    if arr.ndim != 1:
        raise InvalidInputError(f"{what} must be one-dimensional, got shape {arr.shape}")
    if arr.shape[0] != dimension:
        raise InvalidInputError(
            f"{what} has dimension {arr.shape[0]}, but the table stores vectors of "
            f"dimension {dimension}"
        )
    if not np.isfinite(arr).all():
        raise InvalidInputError(f"{what} contains NaN or infinity")
    if not arr.any():
        raise InvalidInputError(
            f"{what} is a zero vector; cosine similarity is undefined for it and Cassandra "
            "rejects it"
        )
    # Cassandra stores float32: values beyond its range would become infinity.
    if np.abs(arr).max() > F32_MAX:
        raise InvalidInputError(f"{what} has a value beyond the float32 range")
    return arr


def check_ids(ids: object, *, what: str = "ids") -> list[str]:
    """`ids` as a list of non-empty strings, duplicates removed (first occurrence kept)."""
    if isinstance(ids, str | bytes) or not isinstance(ids, Iterable):
        raise InvalidInputError(
            f"{what} must be a sequence of id strings, got {type(ids).__name__} {ids!r}"
        )
    out: list[str] = []
    seen: set[str] = set()
    for i in ids:
        if not isinstance(i, str) or not i:
            raise InvalidInputError(f"{what}: every id must be a non-empty string, got {i!r}")
        if i not in seen:
            seen.add(i)
            out.append(i)
    return out


def check_field(field: object, *, what: str = "filter field") -> str:
    """A metadata field name: a non-empty string, dotted parts non-empty, no control
    characters, no '=' (the token separator)."""
    if not isinstance(field, str) or not field:
        raise InvalidInputError(f"{what} must be a non-empty string, got {field!r}")
    if any(not part for part in field.split(".")):
        raise InvalidInputError(f"{what} {field!r} has an empty dotted part")
    if "=" in field or any(ord(c) < 32 for c in field):
        raise InvalidInputError(f"{what} {field!r} contains '=' or a control character")
    return field


def _check_scalar(field: str, value: object) -> None:
    if value is None or isinstance(value, _SCALARS):
        if isinstance(value, float) and not math.isfinite(value):
            raise InvalidInputError(f"filter value for {field!r} is {value!r}, not a JSON number")
        return
    raise InvalidInputError(
        f"filter value for {field!r} must be a JSON scalar (str, int, float, bool, None) or a "
        f"list of them, got {type(value).__name__} {value!r}"
    )


def check_filter(filter: object) -> list[tuple[str, Any]]:
    """The (field, value) conditions of an equality filter: the document's field must equal the
    value or, when the field holds a list, contain it. A list-valued filter value is matched as
    a whole (the field equals that list, or is a list containing it), exactly as MemoryStore
    does; to require several elements, use an edge or one filter per element. Values must be
    JSON scalars or lists of them (use dotted names for nested fields)."""
    if filter is None:
        return []
    if not isinstance(filter, Mapping):
        raise InvalidInputError(f"filter must be a mapping field -> value, got {filter!r}")
    out: list[tuple[str, Any]] = []
    for field, value in filter.items():
        check_field(field)
        if isinstance(value, list | tuple):
            for v in value:
                _check_scalar(field, v)
            out.append((field, list(value)))
        else:
            _check_scalar(field, value)
            out.append((field, value))
    return out


def check_json(value: Any, *, where: str) -> None:
    """Raise unless `value` is plain JSON: str keys, finite numbers, str/bool/None, lists."""
    stack: list[tuple[str, Any]] = [(where, value)]
    while stack:
        path, v = stack.pop()
        if v is None or isinstance(v, str | bool | int):
            continue
        if isinstance(v, float):
            if not math.isfinite(v):
                raise InvalidInputError(f"{path} is {v!r}, which JSON cannot hold")
            continue
        if isinstance(v, Mapping):
            for k, item in v.items():
                if not isinstance(k, str):
                    raise InvalidInputError(f"{path} has a non-string key {k!r}")
                stack.append((f"{path}.{k}", item))
            continue
        if isinstance(v, list | tuple):
            stack.extend((f"{path}[{i}]", item) for i, item in enumerate(v))
            continue
        raise InvalidInputError(
            f"{path} is a {type(v).__name__} ({v!r}); metadata must be JSON-serialisable "
            "(dicts with str keys, lists, str, int, float, bool, None)"
        )


def check_documents(documents: object) -> list[Document]:
    """The documents as a list, each with a non-empty string id, string content and JSON
    metadata. Later duplicates of an id replace earlier ones (upsert semantics)."""
    if isinstance(documents, Document):
        raise InvalidInputError("aadd/add take an iterable of Documents, got a single Document")
    if isinstance(documents, str | bytes) or not isinstance(documents, Iterable):
        raise InvalidInputError(f"documents must be an iterable of Document, got {documents!r}")
    by_id: dict[str, Document] = {}
    for n, doc in enumerate(documents):
        if not isinstance(doc, Document):
            raise InvalidInputError(
                f"document #{n} is a {type(doc).__name__}, not a hoprag Document"
            )
        if not isinstance(doc.id, str) or not doc.id:
            raise InvalidInputError(f"document #{n}: id must be a non-empty string, got {doc.id!r}")
        if not isinstance(doc.content, str):
            raise InvalidInputError(f"document {doc.id!r}: content must be a string")
        if not isinstance(doc.metadata, Mapping):
            raise InvalidInputError(f"document {doc.id!r}: metadata must be a mapping")
        check_json(doc.metadata, where=f"document {doc.id!r} metadata")
        by_id.pop(doc.id, None)
        by_id[doc.id] = doc
    return list(by_id.values())


def metadata_json(metadata: Mapping[str, Any]) -> str:
    """The metadata as compact JSON (checked by `check_json` beforehand)."""
    return json.dumps(metadata, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def vectors_of(vectors: Sequence[object], dimension: int, what: Sequence[str]) -> list[list[float]]:
    """`check_vector` over several vectors, naming each by `what[i]`."""
    return [check_vector(v, dimension, what=w) for v, w in zip(vectors, what, strict=True)]


CONSISTENCY_LEVELS = ("ONE", "TWO", "THREE", "QUORUM", "ALL", "LOCAL_QUORUM", "EACH_QUORUM",
                      "LOCAL_ONE", "ANY")  # fmt: skip


def check_consistency(level: object, *, what: str = "write_consistency") -> str | None:
    """Return a consistency level name in upper case (None stays None), or raise
    InvalidInputError naming the accepted levels."""
    if level is None:
        return None
    if isinstance(level, str) and level.upper() in CONSISTENCY_LEVELS:
        return level.upper()
    raise InvalidInputError(f"{what} must be one of {', '.join(CONSISTENCY_LEVELS)}, got {level!r}")
