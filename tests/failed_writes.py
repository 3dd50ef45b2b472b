"""A write that fails once, on a real store: the next executor call of a kind whose statement
holds a given text raises `Failed` instead of running; every call after it runs as usual."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class Failed(Exception):
    """Stands for a write that failed (a node lost, a timeout past every retry)."""


def fail_once(store: Any, method: str, matching: str) -> None:
    """Make the store's next `method` call (an executor method) whose query holds `matching`
    raise `Failed`."""
    ex = store.executor
    real: Callable[..., Any] = getattr(ex, method)

    async def failing(query: str, *args: Any, **kwargs: Any) -> Any:
        if matching in query:
            ex.__dict__.pop(method)
            raise Failed(query)
        return await real(query, *args, **kwargs)

    setattr(ex, method, failing)
