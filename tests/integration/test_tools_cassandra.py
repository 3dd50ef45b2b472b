"""The film search tool on a real Cassandra 5.0 node: the 17,472 films loaded once for the
module by `hoprag load films --embedding hash:32` (as a user loads them: declared fields,
values catalogue, load catalogue), the key questions checked by SQL over movies.db and against
MemoryStore's answers, the CQL statements each run sent with their bound values, and
`hoprag ask` run as a user runs it (a subprocess)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from films_sql import films_sharing_a_director_with, films_where
from hoprag.datasets.films import load_films, movies_db_path
from hoprag.embeddings.hash import HashEmbedding
from hoprag.recording import record_statements
from hoprag.stores.cassandra.store import CassandraStore
from hoprag.stores.memory import MemoryStore
from hoprag.tools import SearchTool, ToolAnswer, film_search_tool
from pictures import Page

DB = movies_db_path()


def _hoprag(contact: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hoprag.cli", *args, "--contact-points", contact],
        capture_output=True, text=True, check=False, timeout=900,
    )  # fmt: skip


class Films:
    """The loaded films: where they live, the Cassandra tool and the MemoryStore tool."""

    def __init__(self, contact: str, keyspace: str, cassandra: SearchTool, memory: SearchTool):
        self.contact = contact
        self.keyspace = keyspace
        self.cassandra = cassandra
        self.memory = memory

    def ask(self, *args: str) -> subprocess.CompletedProcess[str]:
        return _hoprag(self.contact, "ask", "--keyspace", self.keyspace, "--table", "films", *args)


@pytest.fixture(scope="module")
def films(
    cassandra_contact_points: str, cassandra_session: Any, films_keyspace: str
) -> Iterator[Films]:
    keyspace = films_keyspace
    store = CassandraStore(
        HashEmbedding(32),
        keyspace=keyspace,
        table="films",
        session=cassandra_session,
        create_schema=False,
    )
    memory = MemoryStore(HashEmbedding(32))
    memory.add(load_films())
    yield Films(
        cassandra_contact_points, keyspace, film_search_tool(store), film_search_tool(memory)
    )


def _ids(answer: ToolAnswer) -> set[str]:
    return {n.id for n in answer.nodes}


def _cql(answer: ToolAnswer) -> list[Any]:
    return [s for s in answer.statements if s.operation == "cql"]


def _flat(value: Any) -> list[Any]:
    if isinstance(value, list | tuple):
        return [x for v in value for x in _flat(v)]
    return [value]


async def test_westerns_with_henry_fonda_with_positive_reviews_are_the_sql_answer(
    films: Films,
) -> None:
    args = {"topic": "western", "actor": "Henry Fonda", "genre": "Western", "reviews": "positive"}
    answer = await films.cassandra.arun(**args, limit=50)
    sql = films_where(DB, cast="Henry Fonda", genre="Western", meter_at_least=60)
    assert _ids(answer) == set(sql) and len(sql) >= 5
    assert _ids(answer) == _ids(await films.memory.arun(**args, limit=50))
    top = await films.cassandra.arun(**args, limit=3)
    assert len(top.nodes) == 3 and _ids(top) <= set(sql)


async def test_worked_with_actor_is_the_sql_scope_on_cassandra(films: Films) -> None:
    anchors, shared = films_sharing_a_director_with(DB, "Meryl Streep")
    war = set(films_where(DB, genre="War"))
    args = {"topic": "war", "worked_with_actor": "Meryl Streep", "genre": "War", "limit": 50}
    answer = await films.cassandra.arun(**args)
    assert _ids(answer) == (anchors | shared) & war
    assert answer.stats is not None and answer.stats.scope_size == len(anchors | shared)
    assert _ids(answer) == _ids(await films.memory.arun(**args))


async def test_without_a_topic_cassandra_lists_the_newest_films_as_memorystore(
    films: Films,
) -> None:
    args = {"director": "pedro almodovar", "year_from": 1990, "year_to": 2005}
    answer = await films.cassandra.arun(**args)
    sql = films_where(DB, director="Pedro Almodóvar", year_from=1990, year_to=2005)
    assert _ids(answer) == set(sql)
    assert [n.id for n in answer.nodes] == [n.id for n in (await films.memory.arun(**args)).nodes]
    years = [n.metadata["year"] for n in answer.nodes]
    assert years == sorted(years, reverse=True)


async def test_a_country_and_negative_reviews_are_the_sql_answer_on_cassandra(
    films: Films,
) -> None:
    args = {"topic": "western", "country": "France", "genre": "Western", "reviews": "negative"}
    answer = await films.cassandra.arun(**args, limit=50)
    sql = films_where(DB, country="France", genre="Western", meter_at_most=40)
    assert _ids(answer) == set(sql) and len(sql) >= 3


async def test_an_ambiguous_name_gives_memorystores_candidates(films: Films) -> None:
    answer = await films.cassandra.arun(topic="western", actor="fonda")
    assert answer.follow_up is not None and answer.nodes == []
    expected = await films.memory.arun(topic="western", actor="fonda")
    assert expected.follow_up is not None
    assert answer.follow_up.candidates == expected.follow_up.candidates
    assert answer.follow_up.question == expected.follow_up.question
    unknown = await films.cassandra.arun(topic="western", actor="Zzyzx Qwerty")
    assert unknown.follow_up is not None and unknown.follow_up.candidates == []


async def test_the_cql_statements_are_recorded_with_bound_values_only(films: Films) -> None:
    topic = "western'; DROP TABLE films; --"
    actor = "Maureen O'Hara"
    answer = await films.cassandra.arun(topic=topic, actor=actor, limit=50)
    assert _ids(answer) == set(films_where(DB, cast=actor))
    ops = [s.operation for s in answer.statements]
    # Each tool-level call is followed by the CQL statements it sent.
    assert ops[0] == "resolve" and ops[1] == "cql"
    search_at = ops.index("search")
    assert "cql" in ops[search_at + 1 :] and set(ops[1:search_at]) == {"cql"}
    for s in _cql(answer):
        assert s.text.lstrip().upper().startswith("SELECT") and "?" in s.text
        for value in (actor, "O'Hara", "Hara", "DROP", "western"):
            assert value not in s.text
    after_search = [v for s in answer.statements[search_at + 1 :] for v in _flat(s.parameters)]
    # The filter's value, bound (inside its index token, `cast="Maureen O'Hara"`).
    assert any(isinstance(v, str) and actor in v for v in after_search)
    before = [v for s in answer.statements[1:search_at] for v in _flat(s.parameters)]
    assert any(isinstance(v, str) and "hara" in v for v in before)  # the resolve's text, bound
    json.dumps(answer.to_dict(), allow_nan=False)


async def test_record_statements_logs_the_statements_sent_in_its_block_and_nests(
    films: Films,
) -> None:
    store = films.cassandra.store
    with record_statements() as outer:
        await store.aget(["tt0032551"])
        with record_statements() as inner:
            await store.aget(["tt0038762"])
        assert len(inner) == 1 and "tt0038762" in _flat(inner[0][1])
    assert len(outer) == 2 and "tt0032551" in _flat(outer[0][1])
    assert "tt0032551" not in outer[0][0]
    await store.aget(["tt0032551"])  # no recorder: nothing is kept
    assert len(outer) == 2


# --- hoprag ask -------------------------------------------------------------------------------


def test_ask_prints_the_sql_answer_as_json_and_as_a_table(films: Films) -> None:
    flags = ["--topic", "western", "--actor", "Henry Fonda", "--genre", "Western",
             "--reviews", "positive", "--limit", "50"]  # fmt: skip
    r = films.ask(*flags, "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    sql = films_where(DB, cast="Henry Fonda", genre="Western", meter_at_least=60)
    ids = [row["id"] for row in doc["results"]]
    assert set(ids) == set(sql) and doc["follow_up"] is None
    assert any(s["operation"] == "cql" for s in doc["statements"])
    table = films.ask(*flags)
    assert table.returncode == 0, table.stderr
    rows = table.stdout.splitlines()[1:]
    assert [line.split()[1] for line in rows] == ids
    explain = films.ask(*flags, "--explain")
    assert explain.returncode == 0, explain.stderr
    lines = explain.stdout.splitlines()
    assert any(line.startswith("resolve ") for line in lines)
    assert any(line.startswith("cql ") for line in lines)
    assert any(line.startswith("plan: ") for line in lines)


def test_ask_html_draws_the_scoped_results_with_their_paths(films: Films, tmp_path: Path) -> None:
    out = tmp_path / "ask.html"
    flags = ["--topic", "war", "--worked-with-actor", "Meryl Streep", "--genre", "War",
             "--limit", "8", "--html", str(out)]  # fmt: skip
    r = films.ask(*flags, "--json")
    assert r.returncode == 0, r.stderr
    results = json.loads(r.stdout)["results"]
    assert f"wrote {out} ({len(results)} nodes)" in r.stderr
    items = Page(out.read_text(encoding="utf-8")).data()["items"]
    shown = {i["id"]: i for i in items if not i["status"].startswith("on a path")}
    assert sorted(shown) == sorted(row["id"] for row in results)
    # A result at depth 1 hangs off the Streep film that put its director in the scope: that
    # anchor is drawn too (dashed, when it is not a result itself).
    deep = [row for row in results if row["depth"] == 1]
    assert deep and all(len(row["path"]) == 2 for row in deep)
    assert {row["path"][0] for row in deep} <= {i["id"] for i in items}
    for row in deep:
        assert [p[0] for p in shown[row["id"]]["path"]] == row["path"]
    missing = films.ask("--topic", "war", "--html", str(tmp_path / "nope" / "a.html"))
    assert missing.returncode == 2 and "does not exist" in missing.stderr


def test_ask_prints_the_follow_up_question_and_exits_3(films: Films) -> None:
    r = films.ask("--topic", "western", "--actor", "fonda")
    assert r.returncode == 3, r.stderr
    assert r.stdout.startswith(
        "Which did you mean by 'fonda' for actor: Jane Fonda (cast, 40 films)"
    )
    j = films.ask("--topic", "western", "--actor", "fonda", "--json")
    assert j.returncode == 3
    doc = json.loads(j.stdout)
    assert doc["follow_up"]["parameter"] == "actor" and doc["results"] == []
    assert {"Jane Fonda", "Henry Fonda", "Peter Fonda", "Bridget Fonda"} <= {
        c["value"] for c in doc["follow_up"]["candidates"]
    }
    unknown = films.ask("--director", "Zzyzx Qwerty")
    assert unknown.returncode == 3 and unknown.stdout.startswith("Nothing matched 'Zzyzx Qwerty'")


def test_ask_with_an_access_filter_answers_and_names_only_films_in_the_view(films: Films) -> None:
    view = ["--access-filter", '{"year": {"$gte": 2007}}']
    flags = ["--topic", "western", "--actor", "Henry Fonda", "--limit", "50"]
    outside = films.ask(*flags, "--json", *view)
    # Henry Fonda's films are all before 2007: in this view he is no one.
    assert outside.returncode == 3, outside.stderr
    assert json.loads(outside.stdout)["follow_up"]["candidates"] == []
    r = films.ask("--topic", "western", "--actor", "fonda", "--json", *view)
    assert r.returncode == 3, r.stderr
    counted = {c["value"]: c["documents"] for c in json.loads(r.stdout)["follow_up"]["candidates"]}
    assert {"Jane Fonda", "Peter Fonda"} <= set(counted)
    assert not {"Henry Fonda", "Bridget Fonda"} & set(counted)  # only before 2007
    for name, n in counted.items():  # every film counted is in the view, and every one is
        assert n == len(films_where(DB, cast=name, year_from=2007)), name
    answer = films.ask("--topic", "road", "--actor", "Peter Fonda", "--json", *view)
    assert answer.returncode == 0, answer.stderr
    results = json.loads(answer.stdout)["results"]
    assert results and {r["id"] for r in results} <= set(
        films_where(DB, cast="Peter Fonda", year_from=2007)
    )


@pytest.mark.parametrize(
    ("flags", "shown"),
    [
        (["--reviews", "good"], "--reviews: reviews must be one of 'positive', 'negative'"),
        (["--genre", "western"], "--genre: genre must be one of 'Action'"),
        (["--year-from", "2000", "--year-to", "1990"], "--year-from: year_from must be at most"),
        (["--year-from", "abc"], "argument --year-from: invalid int value: 'abc'"),
    ],
)
def test_ask_refuses_a_malformed_argument_with_exit_2_before_connecting(
    films: Films, flags: list[str], shown: str
) -> None:
    # No node answers on port 1: a run that tried to connect would fail with exit 1.
    r = subprocess.run(
        [sys.executable, "-m", "hoprag.cli", "ask", "--topic", "war", *flags,
         "--contact-points", "127.0.0.1:1"],
        capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    assert r.returncode == 2 and shown in r.stderr and r.stdout == ""
    assert "Traceback" not in r.stderr


def test_ask_without_any_search_parameter_is_a_one_line_error(films: Films) -> None:
    r = films.ask("--limit", "5")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    # Refused before connecting, naming the flag (issue #28, 11).
    assert r.stderr.startswith("hoprag: error: --topic: topic must be a text, unless one of actor")
