"""What the cluster's schema holds now, read from `system_schema` with bound values.

The driver's schema metadata learns of another process's DDL (`hoprag fields declare`, a load
that created the catalogue) only after its schema-event debounce, so a store opened in a
long-lived process right after it would miss a declared field: its writes would then leave the
typed column empty and ranges would miss those documents. Whatever decides what a store
writes or reads therefore asks the node."""

from __future__ import annotations

from typing import Any

__all__ = ["table_columns", "table_exists"]

_COLUMNS = (
    "SELECT column_name FROM system_schema.columns WHERE keyspace_name = %s AND table_name = %s"
)


def table_columns(session: Any, keyspace: str, table: str) -> set[str] | None:
    """The column names of `keyspace.table`, None when there is no such table."""
    rows = session.execute(_COLUMNS, (keyspace, table))
    names = {r["column_name"] if isinstance(r, dict) else r[0] for r in rows}
    return names or None


def table_exists(session: Any, keyspace: str, table: str) -> bool:
    """Whether `keyspace.table` exists."""
    return table_columns(session, keyspace, table) is not None
