"""Fixtures that give integration tests a live Cassandra 5.0 session.

The node comes from HOPRAG_CASSANDRA when it is set; otherwise this starts one with
`scripts/cassandra up` (a local JVM, or Docker when an engine answers) and stops it at the end
of the run. If no Cassandra can be had, every integration test fails with the reason: they
never skip silently. Run only the unit tests with `pytest -m "not integration"`."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
LAUNCHER = REPO / "scripts" / "cassandra"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if Path(str(item.fspath)).is_relative_to(Path(__file__).parent):
            item.add_marker(pytest.mark.integration)


class _Cluster:
    """What the session fixture found or started."""

    def __init__(self) -> None:
        self.contact_points: str | None = None
        self.started = False
        self.error: str | None = None


@pytest.fixture(scope="session")
def cassandra_contact_points() -> Iterator[str]:
    """`host:port[,host:port]` of a live node: HOPRAG_CASSANDRA, or one this fixture starts."""
    state = _Cluster()
    given = os.environ.get("HOPRAG_CASSANDRA")
    if given:
        state.contact_points = given
    else:
        r = subprocess.run(
            [sys.executable, str(LAUNCHER), "up"],
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        if r.returncode != 0:
            pytest.fail(
                "integration tests need Cassandra 5.0 and `scripts/cassandra up` failed:\n"
                + (r.stderr or r.stdout)[-3000:],
                pytrace=False,
            )
        state.started = True
        state.contact_points = r.stdout.strip().splitlines()[-1]
    try:
        yield state.contact_points
    finally:
        if state.started and not os.environ.get("HOPRAG_KEEP_CASSANDRA"):
            subprocess.run(
                [sys.executable, str(LAUNCHER), "down"],
                capture_output=True,
                stdin=subprocess.DEVNULL,
                check=False,
            )


@pytest.fixture(scope="session")
def cassandra_session(cassandra_contact_points: str) -> Iterator[Any]:
    """A driver session (protocol v5, token-aware) shared by the whole run."""
    from hoprag.errors import StoreUnavailableError
    from hoprag.stores.cassandra.session import connect

    try:
        session = connect(cassandra_contact_points)
    except StoreUnavailableError as exc:
        pytest.fail(f"integration tests need Cassandra 5.0: {exc}", pytrace=False)
    try:
        yield session
    finally:
        session.cluster.shutdown()


@pytest.fixture
def keyspace(cassandra_session: Any) -> Iterator[str]:
    """A fresh keyspace (RF 1) for one test, dropped afterwards."""
    from hoprag.stores.cassandra.schema import keyspace_statements, replication_map

    name = f"t_{uuid.uuid4().hex[:12]}"
    for stmt in keyspace_statements(name, replication_map()):
        cassandra_session.execute(stmt)
    try:
        yield name
    finally:
        cassandra_session.execute(f"DROP KEYSPACE IF EXISTS {name}")
