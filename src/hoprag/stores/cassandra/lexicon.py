"""The lexical index of a CassandraStore table (`lexical=True`): BM25 from tables Cassandra
reads by key, in one round of concurrent queries.

Apache Cassandra 5.0's SAI has no BM25 (its analyzed text indexes match terms but neither
count nor rank them), so the keyspace keeps what BM25 needs:

* per row of the table, `lexicon map<text, int>` (each term of the content,
  `hoprag.lexical.tokenize`, with its count) and `lexicon_length int` (its count of terms):
  what a replacement must take back;
* `hoprag_postings`, one partition per (table, term) holding a row (id, count, length) per
  document with the term: a term's postings are one partition read;
* `hoprag_lexicon`, a counter row per table: how many documents it holds and their total
  length;
* `hoprag_lexicon_pending`, a row per document whose text is being written or deleted
  (`pending.py`): the terms that may have its postings and the length the counters count it
  with, so that a write or delete interrupted and run again leaves postings and counters as
  the rows say.

A search sends, in one burst, the counter row and one postings read per distinct query term,
then computes BM25 client-side with `hoprag.lexical.bm25_totals`, the computation MemoryStore's
index makes, so both stores rank the same documents identically. An `add` reads the stored
terms and lengths of its ids first, so that a replaced document's old postings are deleted and
the counters count it once. A table written without the columns cannot be given them while it
holds rows (their rows would be missing from every posting): `refuse_unindexed_rows`."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from hoprag.errors import InvalidInputError
from hoprag.lexical import tokenize
from hoprag.stores.cassandra.counting import refuse_rows_written_without

STATS_TABLE = "hoprag_lexicon"
COLUMNS = "lexicon map<text, int>, lexicon_length int"
"""The two columns, as they appear in a CREATE TABLE or an ALTER TABLE ADD."""


def terms_of(content: str) -> dict[str, int]:
    """The `lexicon` entry of a document's content: each term with its count."""
    return dict(Counter(tokenize(content)))


POSTINGS_TABLE = "hoprag_postings"


def stats_table_statement(keyspace: str) -> str:
    """CREATE of the keyspace's counter table (one row per table)."""
    return (
        f"CREATE TABLE IF NOT EXISTS {keyspace}.{STATS_TABLE} "
        "(table_name text PRIMARY KEY, documents counter, length counter)"
    )


def postings_table_statement(keyspace: str) -> str:
    """CREATE of the keyspace's postings table (a partition per table and term)."""
    return (
        f"CREATE TABLE IF NOT EXISTS {keyspace}.{POSTINGS_TABLE} (table_name text, term text, "
        "id text, tf int, length int, PRIMARY KEY ((table_name, term), id))"
    )


PENDING_TABLE = "hoprag_lexicon_pending"


def pending_table_statement(keyspace: str) -> str:
    """CREATE of the keyspace's ledger of documents whose text is changing (`pending.py`; a
    partition per documents table)."""
    return (
        f"CREATE TABLE IF NOT EXISTS {keyspace}.{PENDING_TABLE} (table_name text, id text, "
        "terms set<text>, counted int, PRIMARY KEY ((table_name), id))"
    )


def keyspace_statements(keyspace: str) -> list[str]:
    """The keyspace's tables of the lexical index, when missing."""
    return [
        stats_table_statement(keyspace),
        postings_table_statement(keyspace),
        pending_table_statement(keyspace),
    ]


def add_statements(keyspace: str, table: str, has_columns: bool) -> list[str]:
    """What gives an existing (empty) table the lexical index: the keyspace's tables when
    missing, and the columns unless it has them."""
    alter = [] if has_columns else [f"ALTER TABLE {keyspace}.{table} ADD ({COLUMNS})"]
    return [*keyspace_statements(keyspace), *alter]


def present(session: Any, keyspace: str, table: str) -> tuple[bool, bool]:
    """Whether the table has the `lexicon` column, and the keyspace its postings table, read
    from `system_schema` (the driver's metadata can lag a table another client changed a
    moment ago)."""
    column = session.execute(
        "SELECT column_name FROM system_schema.columns WHERE keyspace_name = %s "
        "AND table_name = %s AND column_name = 'lexicon'",
        (keyspace, table),
    )
    postings = session.execute(
        "SELECT table_name FROM system_schema.tables WHERE keyspace_name = %s AND table_name = %s",
        (keyspace, POSTINGS_TABLE),
    )
    return bool(list(column)), bool(list(postings))


def refuse_unindexed_rows(session: Any, fq: str) -> None:
    """InvalidInputError when the table holds rows (written without the lexical columns)."""
    refuse_rows_written_without(session, fq, feature="a lexical index",
                                unseen_by="no lexical search would find", option="lexical",
                                how=" (`hoprag load --lexical`)")  # fmt: skip


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


def postings_query(keyspace: str, *, limited: bool = False) -> str:
    """A term's postings (bound: the table's name, the term and, `limited`, how many rows at
    most)."""
    return (
        f"SELECT id, tf, length FROM {keyspace}.{POSTINGS_TABLE} WHERE table_name = ? AND term = ?"
        + (" LIMIT ?" if limited else "")
    )


def postings_insert(keyspace: str) -> str:
    """One posting (bound: table, term, id, count, length)."""
    return (
        f"INSERT INTO {keyspace}.{POSTINGS_TABLE} (table_name, term, id, tf, length) "
        "VALUES (?, ?, ?, ?, ?)"
    )


def postings_delete(keyspace: str) -> str:
    """Take one posting back (bound: table, term, id)."""
    return f"DELETE FROM {keyspace}.{POSTINGS_TABLE} WHERE table_name = ? AND term = ? AND id = ?"


def stored_query(fq: str) -> str:
    """The stored terms and lengths of some ids (bound: the ids)."""
    return f"SELECT id, lexicon, lexicon_length FROM {fq} WHERE id IN ?"


BATCH_ROWS = 50
"""Postings of one term per batch (about 3 KB: below Cassandra's 5 KB batch warning)."""


def by_term(rows: Sequence[tuple[Any, ...]]) -> list[list[tuple[Any, ...]]]:
    """Postings rows (table, term, ...) grouped by term, at most `BATCH_ROWS` to a group: one
    partition per group."""
    groups: dict[str, list[tuple[Any, ...]]] = {}
    for row in rows:
        groups.setdefault(row[1], []).append(row)
    out: list[list[tuple[Any, ...]]] = []
    for group in groups.values():
        out += [group[i : i + BATCH_ROWS] for i in range(0, len(group), BATCH_ROWS)]
    return out


Stored = dict[str, tuple[dict[str, int], int]]
"""What the table holds for some ids: id -> (terms with counts, length)."""


def changes(
    table: str, stored: Stored, written: Sequence[tuple[str, dict[str, int]]]
) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]], tuple[int, int]]:
    """What writing `written` (id, terms with counts) over `stored` takes: the postings to
    insert, those to delete (terms a replaced document no longer holds), and the counters'
    change (documents, length)."""
    inserts: list[tuple[Any, ...]] = []
    deletes: list[tuple[Any, ...]] = []
    documents = length = 0
    for doc_id, terms in written:
        new = sum(terms.values())
        inserts += [(table, term, doc_id, tf, new) for term, tf in terms.items()]
        old = stored.get(doc_id)
        if old is None:
            documents += 1
            length += new
            continue
        deletes += [(table, term, doc_id) for term in old[0] if term not in terms]
        length += new - old[1]
    return inserts, deletes, (documents, length)
