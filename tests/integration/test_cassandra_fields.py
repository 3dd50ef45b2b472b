"""Declared fields on a real Cassandra 5.0 node: typed columns hold exact values and answer
ranges as Python compares, the declaration persists with the table, conflicting and new
declarations are refused, the migration backfills a loaded table (idempotent, and completes
when run again after an interruption), the CLI does it the way a user runs it, hostile field
names are refused, and `aresolve` on films counts what SQL over movies.db counts."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from decimal import Decimal
from typing import Any

import pytest
from keyspaces import new_keyspace

from cli_load import start_interruptible
from films_sql import fonda_films
from hoprag import Document
from hoprag.dates import iso_instant
from hoprag.embeddings.hash import HashEmbedding
from hoprag.errors import InvalidInputError
from hoprag.stores.cassandra.fields import FieldCatalog
from hoprag.stores.cassandra.store import CassandraStore
from hoprag.stores.memory import MemoryStore

DIM = 8
EMB = HashEmbedding(DIM)

NUMBERS: dict[str, Any] = {
    "big": 2**60 + 1,
    "big0": 2**60,
    "f53": float(2**53),
    "i53": 2**53 + 1,
    "tenth": 0.1,
    "tiny": 5e-324,
    "neg": -3,
    "half": 2.5,
    "one": 1,
    "onef": 1.0,
    "max": 2**63 - 1,
}
"""Document id -> its number `n`; other documents hold no number in `n`."""
NOT_NUMBERS: dict[str, Any] = {"flag": True, "text": "12", "list": [1, 2], "none": None}
DATES: dict[str, str] = {
    "d1": "1994-07-06",
    "d2": "2000-01-01T12:30:00+02:00",
    "d3": "2000-01-01T12:30:00",
    "d4": "1969-12-31T23:59:59.999999Z",
}
NOT_DATES: dict[str, Any] = {"x1": "not a date", "x2": 1994, "x3": "2023-02-30"}


def _docs() -> list[Document]:
    out = [Document(i, f"number {i}", {"n": v}) for i, v in NUMBERS.items()]
    out += [Document(i, f"not a number {i}", {"n": v}) for i, v in NOT_NUMBERS.items()]
    out += [Document(i, f"date {i}", {"when": v}) for i, v in DATES.items()]
    out += [Document(i, f"not a date {i}", {"when": v}) for i, v in NOT_DATES.items()]
    out.append(Document("nothing", "no fields", {}))
    return out


def _store(session: Any, keyspace: str, table: str = "docs", **kw: Any) -> CassandraStore:
    return CassandraStore(EMB, keyspace=keyspace, table=table, session=session, **kw)


def _range(session: Any, store: CassandraStore, field: str, op: str, bound: Any) -> set[str]:
    """The ids a range on a declared field selects, as the filter translation will send it."""
    text = f"SELECT id FROM {store.layout.fq} WHERE {store.layout.range_clause(field, op)}"
    return {
        r.id
        for r in session.execute(
            session.prepare(text), (store.layout.range_value(field, op, bound),)
        )
    }


_OPS = {
    "gt": lambda a, b: a > b,
    "gte": lambda a, b: a >= b,
    "lt": lambda a, b: a < b,
    "lte": lambda a, b: a <= b,
    "eq": lambda a, b: a == b,
}


def _typed(session: Any, keyspace: str) -> CassandraStore:
    store = _store(session, keyspace, fields={"n": "number", "when": "date"})
    store.add(_docs())
    return store


@pytest.fixture(scope="module")
def typed_keyspace(cassandra_session: Any) -> str:
    return new_keyspace(cassandra_session)


@pytest.fixture(scope="module")
def typed(cassandra_session: Any, typed_keyspace: str) -> CassandraStore:
    """The typed documents, loaded once for the tests that only read them."""
    return _typed(cassandra_session, typed_keyspace)


def test_number_columns_hold_exact_decimals_and_nothing_for_non_numbers(
    cassandra_session: Any, typed: CassandraStore
) -> None:
    rows = {
        r.id: r.n_n for r in cassandra_session.execute(f"SELECT id, n_n FROM {typed.layout.fq}")
    }
    for doc_id, value in NUMBERS.items():
        assert rows[doc_id] == Decimal(value), doc_id
    assert rows["tenth"] == Decimal("0.1000000000000000055511151231257827021181583404541015625")
    for doc_id in NOT_NUMBERS:
        assert rows[doc_id] is None, doc_id


@pytest.mark.parametrize(
    "bound",
    [
        2**60,
        2**60 + 1,
        2.0**60,
        2**53,
        2**53 + 1,
        0.1,
        0.30000000000000004,
        1,
        1.0,
        0,
        -3,
        2**63 - 1,
    ],
)
@pytest.mark.parametrize("op", list(_OPS))
def test_number_ranges_select_what_python_comparison_selects(
    cassandra_session: Any, typed: CassandraStore, op: str, bound: Any
) -> None:
    want = {i for i, v in NUMBERS.items() if _OPS[op](v, bound)}
    assert _range(cassandra_session, typed, "n", op, bound) == want


async def test_a_store_opened_on_a_typed_table_answers_a_range_as_its_first_call(
    cassandra_session: Any, typed: CassandraStore, typed_keyspace: str
) -> None:
    # The declared fields are read at set-up: a new store (with or without `fields`) whose
    # first call is a ranged search must know them before it checks the filter.
    want = {i for i, v in NUMBERS.items() if v >= 2**60}
    for fields in ({}, {"fields": {"n": "number"}}):
        fresh = _store(cassandra_session, typed_keyspace, **fields)
        hits = await fresh.asearch(EMB("number"), k=30, filter={"n": {"$gte": 2**60}})
        assert {h.id for h in hits} == want


def test_date_columns_hold_utc_microseconds_and_nothing_for_non_dates(
    cassandra_session: Any, typed: CassandraStore
) -> None:
    rows = {
        r.id: r.d_when
        for r in cassandra_session.execute(f"SELECT id, d_when FROM {typed.layout.fq}")
    }
    assert rows["d1"] == 773452800 * 10**6
    assert rows["d2"] == iso_instant("2000-01-01T10:30:00Z")
    assert rows["d3"] == iso_instant("2000-01-01T12:30:00Z")  # naive: UTC
    assert rows["d4"] == -1
    for doc_id in NOT_DATES:
        assert rows[doc_id] is None
    assert _range(cassandra_session, typed, "when", "gte", "2000-01-01") == {"d2", "d3"}
    assert _range(cassandra_session, typed, "when", "lt", "1970-01-01") == {"d4"}
    assert _range(cassandra_session, typed, "when", "eq", "1994-07-06T00:00:00Z") == {"d1"}


def test_a_list_in_a_typed_field_leaves_the_column_null_and_marks_the_document(
    cassandra_session: Any, typed_keyspace: str, typed: CassandraStore
) -> None:
    row = cassandra_session.execute(
        f"SELECT n_n, tokens FROM {typed.layout.fq} WHERE id = 'list'"
    ).one()
    assert row.n_n is None and typed.layout.list_marker("n") in row.tokens
    marked = cassandra_session.execute(
        f"SELECT id FROM {typed.layout.fq} WHERE tokens CONTAINS %s",
        (typed.layout.list_marker("n"),),
    )
    assert [r.id for r in marked] == ["list"]
    assert typed.fields["n"].list_valued and not typed.fields["when"].list_valued
    # recorded with the declaration: a store opened later knows it
    assert _store(cassandra_session, typed_keyspace).fields["n"].list_valued


def test_the_declaration_persists_and_a_conflicting_or_new_one_is_refused(
    cassandra_session: Any, keyspace: str
) -> None:
    typed = _typed(cassandra_session, keyspace)
    again = _store(cassandra_session, keyspace)
    assert again.fields.kinds() == {"n": "number", "when": "date"}
    assert _store(cassandra_session, keyspace, fields={"n": "number"}).fields.kinds() == {
        "n": "number",
        "when": "date",
    }
    with pytest.raises(InvalidInputError, match="declares 'n' as 'number'"):
        _store(cassandra_session, keyspace, fields={"n": "date"})
    with pytest.raises(InvalidInputError, match=r"hoprag fields declare --keyspace .* rank=number"):
        _store(cassandra_session, keyspace, fields={"rank": "number"})
    # a later writer fills the columns too
    again.add([Document("later", "later", {"n": 7, "when": "2001-01-01"})])
    assert _range(cassandra_session, typed, "n", "eq", 7) == {"later"}


def test_ranges_on_undeclared_or_entity_fields_and_bad_bounds_are_refused_naming_the_fix(
    cassandra_session: Any, keyspace: str
) -> None:
    store = _store(cassandra_session, keyspace, fields={"n": "number", "who": "entity"})
    with pytest.raises(InvalidInputError, match=r"hoprag fields declare .* year=number") as err:
        store.layout.range_clause("year", "gt")
    assert err.value.argument == "filter['year']"
    with pytest.raises(InvalidInputError, match="entity field"):
        store.layout.range_clause("who", "gt")
    with pytest.raises(InvalidInputError, match="op"):
        store.layout.range_clause("n", "ne")
    for bad in (True, "5", None, [1]):
        with pytest.raises(InvalidInputError, match=r"filter\['n'\] \$gt"):
            store.layout.range_value("n", "gt", bad)


@pytest.mark.parametrize(
    "name",
    ["a'b", "a;b", "%s", "a b", "1abc", "a..b", "", "ä", "a-b", "x)--", "n" * 47, "a.$b"],
)
def test_hostile_or_unusable_field_names_are_refused_before_anything_is_written(
    cassandra_session: Any, keyspace: str, name: str
) -> None:
    with pytest.raises(InvalidInputError):
        _store(cassandra_session, keyspace, table="hostile", fields={name: "number"})
    meta = cassandra_session.cluster.metadata.keyspaces[keyspace]
    assert "hostile" not in meta.tables and "hoprag_fields" not in meta.tables


def test_colliding_kinds_and_modes_are_refused(cassandra_session: Any, keyspace: str) -> None:
    for fields in ({"Year": "number", "year": "number"}, {"a.b": "date", "a__b": "date"}):
        with pytest.raises(InvalidInputError, match="share the column"):
            _store(cassandra_session, keyspace, fields=fields)
    with pytest.raises(InvalidInputError, match="'number', 'date' or 'entity'"):
        _store(cassandra_session, keyspace, fields={"year": "int"})
    with pytest.raises(InvalidInputError, match="mode='hoprag'"):
        _store(cassandra_session, keyspace, mode="cassio", fields={"year": "number"})


def test_cql_keywords_are_usable_field_names(cassandra_session: Any, keyspace: str) -> None:
    store = _store(cassandra_session, keyspace, fields={"select": "number", "from.where": "date"})
    store.add([Document("k", "k", {"select": 3, "from": {"where": "2020-02-02"}})])
    assert _range(cassandra_session, store, "select", "gte", 3) == {"k"}
    assert _range(cassandra_session, store, "from.where", "gt", "2020-01-01") == {"k"}


def test_resolve_needs_declared_entity_fields_on_cassandra(
    cassandra_session: Any, keyspace: str
) -> None:
    store = _store(cassandra_session, keyspace, fields={"n": "number", "who": "entity"})
    store.add([Document("a", "a", {"who": "Jane Fonda", "n": 1})])
    assert [(c.value, c.documents) for c in store.resolve("fonda", ["who"])] == [("Jane Fonda", 1)]
    with pytest.raises(InvalidInputError, match=r"hoprag fields declare .* cast=entity"):
        store.resolve("fonda", ["cast"])
    with pytest.raises(InvalidInputError, match="declared 'number'"):
        store.resolve("fonda", ["n"])


# --- aresolve's candidate cap and the values catalogue's name ----------------------------------

CAP_DOCS = [
    Document("c1", "c1", {"cast": ["Jane Fonda", "Peter Fonda"], "writer": "Fonda W1"}),
    Document("c2", "c2", {"director": [f"Fonda {i}" for i in range(5)], "writer": "Fonda W2"}),
]
"""Names holding "fonda": 2 in cast, 5 in director, 2 in writer."""


def _cap_outcome(store: Any, text: str, fields: list[str], filter: Any = None) -> Any:
    try:
        found = store.resolve(text, fields, filter=filter)
        return [(c.field, c.value, c.documents) for c in found]
    except InvalidInputError as exc:  # without "(n or more)": a store may stop counting
        return str(exc).split(" (", 1)[0]


def test_resolve_counts_the_candidate_cap_in_the_requested_fields_only_as_memory_does(
    cassandra_session: Any, keyspace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A text is refused as too common by the values it matches in the fields asked for,
    summed over them, never by values of other declared fields (#28), and counted before a
    filter: the same answers as a MemoryStore, one burst of bound catalogue reads per
    resolve."""
    import hoprag.resolve
    import hoprag.stores.cassandra.resolving
    import hoprag.stores.memory

    for module in (hoprag.resolve, hoprag.stores.memory, hoprag.stores.cassandra.resolving):
        monkeypatch.setattr(module, "MAX_CANDIDATES", 3)
    declared = {"cast": "entity", "director": "entity", "writer": "entity"}
    store = _store(cassandra_session, keyspace, fields=declared)
    store.add(CAP_DOCS)
    memory = MemoryStore(embedding=EMB)
    memory.add(CAP_DOCS)
    too_many = "matches more than 3 values of {}"
    expected = {
        ("fonda", ("cast",)): [("cast", "Jane Fonda", 1), ("cast", "Peter Fonda", 1)],
        ("fonda", ("writer",)): [("writer", "Fonda W1", 1), ("writer", "Fonda W2", 1)],
        ("fonda", ("director",)): too_many.format(["director"]),
        ("fonda", ("cast", "writer")): too_many.format(["cast", "writer"]),  # 2 + 2 > 3
        ("fonda", ("cast", "director")): too_many.format(["cast", "director"]),
        ("peter fonda", ("cast", "director")): [("cast", "Peter Fonda", 1)],
    }
    bursts: list[list[tuple[str, list[Any]]]] = []
    real = store.executor.burst

    async def burst(calls: Any, operation: str, limiter: Any) -> list[list[Any]]:
        bursts.append([(text, list(params)) for text, params in calls])
        return await real(calls, operation, limiter)

    monkeypatch.setattr(store.executor, "burst", burst)
    for (text, fields), want in expected.items():
        got = _cap_outcome(store, text, list(fields))
        assert got == _cap_outcome(memory, text, list(fields)), (text, fields)
        if isinstance(want, str):
            assert want in got, (text, fields)
        else:
            assert got == want, (text, fields)
    # The cap counts the values of every document, before a filter (a store view's too): the
    # catalogue bounds the work; c1 carries no director, yet "fonda" is refused as on memory.
    only_c1 = {"writer": "Fonda W1"}
    for text, fields, want in [
        ("fonda", ["director"], too_many.format(["director"])),
        ("fonda", ["cast"], [("cast", "Jane Fonda", 1), ("cast", "Peter Fonda", 1)]),
        ("fonda", ["writer"], [("writer", "Fonda W1", 1)]),
    ]:
        got = _cap_outcome(store, text, fields, only_c1)
        assert got == _cap_outcome(memory, text, fields, only_c1), (text, fields)
        assert (want in got) if isinstance(want, str) else got == want, (text, fields)
    bursts.clear()
    store.resolve("peter fonda", ["cast", "writer", "cast"])
    reads = bursts[0]  # the catalogue reads in one burst (then the counts)
    assert len(reads) == 4 and all("field = ?" in t and "LIMIT ?" in t for t, _ in reads)
    assert {p[-2] for _, p in reads} == {"cast", "writer"}
    assert all(f not in t for t, _ in reads for f in ("cast", "writer", "peter", "fonda"))


