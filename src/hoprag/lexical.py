"""Lexical relevance: BM25 over an in-memory index, on the one tokenizer every store uses.

The tokenizer is `hoprag.text.tokens` (`tokenize`, `STOPWORDS`, `MAX_TERM_BYTES`, re-exported
here for the modules that import them from this one): text in the form of
`hoprag.text.normalisation`, split on spaces, English function words and terms of more than
`MAX_TERM_BYTES` bytes of UTF-8 dropped. `Bm25Index` scores documents for a query with Okapi
BM25 (k1 1.2, b 0.75, idf `ln(1 + (N - df + 0.5) / (df + 0.5))`, a query term counted once per
occurrence); equal scores are ordered by id, so two indexes of the same documents answer a
query identically. Its search holds the postings as numpy arrays (built on the first search
after a write) and gives `bm25_totals`' floats to the bit, which CassandraStore computes."""

from __future__ import annotations

import heapq
import math
from collections import Counter
from collections.abc import Callable, Iterable, Sequence

import numpy as np
from numpy.typing import NDArray

from hoprag.errors import invalid
from hoprag.text.tokens import MAX_TERM_BYTES as MAX_TERM_BYTES
from hoprag.text.tokens import STOPWORDS as STOPWORDS
from hoprag.text.tokens import tokenize as tokenize

K1 = 1.2
B = 0.75


def check_lexical_text(text: object) -> str:
    """`text` if it is a string to search for, else InvalidInputError."""
    if not isinstance(text, str):
        raise invalid("query", text, "a text to search for (lexical starts need the query text)")
    return text


def check_max_holders(max_holders: object) -> int | None:
    """`max_holders` if it is None (every term counts) or an int >= 1, else InvalidInputError."""
    if max_holders is None:
        return None
    if isinstance(max_holders, bool) or not isinstance(max_holders, int) or max_holders < 1:
        raise invalid("max_holders", max_holders, "None or an int >= 1")
    return max_holders


def idf(documents: int, frequency: int) -> float:
    """BM25's inverse document frequency of a term found in `frequency` of `documents`."""
    return math.log(1 + (documents - frequency + 0.5) / (frequency + 0.5))


def length_norm(length: int, mean: float) -> float:
    """BM25's length normalisation of a document of `length` terms (mean length `mean`)."""
    return K1 * (1 - B + B * length / mean) if mean else K1


Posting = tuple[str, int, int]
"""A document holding a term: (id, the term's count in it, the document's length in terms)."""


def bm25_totals(
    query: Counter[str],
    postings: Callable[[str], Sequence[Posting]],
    documents: int,
    total_length: int,
    keep: Callable[[str], bool] | None = None,
    max_holders: int | None = None,
) -> dict[str, float]:
    """Every candidate's BM25 score for the query's terms, summed term by term in the query's
    order over `postings(term)` (each term's idf and each document's length norm computed
    once): the one computation of every store, so that two stores holding the same documents
    give the same floats. With `keep`, only the ids it accepts; with `max_holders`, a term
    with more postings than that counts for nothing."""
    if not documents:
        return {}
    mean = total_length / documents
    totals: dict[str, float] = {}
    norms: dict[str, float] = {}
    for term, times in query.items():
        holders = postings(term)
        if not holders or (max_holders is not None and len(holders) > max_holders):
            continue
        weight = idf(documents, len(holders)) * times
        for doc_id, tf, length in holders:
            if keep is not None and doc_id not in totals and not keep(doc_id):
                continue
            norm = norms.get(doc_id)
            if norm is None:
                norm = norms[doc_id] = length_norm(length, mean)
            totals[doc_id] = totals.get(doc_id, 0.0) + weight * tf * (K1 + 1) / (tf + norm)
    return totals


def bm25_among(
    query: Counter[str],
    postings: Callable[[str], Sequence[Posting]],
    keep: Callable[[str], bool],
    max_holders: int | None = None,
) -> dict[str, float]:
    """BM25 scores with the statistics of the documents `keep` accepts among those holding a
    query term: their count, their mean length and each term's holders among them stand for
    the collection's, so that no score depends on a document `keep` refuses (a store view's
    lexical search: its scores say nothing of the documents outside it). With `max_holders`,
    a term held by more of them counts for nothing and its holders are not counted."""
    held = {term: [p for p in postings(term) if keep(p[0])] for term in query}
    if max_holders is not None:
        held = {t: found for t, found in held.items() if len(found) <= max_holders}
        query = Counter({t: n for t, n in query.items() if t in held})
    lengths = {doc_id: length for found in held.values() for doc_id, _, length in found}
    return bm25_totals(query, held.__getitem__, len(lengths), sum(lengths.values()))


def best(totals: dict[str, float], k: int) -> list[tuple[str, float]]:
    """The `k` best (id, score), best first, equal scores by id."""
    return heapq.nsmallest(k, totals.items(), key=lambda cs: (-cs[1], cs[0]))


