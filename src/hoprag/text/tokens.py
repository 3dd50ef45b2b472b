"""The one tokenizer every store uses for lexical search (BM25 in `hoprag.lexical`).

`tokenize` reads text in `hoprag.text.normalisation`'s form (NFKC, case-folded, punctuation
and symbols as spaces), splits it on spaces and drops a short list of English function words, so
"The Quokka's island!" is `["quokka", "s", "island"]`. A term of more than `MAX_TERM_BYTES`
bytes of UTF-8 (no word of any language; a run of letters in a pasted blob) is dropped, in
documents and queries alike, so every store skips it the same way (a Cassandra key holds at
most 64 KiB)."""

from __future__ import annotations

from hoprag.text.normalisation import normalise

STOPWORDS = frozenset(
    "a an and are as at be but by for from had has have he her his i in is it its of on or "
    "she that the their them they this to was were which who whom with".split()
)
"""Words too common to say anything about relevance (dropped by `tokenize`)."""

MAX_TERM_BYTES = 256
"""The longest term kept, in bytes of UTF-8 (longer ones are dropped by `tokenize`)."""


def tokenize(text: str) -> list[str]:
    """The terms of `text`, in order (see the module docstring)."""
    return [t for t in normalise(text).split(" ") if t and t not in STOPWORDS and _short(t)]


def _short(term: str) -> bool:
    """Whether `term` has at most `MAX_TERM_BYTES` bytes of UTF-8."""
    return len(term) * 4 <= MAX_TERM_BYTES or len(term.encode("utf-8", "surrogatepass")) <= (
        MAX_TERM_BYTES
    )
