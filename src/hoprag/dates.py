"""ISO dates as instants: the one parser every store and the filter language share.

`iso_instant(text)` reads `YYYY-MM-DD` (midnight UTC) or `YYYY-MM-DDTHH:MM[:SS[.ffffff]]`
with an optional `Z` or `±HH:MM` offset (a space may stand for the `T`; without an offset the
time is UTC) and returns microseconds since 1970-01-01T00:00:00Z, an exact integer. Anything
else (other strings, non-strings, impossible dates such as 2023-02-30, and date-times whose UTC
instant falls outside years 1..9999, such as `0001-01-01T00:00:00+23:59`) gives None, so a
value that is not an ISO date never compares as one. The JSONL loader and the filter language
read dates by this grammar alone (`DATE_FORMS` says it in words)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

__all__ = ["DATE_FORMS", "iso_instant"]

DATE_FORMS = "YYYY-MM-DD, or YYYY-MM-DDTHH:MM[:SS[.ffffff]] with an optional Z or ±HH:MM"
"""The date grammar in words, for error messages."""

_ISO = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})"
    r"(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?(Z|[+-]\d{2}:\d{2})?)?",
    re.ASCII,
)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICRO = timedelta(microseconds=1)
_FIRST = (datetime.min.replace(tzinfo=UTC) - _EPOCH) // _MICRO
_LAST = (datetime.max.replace(tzinfo=UTC) - _EPOCH) // _MICRO


def _zone(offset: str | None) -> timezone | None:
    """The time zone of an offset (`Z`, `±HH:MM` or none: UTC); None when out of range."""
    if not offset or offset == "Z":
        return UTC
    hours, minutes = int(offset[1:3]), int(offset[4:6])
    if hours > 23 or minutes > 59:
        return None
    sign = -1 if offset[0] == "-" else 1
    return timezone(sign * timedelta(hours=hours, minutes=minutes))


def iso_instant(text: Any) -> int | None:
    """Microseconds since the Unix epoch (UTC) of an ISO date or date-time string, or None
    when `text` is not one (see the module docstring)."""
    if type(text) is not str or len(text) > 40:
        return None
    m = _ISO.fullmatch(text)
    if m is None:
        return None
    year, month, day, hour, minute, second, frac, offset = m.groups()
    tz = _zone(offset)
    if tz is None:
        return None
    try:
        dt = datetime(
            int(year),
            int(month),
            int(day),
            int(hour or 0),
            int(minute or 0),
            int(second or 0),
            int((frac or "0").ljust(6, "0")),
            tzinfo=tz,
        )
    except ValueError:  # no such day
        return None
    instant = (dt - _EPOCH) // _MICRO
    return instant if _FIRST <= instant <= _LAST else None  # its UTC instant in years 1..9999
