"""The one way hoprag's sync API calls its async implementation.

`run_sync(fn, *args)` runs `await fn(*args)` to completion and returns its result (or raises
its exception). Outside an event loop it runs one with anyio; inside a running loop (a notebook,
an async app calling a sync API) it runs a fresh loop in a worker thread and blocks the caller
until done, since a loop cannot wait on itself."""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio

T = TypeVar("T")


def in_running_loop() -> bool:
    """Whether the calling thread is running an asyncio event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def run_sync(fn: Callable[..., Awaitable[T]], *args: Any) -> T:
    """`await fn(*args)` from sync code (see the module docstring)."""
    if not in_running_loop():
        return anyio.run(fn, *args)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="hoprag") as pool:
        return pool.submit(anyio.run, fn, *args).result()
