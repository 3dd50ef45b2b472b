"""The bridge between the Cassandra driver's callback world and asyncio.

The driver (LibevConnection) answers on its own IO thread through `ResponseFuture` callbacks.
`submit` hands one statement to the driver and returns a `Request` whose `rows()` awaits its
rows:

* callbacks are attached with `ResponseFuture.add_callbacks`; each one hops to the event loop with
  `loop.call_soon_threadsafe` and sets the asyncio future only if it is not already done, so a
  late answer after a cancellation is dropped quietly;
* the rows are the page the callback hands over: a `ResultSet` is never iterated on the loop
  (iterating one past its first page fetches the next page synchronously); further pages are
  requested with `start_fetching_next_page`, which fires the same callbacks again;
* on cancellation the driver callbacks are cleared and no further page is requested. The CQL
  protocol has no way to abort a request the server is already running, so that one request
  still completes server-side and its answer is discarded.

`PreparedCache` prepares statements in a worker thread (the driver's `prepare()` blocks) and
keeps them per query text, so the event loop never waits on a synchronous round trip.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import anyio.to_thread

from hoprag.telemetry import ClientSpan, start_client


class _Pages:
    """Delivers the pages of one `ResponseFuture` to the event loop, one asyncio future per page;
    ends the request's trace span (`hoprag.telemetry`) when the last page or an error arrives."""

    __slots__ = ("answered_at", "current", "loop", "rf", "span")

    def __init__(
        self, loop: asyncio.AbstractEventLoop, rf: Any = None, span: ClientSpan | None = None
    ) -> None:
        self.loop = loop
        self.rf = rf
        self.span = span
        self.current: asyncio.Future[Any] = loop.create_future()
        self.answered_at: float | None = None

    # The two callbacks run on the driver's IO thread (or inline in the caller's thread when the
    # answer is already there). They must not block; they only schedule work on the loop. The
    # arrival time is taken before the hop to the loop, so whoever awaits the page sees it.
    def on_rows(self, rows: Any) -> None:
        self.answered_at = time.perf_counter()
        if self.span is not None and not self.rf.has_more_pages:
            self.span.end()
        self.loop.call_soon_threadsafe(self._deliver, rows, None)

    def on_error(self, exc: BaseException) -> None:
        self.answered_at = time.perf_counter()
        if self.span is not None:
            self.span.end(exc)
        self.loop.call_soon_threadsafe(self._deliver, None, exc)

    def _deliver(self, rows: Any, exc: BaseException | None) -> None:
        fut = self.current
        if fut.done():  # cancelled meanwhile: drop the late answer
            return
        if exc is not None:
            fut.set_exception(exc)
        else:
            fut.set_result(rows)


class Request:
    """One statement handed to the driver; `rows()` awaits its pages. Made by `submit`."""

    __slots__ = ("_loop", "_max_rows", "_pages", "_rf")  # the span is the pages' (`_Pages`)

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        rf: Any,
        max_rows: int | None,
        span: ClientSpan | None = None,
    ) -> None:
        self._loop = loop
        self._rf = rf
        self._max_rows = max_rows
        self._pages = _Pages(loop, rf, span)
        rf.add_callbacks(self._pages.on_rows, self._pages.on_error)

    def _done(self) -> None:
        """The caller took what it wanted (a first page, `max_rows`): end the trace span."""
        if self._pages.span is not None:
            self._pages.span.end()

    @property
    def answered_at(self) -> float | None:
        """The `time.perf_counter()` at which the latest page (or error) arrived, taken on the
        driver's IO thread before the answer is handed to the loop (so a busy event loop does
        not count, and it is set once `rows()` has returned). None before any answer."""
        return self._pages.answered_at

    async def page(self) -> tuple[list[Any], Any]:
        """The first page only, and the driver's paging state after it (None: it was the
        last); no further page is requested (hand the state to the next `submit`). Cancelling
        the wait abandons the request."""
        try:
            rows = await self._pages.current
        except asyncio.CancelledError:
            self.cancel()
            raise
        rf = self._rf
        self._done()
        return list(rows or ()), (rf._paging_state if rf.has_more_pages else None)

    async def rows(self) -> list[Any]:
        """All the rows (every page, or the first `max_rows`). Cancelling the wait abandons
        the request (see `cancel`)."""
        rf, pages, max_rows = self._rf, self._pages, self._max_rows
        rows: list[Any] = []
        try:
            while True:
                page = await pages.current
                if page:
                    rows.extend(page)
                if max_rows is not None and len(rows) >= max_rows:
                    self._done()
                    return rows[:max_rows]
                if not rf.has_more_pages:
                    return rows
                pages.current = self._loop.create_future()
                rf.start_fetching_next_page()
        except asyncio.CancelledError:
            self.cancel()
            raise

    def cancel(self) -> None:
        """Abandon the request: its answer (or error) is dropped and no further page is
        requested. The server still runs a request it has received."""
        self._rf.clear_callbacks()
        self._done()
        fut = self._pages.current
        if fut.done():
            if not fut.cancelled():
                fut.exception()  # mark an unread error as seen: nobody will await it
        else:
            fut.cancel()


