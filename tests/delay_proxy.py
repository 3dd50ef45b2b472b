"""A TCP proxy that adds a fixed latency, like a network link between a client and a remote
node (another zone, Astra): every chunk is held `delay` seconds in each direction, in order,
and throughput is untouched. It runs its own event loop in a thread.

A test can also hold the answers: while `hold()` is true, nothing goes from the node to the
client (after the delay) until `recheck()` finds it false, so what is in flight at a moment
is decided by the test, not by timing. A hold longer than `hold_timeout` seconds ends anyway
and is counted in `held_too_long`: a test that relies on holds asserts that it is 0."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from types import TracebackType
from typing import Any


class DelayProxy:
    """Forwards connections to `listen` (host, port) to `target`, `delay` s each way."""

    def __init__(
        self,
        listen: tuple[str, int],
        target: tuple[str, int],
        delay: float,
        hold: Callable[[], bool] | None = None,
        hold_timeout: float = 20.0,
    ) -> None:
        self.listen = listen
        self.target = target
        self.delay = delay
        self.hold = hold
        self.hold_timeout = hold_timeout
        self.held_too_long = 0
        self.bytes_to_client = 0
        self._released: asyncio.Condition | None = None
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    def __enter__(self) -> DelayProxy:
        self._thread.start()

        async def make_condition() -> asyncio.Condition:
            return asyncio.Condition()

        self._released = asyncio.run_coroutine_threadsafe(make_condition(), self._loop).result(
            timeout=10
        )
        self._server = asyncio.run_coroutine_threadsafe(
            asyncio.start_server(self._accept, *self.listen), self._loop
        ).result(timeout=10)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        async def stop() -> None:
            assert self._server is not None
            self._server.close()
            for task in list(self._tasks):
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(stop(), self._loop).result(timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
            await asyncio.gather(
                self._pipe(reader, up_writer), self._pipe(up_reader, writer, to_client=True)
            )
        except (OSError, asyncio.IncompleteReadError):
            pass
        except asyncio.CancelledError:
            # Cancelled by our own stop(): end quietly. asyncio's server would otherwise log
            # the cancelled connection task as an "Exception in callback".
            if self._server is None or self._server.is_serving():
                raise
        finally:
            writer.close()
            self._tasks.discard(task)

    def recheck(self) -> None:
        """Re-evaluate `hold()` now (from any thread): call it after changing what it reads."""
        if self._loop.is_running():
            self._loop.call_soon_threadsafe(lambda: self._loop.create_task(self._notify()))

    async def _notify(self) -> None:
        assert self._released is not None
        async with self._released:
            self._released.notify_all()

    async def _held(self) -> None:
        hold, released = self.hold, self._released
        if hold is None or released is None or not hold():
            return
        async with released:
            try:
                await asyncio.wait_for(released.wait_for(lambda: not hold()), self.hold_timeout)
            except TimeoutError:
                self.held_too_long += 1

    async def _pipe(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, to_client: bool = False
    ) -> None:
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

        async def feed() -> None:
            while data := await reader.read(65536):
                queue.put_nowait((loop.time() + self.delay, data))
            queue.put_nowait((loop.time() + self.delay, b""))

        async def deliver() -> None:
            while True:
                due, data = await queue.get()
                wait = due - loop.time()
                if wait > 0:
                    await asyncio.sleep(wait)
                if not data:
                    writer.close()
                    return
                if to_client:
                    await self._held()
                    self.bytes_to_client += len(data)
                writer.write(data)
                await writer.drain()

        await asyncio.gather(feed(), deliver())


def connect_through(
    proxy_host: str, port: int, local_dc: str = "datacenter1", *, nodelay: bool = True
) -> Any:
    """A driver session that reaches a one-node cluster only through a proxy at
    `proxy_host:port` (the node announces its own address; an AddressTranslator maps it to the
    proxy, so the driver never connects around it). Its sockets set TCP_NODELAY as
    `hoprag.stores.cassandra.session.connect`'s do (`nodelay=False`: the driver's default,
    Nagle's algorithm on, as hoprag's sessions had before)."""
    import socket

    from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile
    from cassandra.policies import AddressTranslator, DCAwareRoundRobinPolicy

    class ThroughProxy(AddressTranslator):
        def translate(self, addr: str) -> str:
            return proxy_host

    profile = ExecutionProfile(
        load_balancing_policy=DCAwareRoundRobinPolicy(local_dc=local_dc), request_timeout=30
    )
    cluster = Cluster(
        [proxy_host],
        port=port,
        protocol_version=5,
        address_translator=ThroughProxy(),
        execution_profiles={EXEC_PROFILE_DEFAULT: profile},
        sockopts=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)] if nodelay else None,
    )
    return cluster.connect()
