"""Entity resolution (`Store.aresolve`): the names a user typed, matched to values that exist.

One normalisation for every store (`normalize`): Unicode NFKD, combining marks dropped,
casefolded (then decomposed and stripped of marks once more, for the few letters whose case
fold decomposes), white space collapsed to single spaces. A text's words (`words`) are the runs
of letters and digits of its normalised form. So "Jáne  FÖNDA" normalises to "jane fonda" with
the words {"jane", "fonda"}; letters without a decomposition (such as "ł" or "ø") stay as they
are.

Which values take part (`entity_values`): the strings a document holds in the field, itself
when it is a string, each string element when it is a list; other values are left out, as are
strings whose normalised form is empty or longer than `MAX_VALUE_BYTES`.

Ranking (`rank`), the same in every store: a value whose normalised form equals the text's is
an exact match (score 1.0) and comes first; then values holding every word of the text (token
matches), scored by the fraction of the value's distinct words the text matched. Within a score
more documents come first, then the value (code point order), then the field's position in the
request. Values carried by no document are left out. Documents are counted score tier by score
tier, best first, until `limit` candidates are found, so a store counts only what it returns
(and the ties it must break)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import groupby
from typing import Any

from hoprag.errors import InvalidInputError, invalid
from hoprag.validation import check_field, check_int, check_text

__all__ = [
    "MAX_CANDIDATES",
    "MAX_LIMIT",
    "MAX_TEXT_CHARS",
    "MAX_VALUE_BYTES",
    "Candidate",
    "Match",
    "ResolveRequest",
    "check_resolve",
    "entity_values",
    "normalize",
    "rank",
    "rank_counted",
    "tiers",
    "words",
]

MAX_TEXT_CHARS = 200
"""The longest text `aresolve` accepts (characters)."""
MAX_WORDS = 16
"""The most words a text to resolve may have."""
MAX_LIMIT = 100
"""The most candidates one `aresolve` returns."""
MAX_VALUE_BYTES = 512
"""Values whose normalised form is longer than this (UTF-8) are not resolvable: an index
refuses long terms, and names are short."""
MAX_CANDIDATES = 10_000
"""The most values one text may match before ranking; beyond it `aresolve` asks for a more
specific text."""

_WORD = re.compile(r"[^\W_]+")


def _strip_marks(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def normalize(text: str) -> str:
    """`text` normalised for matching (see the module docstring)."""
    folded = _strip_marks(_strip_marks(text).casefold())
    return " ".join(folded.split())


def words(norm: str) -> frozenset[str]:
    """The distinct words (runs of letters and digits) of a normalised text."""
    return frozenset(_WORD.findall(norm))


def entity_values(value: Any) -> list[str]:
    """The strings of a field's value that can be resolved: the value itself when it is a
    string, the string elements of a list; nothing for other values."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list | tuple):
        return [v for v in value if isinstance(v, str)]
    return []


def catalogue_entry(value: str) -> tuple[str, frozenset[str]] | None:
    """(normalised form, words) of a string value, or None when it is not resolvable (empty
    once normalised, or longer than `MAX_VALUE_BYTES`)."""
    norm = normalize(value)
    if not norm or len(norm.encode("utf-8", "surrogatepass")) > MAX_VALUE_BYTES:
        return None
    return norm, words(norm)


@dataclass(frozen=True, slots=True)
class Candidate:
    """A value of `field` that the text may mean: `documents` documents carry it, `score` is
    1.0 for an exact match, else the fraction of the value's words the text matched. `exact`
    says whether the value's normalised form equals the text's; a token match whose words are
    all the value's words also scores 1.0 ("Keith, David" for "David Keith") but is not
    exact, so read exactness from `exact`, never from the score."""

    field: str
    value: Any
    documents: int
    score: float
    exact: bool = False


@dataclass(frozen=True, slots=True)
class Match:
    """A value found for a text before its documents are counted: `exact` when its
    normalised form equals the text's, `score` as in `Candidate`."""

    field: str
    value: str
    exact: bool
    score: float


