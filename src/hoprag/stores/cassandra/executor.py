"""The execution room: how a CassandraStore's statements reach the driver and come back.

* One `SharedLimiter(max_in_flight)` per store bounds the queries it has in flight, shared by
  every traversal, event loop and thread that uses the store (`limiter.py`).
* Statements are prepared once per query text in a worker thread and cached
  (`bridge.PreparedCache`), and configured as they are prepared: ANN reads at LOCAL_ONE (what
  Cassandra runs them at anyway), writes at the configured `write_consistency`, and with
  `fast_vectors` the vector columns of SELECTs decoded as raw bytes (`vectors.py`).
* `burst` hands a list of reads to the driver at once, without a task per query. Each query
  holds one slot of the run's limiter and one of the store's shared bound while in flight;
  when either is full, the burst first collects its own oldest answers. When the shared bound
  is full, waiting queries are served in the order their runs started (the time of a run's
  first burst), so concurrent traversals finish one after another instead of all slowing
  down together. A read that fails
  transiently (a timeout, too few replicas, a broken connection) is sent again, keeping its
  slots, up to `READ_RETRIES` more times with a doubling delay: reads are idempotent, and a
  traversal survives a node dying mid-stream. Any other failure cancels the rest of the burst.
* `write_all` runs prepared INSERTs, up to a window in flight, each retried after a write
  timeout (an upsert is idempotent).
* Driver errors become hoprag errors through `errors.translate`, naming the operation.
* Every statement is reported to `hoprag.recording` (the opt-in, per-context log of
  `record_statements()`), once per statement: a retry is not reported again."""

from __future__ import annotations

import asyncio
import functools
import math
import time
import weakref
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import anyio

from hoprag.errors import HopragError, StoreError, one_error
from hoprag.recording import Call, record
from hoprag.stores.cassandra import bridge, vectors
from hoprag.stores.cassandra.config import CassandraConfig
from hoprag.stores.cassandra.errors import translate
from hoprag.stores.cassandra.limiter import SharedLimiter

INSERT_RETRIES = 6
"""Retries of one INSERT that timed out (server `WriteTimeout` or client timeout)."""
INSERT_RETRY_DELAY = 0.25
"""Seconds before the first retry of an INSERT; doubled for each further one."""
READ_RETRIES = 5
"""Retries of a read that failed transiently, in a run without a deadline."""
READ_RETRY_DELAY = 0.25
"""Seconds before the first read retry; doubled for each further one up to
`READ_RETRY_MAX_DELAY` (7.75 s in all over `READ_RETRIES`)."""
READ_RETRY_MAX_DELAY = 4.0
"""The longest wait between two tries of one read."""


TRANSIENT_FAILURE_REASONS = frozenset({2, 3, 5, 6})
"""Cassandra's `RequestFailureReason` codes that a replica reports for a read another try can
fix: TIMEOUT (2), INCOMPATIBLE_SCHEMA (3, a schema change not yet seen by every node),
NODE_DOWN (5) and INDEX_NOT_AVAILABLE (6: a restarted node whose SAI indexes are not
queryable yet, while the coordinator still counts it as a replica that can answer)."""


UNKNOWN_FAILURE_REASON = 0
"""Cassandra's `RequestFailureReason.UNKNOWN`: an exception on the replica with no better code."""
UNKNOWN_RETRIES = 2
"""Retries of a read that is not an ANN query after a replica failed it with UNKNOWN."""


def is_transient_read_error(exc: BaseException | None) -> bool:
    """Whether a read failed in a way another try can fix: a replica or the client timed out,
    too few replicas were alive, a connection broke, or every replica that failed it said why
    with a reason in `TRANSIENT_FAILURE_REASONS`. A replica that stopped answering is routed
    around once the coordinator's failure detector convicts it, which takes seconds. A failure
    without such a reason (UNKNOWN: Cassandra's answer to a zero vector, for one) is final."""
    from cassandra import OperationTimedOut, ReadFailure, ReadTimeout, Unavailable
    from cassandra.cluster import NoHostAvailable
    from cassandra.connection import ConnectionException

    if isinstance(exc, ReadFailure):
        reasons = _failure_reasons(exc)
        return bool(reasons) and reasons <= TRANSIENT_FAILURE_REASONS
    return isinstance(
        exc, ReadTimeout | Unavailable | OperationTimedOut | ConnectionException | NoHostAvailable
    )


