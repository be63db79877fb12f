"""An event loop on virtual time that enforces every wait.

Unlike the harness's skipping clock (a waiter moves the clock for itself, at once), here
the whole process lives on one virtual clock: `loop.time()` stands still while anything
is ready to run or a worker thread (SQLite's, `run_in_executor`) is busy, and jumps to
the next timer only when everything is waiting.  A request held 10 minutes by a rate
limit takes 10 virtual minutes, during which every other task keeps its own pace (the
players keep voting, other games' deliveries go on), as in real time; the test itself
takes only as long as its work.  CPU work and SQLite cost no virtual time.

    with virtual_time() as loop:
        loop.run_until_complete(main())

`loop.utcnow()` is the matching wall clock (for the service, scheduler and outbox).
"""

from __future__ import annotations

import asyncio
import contextlib
import selectors
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from queue import SimpleQueue
from typing import Any

import aiosqlite.core

REAL_SLICE = 0.05  # real seconds a busy worker thread is waited for at a time
#: real seconds after which a thread job that has not answered no longer holds the clock
#: (a job lost in a closed connection's queue would otherwise stop time for good)
REAL_PATIENCE = 1.0


class VirtualTimeLoop(asyncio.SelectorEventLoop):
    def __init__(self) -> None:
        self._selector_real = selectors.DefaultSelector()
        super().__init__(_Selector(self._selector_real, self))
        self._now = time.monotonic()
        self._start = self._now
        self._wall = datetime.now(UTC)
        self.external = 0  # thread jobs whose answer the loop awaits
        self.progress = time.monotonic()  # real time of the last answer or jump
        self.stalls = 0  # jumps made while a thread job had not answered in time
        self.jumps = 0

    def time(self) -> float:
        return self._now

    def elapsed(self) -> float:
        return self._now - self._start

    def utcnow(self) -> datetime:
        return self._wall + timedelta(seconds=self._now - self._start)

    def jump(self, seconds: float) -> None:
        if seconds > 0:
            self._now += seconds
            self.jumps += 1

    def track(self, future: asyncio.Future[Any]) -> None:
        """An answer a thread will post back: no jump until it arrived."""
        self.external += 1
        future.add_done_callback(self._untrack)

    def _untrack(self, _: object) -> None:
        self.external -= 1
        self.progress = time.monotonic()

    def run_in_executor(self, executor: Any, func: Callable[..., Any], *args: Any
                        ) -> asyncio.Future[Any]:
        future = super().run_in_executor(executor, func, *args)
        self.track(future)
        return future


class _Selector(selectors.BaseSelector):
    """The real selector, asked without waiting; a wait becomes a jump of the clock."""

    def __init__(self, real: selectors.BaseSelector, loop: VirtualTimeLoop) -> None:
        self._real = real
        self._loop = loop

    def register(self, fileobj: Any, events: int, data: Any = None) -> selectors.SelectorKey:
        return self._real.register(fileobj, events, data)

    def unregister(self, fileobj: Any) -> selectors.SelectorKey:
        return self._real.unregister(fileobj)

    def modify(self, fileobj: Any, events: int, data: Any = None) -> selectors.SelectorKey:
        return self._real.modify(fileobj, events, data)

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        ready = self._real.select(0)
        if ready or timeout == 0:
            return ready
        loop = self._loop
        if timeout is None or (loop.external > 0 and time.monotonic() - loop.progress
                               < REAL_PATIENCE):
            # a thread is working (or nothing is scheduled): wait for it in real time
            ready = self._real.select(REAL_SLICE if timeout is None
                                      else min(REAL_SLICE, timeout))
            if ready:
                loop.progress = time.monotonic()
            return ready
        if loop.external > 0:
            loop.stalls += 1
        loop.jump(timeout)
        loop.progress = time.monotonic()
        return []

    def close(self) -> None:
        self._real.close()

    def get_map(self) -> Any:
        return self._real.get_map()


class _CountingQueue(SimpleQueue):  # type: ignore[type-arg]
    """aiosqlite's job queue: each job's future keeps the virtual clock still."""

    def put_nowait(self, item: Any) -> None:
        future = item[0] if isinstance(item, tuple) else None
        if isinstance(future, asyncio.Future):
            loop = future.get_loop()
            if isinstance(loop, VirtualTimeLoop):
                loop.track(future)
        super().put_nowait(item)

    def put(self, item: Any, block: bool = True, timeout: float | None = None) -> None:
        self.put_nowait(item)


@contextlib.contextmanager
def virtual_time() -> Iterator[VirtualTimeLoop]:
    """A virtual-time loop set as the current loop (aiosqlite's connections opened while
    it runs are tracked), closed afterwards."""
    loop = VirtualTimeLoop()
    previous = aiosqlite.core.SimpleQueue
    aiosqlite.core.SimpleQueue = _CountingQueue  # type: ignore[misc]
    asyncio.set_event_loop(loop)
    try:
        yield loop
    finally:
        aiosqlite.core.SimpleQueue = previous  # type: ignore[misc]
        try:
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.run_until_complete(loop.shutdown_default_executor())
        finally:
            asyncio.set_event_loop(None)
            loop.close()


__all__ = ["VirtualTimeLoop", "virtual_time"]
