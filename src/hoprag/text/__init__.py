"""Text: what hoprag reads out of a document's words, in one form shared by every feature.

* `normalise` (`hoprag.text.normalisation`): the form every comparison of text uses
  (NFKC, case-folded, punctuation and symbols as spaces).
* `tokenize`, `STOPWORDS`, `MAX_TERM_BYTES` (`hoprag.text.tokens`): the terms of a text, the
  one tokenizer every store's lexical search (`hoprag.lexical`'s BM25) uses.
* `TitleLinker`, `link_documents`, `LinkReport`, `check_link_options`, `document_titles`
  (`hoprag.text.linking`): edges from the titles a text mentions, and the documents a
  question names.
* `phrases_in`, `link_phrases` (`hoprag.text.phrases`): edges from rare capitalised phrases
  that a few documents share; `names_in`, every capitalised run, for a search that follows
  up a passage's names (`hoprag.requery`).
* `chunk_documents`, `chunk_text`, `STRUCTURE_EDGES` (`hoprag.text.chunking`): long texts as
  passages an embedder reads whole, with `parent`, `prev` and `next` fields to follow.

The package imports only the vocabulary (`hoprag.documents`, `hoprag.errors`,
`hoprag.validation`), the standard library and, lazily for linking, pyahocorasick: no store,
engine, command or embedding model."""

from __future__ import annotations

from hoprag.text.chunking import STRUCTURE_EDGES, chunk_documents, chunk_text
from hoprag.text.linking import (
    LinkReport,
    TitleLinker,
    check_link_options,
    document_titles,
    link_documents,
)
from hoprag.text.normalisation import normalise
from hoprag.text.phrases import link_phrases, names_in, phrases_in
from hoprag.text.tokens import MAX_TERM_BYTES, STOPWORDS, tokenize

__all__ = [
    "MAX_TERM_BYTES",
    "STOPWORDS",
    "STRUCTURE_EDGES",
    "LinkReport",
    "TitleLinker",
    "check_link_options",
    "chunk_documents",
    "chunk_text",
    "document_titles",
    "link_documents",
    "link_phrases",
    "names_in",
    "normalise",
    "phrases_in",
    "tokenize",
]
