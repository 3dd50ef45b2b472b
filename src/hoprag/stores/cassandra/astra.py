"""Astra DB Serverless's rules, as a `CassandraStore` in Astra mode keeps them
(`CassandraConfig.astra`, on by default in `CassandraStore.from_astra`).

Astra DB Serverless's "Database limits" page
(https://docs.datastax.com/en/astra-db-serverless/databases/database-limits.html) says that
through CQL writes may use every consistency level except ONE, ANY and LOCAL_ONE (reads any
level), that a database holds at most 50 tables, and (the page's earlier version,
https://docs.datastax.com/en/astra/astra-db-vector/databases/database-limits.html) at most 50
SAI indexes, 10 on one table. So a store in Astra mode writes at LOCAL_QUORUM (unless
`write_consistency` names another level Astra accepts; the refused ones are refused when the
config is made), its own session reads and writes at that level, and before it creates
anything it counts what it would create (the documents table and its SAI indexes, the lexical
index's keyspace tables, the holder counts' counter table, the declared fields' catalogue,
columns' indexes and values catalogue) against what the database already holds
(`system_schema`, every non-system keyspace): a schema that would not fit is refused with an
`InvalidInputError` naming the limit, what the database holds and what would still fit, and
nothing is created. `scripts/cassandra up --astra` starts a local node whose guardrails refuse
the same (docs/astra.md)."""

from __future__ import annotations

import contextlib
import os
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hoprag.errors import InvalidInputError, invalid

if TYPE_CHECKING:
    from hoprag.stores.cassandra.config import CassandraConfig
    from hoprag.stores.cassandra.layouts import Layout

__all__ = [
    "MAX_SAI_PER_DATABASE",
    "MAX_SAI_PER_TABLE",
    "MAX_TABLES",
    "OPS_PER_SECOND",
    "REFUSED_WRITE_CONSISTENCY",
    "WRITE_CONSISTENCY",
    "Holdings",
    "Plan",
    "astra_session",
    "check_budget",
    "check_store_budget",
    "close_on_error",
    "holdings",
    "plan_of",
    "store_plan",
]

SOURCE = "https://docs.datastax.com/en/astra-db-serverless/databases/database-limits.html"
"""Where Astra DB Serverless publishes its limits."""
MAX_TABLES = 50
"""Tables per database ("A Serverless (Vector) database can have up to 50 tables")."""
MAX_SAI_PER_DATABASE = 50
"""SAI indexes per database ("A database cannot have more than 50 SAI Indexes")."""
MAX_SAI_PER_TABLE = 10
"""SAI indexes per table ("A collection cannot have more than 10 SAI Indexes")."""
OPS_PER_SECOND = 12_000
"""Astra's default rate limit, about 12,000 operations per second (not enforced by hoprag)."""
WRITE_CONSISTENCY = "LOCAL_QUORUM"
"""The level a store in Astra mode writes (and its own session reads) at."""
REFUSED_WRITE_CONSISTENCY = ("ONE", "ANY", "LOCAL_ONE")
"""Write consistency levels Astra refuses."""
SYSTEM_KEYSPACES = frozenset(
    {
        "system",
        "system_auth",
        "system_distributed",
        "system_schema",
        "system_traces",
        "system_views",
        "system_virtual_schema",
        "data_endpoint_auth",
        "datastax_sla",
    }
)
"""Keyspaces that are not the user's (Cassandra's own, and Astra's internal ones): their tables
and indexes count against no limit."""

_CREATE_TABLE = re.compile(r"^\s*CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)\.(\w+)", re.I)
_CREATE_INDEX = re.compile(
    r"^\s*CREATE\s+(?:CUSTOM\s+)?INDEX\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)\s+ON\s+(\w+)\.(\w+)", re.I
)


@dataclass(frozen=True)
class Plan:
    """Tables (keyspace, table) and indexes (keyspace, table, index) a set-up would create
    when they are missing."""

    tables: frozenset[tuple[str, str]] = frozenset()
    indexes: frozenset[tuple[str, str, str]] = frozenset()

    def __or__(self, other: Plan) -> Plan:
        return Plan(self.tables | other.tables, self.indexes | other.indexes)


