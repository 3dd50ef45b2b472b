"""Scopes on a real Cassandra 5.0 node over the whole films dataset (17,472 films, loaded once
for the module with HashEmbedding into its own keyspace): the SQL answer of the films question,
both ranking plans, round counts (of a search and of a traversal started in a scope), complete
(paged) reads and the run's concurrency bound."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from films_sql import films_by_country_genre_before_with_metacritic, films_sharing_a_director_with
from hoprag import Eager, Scope, ScopeTooLargeError, asearch, atraverse
from hoprag.datasets.films import load_films, movies_db_path
from hoprag.edges import MetadataEdge
from hoprag.embeddings.hash import HashEmbedding
from hoprag.stores.cassandra.store import CassandraStore

STREEP = Scope(start={"cast": "Meryl Streep"}, edges=[("director", "director")], max_depth=1)
STREEP_2 = Scope(start={"cast": "Meryl Streep"}, edges=[("director", "director")], max_depth=2)
N_FILMS = 17_472


@pytest.fixture(scope="module")
def films(cassandra_session: Any, films_keyspace: str) -> Iterator[CassandraStore]:
    """The run's films table (`hoprag load films`: year and metacritic among its declared
    number fields, for the range filters)."""
    store = CassandraStore(
        HashEmbedding(32),
        keyspace=films_keyspace,
        table="films",
        session=cassandra_session,
        create_schema=False,
    )
    yield store


@pytest.fixture(scope="module")
def streep_sql() -> tuple[set[str], set[str]]:
    return films_sharing_a_director_with(movies_db_path(), "Meryl Streep")


@pytest.mark.parametrize("plan", ["exact", "pushdown", "auto"])
async def test_films_sharing_a_director_with_a_streep_film_are_the_sql_answer(
    films: CassandraStore, streep_sql: tuple[set[str], set[str]], plan: str
) -> None:
    anchors, shared = streep_sql
    res = await asearch("war", store=films, k=1000, scope=STREEP, plan=plan)
    assert {n.id for n in res if n.depth == 0} == anchors
    assert {n.id for n in res if n.depth == 1} == shared
    assert len(res) == len(anchors) + len(shared)
    # auto: 48 directors x k=1000 could read more rows than max_size, so it ranks exactly.
    assert res.stats.plan == ("pushdown" if plan == "pushdown" else "exact")


@pytest.mark.parametrize("flt", [None, {"genre": "Drama"}])
@pytest.mark.parametrize("query", ["war", "comedy romance", "horror film"])
async def test_films_scoped_search_has_precision_one_and_both_plans_agree(
    films: CassandraStore, streep_sql: tuple[set[str], set[str]], query: str, flt: Any
) -> None:
    anchors, shared = streep_sql
    out = {}
    for plan in ("exact", "pushdown"):
        res = await asearch(query, store=films, k=10, scope=STREEP, filter=flt, plan=plan)
        assert len(res) == 10 and {n.id for n in res} <= anchors | shared
        out[plan] = [(n.id, n.depth, n.path) for n in res]
    assert out["exact"] == out["pushdown"]


@pytest.mark.parametrize("plan", ["exact", "pushdown"])
async def test_films_scope_with_a_filter_is_the_sql_answer_passing_it(
    films: CassandraStore, streep_sql: tuple[set[str], set[str]], plan: str
) -> None:
    anchors, shared = streep_sql
    res = await asearch(
        "war", store=films, k=1000, scope=STREEP, filter={"genre": "Comedy"}, plan=plan
    )
    comedies = await films.aget(sorted(anchors | shared), filter={"genre": "Comedy"})
    assert {n.id for n in res} == {h.id for h in comedies} and len(res) > 20


@pytest.mark.parametrize("plan", ["exact", "pushdown"])
async def test_a_two_hop_scope_answers_in_at_most_three_rounds(
    films: CassandraStore, streep_sql: tuple[set[str], set[str]], plan: str
) -> None:
    anchors, shared = streep_sql
    res = await asearch(
        "war", store=films, k=20, scope=STREEP_2, filter={"genre": "Drama"}, plan=plan
    )
    stats = res.stats
    assert stats.rounds <= 3 and len(res) == 20
    hop0, hop1, hop2 = stats.hops
    assert hop0.queries["filter"] == 1 and hop0.rows == len(anchors)
    # One round for all the anchors' directors, not one per anchor.
    directors = {
        d for h in await films.aget(sorted(anchors)) for d in h.document.metadata["director"]
    }
    assert hop1.queries["match"] == len(directors) and hop1.notes["scope_size"] == len(
        anchors | shared
    )
    if plan == "pushdown":  # the last hop's values ranked by the node, earlier members by aget
        assert hop2.queries["adjacent"] > 0 and hop2.queries["get"] == 1
    else:  # the expansion's reads carry the scores; the filter is checked on the members
        assert hop2.queries["match"] > 0 and hop2.queries["get"] == 0
        assert hop2.queries["adjacent"] == 0
    assert stats.scope_size is not None and stats.scope_size > len(anchors | shared)


class Submits:
    """Wraps the session's `execute_async` and records the most queries handed to the driver
    and not yet answered."""

    def __init__(self, session: Any) -> None:
        self.real = session.execute_async
        self.lock = threading.Lock()
        self.sent = 0
        self.outstanding = 0
        self.peak = 0

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        rf = self.real(*args, **kwargs)
        with self.lock:
            self.sent += 1
            self.outstanding += 1
            self.peak = max(self.peak, self.outstanding)
        rf.add_callbacks(self._answered, self._answered)
        return rf

    def _answered(self, *_: Any) -> None:
        with self.lock:
            self.outstanding -= 1


@pytest.mark.parametrize("plan", ["exact", "pushdown"])
async def test_a_scoped_search_keeps_within_max_concurrency(
    films: CassandraStore, cassandra_session: Any, monkeypatch: pytest.MonkeyPatch, plan: str
) -> None:
    alone = await asearch("war", store=films, k=15, scope=STREEP_2, plan=plan)
    submits = Submits(cassandra_session)
    monkeypatch.setattr(cassandra_session, "execute_async", submits)
    res = await asearch("war", store=films, k=15, scope=STREEP_2, plan=plan, max_concurrency=3)
    monkeypatch.undo()
    assert [n.id for n in res] == [n.id for n in alone]
    assert submits.sent >= res.stats.total_queries > 3
    assert submits.peak == 3  # the bound is reached and never exceeded by the walk and ranking


async def test_complete_reads_follow_every_page(films: CassandraStore) -> None:
    query = await films.aprepare(None, {"source": "films"}, include_embeddings=False)
    every = await query.afiltered(limit=N_FILMS + 1)
    assert len(every) == N_FILMS and len({h.id for h in every}) == N_FILMS
    assert len(await query.afiltered(limit=6001)) == 6001
    walk = await films.aprepare(None, None, include_embeddings=False)
    (dramas, nothing) = await walk.amatching(
        [MetadataEdge("genre", "Drama"), MetadataEdge("genre", "x'; DROP TABLE films; --")],
        limit=N_FILMS,
    )
    expected = [d.id for d in load_films() if "Drama" in d.metadata["genre"]]
    assert sorted(h.id for h in dramas) == sorted(expected) and len(expected) > 5000
    assert nothing == []


async def test_films_scope_too_large_raises_and_reads_no_further(films: CassandraStore) -> None:
    scope = Scope(start={"genre": "Drama"}, edges=[("director", "director")], max_size=2000)
    with pytest.raises(ScopeTooLargeError, match="at least 2001 documents by depth 0") as info:
        await asearch("war", store=films, scope=scope)
    assert info.value.depth == 0


class _CallLog:
    """Numbers the start and the end of every prepared-query call of a run (an event counter,
    not a clock), so that the sequential rounds can be counted from the calls themselves: the
    longest chain of calls each of which started after the previous one had answered."""

    READS = ("asearch", "aget", "aadjacent", "aadjacent_many", "amatching", "afiltered")

    def __init__(self) -> None:
        self.seq = 0
        self.calls: list[list[int]] = []

    def wrap(self, fn: Any) -> Any:
        async def run(*args: Any, **kwargs: Any) -> Any:
            self.seq += 1
            record = [self.seq, 1 << 62]
            self.calls.append(record)
            try:
                return await fn(*args, **kwargs)
            finally:
                self.seq += 1
                record[1] = self.seq

        return run

    def rounds(self) -> int:
        chain: list[int] = []
        for start, _ in self.calls:
            before = [c for (s, e), c in zip(self.calls, chain, strict=False) if e < start]
            chain.append(1 + max(before, default=0))
        return max(chain, default=0)


class _Logged:
    """A prepared query whose reads are logged; everything else (limiter included) is the
    wrapped query's."""

    def __init__(self, inner: Any, log: _CallLog) -> None:
        object.__setattr__(self, "_inner", inner)
        object.__setattr__(self, "_log", log)

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._inner, name)
        return self._log.wrap(value) if name in _CallLog.READS else value

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._inner, name, value)


