"""One bound on concurrent queries, shared by every event loop and thread that uses a store.

`asyncio.Semaphore` belongs to one event loop, but a store is shared: async code on one loop,
and sync `traverse`/`add` calls that each run their own loop in a worker thread. `SharedLimiter`
keeps one count under a `threading.Lock`. A waiter parks on a future of its own loop; a
release hands the slot straight to the waiter with the smallest priority (ties: the oldest)
through `loop.call_soon_threadsafe`. A waiter cancelled after its slot was handed over gives
the slot back, so cancellation never leaks capacity.

Priorities are what keeps many concurrent traversals finishing: the executor gives every query
of a run the time that run sent its first query, so when the bound is full the runs that
started first are served first. Served first come, first served, each of hundreds of
traversals would wait behind all the others at every hop, and all of them would slow down
together until every one missed its deadline.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import threading
import time
from types import TracebackType


class _Waiter:
    __slots__ = ("fut", "loop", "waiting")

    def __init__(self, loop: asyncio.AbstractEventLoop, fut: asyncio.Future[None]) -> None:
        self.loop = loop
        self.fut = fut
        self.waiting = True
        """False once it was handed a slot or gave up."""


class SharedLimiter:
    """At most `limit` holders at once across all event loops and threads. Use
    `async with limiter:` around each query (priority: the time of the call), or
    `await acquire(priority)` / `release()`."""

    __slots__ = ("_count", "_limit", "_lock", "_order", "_used", "_waiters")

    def __init__(self, limit: int) -> None:
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValueError(f"limit must be a positive int, got {limit!r}")
        self._limit = limit
        self._used = 0
        self._lock = threading.Lock()
        self._waiters: list[tuple[float, int, _Waiter]] = []
        self._order = itertools.count()
        self._count = 0

    @property
    def limit(self) -> int:
        """The bound."""
        return self._limit

    @property
    def in_use(self) -> int:
        """Slots held right now (including slots handed to a waiter not yet resumed)."""
        return self._used

    @property
    def waiting(self) -> int:
        """Callers waiting for a slot."""
        return self._count

    def try_acquire(self) -> bool:
        """Take a slot if one is free and nobody is waiting; never waits."""
        with self._lock:
            if self._used < self._limit and not self._count:
                self._used += 1
                return True
        return False

    async def acquire(self, priority: float | None = None) -> None:
        """Wait for a slot; when slots are scarce, smaller `priority` values are served first
        (default: the time of the call, so first come, first served)."""
        loop = asyncio.get_running_loop()
        with self._lock:
            if self._used < self._limit and not self._count:
                self._used += 1
                return
            waiter = _Waiter(loop, loop.create_future())
            key = time.monotonic() if priority is None else priority
            heapq.heappush(self._waiters, (key, next(self._order), waiter))
            self._count += 1
        try:
            await waiter.fut
        except asyncio.CancelledError:
            with self._lock:
                handed_over = not waiter.waiting
                if not handed_over:  # still queued: drop it (its heap entry is skipped later)
                    waiter.waiting = False
                    self._count -= 1
            if handed_over:
                self.release()
            raise

    def release(self) -> None:
        """Give a slot back: to the waiter with the smallest priority if there is one, else
        to the pool."""
        with self._lock:
            while self._waiters:
                _, _, waiter = heapq.heappop(self._waiters)
                if not waiter.waiting:  # gave up while queued
                    continue
                waiter.waiting = False
                self._count -= 1
                if waiter.loop.is_closed():  # its loop is gone: nobody will ever resume it
                    continue
                try:
                    waiter.loop.call_soon_threadsafe(_grant, waiter.fut)
                except RuntimeError:  # closed between the check and the call
                    continue
                return  # the slot passes to that waiter; the count stays
            self._used -= 1

    async def __aenter__(self) -> None:
        await self.acquire()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()


def _grant(fut: asyncio.Future[None]) -> None:
    # On the waiter's loop. If the waiter was cancelled meanwhile, its except branch finds
    # itself gone from the queue and releases the slot it was handed; nothing to do here.
    if not fut.done():
        fut.set_result(None)
