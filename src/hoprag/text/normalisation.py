"""The one form text is compared in: titles against texts (`hoprag.text.linking`), shared
phrases (`hoprag.text.phrases`), terms (`hoprag.text.tokens`) and evaluation answers.

`normalise` applies Unicode NFKC, case folding, and reads every run of spaces, punctuation,
symbols and controls as one space ("Saint-Denis" is "saint denis")."""

from __future__ import annotations

import functools
import sys
import unicodedata

_SEPARATING = ("P", "S", "Z", "Cc", "Cf")
"""Unicode categories read as a word break: punctuation, symbols, separators, controls."""


@functools.cache
def _separators() -> dict[int, int]:
    """The `str.translate` table of every character read as a word break, each to a space
    (found once, on first use)."""
    return {
        c: 0x20
        for c in range(sys.maxunicode + 1)
        if unicodedata.category(chr(c)).startswith(_SEPARATING)
    }


def normalise(text: str) -> str:
    """The form titles and texts are compared in: NFKC, case-folded, each run of spaces,
    punctuation and symbols one space, no space at either end. Time linear in the text: one
    pass maps every separator to a space, whatever the number of distinct separators."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(folded.translate(_separators()).split())