def test_a_values_catalogue_made_without_the_field_index_gets_it_when_the_store_opens(
    cassandra_session: Any, keyspace: str
) -> None:
    """Catalogues made before the catalogue reads narrowed by field have no index on
    `field`: a store opening the table adds it and waits until it answers."""
    store = _store(cassandra_session, keyspace, fields={"who": "entity"})
    store.add([Document("a", "a", {"who": "Jane Fonda"})])
    catalogue = store.values_catalogue
    cassandra_session.execute(f"DROP INDEX {keyspace}.{catalogue.name}_field_idx", timeout=120)
    again = _store(cassandra_session, keyspace)
    assert [(c.value, c.documents) for c in again.resolve("fonda", ["who"])] == [("Jane Fonda", 1)]
    indexes = cassandra_session.execute(
        "SELECT index_name FROM system_schema.indexes WHERE keyspace_name = %s AND table_name = %s",
        (keyspace, catalogue.name),
    )
    assert f"{catalogue.name}_field_idx" in {r.index_name for r in indexes}


def _tables(session: Any, keyspace: str) -> set[str]:
    rows = session.execute(
        "SELECT table_name FROM system_schema.tables WHERE keyspace_name = %s", (keyspace,)
    )
    return {r.table_name for r in rows}


def _declared(session: Any, keyspace: str) -> dict[str, dict[str, str]]:
    if "hoprag_fields" not in _tables(session, keyspace):
        return {}
    out: dict[str, dict[str, str]] = {}
    for r in session.execute(f"SELECT table_name, field, state FROM {keyspace}.hoprag_fields"):
        out.setdefault(r.table_name, {})[r.field] = r.state
    return out