def is_unknown_replica_failure(exc: BaseException | None) -> bool:
    """Whether a replica failed a read with UNKNOWN (and no replica with a final reason).
    A starved replica fails a read by id this way under saturation, with nothing in its log
    at ERROR; for an ANN query it is also how Cassandra 5.0 rejects a zero vector."""
    from cassandra import ReadFailure

    if not isinstance(exc, ReadFailure):
        return False
    reasons = _failure_reasons(exc)
    allowed = TRANSIENT_FAILURE_REASONS | {UNKNOWN_FAILURE_REASON}
    return UNKNOWN_FAILURE_REASON in reasons and reasons <= allowed


def _failure_reasons(exc: Any) -> set[int]:
    """The reason codes the replicas that failed a read gave."""
    return set((exc.error_code_map or {}).values())


class ReadRetries:
    """When a failed read is sent again: after a transient failure (`is_transient_read_error`),
    with a doubling delay, `READ_RETRIES` times, or, inside a cancel scope with a deadline (a
    traversal's `timeout`), for as long as the next try starts before it. A run that set a
    deadline said how long it will wait: on an overloaded cluster, where reads time out
    several times in a row, it ends at that deadline (`TraversalTimeoutError`) instead of
    failing with the store's error after a fixed number of tries. A read that is not an ANN
    query (`ann=False`: by id, by holder, a page) is also sent again after an UNKNOWN replica
    failure, `UNKNOWN_RETRIES` times: no input of such a read makes a replica fail it that
    way, while an ANN query's UNKNOWN (a zero vector) is final."""

    def __init__(self, *, ann: bool = True) -> None:
        self.ann = ann
        self.tries = 0
        self.unknown_tries = 0
        self.delay = READ_RETRY_DELAY

    def wait_before_next(self, exc: BaseException) -> float | None:
        """Seconds to wait before sending the read again after `exc`, or None: raise it."""
        if not is_transient_read_error(exc) and not self._retry_unknown(exc):
            return None
        self.tries += 1
        delay = self.delay
        if self.tries > READ_RETRIES and not _starts_before_deadline(delay):
            return None
        self.delay = min(self.delay * 2, READ_RETRY_MAX_DELAY)
        return delay

    def _retry_unknown(self, exc: BaseException) -> bool:
        """Whether `exc` is an UNKNOWN replica failure of a read that is not an ANN query and
        has retries of that kind left (counting this one)."""
        if self.ann or not is_unknown_replica_failure(exc):
            return False
        self.unknown_tries += 1
        return self.unknown_tries <= UNKNOWN_RETRIES


def _starts_before_deadline(delay: float) -> bool:
    """Whether a try `delay` seconds from now starts before the current cancel scope's
    deadline (False when it has none)."""
    deadline = anyio.current_effective_deadline()
    return math.isfinite(deadline) and anyio.current_time() + delay < deadline


def is_ann_query(text: str) -> bool:
    """Whether a CQL query orders its rows by vector similarity (`ORDER BY ... ANN OF ?`)."""
    return " ANN OF " in " ".join(text.upper().split())


def is_timeout(exc: BaseException | None) -> bool:
    """Whether a driver exception is a write timeout (server side or client side)."""
    from cassandra import OperationTimedOut, WriteTimeout

    return isinstance(exc, WriteTimeout | OperationTimedOut)


PING = "SELECT key FROM system.local"
"""The read `Executor.around_trip` times."""
PINGS = 16
ROUND_TRIP_MAX_AGE = 600.0
PING_INTERVAL = 1.0


