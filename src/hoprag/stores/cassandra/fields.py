"""Declared fields of a hoprag table: typed columns for range filters, and entity fields for
`aresolve` (docs/cassandra.md, "Declared fields").

A declaration maps plain dotted field names to a kind:

* `number`: a `n_<field> decimal` column with its own SAI index. Values are stored exactly
  (`Decimal(int)`, `Decimal(float)`: a float's exact binary expansion), so a range compares as
  Python compares ints and floats. A bool is not a number; a non-number leaves the column null.
* `date`: a `d_<field> bigint` column with SAI: microseconds since the epoch, UTC
  (`hoprag.dates.iso_instant`); a string that is not an ISO date leaves it null.
* `entity`: no column; the field's string values go to the table's values catalogue
  (`<table>_values`), which `aresolve` searches.

A list value leaves a typed column null; the document then gets the marker token
`<field>[]` in its `tokens` set (no other token lacks both '=' and '#', so it cannot collide)
and the declaration records `list_valued`, so a range filter can read those documents with one
`tokens CONTAINS ?` query and check them after the read.

Column names: the field lower-cased, '.' written as '__', after the kind's prefix; at most 48
characters; two fields that would share a column are refused. Field names are validated
(`check_declaration`), so nothing a caller types reaches CQL text unchecked.

The declaration is kept in `<keyspace>.hoprag_fields` (one row per table and field: kind,
column, state, list_valued), so a store opened later without `fields=` knows it. State
`adding` means a migration (`CassandraStore.adeclare_fields`) started and did not finish;
`ready` means the column is backfilled and its index is queryable."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any, Literal

from hoprag.dates import iso_instant
from hoprag.edges import MISSING, nested_get
from hoprag.errors import InvalidInputError, invalid
from hoprag.resolve import entity_values
from hoprag.stores.cassandra.errors import translate
from hoprag.stores.cassandra.live_schema import table_exists
from hoprag.stores.cassandra.names import check_name
from hoprag.stores.cassandra.schema import execute_ddl

FieldKind = Literal["number", "date", "entity"]
KINDS: tuple[str, ...] = ("number", "date", "entity")
FIELDS_TABLE = "hoprag_fields"
MAX_COLUMN_CHARS = 48
MAX_TABLE_CHARS = 48
RANGE_OPERATORS: dict[str, str] = {"gt": ">", "gte": ">=", "lt": "<", "lte": "<=", "eq": "="}
"""The range operators a typed column serves, with their CQL relation."""

_PART = re.compile(r"[A-Za-z][A-Za-z0-9_]*", re.ASCII)
_NAME_ALLOWED = (
    "a plain field name: dotted parts, each a letter followed by letters, digits or "
    "underscores (e.g. 'year' or 'ratings.imdb')"
)
_PREFIX = {"number": "n_", "date": "d_"}


def mangle(field: str) -> str:
    """The column-name part of a validated field name: lower case, '.' as '__'."""
    return field.lower().replace(".", "__")


def column_for(field: str, kind: str) -> str | None:
    """The typed column of a field of `kind` (None for an entity field)."""
    prefix = _PREFIX.get(kind)
    return None if prefix is None else prefix + mangle(field)


def check_field_name(field: Any, *, what: str = "a declared field name") -> str:
    """A declarable field name: dotted parts of letters, digits and underscores, each starting
    with a letter, short enough for its column name."""
    if not isinstance(field, str) or not all(_PART.fullmatch(p) for p in field.split(".")):
        raise invalid(what, field, _NAME_ALLOWED)
    if len("n_" + mangle(field)) > MAX_COLUMN_CHARS:
        raise invalid(
            what, field, f"a field name whose column name (n_/d_ + name) has at most "
            f"{MAX_COLUMN_CHARS} characters ('.' counts twice)"
        )  # fmt: skip
    return field


def check_declaration(fields: Any, *, what: str = "fields") -> dict[str, str]:
    """`fields` (a mapping of field name to kind) checked: names as `check_field_name`,
    kinds one of number, date, entity, and no two fields sharing a column."""
    if not isinstance(fields, Mapping):
        raise invalid(
            what, fields, "a mapping of field name to kind, e.g. {'year': 'number', "
            "'released': 'date', 'cast': 'entity'}"
        )  # fmt: skip
    out: dict[str, str] = {}
    columns: dict[str, str] = {}
    for field, kind in fields.items():
        name = check_field_name(field, what=f"a field name of {what}")
        if not isinstance(kind, str) or kind not in KINDS:
            raise invalid(f"{what}[{field!r}]", kind, "'number', 'date' or 'entity'")
        column = column_for(name, kind)
        if column is not None:
            other = columns.get(column)
            if other is not None:
                raise InvalidInputError(
                    f"{what}: fields {other!r} and {name!r} would share the column {column} "
                    "(names are case-insensitive and '.' is written '__'): rename one",
                    argument=what,
                    value=name,
                    allowed="fields with distinct column names",
                )
            columns[column] = name
        out[name] = kind
    return out


def values_table(table: str) -> str:
    """The values catalogue table of `table`: `<table>_values`, or for a long table name its
    first 31 characters, a digest and `_values` (48 characters)."""
    name = f"{table}_values"
    if len(name) <= MAX_TABLE_CHARS:
        return name
    digest = hashlib.sha256(table.encode()).hexdigest()[:9]
    return f"{table[:31]}_{digest}_values"


def index_name(table: str, column: str) -> str:
    """The SAI index of a typed column."""
    return f"{table}_{column}_idx"


def list_marker(field: str) -> str:
    """The token a document gets in `tokens` when a declared typed field holds a list."""
    return f"{field}[]"


def number_value(value: Any) -> Decimal | None:
    """The exact decimal of an int or float (None for anything else, bool included)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return Decimal(value)


