"""The one way hoprag's sync API calls its async implementation.

`run_sync(fn, *args)` runs `await fn(*args)` to completion and returns its result (or raises
its exception). Outside an event loop it runs one with anyio; inside a running loop of any
async library (asyncio, trio: a notebook, an async app calling a sync API) it runs a fresh loop
in a worker thread and blocks the caller until done, since a loop cannot wait on itself.

The result is handed back through a box rather than as the main task's return value: on Python
3.11, asyncio's runner builds the text form of its main task (result included) when it
restores the SIGINT handler, which for a large result (a long traversal's nodes and paths)
costs seconds."""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio
import sniffio

T = TypeVar("T")


def in_running_loop() -> bool:
    """Whether the calling thread is running an event loop (asyncio, trio, ...)."""
    try:
        asyncio.get_running_loop()  # also outside a task, e.g. in a loop's callback
        return True
    except RuntimeError:
        pass
    try:
        sniffio.current_async_library()
    except sniffio.AsyncLibraryNotFoundError:
        return False
    return True


def _run_boxed(fn: Callable[..., Awaitable[T]], *args: Any) -> T:
    box: list[T] = []

    async def main() -> None:
        box.append(await fn(*args))

    anyio.run(main)
    return box[0]


def run_sync(fn: Callable[..., Awaitable[T]], *args: Any) -> T:
    """`await fn(*args)` from sync code (see the module docstring)."""
    if not in_running_loop():
        return _run_boxed(fn, *args)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="hoprag") as pool:
        return pool.submit(_run_boxed, fn, *args).result()