def test_a_table_in_the_way_of_the_values_catalogue_is_refused_before_anything_is_written(
    cassandra_session: Any, keyspace: str
) -> None:
    """`<table>_values` taken by a table that is no values catalogue (a user's own, or a hoprag
    documents table) is refused naming both tables, before the store creates, records or
    writes anything; hoprag never writes into the other table (#28)."""
    session = cassandra_session
    # A user's table, of another shape and of the catalogue's columns with another key.
    session.execute(f"CREATE TABLE {keyspace}.films_values (id int PRIMARY KEY, note text)",
                    timeout=120)  # fmt: skip
    session.execute(f"INSERT INTO {keyspace}.films_values (id, note) VALUES (1, 'mine')")
    session.execute(f"CREATE TABLE {keyspace}.shows_values (field text, value text, norm text, "
                    "words set<text>, PRIMARY KEY (field, value))", timeout=120)  # fmt: skip
    for table in ("films", "shows"):
        with pytest.raises(InvalidInputError) as caught:
            _store(session, keyspace, table=table, fields={"cast": "entity"})
        message = str(caught.value)
        assert f"{keyspace}.{table} " in message and f"{keyspace}.{table}_values" in message
        assert "not a values catalogue" in message and "another table name" in message
        assert table not in _tables(session, keyspace)
    assert _declared(session, keyspace) == {}
    rows = session.execute(f"SELECT id, note FROM {keyspace}.films_values")
    assert [tuple(r) for r in rows] == [(1, "mine")]
    assert list(session.execute(f"SELECT * FROM {keyspace}.shows_values")) == []
    # A hoprag documents table named like the catalogue of a loaded table declaring entities.
    docs_values = _store(session, keyspace, table="docs_values")
    docs_values.add([Document("d", "d", {"cast": "Jane Fonda"})])
    docs = _store(session, keyspace, table="docs")
    docs.add([Document("a", "a", {"cast": "Jane Fonda"})])
    with pytest.raises(InvalidInputError, match="a hoprag documents table") as caught:
        docs.declare_fields({"cast": "entity"})
    assert f"{keyspace}.docs_values" in str(caught.value)
    assert _declared(session, keyspace) == {}
    assert [r.id for r in session.execute(f"SELECT id FROM {docs_values.layout.fq}")] == ["d"]
    # A declared table whose catalogue was replaced by another table does not open.
    plays = _store(session, keyspace, table="plays", fields={"cast": "entity"})
    plays.add([Document("p", "p", {"cast": "Jane Fonda"})])
    with pytest.raises(InvalidInputError, match="the values catalogue of a hoprag table"):
        _store(session, keyspace, table="plays_values")  # the other way round
    session.execute(f"DROP TABLE {keyspace}.plays_values", timeout=120)
    session.execute(f"CREATE TABLE {keyspace}.plays_values (id int PRIMARY KEY)", timeout=120)
    with pytest.raises(InvalidInputError, match="not a values catalogue"):
        _store(session, keyspace, table="plays")


