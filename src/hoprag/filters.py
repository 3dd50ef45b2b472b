"""The filter language, compiled once per run into conditions every store understands.

A filter is a mapping `field -> value`: the document's field (dotted names reach into nested
dicts) must equal the value or, when the field holds a list, contain it. A list value is
matched as a whole (the field equals that list, or is a list containing it). Fields are ANDed.
`compile_filter` checks a filter and returns its `Condition`s; stores translate those, never
the raw mapping, so both stores accept and refuse exactly the same filters."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hoprag.errors import invalid
from hoprag.validation import check_field

Filter = Mapping[str, Any]
"""Equality filter: every (field, value) must hold; on a list field the list must contain the
value. Dotted fields reach into nested dicts."""

_SCALARS = (str, bool, int, float)
_ALLOWED = "a JSON scalar (str, int, float, bool, None) or a list of them"


@dataclass(frozen=True, slots=True)
class Condition:
    """`field` equals `value` or, when the field holds a list, contains it. `value` is a JSON
    scalar or a tuple of them (a list matched as a whole)."""

    field: str
    value: Any


def _check_value(field: str, value: Any) -> Any:
    if value is None or isinstance(value, _SCALARS):
        if isinstance(value, float) and not math.isfinite(value):
            raise invalid(f"filter[{field!r}]", value, "a finite number")
        return value
    if isinstance(value, list | tuple):
        for v in value:
            if not (v is None or isinstance(v, _SCALARS)) or (
                isinstance(v, float) and not math.isfinite(v)
            ):
                raise invalid(f"an element of filter[{field!r}]", v, "a finite JSON scalar")
        return tuple(value)
    hint = ""
    if isinstance(value, Mapping):
        hint = "use a dotted field name (e.g. 'loc.city') for a nested value"
        if any(isinstance(k, str) and k.startswith("$") for k in value):
            hint = "operator filters ($gt, $in, ...) are not supported yet"
    raise invalid(f"filter[{field!r}]", value, _ALLOWED, hint=hint)


def compile_filter(filter: Any) -> tuple[Condition, ...]:
    """The conditions of `filter` (None or empty: none), checked: field names are plain
    (dotted) names and values JSON scalars or lists of them."""
    if filter is None:
        return ()
    if not isinstance(filter, Mapping):
        raise invalid("filter", filter, "a mapping of field name to value, or None")
    return tuple(
        Condition(check_field(field, what="a filter field name"), _check_value(field, value))
        for field, value in filter.items()
    )