class _LoggedStore:
    def __init__(self, store: CassandraStore, log: _CallLog) -> None:
        self.embedding = store.embedding
        self._store = store
        self._log = log

    async def aprepare(self, *args: Any, **kwargs: Any) -> Any:
        return _Logged(await self._store.aprepare(*args, **kwargs), self._log)


GUMP_2 = Scope(ids=["tt0109830"], edges=[("director", "director")], max_depth=2)
GUMP_WRITERS_2 = Scope(
    ids=["tt0109830"], edges=[("director", "director"), ("writer", "writer")], max_depth=2
)


@pytest.mark.parametrize("plan", ["exact", "pushdown"])
@pytest.mark.parametrize(
    ("scope", "flt", "rounds"),
    [
        (STREEP_2, {"genre": "Drama"}, {"exact": 3, "pushdown": 3}),
        (STREEP_2, None, {"exact": 3, "pushdown": 3}),
        (STREEP, {"genre": "Drama"}, {"exact": 2, "pushdown": 2}),
        (Scope(start={"cast": "Meryl Streep"}, max_depth=0), None, {"exact": 1, "pushdown": 2}),
        (
            Scope(ids=["tt0109830", "tt0078788"], max_depth=0),
            {"genre": "Drama"},
            {"exact": 1, "pushdown": 1},
        ),
        (GUMP_WRITERS_2, None, {"exact": 3, "pushdown": 3}),
        (GUMP_2, None, {"exact": 2, "pushdown": 3}),
    ],
)
async def test_sequential_rounds_counted_from_the_calls_match_the_stats(
    films: CassandraStore, scope: Scope, flt: Any, rounds: dict[str, int], plan: str
) -> None:
    """A 2-hop scope answers in at most 3 sequential rounds, a 1-hop one in 2, a depth-0 one
    in 1 or 2. Forrest Gump's director made no film with a co-director, so its second hop finds
    no new edge: without a filter the exact plan has ranked everything by then (its walk reads
    the scores), while pushdown ranks the members in one more round."""
    log = _CallLog()
    logged: Any = _LoggedStore(films, log)
    res = await asearch("war", store=logged, k=10, scope=scope, filter=flt, plan=plan)
    assert log.rounds() == res.stats.rounds == rounds[plan]
    plain = await asearch("war", store=films, k=10, scope=scope, filter=flt, plan=plan)
    assert [n.id for n in res] == [n.id for n in plain] and len(res) > 0


