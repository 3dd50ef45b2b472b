"""Opening a driver session the way hoprag wants it: protocol v5, token-aware routing with the
local data centre named, contact points from an argument or HOPRAG_CASSANDRA, credentials and
TLS from a `ConnectionOptions` or the environment (`connection.py`), the statements' default
consistency from an argument or HOPRAG_CASSANDRA_CONSISTENCY. An Astra DB session comes from
cassio (`connect_astra`: token and database id) or from a secure-connect bundle and a token
(`connect_bundle`, the driver's cloud connection)."""

from __future__ import annotations

import os
import socket
from collections.abc import Sequence
from typing import Any

from hoprag.errors import InvalidInputError, StoreError, StoreUnavailableError, invalid
from hoprag.stores.cassandra.connection import ConnectionOptions, refusal
from hoprag.stores.cassandra.errors import translate
from hoprag.stores.cassandra.guards import check_consistency
from hoprag.stores.cassandra.names import check_name

DEFAULT_PORT = 9042
CONSISTENCY_ENV = "HOPRAG_CASSANDRA_CONSISTENCY"
"""The variable that sets the default consistency of a session's statements (e.g. LOCAL_QUORUM
on a node held to Astra's rules, which refuses writes at the driver's LOCAL_ONE)."""


def parse_contact_points(value: str | Sequence[str]) -> list[tuple[str, int]]:
    """Parse `host[:port],host[:port]` (or a sequence of such strings) into (host, port) pairs."""
    parts = value.split(",") if isinstance(value, str) else list(value)
    points: list[tuple[str, int]] = []
    for raw in parts:
        part = raw.strip()
        if not part:
            continue
        host, _, port = part.rpartition(":") if part.count(":") == 1 else (part, "", "")
        if not host:
            host, port = part, ""
        if port and not (port.isascii() and port.isdigit() and 0 < int(port) < 65536):
            raise InvalidInputError(f"contact point {part!r} has a bad port; expected host[:port]")
        points.append((host, int(port) if port else DEFAULT_PORT))
    if not points:
        raise InvalidInputError(f"no contact point in {value!r}; expected host[:port],...")
    return points


def contact_points_from_env() -> list[tuple[str, int]] | None:
    """Contact points from HOPRAG_CASSANDRA, or None when it is unset."""
    value = os.environ.get("HOPRAG_CASSANDRA")
    return parse_contact_points(value) if value else None


SOCKOPTS = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]
"""Socket options of every connection `connect` opens. The driver leaves Nagle's algorithm on,
so a request written while an earlier one is unacknowledged waits for that ACK; a node acks
with its answer (delayed ACKs), so over a slow link every query of a hop after the first
waited one more round trip (2 queries: 57 ms against 30 ms at 20 ms round trips, measured)."""


def connect(
    contact_points: str | Sequence[str] | None = None,
    *,
    local_dc: str = "datacenter1",
    keyspace: str | None = None,
    connect_timeout: float = 10.0,
    request_timeout: float = 30.0,
    connection: ConnectionOptions | None = None,
    consistency: str | None = None,
) -> Any:
    """Open a session (blocking). Contact points default to HOPRAG_CASSANDRA, then 127.0.0.1;
    credentials and TLS to `connection`, else `ConnectionOptions.from_env()` (plain text
    without authentication when those variables are unset); the consistency of statements that
    set none to `consistency`, else HOPRAG_CASSANDRA_CONSISTENCY, else the driver's LOCAL_ONE
    (statements that set their own, such as a store's writes at its `write_consistency`, keep
    it). A refused login raises
    `AuthenticationError`, a refused TLS handshake a one-line `StoreUnavailableError` saying
    why. Nodes that use different ports are not supported by the driver: all must share one
    port."""
    from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile, NoHostAvailable
    from cassandra.policies import DCAwareRoundRobinPolicy, TokenAwarePolicy

    if contact_points is None:
        points = contact_points_from_env() or [("127.0.0.1", DEFAULT_PORT)]
    else:
        points = parse_contact_points(contact_points)
    ports = {p for _, p in points}
    if len(ports) != 1:
        raise InvalidInputError(f"all contact points must use one port, got {sorted(ports)}")
    if connection is None:
        connection = ConnectionOptions.from_env()
    elif not isinstance(connection, ConnectionOptions):
        raise invalid("connection", connection, "a ConnectionOptions or None")
    level = default_consistency(consistency)
    profile = ExecutionProfile(
        load_balancing_policy=TokenAwarePolicy(DCAwareRoundRobinPolicy(local_dc=local_dc)),
        request_timeout=request_timeout,
        **({} if level is None else {"consistency_level": level}),
    )
    cluster = Cluster(
        [h for h, _ in points],
        port=ports.pop(),
        protocol_version=5,
        execution_profiles={EXEC_PROFILE_DEFAULT: profile},
        connect_timeout=connect_timeout,
        auth_provider=connection.auth_provider(),
        ssl_context=connection.ssl_context(),
        sockopts=SOCKOPTS,
    )
    try:
        return cluster.connect(keyspace)
    except NoHostAvailable as exc:
        cluster.shutdown()
        where = ", ".join(f"{h}:{p}" for h, p in points)
        refused = refusal(exc, where, connection)
        if refused is not None:
            raise refused from exc
        raise StoreUnavailableError(
            f"no Cassandra node answered at {where} ({connection.scrub(str(exc))}); start one "
            "with `scripts/cassandra up` or set HOPRAG_CASSANDRA"
        ) from exc


