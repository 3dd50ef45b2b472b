"""Lexical relevance: the one tokenizer every store uses, and BM25 over an in-memory index.

`tokenize` reads text as `hoprag.linking.normalise` does (NFKC, case-folded, punctuation and
symbols as spaces), splits it on spaces and drops a short list of English function words, so
"The Quokka's island!" is `["quokka", "s", "island"]`. `Bm25Index` scores documents for a query
with Okapi BM25 (k1 1.2, b 0.75, idf `ln(1 + (N - df + 0.5) / (df + 0.5))`, a query term
counted once per occurrence); equal scores are ordered by id, so two indexes of the same
documents answer a query identically."""

from __future__ import annotations

import heapq
import math
from collections import Counter
from collections.abc import Callable, Iterable

from hoprag.errors import invalid
from hoprag.linking import normalise

STOPWORDS = frozenset(
    "a an and are as at be but by for from had has have he her his i in is it its of on or "
    "she that the their them they this to was were which who whom with".split()
)
"""Words too common to say anything about relevance (dropped by `tokenize`)."""

K1 = 1.2
B = 0.75


def tokenize(text: str) -> list[str]:
    """The terms of `text`, in order (see the module docstring)."""
    return [t for t in normalise(text).split(" ") if t and t not in STOPWORDS]


def check_lexical_text(text: object) -> str:
    """`text` if it is a string to search for, else InvalidInputError."""
    if not isinstance(text, str):
        raise invalid("query", text, "a text to search for (lexical starts need the query text)")
    return text


def idf(documents: int, frequency: int) -> float:
    """BM25's inverse document frequency of a term found in `frequency` of `documents`."""
    return math.log(1 + (documents - frequency + 0.5) / (frequency + 0.5))


class Bm25Index:
    """Term statistics of a set of documents and BM25 search over them. Adding an id again
    replaces its text; `remove` takes one out."""

    def __init__(self) -> None:
        self._terms: dict[str, Counter[str]] = {}
        self._postings: dict[str, set[str]] = {}
        self._total_length = 0

    def __len__(self) -> int:
        return len(self._terms)

    def add(self, doc_id: str, text: str) -> None:
        """Index (or index again) document `doc_id` with `text`."""
        self.remove(doc_id)
        terms = Counter(tokenize(text))
        self._terms[doc_id] = terms
        self._total_length += sum(terms.values())
        for term in terms:
            self._postings.setdefault(term, set()).add(doc_id)

    def remove(self, doc_id: str) -> None:
        """Take `doc_id` out of the index (nothing happens if it is not in)."""
        terms = self._terms.pop(doc_id, None)
        if terms is None:
            return
        self._total_length -= sum(terms.values())
        for term in terms:
            holders = self._postings[term]
            holders.discard(doc_id)
            if not holders:
                del self._postings[term]

    def score(self, doc_id: str, query_terms: Iterable[str]) -> float:
        """The BM25 score of one indexed document for the query's terms (0.0 if it has none)."""
        terms = self._terms.get(doc_id)
        if terms is None:
            return 0.0
        n = len(self._terms)
        mean = self._total_length / n
        norm = K1 * (1 - B + B * sum(terms.values()) / mean) if mean else K1
        total = 0.0
        for term in query_terms:
            tf = terms.get(term, 0)
            if tf:
                total += idf(n, len(self._postings[term])) * tf * (K1 + 1) / (tf + norm)
        return total

    def search(
        self, query: str, k: int, *, keep: Callable[[str], bool] | None = None
    ) -> list[tuple[str, float]]:
        """The `k` best (id, score) for `query`, best first, equal scores by id; only
        documents holding at least one query term, and (with `keep`) only ids it accepts."""
        if isinstance(k, bool) or not isinstance(k, int) or k < 0:
            raise invalid("k", k, "an int >= 0")
        totals = self._totals(Counter(tokenize(query)), keep)
        best = heapq.nsmallest(k, totals.items(), key=lambda cs: (-cs[1], cs[0]))
        return best

    def _totals(self, query: Counter[str], keep: Callable[[str], bool] | None) -> dict[str, float]:
        """Every candidate's BM25 score, summed term by term over the postings (each term's
        idf and each document's length norm computed once per search)."""
        n = len(self._terms)
        if not n:
            return {}
        mean = self._total_length / n
        totals: dict[str, float] = {}
        norms: dict[str, float] = {}
        for term, times in query.items():
            holders = self._postings.get(term)
            if not holders:
                continue
            weight = idf(n, len(holders)) * times
            for doc_id in holders:
                if keep is not None and doc_id not in totals and not keep(doc_id):
                    continue
                norm = norms.get(doc_id)
                if norm is None:
                    terms = self._terms[doc_id]
                    size = sum(terms.values())
                    norm = norms[doc_id] = K1 * (1 - B + B * size / mean) if mean else K1
                tf = self._terms[doc_id][term]
                totals[doc_id] = totals.get(doc_id, 0.0) + weight * tf * (K1 + 1) / (tf + norm)
        return totals
