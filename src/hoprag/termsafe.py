"""Terminal-safe text: user data (ids, contents, metadata values) shown with every character
that could move the cursor, clear the screen, start a new line or reorder text escaped
visibly, so a stored document can neither fake table rows nor take over the terminal.

`safe` is for text output (tables, messages); `safe_json` for JSON output, which stays exact
JSON that decodes to the same values."""

from __future__ import annotations

import json
import re
from typing import Any

_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
"""Bidirectional marks, embeddings, overrides and isolates: they reorder what follows."""

_UNSAFE = re.compile(f"[\x00-\x1f\x7f-\x9f{_BIDI}\u2028\u2029\ud800-\udfff]")
"""C0 and C1 controls (ESC, CR, LF, TAB, ..., DEL, CSI), bidi controls, the Unicode line and
paragraph separators, and lone surrogates (which cannot even be encoded for output)."""

_UNSAFE_IN_JSON = re.compile(f"[\x7f-\x9f{_BIDI}\u2028\u2029\ud800-\udfff]")
"""What `json.dumps(ensure_ascii=False)` leaves raw that `_UNSAFE` escapes (it escapes C0
controls itself)."""


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _json_escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def safe(value: Any) -> str:
    """`value` as text (str() of a non-string) with each unsafe character written as a
    visible escape: ESC as `\\x1b`, CR as `\\x0d`, LF as `\\x0a`, U+202E as `\\u202e`.
    Printable text, non-ASCII letters included, is unchanged."""
    text = value if isinstance(value, str) else str(value)
    return _UNSAFE.sub(_escape, text)


def safe_json(value: Any, *, indent: int | None = 2) -> str:
    """`value` as JSON text that is safe on a terminal: non-ASCII letters stay readable, and
    every control, bidi or separator character and lone surrogate is a `\\uXXXX` escape, so
    the text decodes to exactly `value`."""
    text = json.dumps(value, indent=indent, ensure_ascii=False)
    # Outside strings JSON text is ASCII, so each match is inside a string, where a \\uXXXX
    # escape stands for the same character.
    return _UNSAFE_IN_JSON.sub(_json_escape, text)
