"""CassandraStore: hoprag's store over Cassandra 5.0 (SAI vector and token indexes) and Astra."""

from __future__ import annotations

from typing import Any

__all__ = ["CassandraStore"]


def __getattr__(name: str) -> Any:
    if name == "CassandraStore":
        from hoprag.stores.cassandra.store import CassandraStore

        return CassandraStore
    raise AttributeError(name)
