"""Which Cassandra 5.0 the integration fixture uses, as a pure choice
(`choose_backend`) and a cheap Docker probe (`docker_answers`).

In order: the nodes in HOPRAG_CASSANDRA when it is set; a testcontainers `CassandraContainer`
(image `cassandra:5.0.8`) when a Docker engine answers and HOPRAG_NO_DOCKER is not set; else a
local JVM started by `scripts/cassandra up`."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Literal

CASSANDRA_IMAGE = "cassandra:5.0.8"

BackendKind = Literal["given", "testcontainers", "launcher"]


@dataclasses.dataclass(frozen=True)
class Backend:
    """The chosen source of a node: `given` carries HOPRAG_CASSANDRA's contact points."""

    kind: BackendKind
    contact_points: str | None = None


def choose_backend(env: Mapping[str, str], docker_available: Callable[[], bool]) -> Backend:
    """The backend for `env` (os.environ or a test's dict). `docker_available` is called only
    when HOPRAG_CASSANDRA is unset or blank and HOPRAG_NO_DOCKER is unset or empty."""
    given = env.get("HOPRAG_CASSANDRA", "").strip()
    if given:
        return Backend("given", given)
    if not env.get("HOPRAG_NO_DOCKER") and docker_available():
        return Backend("testcontainers")
    return Backend("launcher")


def docker_answers(timeout: float = 3.0) -> bool:
    """Whether a Docker engine answers a ping through testcontainers' own client (which
    follows DOCKER_HOST, docker contexts and testcontainers' settings) within `timeout` s."""
    try:
        from testcontainers.core.docker_client import DockerClient

        client = DockerClient(timeout=timeout).client
    except Exception:  # no socket, no engine, bad DOCKER_HOST: all mean "no Docker here"
        return False
    try:
        return bool(client.ping())
    except Exception:
        return False
    finally:
        client.close()
