"""The keys a table holds, read page by page (`SELECT <partition key> FROM ks.table`): what
`hoprag stats` counts and what `hoprag load` compares with its source. Blocking (the
driver's own paging, each page within `PAGE_TIMEOUT` seconds), so a table of millions of
rows is read without one request that the node would time out, as `SELECT COUNT(*)` would."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from hoprag.errors import InvalidInputError
from hoprag.stores.cassandra.errors import translate
from hoprag.stores.cassandra.live_schema import table_shape
from hoprag.stores.cassandra.names import check_name

__all__ = ["PAGE_ROWS", "PAGE_TIMEOUT", "holds_rows", "key_pages"]

PAGE_ROWS = 5000
"""Keys per page."""
PAGE_TIMEOUT = 60.0
"""Seconds the driver waits for one page."""


def _key_column(session: Any, keyspace: str, table: str) -> str | None:
    """The first partition key column of `keyspace.table`, None when there is no such table."""
    shape = table_shape(session, keyspace, table)
    if shape is None:
        return None
    keys = sorted((pos, name) for name, (kind, pos, _) in shape.items() if kind == "partition_key")
    return check_name(keys[0][1], what="column") if keys else None


def key_pages(session: Any, keyspace: str, table: str) -> Iterator[list[Any]] | None:
    """The keys of every row of `keyspace.table` (its first partition key column), a page of
    at most PAGE_ROWS at a time, or None when there is no such table. Names are checked
    (`check_name`); a failed page raises StoreError naming the table."""
    keyspace = check_name(keyspace, what="keyspace")
    table = check_name(table, what="table")
    column = _key_column(session, keyspace, table)
    if column is None:
        return None
    return _pages(session, column, f"{keyspace}.{table}")


def _pages(session: Any, column: str, fq: str) -> Iterator[list[Any]]:
    from cassandra.query import SimpleStatement

    statement = SimpleStatement(f"SELECT {column} FROM {fq}", fetch_size=PAGE_ROWS)
    try:
        result = session.execute(statement, timeout=PAGE_TIMEOUT)
        while True:
            rows = result.current_rows
            yield [r[column] if isinstance(r, dict) else r[0] for r in rows]
            if not result.has_more_pages:
                return
            result.fetch_next_page()
    except Exception as exc:
        raise translate(exc, f"reading the keys of {fq}") from exc


def holds_rows(session: Any, keyspace: str, table: str) -> bool:
    """Whether `keyspace.table` exists and holds a row (one key read)."""
    keyspace = check_name(keyspace, what="keyspace")
    table = check_name(table, what="table")
    column = _key_column(session, keyspace, table)
    if column is None:
        return False
    try:
        return session.execute(f"SELECT {column} FROM {keyspace}.{table} LIMIT 1").one() is not None
    except Exception as exc:
        raise translate(exc, f"reading a key of {keyspace}.{table}") from exc


def refuse_rows_written_without(
    session: Any, fq: str, *, feature: str, unseen_by: str, option: str, how: str = ""
) -> None:
    """InvalidInputError naming `option` when the table `fq` already holds rows: they were
    written without `feature` (a lexical index, holder counts), so `unseen_by` would miss them;
    `how` adds the command that loads them right."""
    if not list(session.execute(f"SELECT id FROM {fq} LIMIT 1")):
        return
    raise InvalidInputError(
        f"{fq} holds documents written without {feature}, which {unseen_by}: load them into "
        f"a new table with {option}=True{how}",
        argument=option,
        value=True,
        allowed=f"{option}=True on a new or empty table, or on one made with it",
    )