# --- the migration ------------------------------------------------------------------------------

N = 1300


def _loaded_docs() -> list[Document]:
    out = []
    for i in range(N):
        md: dict[str, Any] = {"who": [f"Person {i % 37}", "Common Name"], "group": i % 3}
        if i % 4:
            md["rank"] = i % 50 if i % 7 else (i % 50) + 0.5
        if i % 5 == 0:
            md["day"] = f"20{i % 30:02d}-01-15"
        if i == 11:
            md["rank"] = [1, 2]
        out.append(Document(f"m{i:05d}", f"doc {i}", md))
    return out


@pytest.fixture
def loaded(cassandra_session: Any) -> tuple[str, list[Document]]:
    keyspace = new_keyspace(cassandra_session)
    docs = _loaded_docs()
    _store(cassandra_session, keyspace).add(docs)
    return keyspace, docs


MIGRATED = {"rank": "number", "day": "date", "who": "entity"}


def _check_migrated(session: Any, store: CassandraStore, docs: list[Document]) -> None:
    ranks = {d.id: d.metadata.get("rank") for d in docs}
    numeric = {i: v for i, v in ranks.items() if isinstance(v, int | float)}
    assert _range(session, store, "rank", "gte", 25) == {i for i, v in numeric.items() if v >= 25}
    assert _range(session, store, "rank", "lt", 0.5) == {i for i, v in numeric.items() if v < 0.5}
    days = {d.id for d in docs if d.metadata.get("day", "") >= "2020-01-01"}
    assert _range(session, store, "day", "gte", "2020-01-01") == days
    got = store.resolve("person 5", ["who"])
    assert [(c.value, c.documents) for c in got] == [
        ("Person 5", sum(1 for d in docs if "Person 5" in d.metadata["who"]))
    ]
    assert store.resolve("common", ["who"])[0].documents == N
    assert store.fields["rank"].list_valued and all(d.ready for d in store.fields.values())


