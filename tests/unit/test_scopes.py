"""Scopes and `asearch` on MemoryStore: the films question answered by SQL over movies.db, the
Scope's checks, the sync API, `explain()`, and what a store without complete reads says."""

from __future__ import annotations

import math
from typing import Any

import anyio
import pytest

import hoprag
from films_sql import films_by_country_genre_before_with_metacritic, films_sharing_a_director_with
from hoprag import Document, InvalidInputError, Scope, ScopeTooLargeError, asearch, search
from hoprag.datasets.films import load_films, movies_db_path
from hoprag.embeddings.hash import HashEmbedding
from hoprag.filters import MATCH_ALL
from hoprag.stores import MemoryStore
from hoprag.stores.base import Hit, PreparedQuery, Store
from hoprag.testing.data import COMPLIANCE_DIM, compliance_documents

STREEP = Scope(start={"cast": "Meryl Streep"}, edges=[("director", "director")], max_depth=1)


@pytest.fixture(scope="module")
def films_store() -> MemoryStore:
    store = MemoryStore(HashEmbedding(32))
    store.add(load_films())
    return store


@pytest.fixture(scope="module")
def streep_sql() -> tuple[set[str], set[str]]:
    return films_sharing_a_director_with(movies_db_path(), "Meryl Streep")


@pytest.fixture
def small() -> MemoryStore:
    store = MemoryStore(HashEmbedding(COMPLIANCE_DIM))
    store.add(compliance_documents())
    return store


# -- films: expected answers from SQL ----------------------------------------------------------


@pytest.mark.parametrize("plan", ["exact", "pushdown"])
async def test_films_sharing_a_director_with_a_streep_film_are_the_sql_answer(
    films_store: MemoryStore, streep_sql: tuple[set[str], set[str]], plan: str
) -> None:
    anchors, shared = streep_sql
    assert len(anchors) > 40 and len(shared) > 300  # the question has a real answer
    res = await asearch("war", store=films_store, k=1000, scope=STREEP, plan=plan)
    assert {n.id for n in res} == anchors | shared
    assert {n.id for n in res if n.depth == 0} == anchors
    assert {n.id for n in res if n.depth == 1} == shared
    for n in res:
        if n.depth == 1:  # the path's edge is a director both films have
            (edge,) = n.path.edges
            assert edge.incoming_field == "director"
            assert edge.value in n.metadata["director"]
            assert n.path.nodes[0] in anchors
    scores = [n.similarity_score for n in res]
    assert scores == sorted(scores, reverse=True)


async def test_films_scoped_search_has_precision_one_for_small_k(
    films_store: MemoryStore, streep_sql: tuple[set[str], set[str]]
) -> None:
    anchors, shared = streep_sql
    for query in ("war", "comedy romance", "horror film"):
        res = await asearch(query, store=films_store, k=10, scope=STREEP)
        assert len(res) == 10
        assert {n.id for n in res} <= anchors | shared


async def test_films_scope_with_a_filter_keeps_the_sql_answer_passing_it(
    films_store: MemoryStore, streep_sql: tuple[set[str], set[str]]
) -> None:
    anchors, shared = streep_sql
    res = await asearch("war", store=films_store, k=2000, scope=STREEP, filter={"genre": "War"})
    got = {n.id for n in res}
    assert got and got <= anchors | shared
    wars = await films_store.aget(sorted(anchors | shared), filter={"genre": "War"})
    assert got == {h.id for h in wars}


async def test_films_scope_ordered_by_year_descending(films_store: MemoryStore) -> None:
    res = await asearch(None, store=films_store, k=5, scope=STREEP, order_by="-year")
    years = [n.metadata["year"] for n in res]
    assert years == sorted(years, reverse=True) and len(years) == 5
    every = await asearch(None, store=films_store, k=2000, scope=STREEP, order_by="-year")
    assert years[0] == max(n.metadata["year"] for n in every)


async def test_films_scope_too_large_says_how_many_and_how_to_narrow(
    films_store: MemoryStore,
) -> None:
    scope = Scope(start={"genre": "Drama"}, edges=[("director", "director")], max_size=500)
    with pytest.raises(ScopeTooLargeError) as info:
        await asearch("war", store=films_store, scope=scope)
    assert info.value.depth == 0 and info.value.reached == 501
    assert "at least 501 documents by depth 0" in str(info.value)


# -- the Scope object --------------------------------------------------------------------------


def test_scope_is_frozen_and_normalises_its_ids() -> None:
    scope = Scope(ids=["a", "b", "a"], edges=[("cites", "$id")], max_depth=2)
    assert scope.ids == ("a", "b")
    with pytest.raises(AttributeError):
        scope.max_depth = 3  # type: ignore[misc]
    assert "ids=['a', 'b']" in scope.describe()


def test_scopes_compare_by_value_and_hash_alike() -> None:
    a = Scope(start={"cast": "x"}, edges=[["director", "director"], ("links", hoprag.Id())])
    b = Scope(start={"cast": "x"}, edges=[("director", "director"), ("links", "$id")])
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert a != Scope(start={"cast": "y"}, edges=b.edges)
    assert a.edges == (("director", "director"), ("links", "$id"))


