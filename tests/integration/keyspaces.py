"""Keyspaces for integration tests: created fresh, dropped only when the run ends (see
`cassandra_session` in conftest.py for why)."""

from __future__ import annotations

import uuid
from typing import Any


def new_keyspace(session: Any, replication_factor: int = 1) -> str:
    """Create a fresh keyspace for a test and register it to be dropped at the end of the run."""
    from hoprag.stores.cassandra.schema import keyspace_statements, replication_map

    name = f"t_{uuid.uuid4().hex[:12]}"
    for stmt in keyspace_statements(name, replication_map(replication_factor)):
        session.execute(stmt, timeout=60)
    session.hoprag_test_keyspaces.append(name)
    return name