def _sent(queries: dict[str, int]) -> dict[str, int]:
    return {kind: n for kind, n in queries.items() if n}


async def _directors(films: CassandraStore, ids: set[str]) -> set[str]:
    return {d for h in await films.aget(sorted(ids)) for d in h.document.metadata["director"]}


async def test_a_scoped_traversal_counts_the_scopes_rounds_and_queries(
    films: CassandraStore, streep_sql: tuple[set[str], set[str]]
) -> None:
    """A traversal started in a 2-hop scope (#50 part 17): hop 0 waits for the scope's 3
    rounds (the anchors; their directors; the new directors of hop 1's films, read by the
    expansion and again by the ranking, with one get of the earlier members) and counts their
    queries; hop 1 reads the starts' directors in one round. The rounds counted from the calls
    sent agree with the stats."""
    anchors, shared = streep_sql
    first = await _directors(films, anchors)
    last = await _directors(films, shared) - first
    assert first and last  # both hops of the scope read something
    log = _CallLog()
    logged: Any = _LoggedStore(films, log)
    strategy = Eager(select_k=10, start_k=5, adjacent_k=5, max_depth=1)
    res = await atraverse(
        "war",
        store=logged,
        edges=[("director", "director")],
        strategy=strategy,
        scope=STREEP_2,
        speculation="off",
    )
    stats = res.stats
    hop0, hop1 = stats.hops
    scope_queries = 1 + len(first) + 2 * len(last) + 1
    assert _sent(hop0.queries) == {"filter": 1, "match": len(first) + 2 * len(last), "get": 1}
    assert hop0.rounds == 3 and hop0.notes["scope_size"] > len(anchors | shared)
    starts = [n for n in res if n.depth == 0]
    searched = await asearch("war", store=films, k=5, scope=STREEP_2)  # the same best members
    assert {n.id for n in starts} == {n.id for n in searched} and searched.stats.rounds == 3
    followed = {d for n in starts for d in n.metadata.get("director", [])}
    assert _sent(hop1.queries) == {"adjacent": len(followed)} and hop1.rounds == 1
    assert stats.rounds == log.rounds() == 3 + 1
    assert stats.total_queries == scope_queries + len(followed)


