"""What Storage-Attached Indexing (SAI) in Cassandra 5.0.8 does and refuses for the filters and
scopes hoprag builds (issue #18): ranges, equality and CONTAINS with and without ANN ordering,
OR / IN / NOT, the text index options, paging of equality reads, indexes added to a loaded
table, and which rows a filtered ANN query returns. Each test pins one fact that
docs/cassandra.md ("What SAI in Cassandra 5.0.8 can do for filters and scopes") states; when a
Cassandra upgrade changes a fact, its test fails and the page must change with it.

Every value is a bound parameter of a prepared statement; a refused statement is refused when
it is prepared. The tables are small and live in one keyspace of their own (dropped at the end of
the run, see conftest.py)."""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Iterator, Sequence
from decimal import Decimal
from typing import Any

import numpy as np
import pytest
from cassandra import InvalidRequest, ReadFailure
from cassandra.concurrent import execute_concurrent_with_args
from cassandra.protocol import ConfigurationException, SyntaxException
from keyspaces import new_keyspace

from hoprag.stores.cassandra.schema import execute_ddl, wait_queryable

SAI = "USING 'StorageAttachedIndex'"
FILTERING = "might involve data filtering"
ANN_NEEDS_INDEXES = "ANN ordering by vector requires all restricted column(s) to be indexed"
Q2 = [1.0, 2.0]  # the query vector of the small table


def rows(session: Any, cql: str, *params: Any) -> list[Any]:
    """Prepare `cql`, bind `params` and return every row."""
    return list(session.execute(session.prepare(cql), params, timeout=60))


def ids(session: Any, cql: str, *params: Any) -> list[int]:
    return [r.id for r in rows(session, cql, *params)]


def refused(session: Any, cql: str, error: type[Exception], fragment: str) -> None:
    """`cql` is refused (at prepare time) with `error` whose message contains `fragment`."""
    with pytest.raises(error) as info:
        session.prepare(cql)
    assert fragment in str(info.value), str(info.value)


def create_indexes(session: Any, keyspace: str, table: str, specs: Sequence[str]) -> None:
    """Create one SAI index per spec (`name:target[:options]`) and wait until all answer."""
    names = []
    for spec in specs:
        name, target, *options = spec.split(":", 2)
        with_options = f" WITH OPTIONS = {options[0]}" if options else ""
        execute_ddl(
            session,
            f"CREATE INDEX {table}_{name} ON {keyspace}.{table} ({target}) {SAI}{with_options}",
        )
        names.append(f"{table}_{name}")
    wait_queryable(session, keyspace, names)


@pytest.fixture(scope="module")
def ks(cassandra_session: Any) -> str:
    return new_keyspace(cassandra_session)


# -- one row per k in 0..9, every column a function of k -------------------------------------


