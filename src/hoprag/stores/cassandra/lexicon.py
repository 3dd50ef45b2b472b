"""The lexical index of a CassandraStore table (`lexical=True`): BM25 from Cassandra's own
indexes, in one round of concurrent queries.

Apache Cassandra 5.0's SAI has no BM25 (its analyzed text indexes match terms but neither
count nor rank them), so the table keeps what BM25 needs:

* per row, `lexicon map<text, int>` (each term of the content, `hoprag.lexical.tokenize`, with
  its count) and `lexicon_length int` (the row's count of terms), one SAI index on
  `KEYS(lexicon)`;
* per table, a row of the keyspace's counter table `hoprag_lexicon`: how many documents the
  table holds and their total length, updated by every write.

A search sends, in one burst, the counter row and one read per distinct query term: `SELECT
id, lexicon[?], lexicon_length ... WHERE lexicon CONTAINS KEY ?` (the term's postings, from the
index: a row is never read for a term it does not hold). BM25 is then computed client-side by
`hoprag.lexical.bm25_totals`, the computation MemoryStore's index makes, so both stores rank
the same documents identically. Replacing a document reads its stored length first, so that
the counters count it once. A table written without the columns cannot be given them while it
holds rows (their rows would be missing from every posting): `refuse_unindexed_rows`."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from hoprag.errors import InvalidInputError
from hoprag.lexical import tokenize

STATS_TABLE = "hoprag_lexicon"
COLUMNS = "lexicon map<text, int>, lexicon_length int"
"""The two columns, as they appear in a CREATE TABLE or an ALTER TABLE ADD."""
MAX_POSTINGS = 1_000_000
"""The most rows one term's postings read returns."""


def terms_of(content: str) -> dict[str, int]:
    """The `lexicon` entry of a document's content: each term with its count."""
    return dict(Counter(tokenize(content)))


def index_name(table: str) -> str:
    """The name of the SAI index on `KEYS(lexicon)`."""
    return f"{table}_lexicon_idx"


def index_statement(keyspace: str, table: str) -> str:
    """CREATE of the SAI index the postings reads use."""
    return (
        f"CREATE CUSTOM INDEX IF NOT EXISTS {index_name(table)} ON {keyspace}.{table} "
        "(KEYS(lexicon)) USING 'StorageAttachedIndex'"
    )


def stats_table_statement(keyspace: str) -> str:
    """CREATE of the keyspace's counter table (one row per table)."""
    return (
        f"CREATE TABLE IF NOT EXISTS {keyspace}.{STATS_TABLE} "
        "(table_name text PRIMARY KEY, documents counter, length counter)"
    )


def add_statements(keyspace: str, table: str, has_columns: bool) -> list[str]:
    """What gives an existing (empty) table the lexical index (the columns unless it has
    them, the index and the counter table, each when missing)."""
    alter = [] if has_columns else [f"ALTER TABLE {keyspace}.{table} ADD ({COLUMNS})"]
    return [stats_table_statement(keyspace), *alter, index_statement(keyspace, table)]


def present(session: Any, keyspace: str, table: str) -> tuple[bool, bool]:
    """Whether the table has the `lexicon` column, and its index, read from `system_schema`
    (the driver's metadata can lag a table another client changed a moment ago)."""
    column = session.execute(
        "SELECT column_name FROM system_schema.columns WHERE keyspace_name = %s "
        "AND table_name = %s AND column_name = 'lexicon'",
        (keyspace, table),
    )
    index = session.execute(
        "SELECT index_name FROM system_schema.indexes WHERE keyspace_name = %s "
        "AND table_name = %s AND index_name = %s",
        (keyspace, table, index_name(table)),
    )
    return bool(list(column)), bool(list(index))


def refuse_unindexed_rows(session: Any, fq: str) -> None:
    """InvalidInputError when the table holds rows (written without the lexical columns)."""
    if not list(session.execute(f"SELECT id FROM {fq} LIMIT 1")):
        return
    raise InvalidInputError(
        f"{fq} holds documents written without a lexical index, which no lexical search "
        "would find: load them into a new table with lexical=True (`hoprag load --lexical`)",
        argument="lexical",
        value=True,
        allowed="lexical=True on a new or empty table, or on one made with it",
    )


def no_lexical_index(fq: str) -> InvalidInputError:
    """The error of a lexical search on a table made without the index."""
    return InvalidInputError(
        f"{fq} has no lexical index: lexical starts (a strategy's lexical_k) need a table made "
        "with lexical=True (`hoprag load --lexical`), or a MemoryStore",
        argument="lexical_k",
        value=fq,
        allowed="a CassandraStore made with lexical=True",
    )


def stats_query(keyspace: str) -> str:
    """The counter row of a table (bound: the table's name)."""
    return f"SELECT documents, length FROM {keyspace}.{STATS_TABLE} WHERE table_name = ?"


def stats_update(keyspace: str) -> str:
    """The counters' update (bound: documents delta, length delta, the table's name)."""
    return (
        f"UPDATE {keyspace}.{STATS_TABLE} SET documents = documents + ?, "
        "length = length + ? WHERE table_name = ?"
    )


def postings_query(fq: str) -> str:
    """A term's postings (bound: the term twice, the LIMIT)."""
    return f"SELECT id, lexicon[?], lexicon_length FROM {fq} WHERE lexicon CONTAINS KEY ? LIMIT ?"


def lengths_query(fq: str) -> str:
    """The stored lengths of some ids (bound: the ids)."""
    return f"SELECT id, lexicon_length FROM {fq} WHERE id IN ?"


def stats_delta(
    stored: dict[str, int | None], written: Sequence[tuple[str, int]]
) -> tuple[int, int]:
    """The counters' change when `written` (id, length) replace what `stored` holds for those
    ids (their lengths, None or absent for no row): (documents, length)."""
    documents = length = 0
    for doc_id, new in written:
        old = stored.get(doc_id)
        if old is None:
            documents += 1
            length += new
        else:
            length += new - old
    return documents, length
