"""Shared moves for storage tests."""

from __future__ import annotations

import asyncio
from collections.abc import Callable


async def until(check: Callable[[], object], within: float = 5.0, step: float = 0.002) -> None:
    """Wait (real time, up to `within` seconds) until `check()` holds: the outbox worker
    and the schedulers run as tasks of their own, so a test can only watch them."""
    loop = asyncio.get_running_loop()
    end = loop.time() + within
    while not check():
        if loop.time() > end:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(step)
