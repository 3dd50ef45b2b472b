"""Edges from plain text: which documents mention other documents' titles.

Most documents carry no link metadata. `TitleLinker` finds, in a document's text, the titles
(and aliases) of the other documents, and `link_documents` writes the ids found into an ordinary
metadata field (a list of ids), which the edge `("mentions", "$id")` follows from a document to
those it mentions and `("$id", "mentions")` back.

The rules, in the order they apply:

* Titles and text are compared after Unicode NFKC normalisation and case folding, with every
  run of spaces, punctuation and symbols read as one space ("Saint-Denis" is "saint denis":
  `hoprag.text.normalisation`);
  a match starts and ends on a word boundary, so "Arts" is not found in "starts".
* Of overlapping matches the longest wins, and then the leftmost: "New York City" hides
  "New York" and "York" inside it.
* A title shorter than `min_chars` characters (an alias the user gave may be shorter) or
  made only of digits and punctuation is skipped (`short`); so is one found in more than
  `max_share` of the documents (`common`: a word like "Water" mentioned everywhere links
  nothing in particular) when there are at least `common_after` documents.
* A title shared by several documents links to all of them, up to `max_shared`; beyond that it
  is skipped (`ambiguous`). A title's exact form wins over an alias of another document:
  aliases, and the forms without a trailing "(...)" qualifier that `strip_qualifiers` adds
  ("Ed Wood (film)" -> "Ed Wood"), apply only where no document has that exact title.
* A document never links to itself; each id appears once, in the order of first mention.

Matching runs on an Aho-Corasick automaton (the `pyahocorasick` package), one pass over each
text whatever the number of titles.

The same linker finds the documents a question names: `TitleLinker(document_titles(docs))`
and `links(question)` (the multi-hop recipe starts from them too, `hoprag.recipes`)."""

from __future__ import annotations

import bisect
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hoprag.documents import Document
from hoprag.errors import invalid
from hoprag.text.normalisation import normalise

_QUALIFIER = re.compile(r"\s*\([^()]*\)\s*$")
_EXAMPLES = 5
SKIP_REASONS = ("short", "common", "ambiguous")


def _meaningful(form: str, min_chars: int) -> bool:
    return len(form) >= min_chars and any(c.isalpha() for c in form)


@dataclass
class LinkReport:
    """What a linking run did: documents read and linked, links written, titles matched
    against, and the titles skipped by reason (`short`, `common`, `ambiguous`) with examples."""

    documents: int = 0
    linked: int = 0
    links: int = 0
    titles: int = 0
    skipped: dict[str, int] = field(default_factory=lambda: dict.fromkeys(SKIP_REASONS, 0))
    examples: dict[str, list[str]] = field(default_factory=dict)

    @property
    def mean_out_degree(self) -> float:
        """Links per document read."""
        return self.links / self.documents if self.documents else 0.0

    def skip(self, reason: str, title: str) -> None:
        self.skipped[reason] += 1
        shown = self.examples.setdefault(reason, [])
        if len(shown) < _EXAMPLES:
            shown.append(title)

    def summary(self) -> str:
        """One line for people: what was linked and what was skipped."""
        skipped = ", ".join(f"{n} {r}" for r, n in self.skipped.items() if n) or "none"
        return (
            f"{self.linked} of {self.documents} documents linked, {self.links} links "
            f"(mean out-degree {self.mean_out_degree:.2f}), {self.titles} titles; "
            f"titles skipped: {skipped}"
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "documents": self.documents,
            "linked": self.linked,
            "links": self.links,
            "mean_out_degree": round(self.mean_out_degree, 4),
            "titles": self.titles,
            "skipped": dict(self.skipped),
            "examples": {r: list(v) for r, v in self.examples.items()},
        }