def test_the_migration_backfills_a_loaded_table_and_is_idempotent(
    cassandra_session: Any, loaded: tuple[str, list[Document]]
) -> None:
    keyspace, docs = loaded
    store = _store(cassandra_session, keyspace)
    with pytest.raises(InvalidInputError, match="hoprag fields declare"):
        store.layout.range_clause("rank", "gte")
    seen: list[int] = []
    assert store.declare_fields(MIGRATED, progress=seen.append) == MIGRATED
    assert seen == sorted(seen) and seen[-1] == N and len(seen) >= 3  # pages of 500
    _check_migrated(cassandra_session, store, docs)
    again: list[int] = []
    assert store.declare_fields(MIGRATED, progress=again.append) == MIGRATED
    assert again == []  # nothing left to do: no second backfill
    fresh = _store(cassandra_session, keyspace)
    _check_migrated(cassandra_session, fresh, docs)
    with pytest.raises(InvalidInputError, match="declares 'rank' as 'number'"):
        fresh.declare_fields({"rank": "date"})


class _Interrupt(Exception):
    pass


def test_an_interrupted_migration_is_completed_by_running_it_again(
    cassandra_session: Any, loaded: tuple[str, list[Document]]
) -> None:
    keyspace, docs = loaded
    store = _store(cassandra_session, keyspace)

    def stop(done: int) -> None:
        raise _Interrupt(done)

    with pytest.raises(_Interrupt):
        store.declare_fields(MIGRATED, progress=stop)
    stored = FieldCatalog(cassandra_session, keyspace).load("docs")
    assert {f: d.ready for f, d in stored.items()} == dict.fromkeys(MIGRATED, False)
    other = _store(cassandra_session, keyspace)
    with pytest.raises(InvalidInputError, match="did not complete"):
        other.layout.range_clause("rank", "gte")
    with pytest.raises(InvalidInputError, match="did not complete"):
        other.resolve("person", ["who"])
    assert other.declare_fields(MIGRATED) == MIGRATED
    _check_migrated(cassandra_session, other, docs)


