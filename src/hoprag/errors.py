"""hoprag's exceptions: every error a user can cause names the problem in its message."""

from __future__ import annotations


class HopragError(Exception):
    """Base of hoprag's own errors."""


class InvalidInputError(HopragError, ValueError):
    """Bad input caught before it reached a store: wrong dimension, NaN or zero vector, k out of
    range, an identifier that is not a plain name, a malformed edge spec or filter."""


class StoreError(HopragError):
    """A store failed to answer; the message says which operation and why."""


class StoreUnavailableError(StoreError):
    """The store could not be reached (no contact point answered, or too few replicas)."""