def column_value(kind: str, value: Any) -> Any:
    """The typed column value of a metadata value (None: the column stays null)."""
    if kind == "number":
        return number_value(value)
    if kind == "date":
        return iso_instant(value)
    return None


def entity_entries(
    fields: Iterable[DeclaredField], metadata: Mapping[str, Any]
) -> set[tuple[str, str]]:
    """(field, value) of every string `metadata` holds in one of the entity `fields`."""
    out: set[tuple[str, str]] = set()
    for decl in fields:
        if decl.kind == "entity":
            value = nested_get(metadata, decl.field)
            if value is not MISSING:
                out.update((decl.field, v) for v in entity_values(value))
    return out


def typed_value(decl: DeclaredField, metadata: Mapping[str, Any]) -> tuple[Any, bool]:
    """The typed column value of a document's metadata for a number or date field (None:
    null) and whether the field holds a list (the document then gets its list marker)."""
    value = nested_get(metadata, decl.field)
    if value is MISSING:
        return None, False
    return column_value(decl.kind, value), isinstance(value, list)


@dataclass(frozen=True, slots=True)
class DeclaredField:
    """One declared field of a table: its kind, typed column (None for entity fields),
    whether its migration completed (`ready`), whether a document ever held a list in it
    (`list_valued`, for typed fields) and whether this store writes it (`writable`: the
    column, or the values table, exists)."""

    field: str
    kind: str
    column: str | None
    ready: bool = True
    list_valued: bool = False
    writable: bool = True