# --- the CLI ------------------------------------------------------------------------------------


def _hoprag(contact: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hoprag.cli", *args, "--contact-points", contact],
        capture_output=True, text=True, check=False, timeout=900,
    )  # fmt: skip


def test_fields_declare_and_list_from_the_command_line(
    cassandra_session: Any, cassandra_contact_points: str, loaded: tuple[str, list[Document]]
) -> None:
    keyspace, docs = loaded
    run = lambda *a: _hoprag(cassandra_contact_points, *a, "--keyspace", keyspace)  # noqa: E731
    before = run("fields", "list", "--table", "docs")
    assert before.returncode == 0, before.stderr
    assert "declares no fields" in before.stdout
    r = run("fields", "declare", "--table", "docs", "rank=number", "day=date", "who=entity")
    assert r.returncode == 0, r.stderr
    assert f"{keyspace}.docs declares day=date, rank=number, who=entity" in r.stdout
    assert re.search(rf"backfill docs {N} docs", r.stderr), r.stderr
    listed = run("fields", "list", "--table", "docs", "--json")
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout) == [
        {"field": "day", "kind": "date", "column": "d_day", "state": "ready", "list_valued": False},
        {"field": "rank", "kind": "number", "column": "n_rank", "state": "ready",
         "list_valued": True},
        {"field": "who", "kind": "entity", "column": None, "state": "ready", "list_valued": False},
    ]  # fmt: skip
    _check_migrated(cassandra_session, _store(cassandra_session, keyspace), docs)
    table = run("fields", "list", "--table", "docs")
    assert table.stdout.split("\n")[1].split() == ["day", "date", "d_day", "ready", "no"]


