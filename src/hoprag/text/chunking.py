"""Chunking: long texts split into passages an embedder reads whole, with structural edges.

An embedding model reads a bounded number of tokens (MiniLM: 256 word pieces, about 180
English words) and ignores the rest, so a 20,000-character man page embedded whole is
represented by its first paragraph. `chunk_documents` splits each document's text into
passages of at most `max_words` words: sentences are packed in order, a passage ends at a
paragraph break when the next paragraph would not fit and the passage is at least half full,
and a sentence longer than `max_words` is cut at word boundaries. With `overlap_words`, a
passage starts with the last sentences of the one before (at most that many words). A word is
a run of non-space characters, and each Chinese or Japanese character counts as one, so texts
written without spaces are cut too.

Each passage is a `Document` with id `<parent id>#<n>` (n from 0, stable across runs: it
depends only on the text and the arguments), the parent's metadata, and the structural fields
`parent` (the source document's id), `chunk` (n), `prev` and `next` (the neighbouring
passages' ids, absent at the ends). With a `title` in the metadata and a content that starts
with it and a blank line (how `hoprag.datasets.jsonl` builds content), every passage starts
with the title, so each one says what it is about. Edges over the structure:
`("parent", "parent")` joins the passages of one document, `("next", "$id")` and
`("prev", "$id")` a passage's neighbours (`STRUCTURE_EDGES`)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from hoprag.documents import Document
from hoprag.errors import InvalidInputError, invalid

__all__ = [
    "DEFAULT_MAX_WORDS",
    "DEFAULT_OVERLAP_WORDS",
    "STRUCTURE_EDGES",
    "STRUCTURE_FIELDS",
    "chunk_documents",
    "chunk_text",
]

DEFAULT_MAX_WORDS = 160
"""Words per passage by default: about 210 MiniLM word pieces for English, within its 256."""
DEFAULT_OVERLAP_WORDS = 0
"""Words a passage repeats from the one before by default (none)."""
STRUCTURE_FIELDS = ("parent", "chunk", "prev", "next")
"""The metadata fields chunking writes; a document that already holds one is refused."""
STRUCTURE_EDGES = (("parent", "parent"), ("next", "$id"), ("prev", "$id"))
"""Edges over the structure: the other passages of a document, and a passage's neighbours."""

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_WORD = re.compile(f"[{_CJK}]|[^\\s{_CJK}]+")
_PARAGRAPH = re.compile(r"\n[ \t\r\f\v]*\n\s*")
_SENTENCE_END = re.compile(r"(?<=[.!?…。！？])\s+|(?<=[。！？])")


@dataclass(frozen=True, slots=True)
class _Piece:
    """A sentence (or a cut of a long one): its span in the text, its words, and whether it
    starts a paragraph."""

    start: int
    end: int
    words: int
    opens: bool


def _sentences(text: str, start: int, end: int) -> Iterable[tuple[int, int]]:
    """Spans of the sentences of `text[start:end]`, without surrounding spaces."""
    at = start
    for m in _SENTENCE_END.finditer(text, start, end):
        if m.start() > at:
            yield at, m.start()
        at = m.end()
    if at < end:
        yield at, end


def _cut(text: str, start: int, end: int, max_words: int, opens: bool) -> list[_Piece]:
    """The span as pieces of at most `max_words` words (one piece when it fits)."""
    spans = [(m.start(), m.end()) for m in _WORD.finditer(text, start, end)]
    pieces = []
    for i in range(0, len(spans), max_words):
        group = spans[i : i + max_words]
        pieces.append(_Piece(group[0][0], group[-1][1], len(group), opens and i == 0))
    return pieces


def _pieces(text: str, max_words: int) -> list[_Piece]:
    """Every sentence of `text`, paragraph by paragraph, long ones cut."""
    pieces: list[_Piece] = []
    at = 0
    bounds = [(m.start(), m.end()) for m in _PARAGRAPH.finditer(text)] + [(len(text), len(text))]
    for stop, resume in bounds:
        opens = True
        for s, e in _sentences(text, at, stop):
            cut = _cut(text, s, e, max_words, opens)
            pieces += cut
            opens = opens and not cut
        at = resume
    return pieces


def _paragraph_words(pieces: list[_Piece], i: int) -> int:
    """Words of the paragraph that piece `i` opens."""
    total = pieces[i].words
    for p in pieces[i + 1 :]:
        if p.opens:
            break
        total += p.words
    return total