@dataclass(frozen=True)
class Holdings:
    """The tables and indexes the database holds in its non-system keyspaces."""

    tables: frozenset[tuple[str, str]]
    indexes: frozenset[tuple[str, str, str]]


def plan_of(statements: Iterable[str]) -> Plan:
    """The tables and indexes the CREATE statements among `statements` make (names in lower
    case; other statements are left out)."""
    tables, indexes = set(), set()
    for statement in statements:
        if m := _CREATE_TABLE.match(statement):
            tables.add((m.group(1).lower(), m.group(2).lower()))
        elif m := _CREATE_INDEX.match(statement):
            index, keyspace, table = (g.lower() for g in m.groups())
            indexes.add((keyspace, table, index))
    return Plan(frozenset(tables), frozenset(indexes))


def _row(row: Any, names: tuple[str, ...]) -> tuple[Any, ...]:
    """A row's values of `names`, whatever the session's row factory (dict or tuple)."""
    return tuple(row[n] for n in names) if isinstance(row, dict) else tuple(row)


def holdings(session: Any) -> Holdings:
    """What the database holds now, read from `system_schema` (the driver's metadata can lag
    another client's DDL). Blocking."""
    table_rows = session.execute("SELECT keyspace_name, table_name FROM system_schema.tables")
    index_rows = session.execute(
        "SELECT keyspace_name, table_name, index_name FROM system_schema.indexes"
    )
    tables = {_row(r, ("keyspace_name", "table_name")) for r in table_rows}
    indexes = {_row(r, ("keyspace_name", "table_name", "index_name")) for r in index_rows}
    return Holdings(
        frozenset((k, t) for k, t in tables if k not in SYSTEM_KEYSPACES),
        frozenset((k, t, i) for k, t, i in indexes if k not in SYSTEM_KEYSPACES),
    )


def _refusal(limit: str, held: int, new: list[str], room: int, what: str) -> InvalidInputError:
    """The error for a set-up that would take the database past `limit`."""
    fits = f"{room} would fit" if room > 0 else "none would fit"
    return InvalidInputError(
        f"Astra DB Serverless allows at most {limit} ({SOURCE}); it holds {held} and {what} "
        f"would create {len(new)} more ({', '.join(new)}): {fits}. Nothing was created: drop "
        "tables or indexes nothing needs, or use another database",
        argument="table",
        value=new,
        allowed=f"a schema within Astra's limit of {limit}",
    )


def check_budget(plan: Plan, held: Holdings, what: str) -> None:
    """Refuse (`InvalidInputError` naming the limit, what is held and what would fit) a `plan`
    that would take a database holding `held` past Astra's tables per database, SAI indexes per
    database or SAI indexes per table; `what` names the set-up in the message."""
    new_tables = sorted(f"{k}.{t}" for k, t in plan.tables - held.tables)
    if len(held.tables) + len(new_tables) > MAX_TABLES:
        room = MAX_TABLES - len(held.tables)
        raise _refusal(f"{MAX_TABLES} tables per database", len(held.tables), new_tables, room,
                       what)  # fmt: skip
    known = {(k, i) for k, _, i in held.indexes}
    new = sorted(x for x in plan.indexes if (x[0], x[2]) not in known)
    if len(held.indexes) + len(new) > MAX_SAI_PER_DATABASE:
        room = MAX_SAI_PER_DATABASE - len(held.indexes)
        names = [f"{k}.{i}" for k, _, i in new]
        raise _refusal(f"{MAX_SAI_PER_DATABASE} SAI indexes per database", len(held.indexes),
                       names, room, what)  # fmt: skip
    on_table = Counter((k, t) for k, t, _ in held.indexes)
    adding = Counter((k, t) for k, t, _ in new)
    for (k, t), count in sorted(adding.items()):
        if on_table[(k, t)] + count > MAX_SAI_PER_TABLE:
            names = [f"{k}.{i}" for kk, tt, i in new if (kk, tt) == (k, t)]
            room = MAX_SAI_PER_TABLE - on_table[(k, t)]
            raise _refusal(f"{MAX_SAI_PER_TABLE} SAI indexes per table ({k}.{t})",
                           on_table[(k, t)], names, room, what)  # fmt: skip


