"""The load catalogue: the keyspace's `hoprag_catalog` table, one row per loaded table.

`hoprag load` records in it which source filled a table, with which embedding and dimension,
how many documents are written so far and whether the load completed; that is how an
interrupted load resumes where it stopped and how `hoprag query` knows a table's embedding.
Keyspace names are validated (`check_name`), every value is a bound parameter of a prepared
statement, and driver errors come out as hoprag errors (`translate`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from hoprag.stores.cassandra.errors import translate
from hoprag.stores.cassandra.guards import check_consistency
from hoprag.stores.cassandra.live_schema import table_exists
from hoprag.stores.cassandra.names import check_name
from hoprag.stores.cassandra.schema import execute_ddl_all, keyspace_statements, replication_map

CATALOG_TABLE = "hoprag_catalog"

_CREATE = (
    "CREATE TABLE IF NOT EXISTS {ks}." + CATALOG_TABLE + " ("
    "table_name text PRIMARY KEY, source text, embedding text, dimension int, "
    "written bigint, complete boolean, updated timestamp)"
)
_COLUMNS = "table_name, source, embedding, dimension, written, complete, updated"
_SELECT_ONE = "SELECT " + _COLUMNS + " FROM {ks}." + CATALOG_TABLE + " WHERE table_name = ?"
_SELECT_ALL = "SELECT " + _COLUMNS + " FROM {ks}." + CATALOG_TABLE
_INSERT = "INSERT INTO {ks}." + CATALOG_TABLE + " (" + _COLUMNS + ") VALUES (?, ?, ?, ?, ?, ?, ?)"
_DISK_USAGE = "SELECT table_name, mebibytes FROM system_views.disk_usage WHERE keyspace_name = ?"


@dataclass(frozen=True, slots=True)
class CatalogEntry:
    """One load as recorded: the table, its `source` (a JSON description of what was loaded),
    the embedding spec and dimension, documents `written` so far, whether the load is
    `complete`, and when the row was last written (`updated`, None until stored)."""

    table: str
    source: str
    embedding: str
    dimension: int
    written: int
    complete: bool
    updated: datetime | None = None


def _entry(row: Any) -> CatalogEntry:
    return CatalogEntry(
        table=row.table_name,
        source=row.source or "{}",
        embedding=row.embedding or "",
        dimension=int(row.dimension or 0),
        written=int(row.written or 0),
        complete=bool(row.complete),
        updated=row.updated,
    )


class LoadCatalog:
    """The `hoprag_catalog` table of `keyspace`, read and written at `consistency` (a level
    name such as QUORUM; None: the session's default). Blocking; raises InvalidInputError for
    a bad keyspace name or level, StoreError/StoreUnavailableError when Cassandra fails."""

    def __init__(self, session: Any, keyspace: str, *, consistency: str | None = None) -> None:
        self.session = session
        self.keyspace = check_name(keyspace, what="keyspace")
        self.consistency = check_consistency(consistency, what="--consistency")
        self._prepared: dict[str, Any] = {}

    @property
    def name(self) -> str:
        """`keyspace.hoprag_catalog`."""
        return f"{self.keyspace}.{CATALOG_TABLE}"

    def create(self, replication_factor: int = 1) -> None:
        """Create the keyspace (with `replication_factor` replicas, when it is missing) and
        the catalogue table; returns once every live node has the schema."""
        statements = [
            *keyspace_statements(self.keyspace, replication_map(replication_factor)),
            _CREATE.format(ks=self.keyspace),
        ]
        try:
            execute_ddl_all(self.session, statements)
        except Exception as exc:
            raise translate(exc, f"creating {self.name}") from exc

    def exists(self) -> bool:
        """Whether the catalogue table exists (asked of the node: `live_schema`)."""
        return table_exists(self.session, self.keyspace, CATALOG_TABLE)

    def get(self, table: str) -> CatalogEntry | None:
        """The entry of `table`, or None when the table was never loaded (or the catalogue
        does not exist)."""
        table = check_name(table, what="table")
        if not self.exists():
            return None
        row = self._run(_SELECT_ONE, (table,), f"reading {table!r} from {self.name}").one()
        return None if row is None else _entry(row)

    def entries(self) -> list[CatalogEntry]:
        """Every entry, in the table's token order (empty when there is no catalogue)."""
        if not self.exists():
            return []
        return [_entry(r) for r in self._run(_SELECT_ALL, (), f"reading {self.name}")]

    def put(self, entry: CatalogEntry) -> None:
        """Write `entry` (an upsert by table name), stamped with the current time."""
        table = check_name(entry.table, what="table")
        values = (table, entry.source, entry.embedding, entry.dimension, entry.written,
                  entry.complete, datetime.now(UTC))  # fmt: skip
        self._run(_INSERT, values, f"recording the load of {table!r} in {self.name}")

    def disk_mib(self) -> dict[str, int]:
        """Table name -> MiB on disk of each table of the keyspace, as the node the session
        asks reports it (`system_views.disk_usage`)."""
        rows = self._run(_DISK_USAGE, (self.keyspace,), "reading system_views.disk_usage")
        return {r.table_name: int(r.mebibytes or 0) for r in rows}

    def _run(self, template: str, values: tuple[Any, ...], operation: str) -> Any:
        """Prepare `template` once (with the keyspace filled in) and execute it with `values`
        bound, at the catalogue's consistency."""
        try:
            prepared = self._prepared.get(template)
            if prepared is None:
                prepared = self.session.prepare(template.format(ks=self.keyspace))
                self._prepared[template] = prepared
            bound = prepared.bind(values)
            if self.consistency is not None:
                from cassandra import ConsistencyLevel

                bound.consistency_level = getattr(ConsistencyLevel, self.consistency)
            return self.session.execute(bound)
        except Exception as exc:
            raise translate(exc, operation) from exc
