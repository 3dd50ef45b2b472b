"""Declaring fields on a hoprag table (the blocking schema side; see `fields.py`).

`open_fields` runs at set-up: it reads the stored declaration, refuses a conflicting one, and
on a table the set-up has just created adds the declared columns, indexes and values catalogue
at once; an existing values catalogue gets the indexes it lacks (`open_catalogue`: catalogues
made before the `field` index). `refuse_foreign_catalogue` refuses a table of another shape
under the values catalogue's name, before anything is created or written.

`begin` and `finish` are the two schema halves of the migration
(`CassandraStore.adeclare_fields`), around the backfill the store runs: `begin` records the
fields as `adding` and adds their columns (and the values catalogue), `finish` creates their
indexes, waits until they are queryable and records them `ready`. Every step is idempotent
(`IF NOT EXISTS`, upserts), so running the migration again after an interruption completes it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from hoprag.errors import InvalidInputError, StoreError
from hoprag.stores.cassandra.fields import (
    DeclaredField,
    FieldCatalog,
    FieldSet,
    column_for,
    declare_command,
    index_name,
)
from hoprag.stores.cassandra.layouts import Layout
from hoprag.stores.cassandra.live_schema import table_columns, table_indexes, table_shape
from hoprag.stores.cassandra.schema import execute_ddl_all, wait_queryable
from hoprag.stores.cassandra.values import SHAPE, ValuesCatalogue

_CQL_TYPE = {"number": "decimal", "date": "bigint"}
_SAI = "USING 'StorageAttachedIndex'"
_DOCUMENTS_COLUMNS = frozenset({"id", "content", "embedding", "metadata", "tokens"})


def check_conflicts(
    layout: Layout, stored: Mapping[str, DeclaredField], given: Mapping[str, str], what: str
) -> None:
    """Refuse a field `given` with another kind than the stored declaration's."""
    for field, kind in given.items():
        have = stored.get(field)
        if have is not None and have.kind != kind:
            raise InvalidInputError(
                f"{what}[{field!r}] is {kind!r}, but {layout.fq} declares {field!r} as "
                f"{have.kind!r}; a declared field keeps its kind (declare another field, or "
                "load into a new table)",
                argument=f"{what}[{field!r}]",
                value=kind,
                allowed=repr(have.kind),
            )


def refuse_foreign_catalogue(session: Any, layout: Layout, kinds: Mapping[str, str]) -> None:
    """When `kinds` (field -> kind) has an entity field, refuse a table under the name of the
    layout's values catalogue that is not one (its columns are not `values.SHAPE`): hoprag
    would otherwise keep it (CREATE TABLE IF NOT EXISTS) and write into it. Call it before
    anything is created or written. Blocking."""
    entities = sorted(f for f, k in kinds.items() if k == "entity")
    if not entities:
        return
    cat = ValuesCatalogue(layout.keyspace, layout.table)
    shape = table_shape(session, layout.keyspace, cat.name)
    if shape is None or shape == SHAPE:
        return
    columns = ", ".join(f"{c} {t}" for c, (_, _, t) in sorted(shape.items()))
    what = "a hoprag documents table" if _DOCUMENTS_COLUMNS <= shape.keys() else "a table"
    raise InvalidInputError(
        f"{layout.fq} keeps the values of its entity fields {entities} in its values "
        f"catalogue {cat.fq}, but {cat.fq} is {what} ({columns}), not a values catalogue; "
        f"hoprag neither writes into it nor replaces it. Give this store another table name "
        f"(its catalogue is named after it, <table>_values), or rename or drop {cat.fq} if "
        "nothing needs it",
        argument="table",
        value=layout.table,
        allowed=f"a table whose catalogue name {cat.name} is free or holds its values catalogue",
    )


def open_catalogue(session: Any, layout: Layout, *, wait: bool) -> None:
    """Create the indexes the layout's values catalogue lacks (one made before the `field`
    index has two), then (with `wait`) wait until they are queryable; nothing when the
    catalogue does not exist or has them all. Blocking."""
    cat = ValuesCatalogue(layout.keyspace, layout.table)
    if table_columns(session, layout.keyspace, cat.name) is None:
        return
    missing = set(cat.index_names()) - table_indexes(session, layout.keyspace, cat.name)
    if not missing:
        return
    execute_ddl_all(session, cat.create_statements())
    if wait:
        wait_queryable(session, layout.keyspace, cat.index_names())


def writable(session: Any, layout: Layout, fields: Mapping[str, DeclaredField]) -> FieldSet:
    """The fields, each marked writable when its column (or the values catalogue) exists,
    as the node says now (`live_schema`), not as this process's driver metadata last heard."""
    columns = table_columns(session, layout.keyspace, layout.table) or set()
    values_name = ValuesCatalogue(layout.keyspace, layout.table).name
    values = table_columns(session, layout.keyspace, values_name)
    return FieldSet(
        {
            f: replace(d, writable=(d.column in columns) if d.column else values is not None)
            for f, d in fields.items()
        }
    )