def store_plan(layout: Layout, config: CassandraConfig, *, existed: bool) -> Plan:
    """What a store's set-up creates when missing: a new table's statements (`layout`,
    with the lexical index's keyspace tables when `layout.lexical`), the holder counts'
    keyspace tables when the config asks for them, and its declared fields' field catalogue,
    columns' indexes and values catalogue; an existing table only the lexical index's and the
    holder counts' tables when the config asks for them (new fields on an existing table are
    refused by the set-up anyway)."""
    from hoprag.stores.cassandra import holders, lexicon

    counted = (
        plan_of(holders.keyspace_statements(layout.keyspace)) if config.holder_counts else Plan()
    )
    if existed:
        lexical = (
            plan_of(lexicon.keyspace_statements(layout.keyspace)) if config.lexical else Plan()
        )
        return lexical | counted
    plan = plan_of(layout.create_statements(config.dimension or 1)) | counted
    return plan | _declared_plan(layout, config)


def _declared_plan(layout: Layout, config: CassandraConfig) -> Plan:
    """The tables and indexes of a new table's declared fields: the field catalogue, the
    typed columns' indexes and the values catalogue."""
    from hoprag.stores.cassandra import declare
    from hoprag.stores.cassandra.fields import FIELDS_TABLE, DeclaredField, column_for

    plan = Plan()
    if config.mode == "hoprag" and config.field_kinds:
        fields = [DeclaredField(f, k, column_for(f, k)) for f, k in config.field_kinds.items()]
        statements, _ = declare.index_statements(layout, fields)
        plan = plan | plan_of([*declare.add_statements(layout, fields), *statements])
        plan = plan | Plan(frozenset({(layout.keyspace, FIELDS_TABLE)}))
    return plan


def check_store_budget(
    session: Any, layout: Layout, config: CassandraConfig, existed: bool
) -> None:
    """Refuse, before anything is created, a store set-up whose new tables and indexes
    (`store_plan`) would not fit in Astra's limits given what the database holds. Blocking."""
    plan = store_plan(layout, config, existed=existed)
    if not plan.tables and not plan.indexes:
        return
    check_budget(plan, holdings(session), f"setting up {layout.fq}")


def astra_session(
    token: str,
    keyspace: str,
    database_id: str | None,
    secure_connect_bundle: str | os.PathLike[str] | None,
) -> tuple[Any, bool]:
    """The session of `CassandraStore.from_astra` and whether the store owns it: cassio's
    (`session.connect_astra`, not owned) with `database_id`, or the driver's cloud connection
    through `secure_connect_bundle` (`session.connect_bundle`, owned); exactly one of the two
    is given (InvalidInputError otherwise). Blocking."""
    from hoprag.stores.cassandra.names import check_name
    from hoprag.stores.cassandra.session import connect_astra, connect_bundle

    if (database_id is None) == (secure_connect_bundle is None):
        raise invalid(
            "database_id", database_id,
            "given alone, or secure_connect_bundle given instead (one of the two)",
        )  # fmt: skip
    check_name(keyspace, what="keyspace")
    if database_id is not None:
        return connect_astra(token, database_id, keyspace), False
    assert secure_connect_bundle is not None
    return connect_bundle(secure_connect_bundle, token), True


@contextlib.contextmanager
def close_on_error(session: Any) -> Iterator[None]:
    """Shut `session`'s cluster down when the block raises (None: nothing to close)."""
    try:
        yield
    except BaseException:
        if session is not None:
            session.cluster.shutdown()
        raise
