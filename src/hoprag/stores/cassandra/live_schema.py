"""What the cluster's schema holds now, read from `system_schema` with bound values.

The driver's schema metadata learns of another process's DDL (`hoprag fields declare`, a load
that created the catalogue) only after its schema-event debounce, so a store opened in a
long-lived process right after it would miss a declared field: its writes would then leave the
typed column empty and ranges would miss those documents. Whatever decides what a store
writes or reads therefore asks the node."""

from __future__ import annotations

from typing import Any

__all__ = ["table_columns", "table_exists", "table_indexes", "table_shape"]

_COLUMNS = (
    "SELECT column_name FROM system_schema.columns WHERE keyspace_name = %s AND table_name = %s"
)
_SHAPE = (
    "SELECT column_name, kind, position, type FROM system_schema.columns "
    "WHERE keyspace_name = %s AND table_name = %s"
)
_INDEXES = (
    "SELECT index_name FROM system_schema.indexes WHERE keyspace_name = %s AND table_name = %s"
)


def _fields(row: Any, names: tuple[str, ...]) -> tuple[Any, ...]:
    """A row's values of `names`, whatever the session's row factory (dict or tuple)."""
    return tuple(row[n] for n in names) if isinstance(row, dict) else tuple(row)


def table_columns(session: Any, keyspace: str, table: str) -> set[str] | None:
    """The column names of `keyspace.table`, None when there is no such table."""
    rows = session.execute(_COLUMNS, (keyspace, table))
    names = {_fields(r, ("column_name",))[0] for r in rows}
    return names or None


def table_shape(session: Any, keyspace: str, table: str) -> dict[str, tuple[str, int, str]] | None:
    """The columns of `keyspace.table` with their (kind, position, CQL type), such as
    `{"id": ("partition_key", 0, "text"), "tokens": ("regular", -1, "set<text>")}`; None when
    there is no such table."""
    rows = session.execute(_SHAPE, (keyspace, table))
    shape = {}
    for row in rows:
        name, kind, position, cql_type = _fields(row, ("column_name", "kind", "position", "type"))
        shape[name] = (kind, position, cql_type)
    return shape or None


def table_indexes(session: Any, keyspace: str, table: str) -> set[str]:
    """The names of the indexes of `keyspace.table`."""
    rows = session.execute(_INDEXES, (keyspace, table))
    return {_fields(r, ("index_name",))[0] for r in rows}


def table_exists(session: Any, keyspace: str, table: str) -> bool:
    """Whether `keyspace.table` exists."""
    return table_columns(session, keyspace, table) is not None
