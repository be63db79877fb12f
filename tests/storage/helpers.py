"""Shared moves for storage tests."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from core.storage.db import close_db, init_db
from core.storage.service import GameService
from tests.harness.virtualtime import virtual_time


async def until(check: Callable[[], object], within: float = 5.0, step: float = 0.002) -> None:
    """Wait (real time, up to `within` seconds) until `check()` holds: the outbox worker
    and the schedulers run as tasks of their own, so a test can only watch them."""
    loop = asyncio.get_running_loop()
    end = loop.time() + within
    while not check():
        if loop.time() > end:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(step)


class Looking(Protocol):
    looked: int

    def wake(self) -> None: ...


async def looked_again(sched: Looking) -> None:
    """Wait until the scheduler has gone over its (virtual) clock once more from now, so
    what was due is in flight (`busy`, `reminding`) or done and what was not is left:
    no sleeping."""
    before = sched.looked
    sched.wake()
    await until(lambda: sched.looked > before)


def on_virtual_time(url: str, body: Callable[[GameService], Awaitable[None]],
                    **options: Any) -> None:
    """Run `body` with a fresh service on `url` inside the virtual-time loop
    (tests/harness/virtualtime.py): there `await settled()` returns only once every
    task, timer and SQLite job that could move has moved, so "nothing happened" after
    it means "nothing could", on any machine."""
    with virtual_time() as loop:
        async def main() -> None:
            await init_db(url)
            service = GameService(clock=loop.utcnow, **options)
            try:
                await body(service)
            finally:
                await service.close()
                await close_db()

        loop.run_until_complete(main())


async def settled() -> None:
    """On the virtual-time loop: wait until the whole process is idle (the clock jumps
    an hour only then)."""
    await asyncio.sleep(3600)
