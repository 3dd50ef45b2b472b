"""CassandraStore: hoprag's store over Cassandra 5.0 (SAI vector and token indexes) and Astra.

Rooms: `config` (CassandraConfig, the options), `layouts` and `schema` (the table: row format,
statements, set-up), `executor` (how statements run: bursts, retries, the shared in-flight
bound, prepared statements, error translation), `query` (CassandraQuery, a run's prepared
query) and `store` (CassandraStore, the Store API on top)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = ["CassandraConfig", "CassandraQuery", "CassandraStore", "ConnectionOptions"]


def __getattr__(name: str) -> Any:
    # Imported lazily so that `import hoprag.stores` never pulls in the Cassandra driver.
    if name == "CassandraStore":
        from hoprag.stores.cassandra.store import CassandraStore

        return CassandraStore
    if name == "CassandraConfig":
        from hoprag.stores.cassandra.config import CassandraConfig

        return CassandraConfig
    if name == "CassandraQuery":
        from hoprag.stores.cassandra.query import CassandraQuery

        return CassandraQuery
    if name == "ConnectionOptions":
        from hoprag.stores.cassandra.connection import ConnectionOptions

        return ConnectionOptions
    raise AttributeError(name)


if TYPE_CHECKING:
    from hoprag.stores.cassandra.config import CassandraConfig
    from hoprag.stores.cassandra.connection import ConnectionOptions
    from hoprag.stores.cassandra.query import CassandraQuery
    from hoprag.stores.cassandra.store import CassandraStore
