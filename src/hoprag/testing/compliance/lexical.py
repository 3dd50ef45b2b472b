"""Lexical starts (`alexical`): BM25 over the same tokens within the filter, kept up to date
by writes, and a traversal starting from the lexical matches."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from hoprag.documents import Document
from hoprag.engine.traversal import atraverse
from hoprag.errors import InvalidInputError
from hoprag.filters import compile_filter, matches
from hoprag.lexical import Bm25Index, best, bm25_among, tokenize
from hoprag.stores.base import Store
from hoprag.strategies import Eager
from hoprag.testing.compliance.support import (
    TOL,
    Contract,
    _cos,
    _query,
    writes,
)
from hoprag.testing.data import (
    COMPLIANCE_DIM,
)


def _anything(_: str) -> bool:
    return True


class LexicalCompliance(Contract):
    """Lexical starts (`alexical`): BM25 over the same tokens within the filter, kept up to date"""

    # -- lexical search (alexical) ----------------------------------------------------------

    @pytest.mark.parametrize(
        ("text", "flt"),
        [
            ("mammal fish", None),
            ("document about bird", {"type": {"$in": ["bird", "insect"]}}),
            ("Document 3 ABOUT birds, bird!", None),
            ("the of and", None),  # only function words: no term, no hit
        ],
    )
    async def test_lexical_search_ranks_as_bm25_over_the_same_tokens_within_the_filter(
        self, store: Store, docs: list[Document], text: str, flt: dict[str, Any] | None
    ) -> None:
        reference = Bm25Index()
        for d in docs:
            reference.add(d.id, d.content)
        passing = {d.id for d in docs if matches(compile_filter(flt), d.metadata)}
        want = reference.search(text, 10, keep=passing.__contains__)
        q = _query()
        prepared = await store.aprepare(q, flt)
        hits = await prepared.alexical(text, k=10)
        assert [h.id for h in hits] == [i for i, _ in want]
        assert [h.lexical for h in hits] == pytest.approx([s for _, s in want], rel=1e-9)
        by_id = {d.id: d for d in docs}
        for h in hits:
            assert h.score == pytest.approx(_cos(by_id[h.id], q), abs=TOL)
        assert len(await prepared.alexical(text, k=2)) == min(2, len(want))

    @pytest.mark.parametrize("flt", [None, {"type": {"$in": ["bird", "insect"]}}])
    @pytest.mark.parametrize("filtered_statistics", [False, True])
    async def test_terms_held_by_more_than_max_holders_count_for_nothing(
        self,
        store: Store,
        docs: list[Document],
        flt: dict[str, Any] | None,
        filtered_statistics: bool,
    ) -> None:
        """With `max_holders`, a query term held by more documents of the search's statistics
        (the store's, or with `filtered_statistics` the filter's passing holders) is left out:
        the ranking is BM25 over the other terms, the same in every store."""
        passing = {d.id for d in docs if matches(compile_filter(flt), d.metadata)}
        index = Bm25Index()
        for d in docs:
            index.add(d.id, d.content)
        text = "document about bird"
        keep = passing.__contains__ if filtered_statistics else _anything
        held = {t: sum(1 for p in index.postings(t) if keep(p[0])) for t in ("bird", "document")}
        most = held["bird"]
        assert held["document"] > most  # the cut leaves "document" out
        if filtered_statistics:
            query = Counter(tokenize(text))
            want = best(bm25_among(query, index.postings, passing.__contains__, most), 10)
        else:
            want = index.search(text, 10, keep=passing.__contains__, max_holders=most)
        assert [i for i, _ in want] and all(i in passing for i, _ in want)
        prepared = await store.aprepare(_query(), flt)
        hits = await prepared.alexical(text, k=10, filtered_statistics=filtered_statistics,
                                       max_holders=most)  # fmt: skip
        assert [h.id for h in hits] == [i for i, _ in want]
        assert [h.lexical for h in hits] == pytest.approx([s for _, s in want], rel=1e-9)
        with pytest.raises(InvalidInputError, match="max_holders must be None or an int >= 1"):
            await prepared.alexical(text, k=3, max_holders=0)

    @writes
    async def test_lexical_search_follows_replaced_and_added_documents(
        self, store: Store, docs: list[Document]
    ) -> None:
        """A document added again with other text and new documents (one id twice in one
        add: the last counts) change the terms, the lengths and the document count BM25
        reads: the ranking is that of an index of the documents as they now are."""
        vec = [0.0, 1.0] + [0.0] * (COMPLIANCE_DIM - 2)
        await store.aadd([Document("d1", "bird bird feather song", {"type": "bird"}, vec)])
        await store.aadd(
            [
                Document("x1", "mammal draft", {"type": "new"}, vec),
                Document("x2", "fish fin gill", {"type": "new"}, vec),
                Document("x1", "a fish and a mammal with fur", {"type": "new"}, vec),
            ]
        )
        now = {d.id: d.content for d in docs}
        now |= {"d1": "bird bird feather song", "x2": "fish fin gill"}
        now["x1"] = "a fish and a mammal with fur"
        reference = Bm25Index()
        for doc_id, content in now.items():
            reference.add(doc_id, content)
        prepared = await store.aprepare(_query())
        for text in ("mammal fish", "bird song", "draft"):
            want = reference.search(text, 10)
            hits = await prepared.alexical(text, k=10)
            assert [h.id for h in hits] == [i for i, _ in want], text
            assert [h.lexical for h in hits] == pytest.approx([s for _, s in want], rel=1e-9)

    async def test_a_traversal_starts_from_the_lexical_matches_and_counts_the_search(
        self, store: Store
    ) -> None:
        strategy = Eager(select_k=10, start_k=0, lexical_k=2, adjacent_k=10, max_depth=1)
        result = await atraverse("insect legs", store=store, edges=[("cites", "$id")],
                                 strategy=strategy, query_embedding=_query())  # fmt: skip
        starts = [n for n in result if n.depth == 0]
        assert [n.id for n in starts] == ["d10", "d9"]  # the insects, equal scores, by id
        assert all(n.extra_metadata["_lexical_score"] > 0 for n in starts)
        assert {n.id for n in result if n.depth == 1} == {"d8"}  # d10 cites d9 and d8
        assert result.stats.hops[0].queries["lexical"] == 1
        assert "lexical=1" in result.stats.explain()
        with pytest.raises(InvalidInputError, match="query text"):
            await atraverse(None, store=store, edges=[], strategy=strategy,
                            query_embedding=_query())  # fmt: skip
