"""Shared moves for storage tests."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Protocol


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