def test_an_interrupted_fields_declare_resumes_when_run_again(
    cassandra_session: Any, cassandra_contact_points: str, loaded: tuple[str, list[Document]]
) -> None:
    """SIGINT once the declaration is recorded (`adding`), before it is `ready`: the command
    says to run it again, `fields list` shows it incomplete, and the same command completes it."""
    keyspace, docs = loaded
    args = [sys.executable, "-m", "hoprag.cli", "fields", "declare", "--table", "docs",
            "rank=number", "day=date", "who=entity", "--keyspace", keyspace,
            "--contact-points", cassandra_contact_points]  # fmt: skip
    proc = start_interruptible(args)
    # Read the fields table directly: FieldCatalog.load asks this process's schema metadata
    # whether the table exists, and the driver learns of a table created by another process
    # only after its schema-event debounce, which can outlast the whole declaration.
    query = f"SELECT state FROM {keyspace}.hoprag_fields WHERE table_name = 'docs'"
    deadline = time.monotonic() + 300
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                states = {r[0] for r in cassandra_session.execute(query)}
            except Exception:  # the fields table is not created yet
                states = set()
            if states == {"adding"}:
                break
            time.sleep(0.01)
        assert proc.poll() is None, "the declaration finished before it could be interrupted"
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "run the same command again" in err
    listed = _hoprag(cassandra_contact_points, "fields", "list", "--table", "docs", "--json",
                     "--keyspace", keyspace)  # fmt: skip
    assert {r["state"] for r in json.loads(listed.stdout)} == {"incomplete"}
    again = subprocess.run(args, capture_output=True, text=True, check=False, timeout=900)
    assert again.returncode == 0, again.stderr
    _check_migrated(cassandra_session, _store(cassandra_session, keyspace), docs)


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["rank=int"], "'number', 'date' or 'entity'"),
        (["a;b=number"], "a plain field name"),
        (["rank"], "expected FIELD=KIND"),
        (["x'); DROP TABLE docs; --=number"], "a plain field name"),
    ],
)
def test_bad_fields_declare_arguments_exit_2_before_connecting(
    cassandra_contact_points: str, args: list[str], says: str
) -> None:
    r = _hoprag(cassandra_contact_points, "fields", "declare", "--table", "docs", *args)
    assert r.returncode == 2 and says in r.stderr, r.stderr