class Executor:
    """Runs one store's statements (see the module docstring). `open` and `start` attach it to
    a session at set-up; until then only `limiter` is usable."""

    def __init__(self, config: CassandraConfig, fq: str) -> None:
        self.limiter = SharedLimiter(config.max_in_flight)
        self._run_start: weakref.WeakKeyDictionary[anyio.CapacityLimiter, float] = (
            weakref.WeakKeyDictionary()
        )
        """When each run (known by its limiter) sent its first burst: its queries' priority."""
        self.fq = fq
        self.session: Any = None
        self.profile: Any = None
        self.prepared: bridge.PreparedCache | None = None
        self._timeout = config.request_timeout
        self._consistency = config.write_consistency
        self._fast = config.fast_vectors
        self._pings: deque[tuple[float, float]] = deque(maxlen=PINGS)
        """(seconds, when) of the last pings (`around_trip`)."""
        self._pinged_at = -math.inf

    # -- set-up (blocking) -------------------------------------------------------------------

    def open(self, session: Any, contact_points: str | Sequence[str] | None) -> Any:
        """The session to use: `session`, or a new one to `contact_points`; with
        `fast_vectors`, the numpy codec is installed and the session reads raw vectors."""
        if self._fast:
            vectors.install()
        if session is None:
            from hoprag.stores.cassandra.session import connect

            session = connect(contact_points)
        if self._fast:
            vectors.enable_raw_results(session)
        return session

    def start(self, session: Any) -> None:
        """Run statements on `session` from now on."""
        self.session = session
        self.profile = _tuple_profile(session)
        self.prepared = bridge.PreparedCache(session, self._configure)

    def _configure(self, stmt: Any) -> None:
        """Set a freshly prepared statement's consistency and raw vector columns."""
        from cassandra import ConsistencyLevel

        text = stmt.query_string.lstrip().upper()
        if self._fast and text.startswith("SELECT"):
            vectors.raw_result_vectors(stmt)
        if is_ann_query(text):
            # Cassandra runs ANN queries at ONE / LOCAL_ONE anyway and warns otherwise.
            stmt.consistency_level = ConsistencyLevel.LOCAL_ONE
        elif self._consistency and text.startswith(("INSERT", "UPDATE", "DELETE")):
            stmt.consistency_level = getattr(ConsistencyLevel, self._consistency)

    # -- running -----------------------------------------------------------------------------

    @property
    def in_flight(self) -> int:
        """Queries of this store in flight now (all event loops and threads)."""
        return self.limiter.in_use

    def send(self, stmt: Any, params: Sequence[Any] | None) -> bridge.Request | bridge.Failed:
        """Hand `stmt` to the driver now; a refusal at once becomes a `Failed` request, so it
        is collected (and retried) like any failed answer."""
        try:
            return bridge.submit(
                self.session,
                stmt,
                params,
                execution_profile=self.profile,
                request_timeout=self._timeout,
            )
        except Exception as exc:
            return bridge.Failed(exc)

    def tuples(self, rows: list[Any]) -> list[Any]:
        """Rows as tuples (a session without hoprag's execution profile may give dicts or
        named tuples)."""
        if self.profile is None and rows and not isinstance(rows[0], tuple):
            return [tuple(r.values()) if isinstance(r, dict) else tuple(r) for r in rows]
        return rows

    async def statements(self, calls: Sequence[Call]) -> list[Any]:
        """The prepared statement of each call (each distinct text looked up once)."""
        assert self.prepared is not None
        by_text: dict[str, Any] = {}
        out = []
        for text, _ in calls:
            stmt = by_text.get(text)
            if stmt is None:
                stmt = by_text[text] = await self.prepared.get(text)
            out.append(stmt)
        return out

    async def burst(
        self, calls: Sequence[Call], operation: str, limiter: anyio.CapacityLimiter
    ) -> list[list[Any]]:
        """The rows of every read in `calls`, in order, all in flight at once within the run's
        `limiter` and the shared bound (see the module docstring)."""
        if not calls:
            return []
        record(calls)
        stmts = await self.statements(calls)
        priority = self._run_start.setdefault(limiter, time.monotonic())
        burst = _Burst(self, calls, stmts, f"{operation} on {self.fq}", limiter, priority)
        return await burst.run()

    async def around_trip(self) -> float | None:
        """The link's round trip in seconds: the fastest of the last `PINGS` reads of
        `system.local` (a key read the node answers from memory) sent in the last
        `ROUND_TRIP_MAX_AGE` seconds. A call sends one more unless one was sent in the last
        `PING_INTERVAL` seconds. Each is timed on the driver's IO thread; the fastest of
        several leaves out a busy machine's delays, which a remote link's round trip never
        goes below. None when no ping succeeded. Not recorded as a statement of the run."""
        assert self.prepared is not None
        if self._pings and time.monotonic() - self._pinged_at < PING_INTERVAL:
            return self._fastest()
        self._pinged_at = time.monotonic()
        try:
            stmt = await self.prepared.get(PING)
            t0 = time.perf_counter()
            async with self.limiter:
                request = self.send(stmt, ())
                await request.rows()
            answered = request.answered_at if isinstance(request, bridge.Request) else None
            if answered is not None:
                self._pings.append((answered - t0, time.monotonic()))
        except asyncio.CancelledError:
            raise
        except Exception:
            pass  # unknown this time: the earlier pings decide
        return self._fastest()

    def _fastest(self) -> float | None:
        now = time.monotonic()
        recent = [took for took, at in self._pings if now - at < ROUND_TRIP_MAX_AGE]
        return min(recent) if recent else None

    async def execute(self, query: str, params: Sequence[Any], operation: str) -> list[Any]:
        """One statement, holding a slot of the shared bound while in flight."""
        assert self.prepared is not None
        record([(query, params)])
        stmt = await self.prepared.get(query)
        async with self.limiter:
            try:
                rows = await self.send(stmt, params).rows()
            except (asyncio.CancelledError, HopragError):
                raise
            except Exception as exc:
                raise translate(exc, f"{operation} on {self.fq}") from exc
        return self.tuples(rows)

    async def _send_batch(self, batch: Any) -> None:
        """One batch, holding a slot of the shared bound while in flight."""
        async with self.limiter:
            try:
                await self.send(batch, None).rows()
            except (asyncio.CancelledError, HopragError):
                raise
            except Exception as exc:
                raise translate(exc, f"batched write on {self.fq}") from exc

    async def write_groups(
        self,
        query: str,
        groups: Sequence[Sequence[Sequence[Any]]],
        *,
        window: int,
        counters: bool = False,
    ) -> None:
        """Each group of rows of `query` as one unlogged batch (the rows of one partition: one
        mutation on the node, one request from here), up to `window` in flight, each retried
        after a write timeout as `insert` is. With `counters`, each group is a counter batch
        of counter updates, never retried: a counter update that timed out may have been
        applied, and applying it again would count twice."""
        from cassandra.query import BatchStatement, BatchType

        if not groups:
            return
        assert self.prepared is not None
        record([(query, params) for rows in groups for params in rows])
        stmt = await self.prepared.get(query)
        it = iter(groups)
        kind = BatchType.COUNTER if counters else BatchType.UNLOGGED

        async def worker() -> None:
            for rows in it:
                batch = BatchStatement(kind, consistency_level=stmt.consistency_level)
                for params in rows:
                    batch.add(stmt, params)
                send = functools.partial(self._send_batch, batch)
                await (send() if counters else self._retried(send))

        with one_error():
            async with anyio.create_task_group() as tg:
                for _ in range(min(window, len(groups))):
                    tg.start_soon(worker)

    async def _retried(self, write: Callable[[], Awaitable[Any]]) -> None:
        """`write()`, again after a write timeout (see `insert`)."""
        delay = INSERT_RETRY_DELAY
        for attempt in range(INSERT_RETRIES + 1):
            try:
                await write()
                return
            except StoreError as exc:
                if attempt == INSERT_RETRIES or not is_timeout(exc.__cause__):
                    raise
            await asyncio.sleep(delay)
            delay *= 2

    async def insert(self, query: str, params: Sequence[Any]) -> None:
        """One INSERT, retried after a write timeout. A node whose SAI vector index is the
        bottleneck queues writes; with many in flight some wait past the server's write timeout
        although the node is healthy: backing off lets a load finish at the rate the node
        sustains."""
        await self._retried(functools.partial(self.execute, query, params, "insert"))

    async def write_all(
        self,
        query: str,
        rows: Sequence[Sequence[Any]],
        *,
        window: int,
        progress: Callable[[int, int], None] | None = None,
    ) -> None:
        """`insert` every row, up to `window` in flight; `progress(done, total)` is called
        first with 0 and then as writes complete."""
        total = len(rows)
        if progress is not None:
            progress(0, total)
        if not total:
            return
        done = 0
        it = iter(rows)

        async def worker() -> None:
            nonlocal done
            for params in it:
                await self.insert(query, params)
                done += 1
                if progress is not None:
                    progress(done, total)

        with one_error():
            async with anyio.create_task_group() as tg:
                for _ in range(min(window, total)):
                    tg.start_soon(worker)


