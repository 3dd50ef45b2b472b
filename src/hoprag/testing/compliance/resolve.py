"""Entity resolution (`aresolve`): exact then token matches with document counts, the same
normalisation in every store, and text that only ever reaches a store as a value."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from hoprag.embeddings.hash import HashEmbedding
from hoprag.errors import InvalidInputError
from hoprag.resolve import Candidate
from hoprag.stores.base import Store
from hoprag.testing.compliance.support import (
    Contract,
    StoreFactory,
    _store_for,
    _takes_fields,
    writes,
)
from hoprag.testing.data import (
    COMPLIANCE_DIM,
    RESOLVE_FIELDS,
    resolve_documents,
)


class ResolveCompliance(Contract):
    """Entity resolution (`aresolve`): exact then token matches with document counts, the same"""

    # -- entity resolution (aresolve) -------------------------------------------------------

    @pytest_asyncio.fixture
    async def names(
        self, request: pytest.FixtureRequest, store_factory: StoreFactory
    ) -> AsyncIterator[Any]:
        emb, docs = HashEmbedding(COMPLIANCE_DIM), resolve_documents()
        fields = {"fields": dict(RESOLVE_FIELDS)} if _takes_fields(store_factory) else {}
        yield await _store_for(request, store_factory, emb, docs, **fields)

    async def test_resolve_ranks_exact_then_token_matches_with_document_counts(
        self, names: Store
    ) -> None:
        got = await names.aresolve("fonda", ["cast"])
        assert [(c.field, c.value, c.documents, round(c.score, 4)) for c in got] == [
            ("cast", "Fonda", 1, 1.0),
            ("cast", "Henry Fonda", 2, 0.5),
            ("cast", "Jane Fonda", 2, 0.5),
            ("cast", "Bridget Fonda", 1, 0.5),
            ("cast", "JÁNE FONDA", 1, 0.5),
            ("cast", "Peter Fonda", 1, 0.5),
            ("cast", "Jane Fonda-Smith", 1, 0.3333),
        ]
        assert all(isinstance(c, Candidate) for c in got)

    async def test_resolve_with_a_filter_counts_only_the_documents_passing_it(
        self, names: Store
    ) -> None:
        # How a store view resolves: a value only documents outside the filter carry is left
        # out, and a count is of the documents passing it (r0, r1 and r2 are Lumet's, Pakula's
        # and Koster's films).
        directors = {"director": {"$in": ["Sidney Lumet", "Alan J. Pakula", "Henry Koster"]}}
        got = await names.aresolve("fonda", ["cast"], filter=directors)
        assert [(c.value, c.documents) for c in got] == [
            ("Henry Fonda", 2),
            ("Jane Fonda", 2),
            ("Peter Fonda", 1),
        ]
        assert await names.aresolve("bridget", ["cast"], filter={"director": "Nobody"}) == []

    async def test_resolve_ignores_case_accents_and_spaces_across_fields(
        self, names: Store
    ) -> None:
        got = await names.aresolve("  jane   FÖNDA ", ["cast", "director"])
        assert [(c.field, c.value, c.documents, round(c.score, 4)) for c in got] == [
            ("cast", "Jane Fonda", 2, 1.0),
            ("director", "Jane Fonda", 1, 1.0),
            ("cast", "JÁNE FONDA", 1, 1.0),
            ("cast", "Jane Fonda-Smith", 1, 0.6667),
        ]
        lumet = await names.aresolve("sidney lumet", ["director"])
        assert [(c.value, c.documents, c.score) for c in lumet] == [
            ("Sidney  Lumet", 1, 1.0),
            ("Sidney Lumet", 1, 1.0),
        ]

    async def test_resolve_says_exact_only_for_the_same_normalised_name(self, names: Store) -> None:
        """Exactness is carried, never read off the score: "Keith, David" holds the words of
        both "Keith David" and "David Keith" (score 1.0 each) and equals neither."""
        reordered = await names.aresolve("Keith, David", ["writer"])
        assert {(c.value, c.score, c.exact) for c in reordered} == {
            ("Keith David", 1.0, False),
            ("David Keith", 1.0, False),
        }
        same = await names.aresolve("keith  DAVID", ["writer"])
        assert [(c.value, c.exact) for c in same] == [("Keith David", True), ("David Keith", False)]
        fonda = await names.aresolve("fonda", ["cast"])
        assert [c.exact for c in fonda] == [True] + [False] * (len(fonda) - 1)

    async def test_resolve_limit_keeps_the_best(self, names: Store) -> None:
        got = await names.aresolve("fonda", ["cast"], limit=2)
        assert [c.value for c in got] == ["Fonda", "Henry Fonda"]

    async def test_resolve_reaches_nested_fields_and_skips_non_strings(self, names: Store) -> None:
        got = await names.aresolve("jane", ["crew.lead"])
        assert [(c.field, c.value, c.documents) for c in got] == [("crew.lead", "Jane Fonda", 1)]
        # r7 holds 1, True, None and a nested list in cast: none of them is a resolvable name.
        assert await names.aresolve("1", ["cast"]) == []
        assert await names.aresolve("true", ["cast"]) == []

    @writes
    async def test_resolve_leaves_out_values_no_document_carries_any_more(
        self, names: Store
    ) -> None:
        replaced = next(d for d in resolve_documents() if d.id == "r5")
        replaced.metadata = {"cast": ["Nobody Else"], "director": "Nobody"}
        await names.aadd([replaced])
        got = await names.aresolve("fonda", ["cast"])
        assert "Fonda" not in [c.value for c in got]
        assert [(c.value, c.documents) for c in await names.aresolve("nobody else", ["cast"])] == [
            ("Nobody Else", 1)
        ]

    @pytest.mark.parametrize(
        "text",
        ["' OR 1=1 --", "%s", "x'); DROP TABLE docs; --", "SELECT * FROM docs", 'a\\\' ; "b"'],
    )
    async def test_resolve_text_that_looks_like_cql_matches_nothing(
        self, names: Store, text: str
    ) -> None:
        assert await names.aresolve(text, ["cast", "director"]) == []
        # the store still answers (nothing was executed as query text)
        assert [c.value for c in await names.aresolve("peter", ["cast"])] == ["Peter Fonda"]

    async def test_resolve_finds_values_that_look_like_cql_as_plain_values(
        self, names: Store
    ) -> None:
        got = await names.aresolve("o'brien; drop table x; --", ["cast"])
        assert [(c.value, c.documents, c.score) for c in got] == [
            ("O'Brien; DROP TABLE x; --", 1, 1.0)
        ]

    @pytest.mark.parametrize(
        ("text", "fields", "limit", "argument"),
        [
            ("", ["cast"], 10, "text"),
            ("   ", ["cast"], 10, "text"),
            ("!!! --", ["cast"], 10, "text"),
            (5, ["cast"], 10, "text"),
            ("x" * 201, ["cast"], 10, "text"),
            ("\ud800", ["cast"], 10, "text"),
            ("fonda", "cast", 10, "fields"),
            ("fonda", [], 10, "fields"),
            ("fonda", ["$id"], 10, "a resolve field"),
            ("fonda", ["cast"], 0, "limit"),
            ("fonda", ["cast"], 101, "limit"),
            ("fonda", ["cast"], True, "limit"),
        ],
    )
    async def test_bad_resolve_input_is_invalid_input(
        self, names: Store, text: Any, fields: Any, limit: Any, argument: str
    ) -> None:
        with pytest.raises(InvalidInputError) as err:
            await names.aresolve(text, fields, limit=limit)
        assert err.value.argument == argument
