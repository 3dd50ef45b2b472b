"""Translation of Cassandra driver/server errors into hoprag's errors.

`translate(exc, operation)` is the single place that maps, through one table of exception
classes and translations (`_table`), a raw driver exception to a
`HopragError` whose message names the operation and the likely cause. The store raises the
result `from` the original exception, so the driver's details stay in `__cause__`.

Mapping (Cassandra 5.0.8 behaviour verified on a live node):

* `InvalidRequest` about "ANN OF ... requires a LIMIT that is not greater than 1000"
  -> `InvalidInputError` (k above 1000);
* `InvalidRequest` "Invalid vector literal ... expected N elements" -> `InvalidInputError`
  (wrong embedding dimension);
* any other `InvalidRequest` / `SyntaxException` / `ConfigurationException` -> `InvalidInputError`;
* `ReadFailure` / `WriteFailure` -> `StoreError`. Cassandra 5.0 reports an ANN query OF a zero
  (or NaN) vector, and the insert of one into a cosine-indexed column, as a replica failure with
  error code UNKNOWN, not as an InvalidRequest; the message says so. (hoprag's own guards reject
  such vectors before they are sent, so this is only hit by data written by others.)
* `NoHostAvailable`, `Unavailable`, `ConnectionException`, connection shutdowns
  -> `StoreUnavailableError` (a `NoHostAvailable` in which a node answered `Unavailable` says
  what `Unavailable` says);
* `ReadTimeout`, `WriteTimeout` (server side), `OperationTimedOut` (client side) -> `StoreError`
  mentioning the timeout;
* `OverloadedErrorMessage`, `IsBootstrappingErrorMessage` -> `StoreUnavailableError`;
* a `HopragError` is returned unchanged; anything else -> `StoreError`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from hoprag.errors import HopragError, InvalidInputError, StoreError, StoreUnavailableError


def _server_message(exc: BaseException) -> str:
    text = str(exc)
    marker = 'message="'
    at = text.find(marker)
    if at >= 0:
        end = text.find('"', at + len(marker))
        if end > at:
            return text[at + len(marker) : end]
    return text


Translation = Callable[[BaseException, str, str], HopragError]
"""Makes the hoprag error from the driver exception, the operation and the server's message."""


def _rejected(exc: BaseException, operation: str, msg: str) -> HopragError:
    low = msg.lower()
    if "requires a limit that is not greater than" in low:
        return InvalidInputError(
            f"{operation}: k is too large; Cassandra answers at most 1000 rows per vector "
            f"search (server said: {msg})"
        )
    if "invalid vector literal" in low or "expected sequence of size" in low:
        return InvalidInputError(
            f"{operation}: the embedding has the wrong dimension for this table "
            f"(server said: {msg})"
        )
    return InvalidInputError(f"{operation}: Cassandra rejected the request: {msg}")


def _replica_failure(exc: BaseException, operation: str, msg: str) -> HopragError:
    from cassandra import WriteFailure

    kind = "write" if isinstance(exc, WriteFailure) else "read"
    return StoreError(
        f"{operation}: the {kind} failed on the replica(s) ({msg}). With a cosine vector "
        "index Cassandra 5.0 fails this way on a zero or NaN vector (hoprag rejects those "
        "before sending them; data written by other tools may contain them); otherwise "
        "see the node's log"
    )


def _unavailable(exc: BaseException, operation: str, msg: str) -> HopragError:
    return StoreUnavailableError(
        f"{operation}: not enough live replicas for the requested consistency ({msg})"
    )


def _no_host(exc: BaseException, operation: str, msg: str) -> HopragError:
    # The driver also raises it when the nodes it tried answered Unavailable (its retry
    # policy moved on to the next node), the stopped node of the plan refusing the
    # connection: some node was reached, the replicas were not.
    from cassandra import Unavailable

    inner = list((getattr(exc, "errors", None) or {}).values())
    answered = [e for e in inner if isinstance(e, Unavailable)]
    if answered:
        return translate(answered[0], operation)
    return StoreUnavailableError(f"{operation}: no Cassandra node could be reached ({exc})")


def _connection(exc: BaseException, operation: str, msg: str) -> HopragError:
    return StoreUnavailableError(f"{operation}: the connection to Cassandra failed ({exc})")


def _busy(exc: BaseException, operation: str, msg: str) -> HopragError:
    return StoreUnavailableError(f"{operation}: the node cannot serve requests now ({msg})")


def _server_timeout(exc: BaseException, operation: str, msg: str) -> HopragError:
    return StoreError(
        f"{operation}: the replicas did not answer in time ({type(exc).__name__}: {msg})"
    )


def _client_timeout(exc: BaseException, operation: str, msg: str) -> HopragError:
    return StoreError(
        f"{operation}: the request timed out on the client side ({exc}); raise "
        "request_timeout or lower max_in_flight"
    )


@functools.cache
def _table() -> tuple[tuple[tuple[type[BaseException], ...], Translation], ...]:
    """Driver exception classes and their translation, the first match wins (subclasses
    before their bases); built on first use, so that importing this module needs no driver."""
    from cassandra import (
        CoordinationFailure,
        InvalidRequest,
        OperationTimedOut,
        Timeout,
        Unavailable,
    )
    from cassandra.cluster import NoHostAvailable
    from cassandra.connection import ConnectionException, ConnectionShutdown
    from cassandra.protocol import (
        ConfigurationException,
        IsBootstrappingErrorMessage,
        OverloadedErrorMessage,
        SyntaxException,
    )

    return (
        ((InvalidRequest, SyntaxException, ConfigurationException), _rejected),
        ((CoordinationFailure,), _replica_failure),  # ReadFailure, WriteFailure
        ((Unavailable,), _unavailable),
        ((NoHostAvailable,), _no_host),
        ((ConnectionShutdown, ConnectionException), _connection),
        ((OverloadedErrorMessage, IsBootstrappingErrorMessage), _busy),
        ((Timeout,), _server_timeout),  # ReadTimeout, WriteTimeout
        ((OperationTimedOut,), _client_timeout),
    )


def translate(exc: BaseException, operation: str) -> HopragError:
    """Return the hoprag error for driver exception `exc` raised while doing `operation`
    (a short phrase such as "adjacent query on ks.docs"): the first entry of the table whose
    classes `exc` is an instance of. Never raises; raise the result `from exc`."""
    if isinstance(exc, HopragError):
        return exc
    for classes, make in _table():
        if isinstance(exc, classes):
            return make(exc, operation, _server_message(exc))
    return StoreError(f"{operation} failed: {type(exc).__name__}: {exc}")