def _tuple_profile(session: Any) -> Any:
    """A clone of the session's default execution profile returning plain tuples, so rows
    decode the same way whatever row factory the caller's session uses (None on a legacy
    cluster without profiles: rows are then converted by `Executor.tuples`)."""
    from cassandra.cluster import EXEC_PROFILE_DEFAULT
    from cassandra.query import tuple_factory

    try:
        return session.execution_profile_clone_update(
            EXEC_PROFILE_DEFAULT, row_factory=tuple_factory
        )
    except Exception:
        return None


class _Slot:
    """One query of a burst: its position and request. It is also the borrower of its slot in
    the run's limiter (an anyio limiter lends one token per borrower)."""

    __slots__ = ("index", "request")

    def __init__(self, index: int) -> None:
        self.index = index
        self.request: bridge.Request | bridge.Failed | None = None


class _Burst:
    """One `Executor.burst`: sends the calls in order, each once it holds both slots, and
    collects the answers oldest first."""

    __slots__ = ("calls", "ex", "operation", "out", "priority", "run_limiter", "sent", "stmts")

    def __init__(
        self,
        ex: Executor,
        calls: Sequence[Call],
        stmts: list[Any],
        operation: str,
        run_limiter: anyio.CapacityLimiter,
        priority: float,
    ) -> None:
        self.ex = ex
        self.priority = priority
        self.calls = calls
        self.stmts = stmts
        self.operation = operation
        self.run_limiter = run_limiter
        self.out: list[list[Any]] = [[] for _ in calls]
        self.sent: deque[_Slot] = deque()

    async def run(self) -> list[list[Any]]:
        """Every call's rows, in order; on a failure or a cancellation the queries still in
        flight are abandoned and all their slots given back."""
        try:
            for i, (_, params) in enumerate(self.calls):
                slot = _Slot(i)
                if not self._try_take(slot):
                    await self._take(slot)
                try:
                    slot.request = self.ex.send(self.stmts[i], params)
                except BaseException:
                    self._give_back(slot)
                    raise
                self.sent.append(slot)
            while self.sent:
                await self._collect()
        finally:
            for slot in self.sent:  # only after a failure or a cancellation
                if slot.request is not None:
                    slot.request.cancel()
                self._give_back(slot)
            self.sent.clear()
        return self.out

    def _try_take(self, slot: _Slot) -> bool:
        """Take a run slot and a shared slot for `slot` if both are free, without waiting."""
        try:
            self.run_limiter.acquire_on_behalf_of_nowait(slot)
        except anyio.WouldBlock:
            return False
        if self.ex.limiter.try_acquire():
            return True
        self.run_limiter.release_on_behalf_of(slot)
        return False

    async def _take(self, slot: _Slot) -> None:
        """Both slots for `slot`: collect this burst's own oldest answers while either bound
        is full, and wait only when none of its queries is in flight."""
        while self.sent:
            await self._collect()
            if self._try_take(slot):
                return
        await self.run_limiter.acquire_on_behalf_of(slot)
        try:
            await self.ex.limiter.acquire(self.priority)
        except BaseException:
            self.run_limiter.release_on_behalf_of(slot)
            raise

    def _give_back(self, slot: _Slot) -> None:
        """Release both slots `slot` holds."""
        self.ex.limiter.release()
        self.run_limiter.release_on_behalf_of(slot)

    async def _collect(self) -> None:
        """Await the oldest query's answer, store its rows and give its slots back."""
        slot = self.sent.popleft()
        try:
            self.out[slot.index] = await self._answer(slot)
        finally:
            self._give_back(slot)

    async def _answer(self, slot: _Slot) -> list[Any]:
        """The rows of `slot`'s query, sent again (keeping its slots) after a transient
        failure, as `ReadRetries` says."""
        retries = ReadRetries(ann=is_ann_query(self.calls[slot.index][0]))
        while True:
            assert slot.request is not None
            try:
                return self.ex.tuples(await slot.request.rows())
            except (asyncio.CancelledError, HopragError):
                raise
            except Exception as exc:
                delay = retries.wait_before_next(exc)
                if delay is None:
                    raise translate(exc, self.operation) from exc
            await asyncio.sleep(delay)
            slot.request = self.ex.send(self.stmts[slot.index], self.calls[slot.index][1])