@pytest.fixture(scope="module")
def typed(cassandra_session: Any, ks: str) -> str:
    """Table `typed`: a column of each type hoprag might filter on, each with an SAI index
    (maps on ENTRIES or VALUES), a 2-d vector, and `u`, an int without an index."""
    s = cassandra_session
    execute_ddl(
        s,
        f"CREATE TABLE {ks}.typed (id int PRIMARY KEY, i int, b bigint, vi varint, d double, "
        "dc decimal, dt date, ts timestamp, tx text, mdbl map<text, double>, "
        "mtxt map<text, text>, mval map<text, double>, st set<text>, sd set<double>, "
        "li list<double>, emb vector<float, 2>, u int)",
    )
    create_indexes(
        s,
        ks,
        "typed",
        [
            *("i:i", "b:b", "vi:vi", "d:d", "dc:dc", "dt:dt", "ts:ts", "tx:tx", "st:st", "sd:sd"),
            *("li:li", "mdbl:ENTRIES(mdbl)", "mtxt:ENTRIES(mtxt)", "mval:VALUES(mval)"),
            "emb:emb:{'similarity_function': 'cosine'}",
        ],
    )
    insert = s.prepare(
        f"INSERT INTO {ks}.typed (id, i, b, vi, d, dc, dt, ts, tx, mdbl, mtxt, mval, st, sd, "
        "li, emb, u) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    )
    for k in range(10):
        s.execute(
            insert,
            (
                k,
                k,
                k * 10**10,
                k * 10**20,
                k + 0.5,
                Decimal(k) / 4,
                dt.date(1970 + k, 1, 1),
                dt.datetime(2000 + k, 1, 1),
                f"t{k}",
                {"x": float(k)},
                {"x": f"v{k}"},
                {"x": float(k)},
                {f"w{k}", "all"},
                {float(k)},
                [float(k)],
                [1.0, float(k) + 1],
                k,
            ),
        )
    return f"{ks}.typed"


# column: the value of row 3 (rows 0..9 are ordered the same way on every column)
RANGE_COLUMNS = {
    "i": 3,
    "b": 3 * 10**10,
    "vi": 3 * 10**20,
    "d": 3.5,
    "dc": Decimal("0.75"),
    "dt": dt.date(1973, 1, 1),
    "ts": dt.datetime(2003, 1, 1),
}
RANGE_OPS = {"<": {0, 1, 2}, "<=": {0, 1, 2, 3}, ">": set(range(4, 10)), ">=": set(range(3, 10))}


@pytest.mark.parametrize("column", sorted(RANGE_COLUMNS))
def test_every_range_operator_works_on_sai_indexed_numeric_and_date_columns(
    cassandra_session: Any, typed: str, column: str
) -> None:
    value = RANGE_COLUMNS[column]
    for op, expected in RANGE_OPS.items():
        got = ids(cassandra_session, f"SELECT id FROM {typed} WHERE {column} {op} ?", value)
        assert set(got) == expected, (column, op)
    upper = {"i": 6, "b": 6 * 10**10, "vi": 6 * 10**20, "d": 6.5, "dc": Decimal("1.5")}
    upper |= {"dt": dt.date(1976, 1, 1), "ts": dt.datetime(2006, 1, 1)}
    both = f"SELECT id FROM {typed} WHERE {column} >= ? AND {column} < ?"
    assert set(ids(cassandra_session, both, value, upper[column])) == {3, 4, 5}


def test_a_text_sai_index_serves_equality_but_a_range_on_it_needs_allow_filtering(
    cassandra_session: Any, typed: str
) -> None:
    s = cassandra_session
    assert ids(s, f"SELECT id FROM {typed} WHERE tx = ?", "t3") == [3]
    for op in ("<", "<=", ">", ">="):
        refused(s, f"SELECT id FROM {typed} WHERE tx {op} 't3'", InvalidRequest, FILTERING)
    # With ALLOW FILTERING it is a filtered scan of the whole table, not an index read.
    got = ids(s, f"SELECT id FROM {typed} WHERE tx > ? ALLOW FILTERING", "t3")
    assert set(got) == set(range(4, 10))


def test_a_range_on_a_map_entry_is_refused_even_with_allow_filtering_or_ann(
    cassandra_session: Any, typed: str
) -> None:
    s = cassandra_session
    message = "Only EQ relations are supported on map entries"
    for where in ("mdbl['x'] > 3", "mtxt['x'] > 'v3'", "mdbl['x'] >= 3 AND mdbl['x'] < 6"):
        refused(s, f"SELECT id FROM {typed} WHERE {where}", InvalidRequest, message)
        refused(s, f"SELECT id FROM {typed} WHERE {where} ALLOW FILTERING", InvalidRequest, message)
        ann = f"SELECT id FROM {typed} WHERE {where} ORDER BY emb ANN OF [1.0, 2.0] LIMIT 10"
        refused(s, ann, InvalidRequest, message)
    refused(s, f"SELECT id FROM {typed} WHERE i > 1 AND mdbl['x'] > 3", InvalidRequest, message)


def test_map_entry_equality_and_map_values_contains_are_served_by_their_indexes(
    cassandra_session: Any, typed: str
) -> None:
    s = cassandra_session
    assert ids(s, f"SELECT id FROM {typed} WHERE mdbl['x'] = ?", 3.0) == [3]
    assert ids(s, f"SELECT id FROM {typed} WHERE mtxt['x'] = ?", "v3") == [3]
    assert ids(s, f"SELECT id FROM {typed} WHERE mval CONTAINS ?", 3.0) == [3]
    # An ENTRIES index serves only m[k] = v: CONTAINS on that map is a filtered scan.
    refused(s, f"SELECT id FROM {typed} WHERE mdbl CONTAINS 3.0", InvalidRequest, FILTERING)


@pytest.mark.parametrize("column", ["st", "sd", "li", "mval"])
def test_a_range_on_a_collection_is_refused_and_contains_works(
    cassandra_session: Any, typed: str, column: str
) -> None:
    s = cassandra_session
    literal = "'w3'" if column == "st" else "3"
    refused(
        s,
        f"SELECT id FROM {typed} WHERE {column} > {literal}",
        InvalidRequest,
        f"Collection column '{column}'",
    )
    refused(
        s,
        f"SELECT id FROM {typed} WHERE {column} > {literal} ALLOW FILTERING",
        InvalidRequest,
        "cannot be restricted by a '>' relation",
    )
    value = "w3" if column == "st" else 3.0
    assert ids(s, f"SELECT id FROM {typed} WHERE {column} CONTAINS ?", value) == [3]


def test_ann_ands_with_ranges_equality_and_contains_without_allow_filtering(
    cassandra_session: Any, typed: str
) -> None:
    s = cassandra_session
    ann = "ORDER BY emb ANN OF ? LIMIT 10"
    got = ids(s, f"SELECT id FROM {typed} WHERE i >= ? AND i < ? {ann}", 3, 7, Q2)
    assert set(got) == {3, 4, 5, 6}
    where = "i >= ? AND i < ? AND st CONTAINS ?"
    assert set(ids(s, f"SELECT id FROM {typed} WHERE {where} {ann}", 3, 7, "all", Q2)) == {
        3,
        4,
        5,
        6,
    }
    where = "d > ? AND dt < ? AND ts >= ? AND st CONTAINS ? AND tx = ? AND mdbl['x'] = ?"
    params = (2.0, dt.date(1978, 1, 1), dt.datetime(2001, 1, 1), "all", "t5", 5.0, Q2)
    assert ids(s, f"SELECT id FROM {typed} WHERE {where} {ann}", *params) == [5]


def test_ann_refuses_a_filter_on_a_column_without_an_index_even_with_allow_filtering(
    cassandra_session: Any, typed: str
) -> None:
    s = cassandra_session
    for where in ("u = 1", "u > 1"):
        ann = f"SELECT id FROM {typed} WHERE {where} ORDER BY emb ANN OF [1.0, 2.0] LIMIT 3"
        refused(s, ann, InvalidRequest, ANN_NEEDS_INDEXES)
        refused(s, ann + " ALLOW FILTERING", InvalidRequest, ANN_NEEDS_INDEXES)


def test_a_text_range_with_ann_and_allow_filtering_is_accepted_but_misses_matching_rows(
    cassandra_session: Any, typed: str
) -> None:
    """Six of the ten rows have tx > 't3' and LIMIT 10 covers the table, yet the answer lacks
    some of them (none at all on 5.0.8): a range on a text column must never reach Cassandra."""
    s = cassandra_session
    ann = "ORDER BY emb ANN OF [1.0, 2.0] LIMIT 10"
    refused(s, f"SELECT id FROM {typed} WHERE tx > 't3' {ann}", InvalidRequest, FILTERING)
    got = ids(s, f"SELECT id FROM {typed} WHERE tx > ? {ann} ALLOW FILTERING", "t3")
    assert set(got) < set(range(4, 10))


def test_or_not_in_and_not_contains_are_syntax_errors(cassandra_session: Any, typed: str) -> None:
    s = cassandra_session
    for where in (
        "i = 1 OR i = 2",
        "(i = 1 OR i = 2)",
        "tx NOT IN ('t1')",
        "st NOT CONTAINS 'w1'",
        "NOT tx = 't1'",
        "tx : 't1'",
    ):
        cql = f"SELECT id FROM {typed} WHERE {where} ALLOW FILTERING"
        refused(s, cql, SyntaxException, "no viable alternative at input")


def test_not_equal_is_refused_on_any_column(cassandra_session: Any, typed: str) -> None:
    s = cassandra_session
    for where in ("tx != 't1'", "i != 1", "tx != 't1' ORDER BY emb ANN OF [1.0, 2.0] LIMIT 3"):
        refused(s, f"SELECT id FROM {typed} WHERE {where}", InvalidRequest, 'Unsupported "!="')
    refused(s, f"SELECT id FROM {typed} WHERE i != 1 ALLOW FILTERING", InvalidRequest, "!=")


def test_is_not_null_is_refused_so_exists_has_no_server_side_form(
    cassandra_session: Any, typed: str
) -> None:
    s = cassandra_session
    for column in ("i", "u"):
        cql = f"SELECT id FROM {typed} WHERE {column} IS NOT NULL ALLOW FILTERING"
        refused(s, cql, InvalidRequest, f"Unsupported restriction: {column} IS NOT NULL")


def test_in_on_an_indexed_column_is_no_index_read_it_needs_allow_filtering(
    cassandra_session: Any, typed: str
) -> None:
    s = cassandra_session
    refused(s, f"SELECT id FROM {typed} WHERE i IN (1, 2)", InvalidRequest, FILTERING)
    refused(s, f"SELECT id FROM {typed} WHERE tx IN ('t1', 't2')", InvalidRequest, FILTERING)
    both = f"SELECT id FROM {typed} WHERE st CONTAINS 'all' AND tx IN ('t1', 't2')"
    refused(s, both, InvalidRequest, FILTERING)
    ann = f"SELECT id FROM {typed} WHERE tx IN ('t1', 't2') ORDER BY emb ANN OF [1.0, 2.0] LIMIT 9"
    refused(s, ann, InvalidRequest, FILTERING)
    # Accepted as a filter: a scan, or the other predicate's index read then a filter.
    assert set(ids(s, f"SELECT id FROM {typed} WHERE i IN ? ALLOW FILTERING", [1, 2])) == {1, 2}
    both = f"SELECT id FROM {typed} WHERE st CONTAINS ? AND tx IN ? ALLOW FILTERING"
    got = ids(s, both, "all", ["t1", "t2"])
    assert set(got) == {1, 2}


def test_in_on_the_primary_key_with_an_indexed_predicate_is_refused(
    cassandra_session: Any, typed: str
) -> None:
    s = cassandra_session
    message = "Select on indexed columns and with IN clause for the PRIMARY KEY are not supported"
    for tail in ("AND st CONTAINS 'all'", "AND st CONTAINS 'all' ALLOW FILTERING"):
        refused(s, f"SELECT id FROM {typed} WHERE id IN (1, 2) {tail}", InvalidRequest, message)
    ann = f"SELECT id FROM {typed} WHERE id IN (1, 2) ORDER BY emb ANN OF [1.0, 2.0] LIMIT 3"
    refused(s, ann, InvalidRequest, message)


def test_like_and_order_by_a_regular_column_are_refused(cassandra_session: Any, typed: str) -> None:
    s = cassandra_session
    refused(
        s,
        f"SELECT id FROM {typed} WHERE tx LIKE 't%'",
        InvalidRequest,
        "LIKE restriction is only supported on properly indexed columns",
    )
    refused(
        s,
        f"SELECT id FROM {typed} WHERE i > 2 ORDER BY i LIMIT 3",
        InvalidRequest,
        "ORDER BY with 2ndary indexes is not supported, except for ANN queries",
    )


# -- text index options ----------------------------------------------------------------------

COMPOSED = "J\u00e1ne F\u00f6nda"  # á and ö as single code points (NFC)
DECOMPOSED = "Ja\u0301ne Fo\u0308nda"  # a + combining acute, o + combining diaeresis (NFD)
NAMES = ["Jane Fonda", COMPOSED, "JANE FONDA", DECOMPOSED, "jane  fonda", "Jane Fondas"]
FOLD = "{'case_sensitive': 'false', 'normalize': 'true', 'ascii': 'true'}"


@pytest.fixture(scope="module")
def names(cassandra_session: Any, ks: str) -> str:
    """Table `names`: row k holds NAMES[k] in five text columns indexed with different options,
    and its words in a set<text> indexed with all three options."""
    s = cassandra_session
    execute_ddl(
        s,
        f"CREATE TABLE {ks}.names (id int PRIMARY KEY, plain text, ci text, cin text, "
        "nrm text, fold text, words set<text>, spare text, n int)",
    )
    create_indexes(
        s,
        ks,
        "names",
        [
            "plain:plain",
            "ci:ci:{'case_sensitive': 'false'}",
            "cin:cin:{'case_sensitive': 'false', 'normalize': 'true'}",
            "nrm:nrm:{'normalize': 'true'}",
            f"fold:fold:{FOLD}",
            f"words:words:{FOLD}",
        ],
    )
    insert = s.prepare(
        f"INSERT INTO {ks}.names (id, plain, ci, cin, nrm, fold, words) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)"
    )
    for k, name in enumerate(NAMES):
        s.execute(insert, (k, name, name, name, name, name, set(name.split())))
    return f"{ks}.names"


def matches(session: Any, table: str, column: str, value: str) -> set[int]:
    return set(ids(session, f"SELECT id FROM {table} WHERE {column} = ?", value))


def test_index_options_other_than_the_three_text_options_are_not_understood(
    cassandra_session: Any, names: str
) -> None:
    s = cassandra_session
    for option in ("index_analyzer", "query_analyzer"):
        with pytest.raises(ConfigurationException) as info:
            s.execute(
                f"CREATE INDEX names_{option} ON {names} (spare) {SAI} "
                f"WITH OPTIONS = {{'{option}': 'standard'}}",
                timeout=60,
            )
        assert f"Properties specified [{option}] are not understood by StorageAttachedIndex" in (
            str(info.value)
        )
    with pytest.raises(InvalidRequest, match="Illegal value for boolean option 'case_sensitive'"):
        s.execute(
            f"CREATE INDEX names_bad ON {names} (spare) {SAI} "
            "WITH OPTIONS = {'case_sensitive': 'maybe'}",
            timeout=60,
        )
    with pytest.raises(InvalidRequest, match="CQL type int cannot be analyzed"):
        s.execute(
            f"CREATE INDEX names_n ON {names} (n) {SAI} WITH OPTIONS = {{'ascii': 'true'}}",
            timeout=60,
        )


def test_a_column_takes_one_sai_index_so_one_set_of_text_options(
    cassandra_session: Any, names: str
) -> None:
    with pytest.raises(InvalidRequest, match="Cannot create more than one storage-attached index"):
        cassandra_session.execute(
            f"CREATE INDEX names_plain_ci ON {names} (plain) {SAI} "
            "WITH OPTIONS = {'case_sensitive': 'false'}",
            timeout=60,
        )


def test_case_insensitive_and_normalize_ignore_case_but_not_accents(
    cassandra_session: Any, names: str
) -> None:
    s = cassandra_session
    assert matches(s, names, "plain", "jane fonda") == set()
    assert matches(s, names, "plain", "Jane Fonda") == {0}
    for column in ("ci", "cin"):
        assert matches(s, names, column, "jane fonda") == {0, 2}, column
    assert matches(s, names, "ci", COMPOSED.lower()) == {1}
    assert matches(s, names, "ci", DECOMPOSED.lower()) == {3}
    # `cin` adds normalize: either spelling of the accents finds both rows, still not row 0
    assert matches(s, names, "cin", COMPOSED.lower()) == {1, 3}
    assert matches(s, names, "cin", DECOMPOSED.lower()) == {1, 3}


def test_normalize_only_makes_composed_and_decomposed_accents_equal(
    cassandra_session: Any, names: str
) -> None:
    s = cassandra_session
    assert matches(s, names, "plain", COMPOSED) == {1}
    assert matches(s, names, "plain", DECOMPOSED) == {3}
    assert matches(s, names, "nrm", COMPOSED) == {1, 3}
    assert matches(s, names, "nrm", DECOMPOSED) == {1, 3}
    assert matches(s, names, "nrm", "Jane Fonda") == {0}


def test_all_three_options_fold_case_and_accents_but_not_spaces(
    cassandra_session: Any, names: str
) -> None:
    s = cassandra_session
    for query in ("jane fonda", "JANE FONDA", COMPOSED, DECOMPOSED):
        assert matches(s, names, "fold", query) == {0, 1, 2, 3}, query
    assert matches(s, names, "fold", "jane  fonda") == {4}
    # the stored value comes back as written
    assert [r.fold for r in rows(s, f"SELECT fold FROM {names} WHERE id = ?", 1)] == [COMPOSED]


def test_the_text_options_apply_to_each_element_of_a_set_for_contains(
    cassandra_session: Any, names: str
) -> None:
    s = cassandra_session
    for word in ("fonda", "Fonda", "F\u00d6NDA"):
        got = set(ids(s, f"SELECT id FROM {names} WHERE words CONTAINS ?", word))
        assert got == {0, 1, 2, 3, 4}, word
    assert set(ids(s, f"SELECT id FROM {names} WHERE words CONTAINS ?", "fondas")) == {5}


# -- which rows a filtered ANN query returns -------------------------------------------------

N_ANN = 1000
ANN_DIM = 8


@pytest.fixture(scope="module")
def ann(cassandra_session: Any, ks: str) -> tuple[str, list[tuple[Any, ...]], list[float]]:
    """Table `ann` of 1,000 rows: `f` is 'rare' on 5 rows (all with g = 3), `g` = id % 50 (20
    rows each), every row has tag 'all'; seeded random 8-d vectors. Returns the table, the
    rows and a query vector."""
    s = cassandra_session
    execute_ddl(
        s,
        f"CREATE TABLE {ks}.ann (id int PRIMARY KEY, f text, g int, tags set<text>, "
        f"emb vector<float, {ANN_DIM}>)",
    )
    create_indexes(
        s,
        ks,
        "ann",
        ["f:f", "g:g", "tags:tags", "emb:emb:{'similarity_function': 'cosine'}"],
    )
    rng = random.Random(18)
    data = [
        (
            k,
            "rare" if k % 200 == 3 else "common",
            k % 50,
            {"all", f"m{k % 3}"},
            [rng.gauss(0, 1) for _ in range(ANN_DIM)],
        )
        for k in range(N_ANN)
    ]
    insert = s.prepare(f"INSERT INTO {ks}.ann (id, f, g, tags, emb) VALUES (?, ?, ?, ?, ?)")
    execute_concurrent_with_args(s, insert, data, concurrency=32, raise_on_first_error=True)
    return f"{ks}.ann", data, [rng.gauss(0, 1) for _ in range(ANN_DIM)]


def exact_ranking(data: list[tuple[Any, ...]], query: list[float], keep: Any) -> list[int]:
    """Ids of the rows that `keep` accepts, by descending cosine similarity to `query`."""
    kept = [r for r in data if keep(r)]
    vectors = np.array([r[4] for r in kept], dtype=np.float32)
    scores = vectors @ np.array(query, dtype=np.float32) / np.linalg.norm(vectors, axis=1)
    return [kept[i][0] for i in np.argsort(-scores, kind="stable")]


def test_filtered_ann_returns_every_matching_row_in_exact_order_when_they_fit_the_limit(
    cassandra_session: Any, ann: tuple[str, list[tuple[Any, ...]], list[float]]
) -> None:
    """5 of 1,000 rows match and LIMIT is 10: all 5 come back, ranked exactly (SAI scores the
    filtered rows one by one when they are no more than the limit)."""
    s = cassandra_session
    table, data, query = ann
    got = ids(
        s, f"SELECT id FROM {table} WHERE f = ? ORDER BY emb ANN OF ? LIMIT 10", "rare", query
    )
    assert got == exact_ranking(data, query, lambda r: r[1] == "rare")
    # LIMIT 1000 over the 20 rows with g = 7: the whole filtered set
    got = ids(s, f"SELECT id FROM {table} WHERE g = ? ORDER BY emb ANN OF ? LIMIT 1000", 7, query)
    assert set(got) == {r[0] for r in data if r[2] == 7}


def test_three_anded_predicates_with_ann_return_every_row_matching_all_three(
    cassandra_session: Any, ann: tuple[str, list[tuple[Any, ...]], list[float]]
) -> None:
    """SAI intersects at most two indexes and filters the rows with the third; the answer is
    still the full set of rows matching all three (5, under a LIMIT of 10)."""
    s = cassandra_session
    table, data, query = ann
    where = "tags CONTAINS ? AND g = ? AND f = ?"
    cql = f"SELECT id FROM {table} WHERE {where} ORDER BY emb ANN OF ? LIMIT 10"
    got = ids(s, cql, "all", 3, "rare", query)
    assert got == exact_ranking(data, query, lambda r: r[1] == "rare")


def test_in_with_ann_and_allow_filtering_is_accepted_but_misses_matching_rows(
    cassandra_session: Any, ann: tuple[str, list[tuple[Any, ...]], list[float]]
) -> None:
    """`g IN (3, 4)` matches 40 rows, yet LIMIT 10 returns fewer than 10: the IN is applied to
    the ANN's top rows of the whole table, after the limit. `$in` must fan out instead."""
    s = cassandra_session
    table, _, query = ann
    ann_in = f"SELECT id FROM {table} WHERE g IN ? ORDER BY emb ANN OF ? LIMIT 10 ALLOW FILTERING"
    got = ids(s, ann_in, [3, 4], query)
    assert len(got) < 10
    fan_out = set()
    for g in (3, 4):
        fan_out |= set(
            ids(s, f"SELECT id FROM {table} WHERE g = ? ORDER BY emb ANN OF ? LIMIT 10", g, query)
        )
    assert len(fan_out) == 20


# -- paging and indexes added later ----------------------------------------------------------

N_PAGED = 3000


@pytest.fixture(scope="module")
def paged(cassandra_session: Any, ks: str) -> str:
    """Table `paged` of 3,000 rows (no vector): `tag` is 'p' on 2,400 of them, indexed."""
    s = cassandra_session
    execute_ddl(s, f"CREATE TABLE {ks}.paged (id int PRIMARY KEY, tag text)")
    create_indexes(s, ks, "paged", ["tag:tag"])
    insert = s.prepare(f"INSERT INTO {ks}.paged (id, tag) VALUES (?, ?)")
    data = [(k, "q" if k % 5 == 0 else "p") for k in range(N_PAGED)]
    execute_concurrent_with_args(s, insert, data, concurrency=64, raise_on_first_error=True)
    return f"{ks}.paged"


def pages(session: Any, cql: str, params: Sequence[Any], fetch_size: int) -> Iterator[list[Any]]:
    """Each page of `cql`, fetched one request at a time with the previous page's state."""
    statement = session.prepare(cql)
    statement.fetch_size = fetch_size
    state = None
    while True:
        result = session.execute(statement, params, paging_state=state, timeout=60)
        yield list(result.current_rows)
        state = result.paging_state
        if state is None:
            return


def test_paged_sai_equality_read_returns_every_matching_row_exactly_once(
    cassandra_session: Any, paged: str
) -> None:
    got = list(pages(cassandra_session, f"SELECT id FROM {paged} WHERE tag = ?", ["p"], 100))
    flat = [r.id for page in got for r in page]
    assert len(flat) == len(set(flat)) == 2400
    assert set(flat) == {k for k in range(N_PAGED) if k % 5}
    assert len(got) >= 24 and all(len(page) <= 100 for page in got)


def test_a_column_added_to_a_loaded_table_gets_a_queryable_range_index(
    cassandra_session: Any, ks: str, paged: str
) -> None:
    """ALTER TABLE ADD, a backfill by UPDATE, then CREATE INDEX: the index builds from the
    existing rows and, once `is_queryable`, answers a range over all of them. A read during the
    build fails with INDEX_NOT_AVAILABLE; it never answers with part of the rows."""
    s = cassandra_session
    execute_ddl(s, f"ALTER TABLE {paged} ADD n_year int")
    assert rows(s, f"SELECT n_year FROM {paged} WHERE id = ?", 1)[0].n_year is None
    update = s.prepare(f"UPDATE {paged} SET n_year = ? WHERE id = ?")
    backfill = [(1900 + k % 120, k) for k in range(N_PAGED)]
    execute_concurrent_with_args(s, update, backfill, concurrency=64, raise_on_first_error=True)
    expected = {k for y, k in backfill if 2000 <= y < 2010}
    in_range = f"SELECT id FROM {paged} WHERE n_year >= ? AND n_year < ?"
    execute_ddl(s, f"CREATE INDEX paged_n_year ON {paged} (n_year) {SAI}")
    state_cql = (
        "SELECT is_queryable, is_building FROM system_views.sai_column_indexes "
        "WHERE keyspace_name = ? AND table_name = ? AND index_name = ?"
    )
    first = rows(s, state_cql, ks, "paged", "paged_n_year")
    assert len(first) == 1 and not (first[0].is_queryable and first[0].is_building)
    try:
        early = set(ids(s, in_range, 2000, 2010))
    except ReadFailure as exc:
        assert "INDEX_NOT_AVAILABLE" in str(exc)
    else:
        assert early == expected
    wait_queryable(s, ks, ["paged_n_year"])
    final = rows(s, state_cql, ks, "paged", "paged_n_year")[0]
    assert final.is_queryable and not final.is_building
    assert set(ids(s, in_range, 2000, 2010)) == expected