def add_statements(layout: Layout, fields: list[DeclaredField]) -> list[str]:
    """The DDL that adds the fields' columns, all in one ALTER TABLE (each schema change costs
    a round of schema agreement), and the values catalogue for entity fields."""
    columns = [f"{d.column} {_CQL_TYPE[d.kind]}" for d in fields if d.column is not None]
    out = [f"ALTER TABLE {layout.fq} ADD IF NOT EXISTS ({', '.join(columns)})"] if columns else []
    if any(d.kind == "entity" for d in fields):
        out += ValuesCatalogue(layout.keyspace, layout.table).create_statements()
    return out


def index_statements(layout: Layout, fields: list[DeclaredField]) -> tuple[list[str], list[str]]:
    """The CREATE INDEX statements of the fields' columns and the names of every index the
    fields need (the values catalogue's included)."""
    statements, names = [], []
    for d in fields:
        if d.column is not None:
            name = index_name(layout.table, d.column)
            statements.append(
                f"CREATE CUSTOM INDEX IF NOT EXISTS {name} ON {layout.fq} ({d.column}) {_SAI}"
            )
            names.append(name)
    if any(d.kind == "entity" for d in fields):
        names += ValuesCatalogue(layout.keyspace, layout.table).index_names()
    return statements, names


def open_fields(
    session: Any,
    layout: Layout,
    given: Mapping[str, str],
    *,
    created: bool,
    wait: bool,
    create: bool = True,
) -> FieldSet:
    """The table's declared fields at set-up: the stored declaration, plus `given` fields
    when the set-up has just `created` the table (their columns, indexes and catalogue are
    made now). New fields on a table that existed need the migration: InvalidInputError
    naming its command. A table in the way of the values catalogue is refused
    (`refuse_foreign_catalogue`); with `create` an existing catalogue gets the indexes it
    lacks (`open_catalogue`). Blocking."""
    catalog = FieldCatalog(session, layout.keyspace)
    stored = catalog.load(layout.table)
    check_conflicts(layout, stored, given, "fields")
    refuse_foreign_catalogue(session, layout, {**catalog_kinds(stored), **given})
    new = {f: k for f, k in given.items() if f not in stored}
    if new and not created:
        raise InvalidInputError(
            f"{layout.fq} exists and does not declare {sorted(new)}: declaring fields on an "
            f"existing table backfills them from every row; run `"
            f"{declare_command(layout.keyspace, layout.table, new)}` (or `await "
            f"store.adeclare_fields({new!r})`) once, then open the store",
            argument="fields",
            value=dict(given),
            allowed=f"the fields {layout.fq} declares: {catalog_kinds(stored)}",
        )
    if new:
        decls = [DeclaredField(f, k, column_for(f, k), ready=False) for f, k in new.items()]
        begin(session, layout, catalog, decls)
        finish(session, layout, catalog, decls, wait=wait)
        stored = {**stored, **{d.field: replace(d, ready=True) for d in decls}}
    elif create and "entity" in catalog_kinds(stored).values():
        open_catalogue(session, layout, wait=wait)
    return writable(session, layout, stored)


def catalog_kinds(fields: Mapping[str, DeclaredField]) -> dict[str, str]:
    """Field name -> kind of a declaration (for messages)."""
    return {f: d.kind for f, d in fields.items()}


def begin(session: Any, layout: Layout, catalog: FieldCatalog, fields: list[DeclaredField]) -> None:
    """Record the fields as `adding`, then add their columns and the values catalogue."""
    catalog.create()
    for d in fields:
        catalog.put(layout.table, replace(d, ready=False))
    try:
        execute_ddl_all(session, add_statements(layout, fields))
    except StoreError:
        raise
    except Exception as exc:
        from hoprag.stores.cassandra.errors import translate

        raise translate(exc, f"adding the declared columns of {layout.fq}") from exc


def finish(
    session: Any,
    layout: Layout,
    catalog: FieldCatalog,
    fields: list[DeclaredField],
    *,
    wait: bool = True,
    timeout: float = 300.0,
) -> None:
    """Create the fields' indexes, wait (with `wait`, up to `timeout` s) until every one is
    queryable, then record the fields `ready`."""
    statements, names = index_statements(layout, fields)
    try:
        execute_ddl_all(session, statements)
    except StoreError:
        raise
    except Exception as exc:
        from hoprag.stores.cassandra.errors import translate

        raise translate(exc, f"indexing the declared columns of {layout.fq}") from exc
    if wait and names:
        try:
            wait_queryable(session, layout.keyspace, names, timeout=timeout)
        except StoreError as exc:
            raise StoreError(
                f"{exc}; Cassandra goes on building them: run the same declaration again to "
                "wait for them and complete it"
            ) from exc
    for d in fields:
        catalog.put(layout.table, replace(d, ready=True))