class _Arrays:
    """An index's postings as arrays, its documents as rows in id order, for `search`: built
    on the first search after a write (a term's arrays on its first search). The scores are
    `bm25_totals`' to the bit: the same operations on the same floats, summed in the same
    order, so equal scores stay equal and are ordered by id (by row)."""

    def __init__(self, index: Bm25Index) -> None:
        self.index = index
        self.ids = sorted(index._terms)
        self.row = {doc_id: i for i, doc_id in enumerate(self.ids)}
        lengths = np.array([index._lengths[d] for d in self.ids], dtype=np.float64)
        documents = len(self.ids)
        mean = index._total_length / documents if documents else 0.0
        self.norms = K1 * (1 - B + B * lengths / mean) if mean else np.full(documents, K1)
        self.terms: dict[str, tuple[NDArray[np.intp], NDArray[np.float64]]] = {}

    def postings(self, term: str) -> tuple[NDArray[np.intp], NDArray[np.float64]]:
        """The rows holding `term` (ascending) and its count in each."""
        found = self.terms.get(term)
        if found is None:
            holders = sorted(self.row[d] for d in self.index._postings.get(term, ()))
            counts = [self.index._terms[self.ids[r]][term] for r in holders]
            found = self.terms[term] = (
                np.array(holders, dtype=np.intp),
                np.array(counts, dtype=np.float64),
            )
        return found

    def search(
        self, query: Counter[str], k: int, keep: Callable[[str], bool] | None
    ) -> list[tuple[str, float]]:
        """The `k` best (id, score) for the query's terms among the ids `keep` accepts."""
        documents = len(self.ids)
        totals = np.zeros(documents)
        held = np.zeros(documents, dtype=bool)
        for term, times in query.items():
            rows, counts = self.postings(term)
            if not len(rows):
                continue
            weight = idf(documents, len(rows)) * times
            totals[rows] += weight * counts * (K1 + 1) / (counts + self.norms[rows])
            held[rows] = True
        rows = np.flatnonzero(held)
        scores = totals[rows]
        if keep is None and k < len(rows):  # only the rows that can be among the k best
            worst = np.partition(-scores, k - 1)[k - 1]
            close = -scores <= worst
            rows, scores = rows[close], scores[close]
        order = np.lexsort((rows, -scores))
        found: list[tuple[str, float]] = []
        for i in order.tolist():
            if len(found) == k:
                break
            doc_id = self.ids[rows[i]]
            if keep is None or keep(doc_id):
                found.append((doc_id, float(scores[i])))
        return found


class Bm25Index:
    """Term statistics of a set of documents and BM25 search over them. Adding an id again
    replaces its text; `remove` takes one out."""

    def __init__(self) -> None:
        self._terms: dict[str, Counter[str]] = {}
        self._lengths: dict[str, int] = {}
        self._postings: dict[str, set[str]] = {}
        self._total_length = 0
        self._arrays: _Arrays | None = None

    def __len__(self) -> int:
        return len(self._terms)

    def add(self, doc_id: str, text: str) -> None:
        """Index (or index again) document `doc_id` with `text`."""
        self.remove(doc_id)
        self._arrays = None
        terms = Counter(tokenize(text))
        self._terms[doc_id] = terms
        self._lengths[doc_id] = length = sum(terms.values())
        self._total_length += length
        for term in terms:
            self._postings.setdefault(term, set()).add(doc_id)

    def remove(self, doc_id: str) -> None:
        """Take `doc_id` out of the index (nothing happens if it is not in)."""
        terms = self._terms.pop(doc_id, None)
        if terms is None:
            return
        self._arrays = None
        self._total_length -= self._lengths.pop(doc_id)
        for term in terms:
            holders = self._postings[term]
            holders.discard(doc_id)
            if not holders:
                del self._postings[term]

    def score(self, doc_id: str, query_terms: Iterable[str]) -> float:
        """The BM25 score of one indexed document for the query's terms (0.0 if it has none)."""
        if doc_id not in self._terms:
            return 0.0
        totals = self._totals(Counter(query_terms), doc_id.__eq__)
        return totals.get(doc_id, 0.0)

    def search(
        self,
        query: str,
        k: int,
        *,
        keep: Callable[[str], bool] | None = None,
        max_holders: int | None = None,
    ) -> list[tuple[str, float]]:
        """The `k` best (id, score) for `query`, best first, equal scores by id; only
        documents holding at least one query term, and (with `keep`) only ids it accepts.
        With `max_holders`, the terms held by more documents are left out (their postings
        are not read)."""
        if isinstance(k, bool) or not isinstance(k, int) or k < 0:
            raise invalid("k", k, "an int >= 0")
        most = check_max_holders(max_holders)
        terms = Counter(tokenize(query))
        if most is not None:
            terms = Counter({t: n for t, n in terms.items() if self.holders(t) <= most})
        if k == 0 or not terms:
            return []
        if self._arrays is None:
            self._arrays = _Arrays(self)
        return self._arrays.search(terms, k, keep)

    def holders(self, term: str) -> int:
        """How many indexed documents hold `term`."""
        return len(self._postings.get(term, ()))

    def postings(self, term: str) -> list[Posting]:
        """The documents holding `term`, with its count in each and their lengths."""
        holders = self._postings.get(term, ())
        return [(d, self._terms[d][term], self._lengths[d]) for d in holders]

    def _totals(self, query: Counter[str], keep: Callable[[str], bool] | None) -> dict[str, float]:
        """Every candidate's BM25 score (`bm25_totals` over this index's postings)."""
        return bm25_totals(query, self.postings, len(self._terms), self._total_length, keep)