@dataclass(frozen=True, slots=True)
class ResolveRequest:
    """A checked `aresolve` call: the text, its normalised form and words, the fields (each
    once, in the caller's order) and the limit."""

    text: str
    norm: str
    words: frozenset[str]
    fields: tuple[str, ...]
    limit: int

    def match(self, field: str, value: str, norm: str, value_words: Iterable[str]) -> Match | None:
        """The match of a catalogued value (its normalised form and words), or None."""
        if norm == self.norm:
            return Match(field, value, True, 1.0)
        have = frozenset(value_words)
        if have and self.words <= have:
            return Match(field, value, False, len(self.words) / len(have))
        return None


def check_resolve(text: Any, fields: Any, limit: Any) -> ResolveRequest:
    """The checked arguments of `aresolve`: `text` a string of 1..MAX_TEXT_CHARS characters
    with at least one letter or digit (and at most MAX_WORDS words), `fields` a non-empty
    sequence of field names, `limit` an int in 1..MAX_LIMIT."""
    allowed = f"a string of 1..{MAX_TEXT_CHARS} characters with a letter or digit"
    if not isinstance(text, str) or not text or len(text) > MAX_TEXT_CHARS:
        raise invalid("text", text, allowed)
    check_text(text, "text")
    if isinstance(fields, str | bytes) or not isinstance(fields, Sequence) or not fields:
        raise invalid("fields", fields, "a non-empty list of field names, e.g. ['cast']")
    checked = tuple(dict.fromkeys(check_field(f, what="a resolve field") for f in fields))
    n = check_int("limit", limit, minimum=1, maximum=MAX_LIMIT)
    norm = normalize(text)
    found = words(norm)
    if not found:
        raise invalid("text", text, allowed)
    if len(found) > MAX_WORDS:
        raise invalid("text", text, f"at most {MAX_WORDS} distinct words")
    if len(norm.encode("utf-8")) > MAX_VALUE_BYTES:
        allowed = f"a text whose normalised form has at most {MAX_VALUE_BYTES} bytes"
        raise invalid("text", text, allowed)
    return ResolveRequest(text, norm, found, checked, n)


def too_many(request: ResolveRequest, n: int) -> InvalidInputError:
    """The error for a text matching more than `MAX_CANDIDATES` values."""
    return InvalidInputError(
        f"text {request.text!r} matches more than {MAX_CANDIDATES} values of "
        f"{list(request.fields)} ({n} or more): add a word to narrow it",
        argument="text",
        value=request.text,
        allowed=f"a text matching at most {MAX_CANDIDATES} values",
    )


def tiers(request: ResolveRequest, matches: Iterable[Match]) -> list[list[Match]]:
    """The matches of the requested fields, each (field, value) once, grouped into score
    tiers, best first: exact matches, then token matches by falling score."""
    position = {f: i for i, f in enumerate(request.fields)}
    unique = {(m.field, m.value): m for m in matches if m.field in position}
    ordered = sorted(unique.values(), key=lambda m: (not m.exact, -m.score))
    return [list(g) for _, g in groupby(ordered, key=lambda m: (m.exact, m.score))]


def _add_tier(
    request: ResolveRequest, out: list[Candidate], tier: list[Match], counts: Sequence[int]
) -> bool:
    """Append a tier's candidates carried by documents, in their order; True once `out`
    holds `request.limit` of them."""
    position = {f: i for i, f in enumerate(request.fields)}
    found = [
        Candidate(m.field, m.value, n, m.score, m.exact)
        for m, n in zip(tier, counts, strict=True)
        if n > 0
    ]
    found.sort(key=lambda c: (-c.documents, c.value, position[c.field]))
    out.extend(found)
    return len(out) >= request.limit


async def rank(
    request: ResolveRequest,
    matches: Iterable[Match],
    count: Callable[[list[Match]], Awaitable[list[int]]],
) -> list[Candidate]:
    """The best `request.limit` candidates of `matches` (see the module docstring);
    `count(tier)` gives the number of documents carrying each match of a score tier, and is
    called tier by tier, best first, until the limit is reached."""
    out: list[Candidate] = []
    for tier in tiers(request, matches):
        if _add_tier(request, out, tier, await count(tier)):
            break
    return out[: request.limit]


def rank_counted(
    request: ResolveRequest, matches: Iterable[Match], counts: Mapping[tuple[str, str], int]
) -> list[Candidate]:
    """`rank` when every match's document count is known: `counts[(field, value)]`."""
    out: list[Candidate] = []
    for tier in tiers(request, matches):
        if _add_tier(request, out, tier, [counts[(m.field, m.value)] for m in tier]):
            break
    return out[: request.limit]
