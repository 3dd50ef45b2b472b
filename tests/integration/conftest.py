"""Fixtures that give integration tests a live Cassandra 5.0 session.

The node comes from HOPRAG_CASSANDRA when it is set; otherwise this starts one with
`scripts/cassandra up` (a local JVM, or Docker when an engine answers) and stops it at the end
of the run. If no Cassandra can be had, every integration test fails with the reason: they
never skip silently. Run only the unit tests with `pytest -m "not integration"`."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from keyspaces import new_keyspace

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
    """A driver session (protocol v5, token-aware) shared by the whole run. Keyspaces made
    with `new_keyspace` are dropped when the run ends, not test by test (see below)."""
    from hoprag.errors import StoreUnavailableError
    from hoprag.stores.cassandra.session import connect

    try:
        session = connect(cassandra_contact_points)
    except StoreUnavailableError as exc:
        pytest.fail(f"integration tests need Cassandra 5.0: {exc}", pytrace=False)
    session.hoprag_test_keyspaces = []
    try:
        yield session
    finally:
        # Dropping a table while an ANN read on it is still running on the server (one the
        # client gave up on or cancelled) can leave Cassandra 5.0.8's SAI QueryView builder
        # spinning and every later DDL timing out (docs/cassandra.md). So the run's keyspaces
        # are dropped only here, after a pause for such reads to end; a failure to drop them
        # must not fail the run.
        if session.hoprag_test_keyspaces:
            time.sleep(1.0)
        for name in session.hoprag_test_keyspaces:
            try:
                session.execute(f"DROP KEYSPACE IF EXISTS {name}", timeout=60)
            except Exception:
                pass
        session.cluster.shutdown()


@pytest.fixture
def keyspace(cassandra_session: Any) -> str:
    """A fresh keyspace (RF 1) for one test, dropped when the run ends."""
    return new_keyspace(cassandra_session)