def default_consistency(consistency: str | None) -> Any:
    """The driver's `ConsistencyLevel` of `consistency`, else of HOPRAG_CASSANDRA_CONSISTENCY
    (unset or empty: None, the driver's default); a bad name raises InvalidInputError naming
    the argument or the variable."""
    from cassandra import ConsistencyLevel

    if consistency is not None:
        name = check_consistency(consistency, what="consistency")
    else:
        name = check_consistency(os.environ.get(CONSISTENCY_ENV) or None, what=CONSISTENCY_ENV)
    return None if name is None else getattr(ConsistencyLevel, name)


def connect_bundle(
    secure_connect_bundle: str | os.PathLike[str],
    token: str,
    *,
    consistency: str = "LOCAL_QUORUM",
    connect_timeout: float = 10.0,
    request_timeout: float = 30.0,
) -> Any:
    """A session through a secure-connect bundle (a zip of config.json, ca.crt, cert and key),
    the way the driver connects to Astra DB: it asks the bundle's metadata service (HTTPS, the
    bundle's client certificate) where the SNI proxy is and which hosts are behind it, then
    talks TLS to each host through the proxy. The login is `token` and the token, as Astra's
    CQL login is; statements run at `consistency` unless they set their own (the driver would
    pick LOCAL_QUORUM itself only for a node that says it is Astra). Blocking; a failure raises
    `StoreUnavailableError` saying what did not answer."""
    from pathlib import Path

    from cassandra.auth import PlainTextAuthProvider
    from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile

    if not isinstance(token, str) or not token:
        raise invalid("Astra token", token, "a non-empty string (AstraCS:...)")
    bundle = (
        Path(secure_connect_bundle)
        if isinstance(secure_connect_bundle, str | os.PathLike)
        else None
    )
    if bundle is None or not bundle.is_file():
        raise invalid("secure_connect_bundle", secure_connect_bundle, "the path of a bundle zip")
    profile = ExecutionProfile(
        request_timeout=request_timeout, consistency_level=default_consistency(consistency)
    )
    try:
        cluster = Cluster(
            cloud={"secure_connect_bundle": str(bundle), "connect_timeout": connect_timeout},
            auth_provider=PlainTextAuthProvider("token", token),
            execution_profiles={EXEC_PROFILE_DEFAULT: profile},
            connect_timeout=connect_timeout,
            sockopts=SOCKOPTS,
        )
    except ValueError as exc:
        raise invalid(
            "secure_connect_bundle", str(bundle), f"a secure-connect bundle ({exc})"
        ) from None
    except Exception as exc:
        raise StoreUnavailableError(
            f"the secure-connect bundle {bundle.name} led nowhere: {str(exc).replace(token, '***')}"
        ) from exc
    try:
        return cluster.connect()
    except Exception as exc:
        cluster.shutdown()
        raise StoreUnavailableError(
            f"no node answered through the secure-connect bundle {bundle.name}: "
            f"{str(exc).replace(token, '***')}"
        ) from exc


def connect_astra(token: str, database_id: str, keyspace: str) -> Any:
    """The session `cassio.init(token=..., database_id=..., keyspace=...)` makes for an Astra
    DB (cassio downloads the secure-connect bundle). The session is cassio's global default:
    its owner is cassio, not the caller."""
    if not isinstance(token, str) or not token:
        raise invalid("Astra token", token, "a non-empty string (AstraCS:...)")
    if not isinstance(database_id, str) or not database_id:
        raise invalid("Astra database_id", database_id, "a non-empty string")
    check_name(keyspace, what="keyspace")
    import cassio
    import cassio.config

    try:
        cassio.init(token=token, database_id=database_id, keyspace=keyspace)
    except Exception as exc:
        raise translate(exc, "connecting to Astra DB with cassio.init") from exc
    session = cassio.config.resolve_session()
    if session is None:
        raise StoreError("cassio.init did not produce a session")
    return session