@pytest.mark.parametrize(
    ("kwargs", "names"),
    [
        ({}, "exactly one of start"),
        ({"ids": ["a"], "max_depth": 9}, "Scope max_depth must be an int 0..8, got 9"),
        ({"ids": ["a"], "max_size": 0}, "Scope max_size must be an int 1..100000, got 0"),
        ({"ids": ["a"]}, "at least one edge spec for max_depth=1"),
        ({"start": {}}, "a non-empty filter"),
        ({"start": {"year": {"$regex": "19"}}, "max_depth": 0}, "filter['year']"),
    ],
)
def test_bad_scopes_name_the_argument(kwargs: dict[str, Any], names: str) -> None:
    with pytest.raises(InvalidInputError) as info:
        Scope(**kwargs)
    assert names in str(info.value)


async def test_query_and_order_by_together_are_refused_naming_order_by(
    small: MemoryStore,
) -> None:
    with pytest.raises(InvalidInputError, match="order_by must be None when a query is given"):
        await asearch("fur", store=small, scope=Scope(ids=["d0"], max_depth=0), order_by="n")


# -- sync API, explain, stats ------------------------------------------------------------------


def test_search_runs_outside_an_event_loop(small: MemoryStore) -> None:
    scope = Scope(start={"type": "bird"}, edges=[("keywords", "keywords")], max_depth=1)
    res = search("wings", store=small, k=3, scope=scope)
    assert len(res) == 3 and res.stats.scope_size == 5


async def test_search_runs_inside_an_event_loop(small: MemoryStore) -> None:
    res = search("wings", store=small, k=2)
    assert len(res) == 2 and res.stats.plan == "search"


async def test_explain_names_the_plan_rounds_and_reads(small: MemoryStore) -> None:
    scope = Scope(start={"type": "bird"}, edges=[("keywords", "keywords")], max_depth=2)
    res = await asearch("wings", store=small, k=3, scope=scope, filter={"type": "mammal"})
    lines = res.stats.explain().splitlines()
    assert lines[:3] == [
        "plan: exact, scope of 10 documents, 3 rounds",
        "filter: 1 query per read; by the index: type $eq",
        "scope start: 1 query per read; by the index: type $eq",
    ]
    assert lines[3].startswith("hop")
    assert "filter=1" in lines[4] and "match=" in lines[5]
    assert res.stats.rounds == 3


async def test_nodes_carry_the_scope_edges_and_nan_without_a_query(small: MemoryStore) -> None:
    scope = Scope(ids=["d10"], edges=[("cites", "$id")], max_depth=1)
    res = await asearch(None, store=small, scope=scope, order_by="type")
    assert [n.id for n in res] == ["d10", "d9", "d8"]  # insect, insect, mammal; ties by id
    assert all(math.isnan(n.similarity_score) for n in res)
    d10 = next(n for n in res if n.id == "d10")
    assert hoprag.IdEdge("d9") in d10.outgoing_edges


async def test_a_store_without_complete_reads_says_what_it_lacks() -> None:
    class TopOnlyQuery(PreparedQuery):
        embedding = None
        filter = MATCH_ALL
        include_embeddings = False

        def __init__(self) -> None:
            self.limiter = anyio.CapacityLimiter(1)

        async def asearch(self, *, k: int) -> list[Hit]:
            return []

        async def aget(self, ids: Any) -> list[Hit]:
            return [Hit(Document(i, "x", {"k": 1}), None) for i in ids]

        async def aadjacent(self, edge: Any, *, k: int) -> list[Hit]:
            return []

    class TopOnlyStore(Store):
        embedding = None

        async def aprepare(self, embedding: Any, filter: Any = None, **kw: Any) -> Any:
            return TopOnlyQuery()

        async def aadd(self, documents: Any) -> None:
            return None

    scope = Scope(ids=["a"], edges=[("k", "k")], max_depth=1)
    with pytest.raises(NotImplementedError, match="does not implement amatching"):
        await asearch(None, store=TopOnlyStore(), scope=scope, order_by="n")


def test_traverse_and_astream_take_a_scope(small: MemoryStore) -> None:
    scope = Scope(start={"type": "fish"}, max_depth=0)  # d4, d5
    strategy = hoprag.Eager(select_k=10, start_k=5, adjacent_k=10, max_depth=1)
    edges = [("keywords", "keywords")]
    nodes = hoprag.traverse("fins", store=small, edges=edges, strategy=strategy, scope=scope)
    assert {n.id for n in nodes if n.depth == 0} == {"d4", "d5"}
    assert {n.id for n in nodes if n.depth == 1} == {"d6", "d7"}  # scales: it leaves the scope

    async def stream() -> list[str]:
        s = hoprag.astream("fins", store=small, edges=edges, strategy=strategy, scope=scope)
        async with s:
            return [n.id async for n in s if n.depth == 0]

    assert sorted(anyio.run(stream)) == ["d4", "d5"]
    with pytest.raises(InvalidInputError, match="scope must be a hoprag Scope"):
        hoprag.astream("fins", store=small, edges=edges, strategy=strategy, scope={"ids": []})  # type: ignore[arg-type]


ITALIAN_DRAMAS = {
    "country": "Italy",
    "genre": "Drama",
    "year": {"$lt": 1980},
    "metacritic": {"$gte": 70},
}


async def test_italian_dramas_before_1980_with_metacritic_70_are_the_sql_answer(
    films_store: MemoryStore,
) -> None:
    want = films_by_country_genre_before_with_metacritic(
        movies_db_path(), "Italy", "Drama", 1980, 70
    )
    assert len(want) > 10  # the question has a real answer
    every = await asearch("drama", store=films_store, k=1000, filter=ITALIAN_DRAMAS)
    assert {n.id for n in every} == want
    top = await asearch("a family in war", store=films_store, k=5, filter=ITALIAN_DRAMAS)
    assert len(top) == 5 and {n.id for n in top} <= want
