"""hoprag's exceptions, one hierarchy: catch `HopragError` for everything hoprag raises itself.

* `InvalidInputError` (also a `ValueError`): the caller's mistake, found before anything was
  sent or written. The message names the argument, the bad value and what is allowed; the same
  attributes are on the error (`argument`, `value`, `allowed`) for programs such as agent
  tools that turn errors into follow-up questions.
* `StoreError`: a store failed to answer (a timeout, a replica failure); the message names the
  operation and the likely cause, and the driver's own exception is the `__cause__`.
* `StoreUnavailableError` (a `StoreError`): the store could not be reached at all (no contact
  point answered, too few live replicas for the consistency asked).
* `AuthenticationError` (a `StoreUnavailableError`): the cluster refused the credentials (a
  wrong username or password, or none given to a cluster that requires them).
* `TraversalTimeoutError` (also a `TimeoutError`): a traversal passed its `timeout`."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_UNSET: Any = object()


class HopragError(Exception):
    """Base of hoprag's own errors."""


class InvalidInputError(HopragError, ValueError):
    """Bad input caught before it reached a store: wrong dimension, NaN or zero vector, k out of
    range, an identifier that is not a plain name, a malformed edge spec, filter or parameter.

    `argument` names the offending argument (e.g. "k", "filter['year']"), `value` is what was
    given and `allowed` says what would be accepted; each is None when not applicable."""

    def __init__(
        self,
        message: str,
        *,
        argument: str | None = None,
        value: Any = _UNSET,
        allowed: str | None = None,
    ) -> None:
        super().__init__(message)
        self.argument = argument
        self.value = None if value is _UNSET else value
        self.allowed = allowed


def invalid(argument: str, value: Any, allowed: str, *, hint: str = "") -> InvalidInputError:
    """The `InvalidInputError` for `argument` given `value` where `allowed` would do:
    "k must be an int in 0..1000, got -1" (plus `hint`, a sentence on what to do instead)."""
    message = f"{argument} must be {allowed}, got {_show(value)}"
    if hint:
        message = f"{message}; {hint}"
    return InvalidInputError(message, argument=argument, value=value, allowed=allowed)


def _show(value: Any) -> str:
    """A short repr of a bad value for an error message (long values are cut)."""
    text = repr(value)
    if len(text) > 120:
        text = text[:117] + "..."
    kind = type(value).__name__
    if isinstance(value, str | int | float | bool | type(None)):
        return text
    return f"{kind} {text}"


class TraversalTimeoutError(HopragError, TimeoutError):
    """A traversal did not finish within its `timeout`; its in-flight queries were cancelled.
    (With `on_timeout="partial"` the traversal returns what it admitted instead.)"""


class StoreError(HopragError):
    """A store failed to answer; the message says which operation and why."""


class StoreUnavailableError(StoreError):
    """The store could not be reached (no contact point answered, or too few replicas)."""


class AuthenticationError(StoreUnavailableError):
    """The cluster refused the connection's credentials; the message names the user, never the
    password."""


def _leaves(group: BaseExceptionGroup[BaseException]) -> Iterator[BaseException]:
    for exc in group.exceptions:
        if isinstance(exc, BaseExceptionGroup):
            yield from _leaves(exc)
        else:
            yield exc


def first_error(group: BaseExceptionGroup[BaseException]) -> BaseException:
    """The error of `group` a caller should see: an interrupt (KeyboardInterrupt,
    SystemExit) first, then the first hoprag error, else the first error."""
    leaves = list(_leaves(group))
    for kinds in ((KeyboardInterrupt, SystemExit), (HopragError,)):
        for exc in leaves:
            if isinstance(exc, kinds):
                return exc
    return leaves[0]


@contextmanager
def one_error() -> Iterator[None]:
    """Around a task group: an exception group it raises becomes its `first_error`, so the
    caller gets the same single error (a `StoreError`, an `InvalidInputError`, ...) whether
    one concurrent call failed or several; the group stays attached as `__context__`."""
    try:
        yield
    except BaseExceptionGroup as group:
        raise first_error(group)  # noqa: B904 (the group is kept as __context__)