def _groups(pieces: list[_Piece], max_words: int, overlap: int) -> list[list[_Piece]]:
    """The pieces packed into passages (see the module docstring)."""
    groups: list[list[_Piece]] = []
    current: list[_Piece] = []
    fresh = words = 0  # pieces new to this passage, and all its words
    for i, piece in enumerate(pieces):
        full = words + piece.words > max_words
        breaks = piece.opens and 2 * words >= max_words
        if fresh and (full or (breaks and words + _paragraph_words(pieces, i) > max_words)):
            groups.append(current)
            current = _tail(current, overlap, max_words - piece.words)
            fresh, words = 0, sum(p.words for p in current)
        current.append(piece)
        fresh += 1
        words += piece.words
    if fresh:
        groups.append(current)
    return groups


def _tail(group: list[_Piece], overlap: int, room: int) -> list[_Piece]:
    """The last pieces of `group` holding at most `overlap` words (and at most `room`), never
    the whole group."""
    tail: list[_Piece] = []
    words = 0
    for piece in reversed(group[1:]):
        if words + piece.words > min(overlap, room):
            break
        tail.insert(0, piece)
        words += piece.words
    return tail


def chunk_text(
    text: str, *, max_words: int = DEFAULT_MAX_WORDS, overlap_words: int = 0
) -> list[str]:
    """The passages of `text` (see the module docstring); none for a text without words."""
    max_words, overlap_words = _check_sizes(max_words, overlap_words)
    pieces = _pieces(text, max_words)
    return [text[g[0].start : g[-1].end] for g in _groups(pieces, max_words, overlap_words)]


def _check_sizes(max_words: Any, overlap_words: Any) -> tuple[int, int]:
    """The sizes, checked: `max_words` an int >= 1, `overlap_words` an int in 0..max_words-1."""
    if isinstance(max_words, bool) or not isinstance(max_words, int) or max_words < 1:
        raise invalid("max_words", max_words, "an int >= 1 (words per passage)")
    if (
        isinstance(overlap_words, bool)
        or not isinstance(overlap_words, int)
        or not 0 <= overlap_words < max_words
    ):
        raise invalid("overlap_words", overlap_words, f"an int from 0 to {max_words - 1}")
    return max_words, overlap_words


def _title_and_body(doc: Document) -> tuple[str, str]:
    """The prefix every passage starts with (the title and a blank line, when the content
    starts so) and the text to split."""
    title = doc.metadata.get("title")
    if isinstance(title, str) and title and doc.content.startswith(title + "\n\n"):
        return title + "\n\n", doc.content[len(title) + 2 :]
    return "", doc.content


def _chunks_of(doc: Document, max_words: int, overlap_words: int) -> list[Document]:
    """One document's passages; a document without words stays one passage."""
    taken = [f for f in STRUCTURE_FIELDS if f in doc.metadata]
    if taken:
        raise invalid(
            f"metadata of document {doc.id!r}",
            taken,
            f"no field named {', '.join(STRUCTURE_FIELDS)} (chunking writes them)",
        )
    prefix, body = _title_and_body(doc)
    texts = chunk_text(body, max_words=max_words, overlap_words=overlap_words) or [body.strip()]
    ids = [f"{doc.id}#{n}" for n in range(len(texts))]
    out = []
    for n, text in enumerate(texts):
        meta: dict[str, Any] = {**doc.metadata, "parent": doc.id, "chunk": n}
        if n:
            meta["prev"] = ids[n - 1]
        if n + 1 < len(ids):
            meta["next"] = ids[n + 1]
        out.append(Document(ids[n], prefix + text, meta))
    return out


def chunk_documents(
    documents: Iterable[Document],
    *,
    max_words: int = DEFAULT_MAX_WORDS,
    overlap_words: int = DEFAULT_OVERLAP_WORDS,
) -> list[Document]:
    """Every document's passages, in order (see the module docstring). A document's own
    embedding is not carried (each passage is embedded anew). Raises `InvalidInputError` for
    bad sizes, a document that is not a `Document`, metadata that already holds a structural
    field, or a passage id that is another document's id."""
    max_words, overlap_words = _check_sizes(max_words, overlap_words)
    if isinstance(documents, Document | str | bytes):
        raise invalid("documents", documents, "an iterable of Documents")
    docs = list(documents)
    for d in docs:
        if not isinstance(d, Document):
            raise invalid("documents", d, "Documents (hoprag.Document)")
    given = [d.id for d in docs]
    out = [c for d in docs for c in _chunks_of(d, max_words, overlap_words)]
    clash = sorted({c.id for c in out} & set(given)) or sorted(
        {i for i in given if given.count(i) > 1}
    )
    if clash:
        raise InvalidInputError(
            f"passage ids {', '.join(map(repr, clash[:5]))} would not be unique: each is a "
            "document's id too, or two documents have that id",
            argument="documents",
            value=clash,
            allowed="distinct document ids that no passage id '<id>#<n>' repeats",
        )
    return out
