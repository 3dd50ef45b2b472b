"""Stores: the Store protocol, MemoryStore (numpy) and CassandraStore (Cassandra 5.0 / Astra)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hoprag.stores.base import Filter, Hit, PreparedQuery, Store

__all__ = ["CassandraStore", "Filter", "Hit", "MemoryStore", "PreparedQuery", "Store"]


def __getattr__(name: str) -> Any:
    # Imported lazily so that `import hoprag` never pulls in the Cassandra driver.
    if name == "MemoryStore":
        from hoprag.stores.memory import MemoryStore

        return MemoryStore
    if name == "CassandraStore":
        from hoprag.stores.cassandra import CassandraStore

        return CassandraStore
    raise AttributeError(name)


if TYPE_CHECKING:
    from hoprag.stores.cassandra import CassandraStore
    from hoprag.stores.memory import MemoryStore
