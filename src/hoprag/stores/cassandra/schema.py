"""The schema room: applies the CQL files in cql/ (the single source of truth for hoprag's
schema), waits until new indexes can answer queries, and sets up a store's table
(`setup_table`: check an existing table's vector column, or create table and indexes)."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from importlib import resources
from string import Template
from typing import TYPE_CHECKING, Any

from hoprag.errors import InvalidInputError, StoreError
from hoprag.stores.cassandra import lexicon
from hoprag.stores.cassandra.names import check_name
from hoprag.validation import MAX_DIMENSION

if TYPE_CHECKING:
    from hoprag.stores.cassandra.config import CassandraConfig
    from hoprag.stores.cassandra.layouts import Layout

# DDL waits for schema agreement and, for CREATE INDEX, for the index build to be registered;
# on a busy two-core node that can take far longer than a query's timeout.
DDL_TIMEOUT_S = 120.0
_VECTOR_TYPE = re.compile(r"vector<\s*float\s*,\s*(\d+)\s*>", re.IGNORECASE)
_CATALOGUE_COLUMNS = {"field", "value", "norm", "words"}
"""The columns of a values catalogue (`values.SHAPE`; `values` imports this module, so they are
repeated here)."""


def cql_text(name: str) -> str:
    """The text of one of the packaged CQL files (`keyspace.cql`, `documents.cql`)."""
    return resources.files("hoprag.stores.cassandra").joinpath("cql", name).read_text()


def split_statements(text: str) -> list[str]:
    """Split a CQL file into statements, dropping `--` comment lines."""
    lines = [ln for ln in text.splitlines() if not ln.lstrip().startswith("--")]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]


def replication_map(replication_factor: int = 1, datacenter: str | None = None) -> str:
    """A CQL replication map: SimpleStrategy, or NetworkTopologyStrategy for a named DC."""
    if not isinstance(replication_factor, int) or not 1 <= replication_factor <= 10:
        raise InvalidInputError(f"replication_factor must be 1..10, got {replication_factor!r}")
    if datacenter is None:
        return f"{{'class': 'SimpleStrategy', 'replication_factor': {replication_factor}}}"
    if not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", datacenter):
        raise InvalidInputError(f"datacenter {datacenter!r} is not a plain name")
    return f"{{'class': 'NetworkTopologyStrategy', '{datacenter}': {replication_factor}}}"


def keyspace_statements(keyspace: str, replication: str) -> list[str]:
    """The statements that create the keyspace when it is missing."""
    ks = check_name(keyspace, what="keyspace")
    return [
        Template(s).substitute(keyspace=ks, replication=replication)
        for s in split_statements(cql_text("keyspace.cql"))
    ]


def table_statements(
    keyspace: str, table: str, dimension: int, *, lexical: bool = False
) -> list[str]:
    """The statements that create the documents table and its indexes when missing; with
    `lexical`, its lexical index too (columns, postings and counter tables: `lexicon.py`)."""
    ks = check_name(keyspace, what="keyspace")
    tb = check_name(table, what="table")
    if (
        not isinstance(dimension, int)
        or isinstance(dimension, bool)
        or not (1 <= dimension <= MAX_DIMENSION)
    ):
        raise InvalidInputError(
            f"embedding dimension must be an integer in 1..{MAX_DIMENSION}, got {dimension!r}"
        )
    columns = f",\n  {lexicon.COLUMNS}" if lexical else ""
    statements = [
        Template(s).substitute(keyspace=ks, table=tb, dimension=dimension, lexicon_columns=columns)
        for s in split_statements(cql_text("documents.cql"))
    ]
    if lexical:
        statements += lexicon.keyspace_statements(ks)
    return statements


def index_names(table: str) -> list[str]:
    """Names of the SAI indexes `documents.cql` creates for `table`."""
    tb = check_name(table, what="table")
    return [f"{tb}_embedding_idx", f"{tb}_tokens_idx"]


_UNKNOWN_KEYSPACE = re.compile(r"Unknown keyspace (\w+)")


def _queryable(session: Any, keyspace: str) -> set[str] | None:
    """The queryable SAI indexes of `keyspace`, or None when the node could not list them
    this time: its virtual table walks every keyspace and fails with "Unknown keyspace
    <another>" when another client drops or creates one during the read (seen with two test
    workers on one node)."""
    try:
        rows = session.execute(
            "SELECT index_name, is_queryable FROM system_views.sai_column_indexes "
            "WHERE keyspace_name = %s",
            (keyspace,),
        )
    except Exception as exc:
        unknown = _UNKNOWN_KEYSPACE.search(str(exc))
        if unknown and unknown.group(1) != keyspace:
            return None
        raise
    return {r.index_name for r in rows if r.is_queryable}


def wait_queryable(session: Any, keyspace: str, indexes: list[str], timeout: float = 120) -> None:
    """Block until every named SAI index of `keyspace` reports `is_queryable` (a listing that
    failed because of another keyspace's schema change is asked again)."""
    ks = check_name(keyspace, what="keyspace")
    deadline = time.monotonic() + timeout
    pending = set(indexes)
    while pending:
        ready = _queryable(session, ks)
        pending = set(indexes) - (ready or set())
        if not pending:
            return
        if time.monotonic() > deadline:
            raise StoreError(
                f"SAI indexes {sorted(pending)} of keyspace {ks!r} were not queryable after "
                f"{timeout:.0f}s"
            )
        time.sleep(0.2)


def sstable_count(session: Any, keyspace: str, table: str) -> int:
    """How many SSTables with SAI segments hold `table` on the node the session asks, from
    `system_views.sai_sstable_indexes` (rows still in the memtable are in none). Each SAI query
    searches every segment, so the same rows spread over several SSTables answer more slowly
    until compaction merges them."""
    ks = check_name(keyspace, what="keyspace")
    tb = check_name(table, what="table")
    rows = session.execute(
        "SELECT table_name, sstable_name FROM system_views.sai_sstable_indexes "
        "WHERE keyspace_name = %s",
        (ks,),
    )
    return len({r.sstable_name for r in rows if r.table_name == tb})


def execute_ddl(
    session: Any, statement: str, timeout: float = DDL_TIMEOUT_S, host: Any = None
) -> Any:
    """Run one DDL statement (on `host` when given) and make sure every node has the new
    schema before returning; the node that ran it.

    The driver waits for schema agreement only `max_schema_agreement_wait` (10 s by default)
    and then carries on; on a busy cluster the next statement (a CREATE INDEX on the new table)
    can then reach a node that has not seen the table yet. So wait longer, up to `timeout`."""
    extra = {} if host is None else {"host": host}
    result = session.execute(statement, timeout=timeout, **extra)
    future = getattr(result, "response_future", None)
    ran_on = getattr(future, "coordinator_host", None)
    if future is None or getattr(future, "is_schema_agreed", True):
        return ran_on
    deadline = time.monotonic() + timeout
    control = session.cluster.control_connection
    while time.monotonic() < deadline:
        if control.wait_for_schema_agreement(wait_time=min(30.0, deadline - time.monotonic())):
            return ran_on
    raise StoreError(
        f"the cluster's nodes did not agree on the schema within {timeout:.0f}s after: "
        f"{statement.splitlines()[0]}"
    )


_CREATE_KEYSPACE = re.compile(r"CREATE KEYSPACE IF NOT EXISTS (\w+)\b", re.IGNORECASE)


def keyspace_exists(session: Any, keyspace: str) -> bool:
    """Whether `keyspace` exists, asked of the node (`system_schema.keyspaces`)."""
    rows = session.execute(
        "SELECT keyspace_name FROM system_schema.keyspaces WHERE keyspace_name = %s", (keyspace,)
    )
    return bool(list(rows))


def execute_ddl_all(session: Any, statements: list[str], timeout: float = DDL_TIMEOUT_S) -> None:
    """Run DDL statements in order, all on the node that ran the first while it is up: each
    statement then finds what the ones before it created, even where the driver saw schema
    agreement that a loaded node had not reached yet (CREATE TABLE answered 'keyspace does
    not exist' right after CREATE KEYSPACE). A `CREATE KEYSPACE IF NOT EXISTS` of a keyspace
    that exists is not sent: Cassandra checks the CREATE permission on all keyspaces before
    looking, so a role that may only use its keyspace (Astra DB's, a locked-down cluster's)
    would be refused."""
    host = None
    for statement in statements:
        made = _CREATE_KEYSPACE.match(statement)
        if made and keyspace_exists(session, made.group(1).lower()):
            continue
        pinned = host if host is not None and getattr(host, "is_up", False) else None
        ran_on = execute_ddl(session, statement, timeout, host=pinned)
        host = host or ran_on


def apply_schema(
    session: Any,
    keyspace: str,
    table: str,
    dimension: int,
    *,
    replication: str | None = None,
    create_keyspace: bool = True,
    wait: bool = True,
) -> None:
    """Create keyspace (optionally), table and indexes if missing, then (with `wait`) wait
    until the indexes answer. Blocking: call it from a worker thread in async code."""
    statements = table_statements(keyspace, table, dimension)
    if create_keyspace:
        statements = keyspace_statements(keyspace, replication or replication_map()) + statements
    execute_ddl_all(session, statements)
    if wait:
        wait_queryable(session, keyspace, index_names(table))


def existing_dimension(session: Any, layout: Layout, mode: str) -> int | None:
    """The dimension of the vector column of the layout's table, None when there is no such
    table (from the driver's schema metadata, no query)."""
    meta = session.cluster.metadata.keyspaces.get(layout.keyspace)
    table = meta.tables.get(layout.table) if meta is not None else None
    if table is None:
        return None
    col = table.columns.get(layout.vector_col)
    if col is None:
        hint = f"is mode={mode!r} right?"
        if set(table.columns) == _CATALOGUE_COLUMNS:
            hint = (
                "it is the values catalogue of a hoprag table (the values of its entity "
                "fields, which aresolve reads): give this store another table name"
            )
        raise InvalidInputError(
            f"table {layout.fq} exists but has no {layout.vector_col!r} column: {hint}"
        )
    m = _VECTOR_TYPE.search(col.cql_type)
    if m is None:
        raise InvalidInputError(
            f"column {layout.vector_col} of {layout.fq} is {col.cql_type}, not vector<float, n>"
        )
    return int(m.group(1))


def setup_table(
    session: Any, layout: Layout, config: CassandraConfig, probe: Callable[[], int]
) -> int:
    """Make sure the layout's table can be used and return its vector dimension: an existing
    table's (which must equal `config.dimension` when that is set), else `config.dimension`,
    else `probe()`. With `config.create_schema` the keyspace (if `create_keyspace`), table and
    indexes are created when missing, then (with `wait_indexes`) waited for. Blocking."""
    dimension = config.dimension
    existing = existing_dimension(session, layout, config.mode)
    if existing is not None:
        if dimension is not None and dimension != existing:
            raise InvalidInputError(
                f"dimension={dimension} but table {layout.fq} stores vectors of dimension "
                f"{existing}"
            )
        dimension = existing
    elif not config.create_schema:
        raise InvalidInputError(
            f"table={layout.table!r}: {layout.fq} does not exist (create_schema=False); "
            "load it first or open the store with create_schema=True"
        )
    if dimension is None:
        dimension = probe()
    if not config.create_schema:
        return dimension
    statements = layout.create_statements(dimension)
    if config.create_keyspace:
        replication = replication_map(config.replication_factor)
        statements = keyspace_statements(layout.keyspace, replication) + statements
    execute_ddl_all(session, statements)
    if config.wait_indexes:
        wait_queryable(session, layout.keyspace, layout.index_names())
    return dimension


def open_lexical_index(session: Any, layout: Any, *, wanted: bool) -> bool:
    """Whether the table keeps the lexical index: one that has its column is written with it
    whatever the store asked; with `wanted` an existing table without it gets it when empty
    and is refused otherwise (`lexicon.refuse_unindexed_rows`). Blocking."""
    column, postings = lexicon.present(session, layout.keyspace, layout.table)
    if not column and not wanted:
        return False
    if not (column and postings):  # also finishes a set-up that stopped half-way
        lexicon.refuse_unindexed_rows(session, layout.fq)
        execute_ddl_all(session, lexicon.add_statements(layout.keyspace, layout.table, column))
    return True
