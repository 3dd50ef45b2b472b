"""Fixtures that give integration tests a live Cassandra 5.0 session.

The node comes, in this order (`cassandra_backend.choose_backend`), from HOPRAG_CASSANDRA when
it is set; from a testcontainers `CassandraContainer` (image cassandra:5.0.8) when a Docker
engine answers (untested on this project's machines, which have none); else from a local JVM
that `scripts/cassandra up` starts. A node the fixture started is stopped at the end of the run
(HOPRAG_KEEP_CASSANDRA=1 keeps a JVM node). If no Cassandra can be had, every integration test
fails with the reason: they never skip silently. Run only the unit tests with
`pytest -m "not integration"`."""

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

from cassandra_backend import CASSANDRA_IMAGE, choose_backend, docker_answers
from films_demo import FilmsDemoRun, run_films_demo

REPO = Path(__file__).resolve().parents[2]
LAUNCHER = REPO / "scripts" / "cassandra"
SCRATCH_STATE = REPO / ".cassandra" / "test"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if Path(str(item.fspath)).is_relative_to(Path(__file__).parent):
            item.add_marker(pytest.mark.integration)


@pytest.fixture(scope="session")
def cassandra_contact_points() -> Iterator[str]:
    """`host:port[,host:port]` of a live node: HOPRAG_CASSANDRA, or one this fixture starts."""
    backend = choose_backend(os.environ, docker_answers)
    if backend.kind == "given":
        assert backend.contact_points is not None
        yield backend.contact_points
    elif backend.kind == "testcontainers":
        yield from _container_contact_points()
    else:
        yield from _launcher_contact_points()


def _container_contact_points() -> Iterator[str]:
    """A throw-away container with the settings of docker/compose.yml, removed at the end."""
    from testcontainers.community.cassandra import CassandraContainer

    container = (
        CassandraContainer(CASSANDRA_IMAGE)
        .with_env("MAX_HEAP_SIZE", "2G")
        .with_env("HEAP_NEWSIZE", "256M")
        .with_env("CASSANDRA_CLUSTER_NAME", "hoprag")
    )
    try:
        container.start()
    except Exception as exc:
        container.stop()
        pytest.fail(
            f"integration tests need Cassandra 5.0; a Docker engine answered but the "
            f"{CASSANDRA_IMAGE} container did not start: {exc}",
            pytrace=False,
        )
    try:
        host, port = container.get_contact_points()[0]
        yield f"{host}:{port}"
    finally:
        container.stop()


def _launcher_contact_points() -> Iterator[str]:
    """A local scratch JVM node from `scripts/cassandra up --scratch --heap 3G`, as
    `scripts/test` starts it (its own state in .cassandra/test; told not to look for Docker
    again)."""
    env = {**os.environ, "HOPRAG_NO_DOCKER": "1", "HOPRAG_CASSANDRA_HOME": str(SCRATCH_STATE)}
    os.environ["HOPRAG_TEST_SCRATCH_NODE"] = "1"
    os.environ["HOPRAG_CASSANDRA_HOME"] = str(SCRATCH_STATE)  # for the tests that ask the launcher
    r = subprocess.run(
        [sys.executable, str(LAUNCHER), "up", "--scratch", "--heap", "3G"],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        env=env,
        check=False,
    )
    if r.returncode != 0:
        pytest.fail(
            "integration tests need Cassandra 5.0 and `scripts/cassandra up` failed:\n"
            + (r.stderr or r.stdout)[-3000:],
            pytrace=False,
        )
    try:
        yield r.stdout.strip().splitlines()[-1]
    finally:
        if not os.environ.get("HOPRAG_KEEP_CASSANDRA"):
            subprocess.run(
                [sys.executable, str(LAUNCHER), "down"],
                capture_output=True,
                stdin=subprocess.DEVNULL,
                env=env,
                check=False,
            )


@pytest.fixture(scope="session")
def cassandra_session(cassandra_contact_points: str) -> Iterator[Any]:
    """A driver session (protocol v5, token-aware) shared by the whole run. Keyspaces made
    with `new_keyspace` are dropped when the run ends, not test by test (see below), unless
    the node is a scratch node that this run (or `scripts/test`) started and that goes with
    all its data when the run ends (HOPRAG_TEST_SCRATCH_NODE=1): dropping the few hundred
    keyspaces of a run one by one took over three minutes."""
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
        names = (
            []
            if os.environ.get("HOPRAG_TEST_SCRATCH_NODE") == "1"
            else list(session.hoprag_test_keyspaces)
        )
        if names:
            time.sleep(1.0)
        for name in names:
            try:
                session.execute(f"DROP KEYSPACE IF EXISTS {name}", timeout=60)
            except Exception:
                pass
        session.cluster.shutdown()


@pytest.fixture
def keyspace(cassandra_session: Any) -> str:
    """A fresh keyspace (RF 1) for one test, dropped when the run ends."""
    return new_keyspace(cassandra_session)


@pytest.fixture(scope="session")
def films_demo(
    cassandra_contact_points: str, cassandra_session: Any, tmp_path_factory: pytest.TempPathFactory
) -> FilmsDemoRun:
    """The run's one films table: `scripts/demo --films --embedding hash:32 --table films`, run
    once as a user runs it on a fresh keyspace, loads all 17,472 films of movies.db with their
    declared fields and records the load as `hoprag load films` does. test_demo_films checks
    this first run; the tools, MCP and scopes modules only read the table (loading it once
    instead of once per module saves minutes)."""
    keyspace = new_keyspace(cassandra_session)
    out = tmp_path_factory.mktemp("films_demo") / "first.json"
    return run_films_demo([str(REPO / "scripts" / "demo")], cassandra_contact_points, keyspace,
                          out)  # fmt: skip


@pytest.fixture(scope="session")
def films_keyspace(films_demo: FilmsDemoRun) -> str:
    """A keyspace holding table `films` (all the films, 32-d hash vectors, declared fields)."""
    return films_demo.keyspace
