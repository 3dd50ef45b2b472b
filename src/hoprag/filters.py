"""The filter language, compiled once per run into conditions every store understands.

A filter is a mapping `field -> value`: the document's field (dotted names reach into nested
dicts) must equal the value or, when the field holds a list, contain it. A list value is
matched as a whole (the field equals that list, or is a list containing it). Fields are ANDed.
`compile_filter` checks a filter and returns its `Condition`s; stores translate those, never
the raw mapping, so both stores accept and refuse exactly the same filters."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hoprag.errors import InvalidInputError, invalid
from hoprag.validation import METADATA_TYPES, check_field, json_value

Filter = Mapping[str, Any]
"""Equality filter: every (field, value) must hold; on a list field the list must contain the
value. Dotted fields reach into nested dicts."""

_ALLOWED = "a JSON scalar (str, int, float, bool, None) or a list of them"


@dataclass(frozen=True, slots=True)
class Condition:
    """`field` equals `value` or, when the field holds a list, contains it. `value` is a JSON
    scalar or a tuple of them (a list matched as a whole)."""

    field: str
    value: Any


def _check_value(field: str, value: Any) -> Any:
    """The value in the metadata type model (`hoprag.validation.json_value`: numpy scalars
    become Python numbers, ints beyond 64 bits, NaN or lone surrogates are refused); a list
    becomes a tuple of scalars."""
    what = f"filter[{field!r}]"
    if isinstance(value, list | tuple):
        out = json_value(list(value), what=what)
        for v in out:
            if isinstance(v, list | dict):
                raise invalid(f"an element of {what}", v, "a finite JSON scalar")
        return tuple(out)
    if isinstance(value, Mapping):
        hint = "use a dotted field name (e.g. 'loc.city') for a nested value"
        if any(isinstance(k, str) and k.startswith("$") for k in value):
            hint = "operator filters ($gt, $in, ...) are not supported yet"
        raise invalid(what, value, _ALLOWED, hint=hint)
    try:
        return json_value(value, what=what)
    except InvalidInputError as exc:
        if exc.allowed == METADATA_TYPES:  # not a JSON value at all
            raise invalid(what, value, _ALLOWED) from None
        raise


def compile_filter(filter: Any) -> tuple[Condition, ...]:
    """The conditions of `filter` (None or empty: none), checked: field names are plain
    (dotted) names (`hoprag.validation.check_field`: none starts with '$', so `"$id"` is
    refused) and values JSON scalars or lists of them, in the metadata type model."""
    if filter is None:
        return ()
    if not isinstance(filter, Mapping):
        raise invalid("filter", filter, "a mapping of field name to value, or None")
    return tuple(
        Condition(check_field(field, what="a filter field name"), _check_value(field, value))
        for field, value in filter.items()
    )
