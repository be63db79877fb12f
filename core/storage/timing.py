"""Clock and waiting helpers shared by the scheduler and the outbox worker."""

from __future__ import annotations

import asyncio
import contextlib
from datetime import UTC, datetime


def utcnow() -> datetime:
    """The default clock; everything that reads time takes a replacement for tests."""
    return datetime.now(UTC)


async def doze(wake: asyncio.Event, seconds: float) -> None:
    """Wait for `wake` or `seconds`, whichever comes first.

    Not asyncio.wait_for: on Python 3.11 it can swallow a cancellation that arrives
    just as the event is set, and a `stop()` awaiting the task would then hang.
    """
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(max(0.0, seconds)):
            await wake.wait()


async def cancel_all(tasks: list[asyncio.Task[None]]) -> None:
    """Stop background tasks and wait until each has really finished."""
    for t in tasks:
        t.cancel()
    for t in tasks:
        with contextlib.suppress(asyncio.CancelledError):
            await t