class Failed:
    """A request the driver refused at once (`execute_async` raised): `rows()` raises that
    error, so a burst handles it like any other failed answer."""

    __slots__ = ("error",)

    def __init__(self, error: Exception) -> None:
        self.error = error

    async def rows(self) -> list[Any]:
        raise self.error

    def cancel(self) -> None:
        """Nothing was sent."""


def submit(
    session: Any,
    statement: Any,
    parameters: Sequence[Any] | None = None,
    *,
    execution_profile: Any = None,
    request_timeout: float | None = None,
    max_rows: int | None = None,
    paging_state: Any = None,
) -> Request:
    """Send `statement` with `parameters` now, without waiting: the caller awaits
    `Request.rows()` later (or calls `cancel()`). Several requests sent this way are in flight
    together without a task each. `request_timeout` is the driver's per-request timeout
    (default: the execution profile's); `paging_state` resumes a paged read where an earlier
    `Request.page()` stopped. Must be called on the event loop's thread."""
    loop = asyncio.get_running_loop()
    kwargs: dict[str, Any] = {}
    if execution_profile is not None:
        kwargs["execution_profile"] = execution_profile
    if request_timeout is not None:
        kwargs["timeout"] = request_timeout
    if paging_state is not None:
        kwargs["paging_state"] = paging_state
    span = start_client(statement, getattr(session, "keyspace", None))
    try:
        rf = session.execute_async(statement, parameters, **kwargs)
    except Exception as exc:
        if span is not None:
            span.end(exc)
        raise
    return Request(loop, rf, max_rows, span)


class PreparedCache:
    """Prepared statements by query text, prepared once in a worker thread.

    Safe to share between event loops and threads: a lock serialises the (rare) first
    preparation of a given text, later lookups are a plain dict read on the loop."""

    def __init__(self, session: Any, configure: Callable[[Any], None] | None = None) -> None:
        self._session = session
        self._configure = configure
        self._cache: dict[str, Any] = {}
        self._lock = threading.Lock()

    def get_sync(self, query: str) -> Any:
        """The prepared statement for `query` (blocking; for worker threads and sync code)."""
        stmt = self._cache.get(query)
        if stmt is not None:
            return stmt
        with self._lock:
            stmt = self._cache.get(query)
            if stmt is None:
                stmt = self._session.prepare(query)
                if self._configure is not None:
                    self._configure(stmt)
                self._cache[query] = stmt
        return stmt

    async def get(self, query: str) -> Any:
        """The prepared statement for `query`, preparing it in a worker thread the first time."""
        stmt = self._cache.get(query)
        if stmt is not None:
            return stmt
        return await anyio.to_thread.run_sync(self.get_sync, query)

    def __len__(self) -> int:
        return len(self._cache)
