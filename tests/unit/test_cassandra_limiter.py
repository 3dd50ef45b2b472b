"""SharedLimiter: one bound across event loops and threads, served by priority (ties and
default: first come, first served), cancellation-safe."""

from __future__ import annotations

import asyncio
import threading

import pytest

from hoprag.stores.cassandra.limiter import SharedLimiter


class Gauge:
    """Counts holders at once (thread-safe) and remembers the peak."""

    def __init__(self) -> None:
        self.now = 0
        self.peak = 0
        self.lock = threading.Lock()

    def enter(self) -> None:
        with self.lock:
            self.now += 1
            self.peak = max(self.peak, self.now)

    def leave(self) -> None:
        with self.lock:
            self.now -= 1


async def _hold(limiter: SharedLimiter, gauge: Gauge, seconds: float) -> None:
    async with limiter:
        gauge.enter()
        await asyncio.sleep(seconds)
        gauge.leave()


def test_rejects_a_limit_that_is_not_a_positive_int() -> None:
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(ValueError, match="positive int"):
            SharedLimiter(bad)  # type: ignore[arg-type]


async def test_one_loop_never_exceeds_the_limit_and_everyone_gets_through() -> None:
    limiter, gauge = SharedLimiter(3), Gauge()
    await asyncio.gather(*(_hold(limiter, gauge, 0.005) for _ in range(20)))
    assert gauge.peak == 3
    assert limiter.in_use == 0 and limiter.waiting == 0


def test_the_bound_holds_across_threads_each_with_its_own_loop() -> None:
    limiter, gauge = SharedLimiter(4), Gauge()

    def worker() -> None:
        async def many() -> None:
            await asyncio.gather(*(_hold(limiter, gauge, 0.002) for _ in range(15)))

        asyncio.run(many())

    threads = [threading.Thread(target=worker) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads)
    # Six loops with 15 holders each: one semaphore per loop would have let 6 x 4 in at once.
    assert gauge.peak == 4
    assert limiter.in_use == 0 and limiter.waiting == 0


async def test_waiters_are_served_in_arrival_order() -> None:
    limiter = SharedLimiter(1)
    order: list[int] = []
    await limiter.acquire()

    async def waiter(i: int) -> None:
        async with limiter:
            order.append(i)

    tasks = []
    for i in range(5):
        tasks.append(asyncio.create_task(waiter(i)))
        await asyncio.sleep(0)  # let it queue before the next one
    assert limiter.waiting == 5
    limiter.release()
    await asyncio.gather(*tasks)
    assert order == [0, 1, 2, 3, 4]


async def test_waiters_with_smaller_priority_are_served_first_ties_in_arrival_order() -> None:
    limiter = SharedLimiter(1)
    order: list[str] = []
    await limiter.acquire()

    async def waiter(name: str, priority: float) -> None:
        await limiter.acquire(priority)
        order.append(name)
        limiter.release()

    tasks = []
    for name, priority in (("late-a", 5.0), ("early", 1.0), ("late-b", 5.0), ("mid", 3.0)):
        tasks.append(asyncio.create_task(waiter(name, priority)))
        await asyncio.sleep(0)
    assert limiter.waiting == 4
    limiter.release()
    await asyncio.gather(*tasks)
    assert order == ["early", "mid", "late-a", "late-b"]


async def test_a_cancelled_priority_waiter_is_skipped_and_leaks_nothing() -> None:
    limiter = SharedLimiter(1)
    await limiter.acquire()
    first = asyncio.create_task(limiter.acquire(1.0))
    second = asyncio.create_task(limiter.acquire(2.0))
    await asyncio.sleep(0)
    first.cancel()
    with pytest.raises(asyncio.CancelledError):
        await first
    assert limiter.waiting == 1
    limiter.release()  # skips the cancelled entry, hands the slot to `second`
    await asyncio.wait_for(second, 1)
    assert (limiter.in_use, limiter.waiting) == (1, 0)
    limiter.release()
    assert limiter.in_use == 0


async def test_a_cancelled_waiter_does_not_leak_its_slot() -> None:
    limiter = SharedLimiter(1)
    await limiter.acquire()
    waiter = asyncio.create_task(limiter.acquire())
    await asyncio.sleep(0)
    assert limiter.waiting == 1
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    assert limiter.waiting == 0
    limiter.release()
    assert limiter.in_use == 0
    await asyncio.wait_for(limiter.acquire(), 1)  # the slot is free again
    limiter.release()


async def test_a_waiter_cancelled_after_the_hand_over_gives_the_slot_back() -> None:
    limiter = SharedLimiter(1)
    await limiter.acquire()
    waiter = asyncio.create_task(limiter.acquire())
    await asyncio.sleep(0)
    limiter.release()  # hands the slot to the waiter (scheduled on the loop) ...
    waiter.cancel()  # ... which is cancelled before it resumes
    with pytest.raises(asyncio.CancelledError):
        await waiter
    assert limiter.in_use == 0
    await asyncio.wait_for(limiter.acquire(), 1)
    limiter.release()


def test_a_release_from_another_thread_wakes_the_waiting_loop() -> None:
    limiter = SharedLimiter(1)
    go = threading.Event()
    released_by: list[int] = []

    def release_when_told() -> None:
        if go.wait(timeout=30):
            released_by.append(threading.get_ident())
            limiter.release()

    async def hold_then_wait() -> bool:
        await limiter.acquire()
        releaser = threading.Thread(target=release_when_told)
        releaser.start()
        waiter = asyncio.ensure_future(limiter.acquire())
        for _ in range(1_000):
            if limiter.waiting:
                break
            await asyncio.sleep(0)
        pending = limiter.waiting == 1 and not waiter.done()  # it waits for the other thread
        go.set()
        await asyncio.wait_for(waiter, 30)
        limiter.release()
        releaser.join(timeout=30)
        return pending

    assert asyncio.run(hold_then_wait())
    assert released_by and released_by[0] != threading.get_ident()
    assert limiter.in_use == 0


async def test_try_acquire_takes_a_free_slot_and_never_jumps_the_queue() -> None:
    limiter = SharedLimiter(1)
    assert limiter.try_acquire() and limiter.in_use == 1
    assert not limiter.try_acquire()  # full
    waiter = asyncio.create_task(limiter.acquire())
    for _ in range(1_000):
        if limiter.waiting:
            break
        await asyncio.sleep(0)
    assert limiter.waiting == 1
    limiter.release()  # handed to the waiter, not back to the pool
    assert not limiter.try_acquire()
    await waiter
    limiter.release()
    assert limiter.in_use == 0 and limiter.try_acquire()
