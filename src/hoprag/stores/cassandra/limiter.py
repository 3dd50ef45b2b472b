"""One bound on concurrent queries, shared by every event loop and thread that uses a store.

`asyncio.Semaphore` belongs to one event loop, but a store is shared: async code on one loop,
and sync `traverse`/`add` calls that each run their own loop in a worker thread. `SharedLimiter`
keeps one count under a `threading.Lock`. A waiter parks on a future of its own loop; a
release hands the slot straight to the oldest waiter (first come, first served, across loops)
through `loop.call_soon_threadsafe`. A waiter cancelled after its slot was handed over gives
the slot back, so cancellation never leaks capacity.
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from types import TracebackType


class SharedLimiter:
    """At most `limit` holders at once across all event loops and threads. Use
    `async with limiter:` around each query."""

    __slots__ = ("_limit", "_lock", "_used", "_waiters")

    def __init__(self, limit: int) -> None:
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValueError(f"limit must be a positive int, got {limit!r}")
        self._limit = limit
        self._used = 0
        self._lock = threading.Lock()
        self._waiters: deque[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = deque()

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
        return len(self._waiters)

    def try_acquire(self) -> bool:
        """Take a slot if one is free and nobody is waiting; never waits."""
        with self._lock:
            if self._used < self._limit and not self._waiters:
                self._used += 1
                return True
        return False

    async def acquire(self) -> None:
        """Wait for a slot (FIFO across loops)."""
        loop = asyncio.get_running_loop()
        with self._lock:
            if self._used < self._limit and not self._waiters:
                self._used += 1
                return
            fut: asyncio.Future[None] = loop.create_future()
            entry = (loop, fut)
            self._waiters.append(entry)
        try:
            await fut
        except asyncio.CancelledError:
            with self._lock:
                try:
                    self._waiters.remove(entry)
                    handed_over = False
                except ValueError:  # release() already gave us the slot
                    handed_over = True
            if handed_over:
                self.release()
            raise

    def release(self) -> None:
        """Give a slot back: to the oldest waiter if there is one, else to the pool."""
        with self._lock:
            while self._waiters:
                loop, fut = self._waiters.popleft()
                if loop.is_closed():  # its loop is gone: nobody will ever resume it
                    continue
                try:
                    loop.call_soon_threadsafe(_grant, fut)
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
