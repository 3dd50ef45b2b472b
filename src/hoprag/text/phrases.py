"""Edges from shared names: each document's capitalised multi-word phrases ("Bank of England",
"Stan Lee") that a few other documents also contain, as a metadata field, so that the edge
spec `(field, field)` joins documents that name the same rare thing.

Titles (`hoprag.text.linking`) reach a document whose title another one mentions; shared
phrases reach documents that both mention a third thing without a page of its own, as
multi-hop questions often need (MuSiQue). A phrase held by many documents joins too much to mean
anything, so only phrases held by at most `max_documents` are kept.

A phrase is a run of capitalised words (a word whose first letter is upper case, in any
script) separated only by spaces, possibly joined by a short lower-case connector ("of",
"the", "de", ...), of at least two capitalised words, without a leading connector (the
sentence-initial "The" of "The Blue Lagoon" is dropped); it is compared in
`hoprag.text.normalisation`'s form. The first line of a document's content is taken as its
title and left out (its title is its own name, which title links already follow)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace

from hoprag.documents import Document
from hoprag.errors import invalid
from hoprag.text.normalisation import normalise

CONNECTORS = frozenset({"of", "the", "de", "du", "des", "la", "le", "von", "van", "der"})
"""Lower-case words a phrase may hold between two capitalised ones."""
_WORD = re.compile(r"[^\W_][\w'’\-]*")


def phrases_in(text: str) -> set[str]:
    """The capitalised multi-word phrases of `text`, normalised (see the module docstring)."""
    return {normalise(" ".join(run)) for run in _names(text) if _capitalised(run) >= 2}


def names_in(text: str) -> list[str]:
    """The capitalised runs of `text` of one capitalised word or more ("Paris", "Bank of
    England"), trimmed as phrases are, as written (not normalised), each once, in order of
    first appearance. Unlike phrases, single words count: a sentence's first word is one."""
    return list(dict.fromkeys(" ".join(run) for run in _names(text)))


def _names(text: str) -> Iterator[list[str]]:
    """The capitalised runs of `text` without a trailing connector (no part of a name) nor a
    leading one ("The Beatles"), the empty ones left out."""
    for run in _runs(text):
        while run and not run[-1][0].isupper():
            run.pop()
        if run and run[0].lower() in CONNECTORS:
            run = run[1:]
        if run:
            yield run


def _capitalised(run: list[str]) -> int:
    return sum(1 for w in run if w[0].isupper())


def _runs(text: str) -> Iterator[list[str]]:
    """Runs of capitalised words and connectors separated by nothing but spaces."""
    run: list[str] = []
    end = -1
    for m in _WORD.finditer(text):
        word = m.group(0)
        joined = run and text[end : m.start()].isspace()
        if word[0].isupper() and (joined or not run):
            run.append(word)
        elif joined and word in CONNECTORS and run[-1][0].isupper():
            run.append(word)
        else:
            if run:
                yield run
            run = [word] if word[0].isupper() else []
        end = m.end()
    if run:
        yield run


def link_phrases(
    documents: Sequence[Document], *, field: str = "phrases", max_documents: int = 3
) -> list[Document]:
    """Copies of `documents` with metadata `field` set to the phrases (sorted) that each one
    shares with at least one and at most `max_documents - 1` other documents; documents with
    none get an empty list. Raises InvalidInputError for a bad option before reading text."""
    if not isinstance(field, str) or not field or field.startswith("$"):
        raise invalid("field", field, "a metadata field name (not starting with '$')")
    if isinstance(max_documents, bool) or not isinstance(max_documents, int) or max_documents < 2:
        raise invalid("max_documents", max_documents, "an int of at least 2")
    found = [phrases_in(content_body(d.content)) for d in documents]
    holders: dict[str, int] = {}
    for phrases in found:
        for p in phrases:
            holders[p] = holders.get(p, 0) + 1
    return [
        replace(d, metadata={**d.metadata, field: _shared(phrases, holders, max_documents)})
        for d, phrases in zip(documents, found, strict=True)
    ]


def _shared(phrases: Iterable[str], holders: dict[str, int], most: int) -> list[str]:
    return sorted(p for p in phrases if 2 <= holders[p] <= most)


def content_body(content: str) -> str:
    """The content without its first line when it has more than one (the title)."""
    head, sep, rest = content.partition("\n")
    return rest if sep else head