def test_fields_declare_on_a_missing_table_fails_clearly(
    cassandra_contact_points: str, keyspace: str
) -> None:
    r = _hoprag(cassandra_contact_points, "fields", "declare", "--table", "nope", "rank=number",
                "--keyspace", keyspace)  # fmt: skip
    assert r.returncode == 2 and "does not exist" in r.stderr, r.stderr


# --- films: aresolve against SQL over movies.db ------------------------------------------------


def test_resolving_fonda_on_films_counts_what_sql_counts(
    cassandra_session: Any, keyspace: str
) -> None:
    from hoprag import datasets

    docs, counts = fonda_films()
    store = _store(cassandra_session, keyspace, table="films",
                   fields=dict(datasets.DATASETS["films"].fields))  # fmt: skip
    store.add(docs)
    got = store.resolve("fonda", ["cast", "director"], limit=100)
    assert {c.value: c.documents for c in got if c.field == "cast"} == counts
    best = sorted(counts, key=lambda n: (-counts[n], n))
    two_words = [c.value for c in got if c.field == "cast" and c.score == 0.5]
    assert two_words[:3] == [n for n in best if len(n.split()) == 2][:3]
    jane = store.resolve("JANE fönda", ["cast"], limit=1)
    assert [(c.value, c.documents, c.score) for c in jane] == [
        ("Jane Fonda", counts["Jane Fonda"], 1.0)
    ]
    assert store.resolve("x'); DROP TABLE films; --", ["cast", "director", "writer"]) == []
    assert store.resolve("jane fonda", ["cast"], limit=1)[0].documents == counts["Jane Fonda"]


def test_load_films_declares_the_films_fields(cassandra_contact_points: str, keyspace: str) -> None:
    from hoprag import datasets

    run = lambda *a: _hoprag(cassandra_contact_points, *a, "--keyspace", keyspace)  # noqa: E731
    load = run("load", "films", "--limit", "120", "--embedding", "hash:16", "--table", "f")
    assert load.returncode == 0, load.stderr
    listed = run("fields", "list", "--table", "f", "--json")
    assert listed.returncode == 0, listed.stderr
    got = {r["field"]: (r["kind"], r["state"]) for r in json.loads(listed.stdout)}
    assert got == {f: (k, "ready") for f, k in datasets.DATASETS["films"].fields}


def test_a_store_sees_fields_declared_elsewhere_though_its_driver_metadata_never_updates(
    cassandra_contact_points: str, loaded: tuple[str, list[Document]]
) -> None:
    """A long-lived process's session learns of another process's DDL only after the driver's
    schema debounce; with schema metadata off it never does. A store opened on it after
    `hoprag fields declare` still writes and reads the declared columns (it asks the node)."""
    from cassandra.cluster import Cluster

    from hoprag.stores.cassandra.session import parse_contact_points

    keyspace, docs = loaded
    (host, port), *_ = parse_contact_points(cassandra_contact_points)
    cluster = Cluster([host], port=port, protocol_version=5, schema_metadata_enabled=False)
    session = cluster.connect()
    try:
        r = _hoprag(cassandra_contact_points, "fields", "declare", "--table", "docs",
                    "rank=number", "--keyspace", keyspace)  # fmt: skip
        assert r.returncode == 0, r.stderr
        store = _store(session, keyspace)
        store.add([Document("late", "written after the declaration", {"rank": 49.5})])
        assert store.fields["rank"].ready
        ranks = {d.id: d.metadata.get("rank") for d in docs}
        want = {i for i, v in ranks.items() if isinstance(v, int | float) and v >= 49}
        assert _range(session, store, "rank", "gte", 49) == want | {"late"}
    finally:
        cluster.shutdown()