class TitleLinker:
    """Finds mentions of documents' titles (and aliases) in text; see the module docstring
    for the rules. Build it once from every document's title, then call `links` per text."""

    def __init__(
        self,
        titles: Iterable[tuple[str, str]],
        *,
        aliases: Mapping[str, Iterable[str]] | None = None,
        strip_qualifiers: bool = True,
        min_chars: int = 4,
        max_shared: int = 3,
    ) -> None:
        check_link_options(min_chars=min_chars, max_shared=max_shared)
        self.report = LinkReport()
        exact, derived = self._forms(titles, aliases or {}, strip_qualifiers)
        given = {normalise(str(a)) for names in (aliases or {}).values() for a in names}
        self._targets = self._choose(exact, derived, given, min_chars, max_shared)
        self.report.titles = len(self._targets)
        self._automaton = _automaton(self._targets)

    def _forms(
        self,
        titles: Iterable[tuple[str, str]],
        aliases: Mapping[str, Iterable[str]],
        strip_qualifiers: bool,
    ) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
        """Normalised form -> ids, for exact titles and for aliases (given or derived)."""
        exact: dict[str, set[str]] = {}
        derived: dict[str, set[str]] = {}
        for doc_id, title in titles:
            if not isinstance(title, str):
                raise invalid(f"title of document {doc_id!r}", title, "a string")
            exact.setdefault(normalise(title), set()).add(doc_id)
            bare = _QUALIFIER.sub("", title)
            if strip_qualifiers and bare and bare != title:
                derived.setdefault(normalise(bare), set()).add(doc_id)
        for doc_id, names in aliases.items():
            if isinstance(names, str):
                raise invalid(f"aliases of document {doc_id!r}", names, "a list of strings")
            for name in names:
                derived.setdefault(normalise(str(name)), set()).add(doc_id)
        return exact, derived

    def _choose(
        self,
        exact: dict[str, set[str]],
        derived: dict[str, set[str]],
        given: set[str],
        min_chars: int,
        max_shared: int,
    ) -> dict[str, tuple[str, ...]]:
        """The forms to match and their ids, after the `short` and `ambiguous` rules (the
        aliases a user gave are exempt from `min_chars`)."""
        chosen: dict[str, tuple[str, ...]] = {}
        for form in sorted({*exact, *derived}):
            ids = exact.get(form) or derived[form]
            if not _meaningful(form, 1 if form in given else min_chars):
                self.report.skip("short", form)
            elif len(ids) > max_shared:
                self.report.skip("ambiguous", form)
            else:
                chosen[form] = tuple(sorted(ids))
        return chosen

    def mentions(self, text: str) -> list[str]:
        """The title forms mentioned in `text`, in order: word-bounded, longest first where
        matches overlap."""
        if self._automaton is None:
            return []
        padded = f" {normalise(text)} "
        # Each form is matched with a space on both sides: every match is word-bounded.
        found = [(end + 2 - len(key), end, key[1:-1]) for end, key in self._automaton.iter(padded)]
        return _longest_first(found)

    def links(self, text: str, *, exclude: str | None = None) -> list[str]:
        """The ids of the documents whose titles `text` mentions, each once, in order of
        first mention, without `exclude` (the document's own id)."""
        out: dict[str, None] = {}
        for form in self.mentions(text):
            for doc_id in self._targets[form]:
                if doc_id != exclude:
                    out.setdefault(doc_id, None)
        return list(out)

    def targets(self, form: str) -> tuple[str, ...]:
        """The ids a normalised title form links to (empty if it is not matched)."""
        return self._targets.get(form, ())


def _longest_first(found: list[tuple[int, int, str]]) -> list[str]:
    """Of matches (start, end, form), those left when the longest are taken first (then the
    leftmost) and any overlapping a taken one is dropped; in text order."""
    starts: list[int] = []
    ends: list[int] = []
    forms: list[str] = []
    for start, end, form in sorted(found, key=lambda m: (m[0] - m[1], m[0])):
        i = bisect.bisect_right(starts, start)
        if (i and ends[i - 1] > start) or (i < len(starts) and starts[i] < end):
            continue
        starts.insert(i, start)
        ends.insert(i, end)
        forms.insert(i, form)
    return forms


def _automaton(targets: Mapping[str, Sequence[str]]) -> Any:
    """An Aho-Corasick automaton over the forms (None when there are none)."""
    if not targets:
        return None
    import ahocorasick

    automaton = ahocorasick.Automaton()
    for form in targets:
        automaton.add_word(f" {form} ", f" {form} ")
    automaton.make_automaton()
    return automaton


