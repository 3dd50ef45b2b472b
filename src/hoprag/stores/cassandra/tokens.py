"""The edge/filter tokens stored in the indexed `tokens` column: `field=json(value)` for every
scalar metadata value, lists exploded (plus one token for the whole list), nested dicts
flattened to dotted names (plus one token for the whole dict).

So a document matches `(field, v)` when its field equals v or is a list containing v, which are
MemoryStore's semantics (`hoprag.edges.value_key`): numbers compare numerically (1 and
1.0 share a token), a bool is not a number, lists and dicts compare structurally.

The same function encodes a stored document's metadata and a queried (field, value), so a
metadata edge or an equality filter is one `tokens CONTAINS ?` clause."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterator, Mapping
from typing import Any

# SAI refuses string terms over 1 KiB by default; longer tokens are stored as a digest.
MAX_TOKEN_BYTES = 512


def canonical_value(value: Any) -> str:
    """JSON of a scalar (or a dict/list element) in one canonical form: integral floats are
    written as integers so that 1 and 1.0 match; dicts with sorted keys."""
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value = int(value)
    if isinstance(value, tuple):
        value = list(value)
    return json.dumps(
        value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=_json_default
    )


def _json_default(obj: Any) -> Any:
    if isinstance(obj, Mapping):  # e.g. the FrozenDict of a dict-valued MetadataEdge
        return dict(obj)
    if isinstance(obj, set | frozenset):
        return sorted(obj, key=repr)
    return str(obj)


def token(field: str, value: Any) -> str:
    """The token for `field` having (or containing) `value`."""
    text = f"{field}={canonical_value(value)}"
    if len(text.encode()) > MAX_TOKEN_BYTES:
        digest = hashlib.sha256(canonical_value(value).encode()).hexdigest()
        text = f"{field}#{digest}"
    return text


def _walk(prefix: str, value: Any) -> Iterator[tuple[str, Any]]:
    if isinstance(value, Mapping):
        if prefix:
            yield prefix, value  # a dict value can itself be matched as a whole
        for k, v in value.items():
            yield from _walk(f"{prefix}.{k}" if prefix else str(k), v)
    elif isinstance(value, list | tuple | set | frozenset):
        if prefix:
            yield prefix, list(value)  # the whole list matches too, as in MemoryStore
        for v in value:
            if isinstance(v, list | tuple | set | frozenset):
                yield prefix, list(v)
            else:
                yield prefix, v
    else:
        yield prefix, value


def metadata_tokens(metadata: Mapping[str, Any]) -> set[str]:
    """All tokens of a document's metadata."""
    return {token(field, value) for field, value in _walk("", metadata)}
