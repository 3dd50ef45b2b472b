"""Validation of the CQL identifiers hoprag interpolates (keyspace, table): values never are."""

from __future__ import annotations

import re

from hoprag.errors import InvalidInputError

_PLAIN_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,47}")
_ALLOWED = "a letter followed by letters, digits or underscores, at most 48 characters"


def check_name(name: object, *, what: str) -> str:
    """Return `name` if it is a plain CQL name (a letter, then letters, digits or underscores,
    at most 48 characters), else raise InvalidInputError naming it."""
    if not isinstance(name, str) or not _PLAIN_NAME.fullmatch(name):
        raise InvalidInputError(
            f"{what} {name!r} is not a plain name: use {_ALLOWED}",
            argument=what,
            value=name,
            allowed=_ALLOWED,
        )
    return name.lower()
