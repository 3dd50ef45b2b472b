"""Store views (`Store.restricted`) on MemoryStore: the property that nothing outside the view
is returned, counted or named (tests/view_checks.py, also run on Cassandra), and the view's
own behaviour: narrowing, writes, errors, explain."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hoprag import Document, Eager, atraverse
from hoprag.embeddings import HashEmbedding
from hoprag.errors import InvalidInputError
from hoprag.stores import MemoryStore
from hoprag.stores.views import RestrictedStore
from view_checks import (
    EDGES,
    check_lexical_score_through_a_view_ignores_other_tenants,
    check_range_through_a_view_ignores_other_tenants,
    check_view,
    check_writes_reach_only_their_own_tenant,
    check_writes_through_a_view_stay_out_of_other_views,
    corpus,
    range_outcome,
)

EMB = HashEmbedding(16)


def _store(seed: int) -> tuple[MemoryStore, list[Document]]:
    docs = corpus(seed)
    store = MemoryStore(embedding=EMB)
    store.add(docs)
    return store, docs


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6))
async def test_no_read_through_a_view_returns_counts_or_names_a_document_outside_it(
    seed: int,
) -> None:
    store, docs = _store(seed)
    await check_view(store, docs, seed, rounds=2)


async def test_a_view_of_a_view_holds_what_passes_both_access_filters() -> None:
    store, docs = _store(7)
    acme = store.restricted({"tenant": "acme"})
    recent = acme.restricted({"year": {"$gte": 2005}})
    assert isinstance(recent, RestrictedStore) and recent.store is store
    want = {d.id for d in docs if d.metadata["tenant"] == "acme" and d.metadata["year"] >= 2005}
    got = await recent.aget([d.id for d in docs], include_embeddings=False)
    assert {h.id for h in got} == want
    # A caller's filter naming another tenant finds nothing: it is ANDed, never ORed.
    assert await recent.aget([d.id for d in docs], filter={"tenant": "bolt"}) == []


async def test_writes_through_a_view_refuse_documents_outside_it_and_write_nothing() -> None:
    store, docs = _store(3)
    view = store.restricted({"tenant": "acme"})
    outsider = next(d for d in docs if d.metadata["tenant"] != "acme")
    fresh = Document("new1", "fresh", {"tenant": "acme", "kw": ["river"]})
    with pytest.raises(InvalidInputError, match="outside this store view") as e:
        await view.aadd([fresh, Document("new2", "x", {"tenant": "bolt"})])
    assert e.value.argument == "documents" and e.value.value == ["new2"]
    # Taking over a stored document of another tenant by its id is refused too.
    with pytest.raises(InvalidInputError, match="would replace documents outside"):
        await view.aadd([fresh, Document(outsider.id, "mine now", {"tenant": "acme"})])
    assert await store.aget(["new1", "new2"]) == []  # nothing of either batch was written
    [kept] = await store.aget([outsider.id])
    assert kept.document.metadata["tenant"] == outsider.metadata["tenant"]
    view.add([fresh])
    assert [h.id for h in await view.aget(["new1"])] == ["new1"]


@pytest.mark.parametrize(
    ("access", "phrase"),
    [
        ({}, "a non-empty filter"),
        (None, "a non-empty filter"),
        ({"tenant": {"$regex": "a.*"}}, "access_filter['tenant']['$regex']"),
        ("tenant=acme", "access_filter must be a mapping"),
    ],
)
def test_a_bad_access_filter_is_refused_naming_access_filter(access: object, phrase: str) -> None:
    store, _ = _store(1)
    with pytest.raises(InvalidInputError, match="access_filter") as e:
        store.restricted(access)  # type: ignore[arg-type]
    assert phrase in str(e.value)


async def test_explain_shows_the_access_filter_beside_the_callers() -> None:
    store, _ = _store(5)
    view = store.restricted({"tenant": "acme"})
    res = await atraverse(
        "river",
        store=view,
        edges=EDGES,
        strategy=Eager(select_k=5, start_k=2, adjacent_k=4, max_depth=1),
        filter={"kw": "river"},
    )
    line = res.stats.explain().splitlines()[0]
    assert line.startswith("filter: ") and "the access view's: tenant $eq" in line
    assert "kw $eq" in line


async def test_resolution_through_a_view_counts_only_its_documents() -> None:
    store = MemoryStore(embedding=EMB)
    store.add(
        [
            Document("a", "a", {"tenant": "acme", "who": "Ann Lee"}),
            Document("b", "b", {"tenant": "bolt", "who": "Ann Lee"}),
            Document("c", "c", {"tenant": "bolt", "who": "Ann Moss"}),
        ]
    )
    everyone = await store.aresolve("ann", ["who"])
    assert {c.value: c.documents for c in everyone} == {"Ann Lee": 2, "Ann Moss": 1}
    view = store.restricted({"tenant": "acme"})
    assert [(c.value, c.documents) for c in await view.aresolve("ann", ["who"])] == [("Ann Lee", 1)]
    assert await view.aresolve("moss", ["who"]) == []  # a name only another tenant carries


async def test_a_write_through_a_view_cannot_land_in_another_tenants_view() -> None:
    await check_writes_through_a_view_stay_out_of_other_views(MemoryStore(embedding=EMB))


async def test_a_range_through_a_view_is_decided_by_the_views_documents_not_other_tenants() -> None:
    await check_range_through_a_view_ignores_other_tenants(MemoryStore(embedding=EMB))


async def test_a_range_through_a_view_answers_as_a_store_holding_only_the_views_documents() -> None:
    mine = [
        Document("a1", "a", {"tenant": "acme", "grade": "high", "when": "soon"}),
        Document("a2", "a", {"tenant": "acme", "grade": "low", "score": 3}),
    ]
    theirs = [
        Document("b1", "b", {"tenant": "bolt", "grade": 5, "when": "2020-01-01", "score": "x"}),
        Document("b2", "b", {"tenant": "bolt", "score": "y"}),
    ]
    shared = MemoryStore(embedding=EMB)
    shared.add(mine + theirs)
    alone = MemoryStore(embedding=EMB)
    alone.add(mine)
    view = shared.restricted({"tenant": "acme"})
    for flt in [
        {"grade": {"$gte": 3}},  # acme's grades are text: refused, though bolt's is a number
        {"when": {"$lt": "2021-01-01"}},  # refused: acme's 'when' holds no date
        {"score": {"$gt": 1}},  # answered: acme's scores are numbers, bolt's text
        {"$or": [{"grade": "high"}, {"score": {"$lte": 3}}]},
    ]:
        assert await range_outcome(view, flt) == await range_outcome(alone, flt), flt
    assert (await range_outcome(view, {"grade": {"$gte": 3}})).startswith("refused")
    assert await range_outcome(view, {"score": {"$gt": 1}}) == "found: a2"
    # Bolt's view, with a number in 'grade', answers the same range.
    assert await range_outcome(shared.restricted({"tenant": "bolt"}), {"grade": {"$gte": 3}}) == (
        "found: b1"
    )


async def test_a_lexical_score_through_a_view_ignores_other_tenants_documents() -> None:
    await check_lexical_score_through_a_view_ignores_other_tenants(MemoryStore(embedding=EMB))


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6))
async def test_writes_through_random_views_reach_only_their_tenant_and_change_no_other_score(
    seed: int,
) -> None:
    store, _ = _store(seed)
    await check_writes_reach_only_their_own_tenant(store, seed, rounds=6)
