"""The edge/filter tokens stored in the indexed `tokens` column: `field=json(value)` for every
scalar metadata value, lists exploded (plus one token for the whole list), nested dicts
flattened to dotted names (plus one token for the whole dict).

So a document matches `(field, v)` when its field equals v or is a list containing v, which are
MemoryStore's semantics (`hoprag.edges.value_key`): numbers compare by exact value at any
depth (1 and 1.0 share a token, as do [1.0, 2] and [1, 2]; 2**60 and 2**60 + 1 do not), a bool
is not a number, lists and dicts compare structurally.

The same function encodes a stored document's metadata and a queried (field, value), so a
metadata edge or an equality filter is one `tokens CONTAINS ?` clause. Metadata keys never
hold '.' (the shared check refuses them at add), so `{"a.b": 1}` cannot share the token of
`{"a": {"b": 1}}`."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping
from typing import Any

# SAI refuses string terms over 1 KiB by default; longer tokens are stored as a digest.
MAX_TOKEN_BYTES = 512


def _canonical(value: Any) -> Any:
    """`value` with every integral float (at any depth) written as the int it equals, so that
    equal numbers give equal JSON (1 and 1.0; [1.0, 2] and [1, 2]); tuples as lists, mappings
    (e.g. the FrozenDict of a dict-valued MetadataEdge) as dicts."""
    if isinstance(value, float):
        return int(value) if value.is_integer() else value
    if isinstance(value, Mapping):
        return {k: _canonical(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_canonical(v) for v in value]
    return value


def canonical_value(value: Any) -> str:
    """JSON of a value in one canonical form: integral floats as integers at every depth (so
    1 and 1.0 match, and [1.0] and [1]), dicts with sorted keys. Values follow the metadata
    type model (`hoprag.validation`), checked before they get here."""
    if type(value) is str:
        return json.dumps(value, ensure_ascii=False)
    return json.dumps(_canonical(value), sort_keys=True, ensure_ascii=False, separators=(",", ":"))


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
            # Metadata keys hold no '.' (refused at add), so a dotted name is one nesting path.
            yield from _walk(f"{prefix}.{k}" if prefix else str(k), v)
    elif isinstance(value, list | tuple):
        if prefix:
            yield prefix, value  # the whole list matches too, as in MemoryStore
        for v in value:
            yield prefix, v
    else:
        yield prefix, value


def metadata_tokens(metadata: Mapping[str, Any]) -> set[str]:
    """All tokens of a document's metadata."""
    return {token(field, value) for field, value in _walk("", metadata)}