class FieldSet(Mapping[str, DeclaredField]):
    """The declared fields of one table, by field name (immutable; a new one replaces it)."""

    def __init__(self, fields: Mapping[str, DeclaredField] | None = None) -> None:
        self._fields = dict(fields or {})

    def __getitem__(self, field: str) -> DeclaredField:
        return self._fields[field]

    def __iter__(self) -> Iterator[str]:
        return iter(self._fields)

    def __len__(self) -> int:
        return len(self._fields)

    def __repr__(self) -> str:
        return f"FieldSet({self.kinds()!r})"

    def kinds(self) -> dict[str, str]:
        """Field name -> kind."""
        return {f: d.kind for f, d in self._fields.items()}

    def typed(self) -> list[DeclaredField]:
        """The number and date fields this store writes, in declaration order."""
        return [d for d in self._fields.values() if d.column is not None and d.writable]

    def entities(self) -> list[DeclaredField]:
        """The entity fields this store writes to the values catalogue."""
        return [d for d in self._fields.values() if d.kind == "entity" and d.writable]

    def with_(self, *fields: DeclaredField) -> FieldSet:
        """A copy with `fields` added or replaced."""
        out = dict(self._fields)
        out.update({d.field: d for d in fields})
        return FieldSet(out)

    def marked_list_valued(self, names: set[str]) -> FieldSet:
        """A copy with the named fields marked list-valued."""
        return FieldSet(
            {f: replace(d, list_valued=True) if f in names else d for f, d in self._fields.items()}
        )


def declare_command(keyspace: str, table: str, kinds: Mapping[str, str]) -> str:
    """The CLI command that declares `kinds` on a table (named in error messages)."""
    pairs = " ".join(f"{f}={k}" for f, k in kinds.items())
    return f"hoprag fields declare --keyspace {keyspace} --table {table} {pairs}"


class FieldCatalog:
    """The `hoprag_fields` table of a keyspace (blocking; values bound, names validated)."""

    def __init__(self, session: Any, keyspace: str) -> None:
        self.session = session
        self.keyspace = check_name(keyspace, what="keyspace")
        self._prepared: dict[str, Any] = {}

    @property
    def name(self) -> str:
        """`keyspace.hoprag_fields`."""
        return f"{self.keyspace}.{FIELDS_TABLE}"

    def exists(self) -> bool:
        """Whether the table exists (asked of the node: `live_schema`)."""
        return table_exists(self.session, self.keyspace, FIELDS_TABLE)

    def create(self) -> None:
        """Create the table when missing."""
        try:
            execute_ddl(
                self.session,
                f"CREATE TABLE IF NOT EXISTS {self.name} (table_name text, field text, "
                "kind text, column_name text, state text, list_valued boolean, "
                "PRIMARY KEY (table_name, field))",
            )
        except Exception as exc:
            raise translate(exc, f"creating {self.name}") from exc

    def load(self, table: str) -> dict[str, DeclaredField]:
        """The stored declaration of `table` (empty when none), in field order."""
        if not self.exists():
            return {}
        rows = self._run(
            f"SELECT field, kind, column_name, state, list_valued FROM {self.name} "
            "WHERE table_name = ?",
            (table,),
            f"reading the declared fields of {table!r}",
        )
        return {r[0]: DeclaredField(r[0], r[1], r[2], r[3] == "ready", bool(r[4])) for r in rows}

    def put(self, table: str, field: DeclaredField) -> None:
        """Record a field's declaration and state (an upsert; `list_valued` is not touched)."""
        self._run(
            f"UPDATE {self.name} SET kind = ?, column_name = ?, state = ? "
            "WHERE table_name = ? AND field = ?",
            (field.kind, field.column, "ready" if field.ready else "adding", table, field.field),
            f"recording the declaration of {field.field!r} on {table!r}",
        )

    def mark_list_valued(self, table: str, field: str) -> None:
        """Record that a document of `table` held a list in `field`."""
        self._run(
            f"UPDATE {self.name} SET list_valued = true WHERE table_name = ? AND field = ?",
            (table, field),
            f"recording that {field!r} of {table!r} holds lists",
        )

    def _run(self, query: str, values: tuple[Any, ...], operation: str) -> list[Any]:
        try:
            stmt = self._prepared.get(query)
            if stmt is None:
                stmt = self._prepared[query] = self.session.prepare(query)
            rows = self.session.execute(stmt.bind(values))
            return [tuple(r.values()) if isinstance(r, dict) else tuple(r) for r in rows]
        except Exception as exc:
            raise translate(exc, operation) from exc