ITALIAN_DRAMAS = {
    "country": "Italy",
    "genre": "Drama",
    "year": {"$lt": 1980},
    "metacritic": {"$gte": 70},
}


async def test_italian_dramas_before_1980_with_metacritic_70_are_the_sql_answer(
    films: CassandraStore,
) -> None:
    want = films_by_country_genre_before_with_metacritic(
        movies_db_path(), "Italy", "Drama", 1980, 70
    )
    assert len(want) > 10  # the question has a real answer
    every = await asearch("drama", store=films, k=1000, filter=ITALIAN_DRAMAS)
    assert {n.id for n in every} == want
    top = await asearch("a family in war", store=films, k=5, filter=ITALIAN_DRAMAS)
    assert len(top) == 5 and {n.id for n in top} <= want


async def test_explain_names_the_merged_branch_queries_and_the_conditions_checked_after_the_read(
    films: CassandraStore,
) -> None:
    flt = {"genre": {"$in": ["Drama", "War"]}, "year": {"$gte": 1990}, "country": {"$ne": "Italy"}}
    res = await asearch("war", store=films, k=10, scope=STREEP, filter=flt)
    plan = res.stats.filters["filter"]
    assert plan.queries == 2  # one per $in value, run together and merged
    assert set(plan.pushed) == {"genre $eq", "year $gte"}  # tokens, and the typed year column
    assert plan.after_read == ("country $ne",)
    start = res.stats.filters["scope start"]
    assert (start.queries, start.pushed, start.after_read) == (1, ("cast $eq",), ())
    lines = res.stats.explain().splitlines()
    assert (
        "filter: 2 queries per read, merged; by the index: genre $eq, year $gte; after the "
        "read: country $ne" in lines
    )
    assert "scope start: 1 query per read; by the index: cast $eq" in lines
    assert res and all(
        n.metadata["year"] >= 1990
        and "Italy" not in n.metadata.get("country", [])
        and {"Drama", "War"} & set(n.metadata["genre"])
        for n in res
    )