def link_documents(
    documents: Sequence[Document],
    *,
    field: str = "mentions",
    title_field: str = "title",
    aliases: Mapping[str, Iterable[str]] | None = None,
    strip_qualifiers: bool = True,
    min_chars: int = 4,
    max_shared: int = 3,
    max_share: float = 0.05,
    common_after: int = 200,
    progress: Callable[[int], None] | None = None,
) -> tuple[list[Document], LinkReport]:
    """Copies of `documents` with metadata `field` set to the ids of the other documents whose
    titles (metadata `title_field`, else the id) each one's content mentions, and the report.

    A title found in more than `max_share` of the documents is skipped as `common` once there
    are at least `common_after` documents (on fewer, a share says little). `progress` is called
    with the count of texts read so far, every 1,000 and at the end. Raises InvalidInputError
    for a bad option before reading any text, `field` equal to `title_field` among them (the
    titles would be replaced by the links)."""
    check_link_options(field=field, min_chars=min_chars, max_shared=max_shared,
                       max_share=max_share, title_field=title_field)  # fmt: skip
    linker = TitleLinker(
        document_titles(documents, title_field),
        aliases=aliases,
        strip_qualifiers=strip_qualifiers,
        min_chars=min_chars,
        max_shared=max_shared,
    )
    found = []
    for i, d in enumerate(documents, 1):
        found.append(linker.mentions(d.content))
        if progress is not None and (i % 1000 == 0 or i == len(documents)):
            progress(i)
    common = _common_forms(found, len(documents), max_share, common_after)
    for form in sorted(common):
        linker.report.skip("common", form)
    linker.report.titles -= len(common)
    out = []
    for doc, forms in zip(documents, found, strict=True):
        ids: dict[str, None] = {}
        for form in forms:
            if form not in common:
                ids.update((i, None) for i in linker.targets(form) if i != doc.id)
        out.append(_with_links(doc, field, list(ids)))
        linker.report.links += len(ids)
        linker.report.linked += bool(ids)
    linker.report.documents = len(documents)
    return out, linker.report


def check_link_options(
    *,
    field: str = "mentions",
    min_chars: int = 4,
    max_shared: int = 3,
    max_share: float = 0.05,
    title_field: str = "title",
) -> None:
    """Raise InvalidInputError naming the first bad option of `link_documents`: `field` must
    be a field name other than `title_field`, which the titles are read from."""
    if not isinstance(field, str) or not field or field.startswith("$"):
        raise invalid("field", field, "a metadata field name (not starting with '$')")
    if not isinstance(title_field, str) or not title_field:
        raise invalid("title_field", title_field, "a metadata field name")
    if field == title_field:
        raise invalid("field", field, f"a field other than title_field {title_field!r}",
                      hint="the links would replace the titles they are found by")  # fmt: skip
    for name, value in (("min_chars", min_chars), ("max_shared", max_shared)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise invalid(name, value, "an int of at least 1")
    if (
        isinstance(max_share, bool)
        or not isinstance(max_share, int | float)
        or not (0 < max_share <= 1)
    ):
        raise invalid("max_share", max_share, "a fraction in (0, 1]")


def document_titles(
    documents: Iterable[Document], title_field: str = "title"
) -> list[tuple[str, str]]:
    """(id, title) of each document, as `link_documents` matches them: its metadata
    `title_field` when that is a string, else its id. `TitleLinker(document_titles(docs))`
    finds the documents a text (a question) names."""
    return [(d.id, _title(d, title_field)) for d in documents]


def _title(doc: Document, title_field: str) -> str:
    value = doc.metadata.get(title_field, doc.id)
    return value if isinstance(value, str) else doc.id


def _common_forms(
    found: Sequence[Sequence[str]], documents: int, max_share: float, common_after: int
) -> set[str]:
    """The forms mentioned by more than `max_share` of the documents (none below
    `common_after` documents)."""
    if documents < common_after:
        return set()
    df = Counter(form for forms in found for form in set(forms))
    return {form for form, n in df.items() if n > max_share * documents}


def _with_links(doc: Document, field: str, ids: list[str]) -> Document:
    return Document(doc.id, doc.content, {**doc.metadata, field: ids}, doc.embedding)
