"""The SQLite connection's priority lock (core/storage/db.py): a command's query or
commit waits behind at most the one in flight, not behind the outbox's queued reads."""

from __future__ import annotations

import asyncio

import pytest

from core.storage.db import PriorityLock, background
from core.storage.models import UserStats

from .helpers import until


async def _queue(lock: PriorityLock, order: list[str], name: str, *, bg: bool) -> None:
    with background(bg):
        await lock.acquire()
    order.append(name)
    await asyncio.sleep(0)
    lock.release()


async def test_a_foreground_waiter_goes_before_background_ones_queued_earlier() -> None:
    lock = PriorityLock()
    await lock.acquire()
    order: list[str] = []
    tasks = [asyncio.create_task(_queue(lock, order, f"bg{i}", bg=True)) for i in range(3)]
    await asyncio.sleep(0)  # the three wait
    tasks.append(asyncio.create_task(_queue(lock, order, "fg", bg=False)))
    await asyncio.sleep(0)
    lock.release()
    await asyncio.gather(*tasks)
    assert order == ["fg", "bg0", "bg1", "bg2"]
    assert not lock.locked()


async def test_a_waiter_cancelled_as_it_is_handed_the_lock_passes_it_on() -> None:
    lock = PriorityLock()
    await lock.acquire()
    first = asyncio.create_task(lock.acquire())
    second = asyncio.create_task(lock.acquire())
    await asyncio.sleep(0)
    lock.release()  # handed to `first`, which has not run yet
    first.cancel()
    with pytest.raises(asyncio.CancelledError):
        await first
    assert await asyncio.wait_for(second, 1)  # not lost with the cancelled waiter
    lock.release()
    assert not lock.locked()


async def test_a_cancelled_waiter_leaves_the_queue() -> None:
    lock = PriorityLock()
    await lock.acquire()
    waiting = asyncio.create_task(lock.acquire())
    await asyncio.sleep(0)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    lock.release()
    assert not lock.locked()
    assert await asyncio.wait_for(lock.acquire(), 1)


async def test_sqlite_queries_and_transactions_take_the_priority_lock(storage_db: str) -> None:
    if not storage_db.startswith("sqlite"):
        pytest.skip("PostgreSQL has a pool, not one connection")
    from tortoise import connections

    lock = connections.get("default")._lock
    assert isinstance(lock, PriorityLock)
    await lock.acquire()  # the connection is busy: a background read and a write queue
    order: list[str] = []

    async def read() -> None:
        with background():
            await UserStats.all().count()
        order.append("read")

    async def write() -> None:
        await UserStats.create(guild_id=1, user_id=1)
        order.append("write")

    reading = asyncio.create_task(read())
    await until(lambda: lock.waiting == 1)  # no sleep: the read is queued
    writing = asyncio.create_task(write())
    await until(lambda: lock.waiting == 2)
    assert order == []  # both wait for the lock
    lock.release()
    await asyncio.gather(reading, writing)
    assert order == ["write", "read"]


async def test_the_reader_connection_reads_the_last_commit(storage_db: str) -> None:
    """On a SQLite file the outbox reads through a second connection: it sees every
    commit made before the read, and takes no turn on the writer's connection."""
    from core.storage.db import reader

    if not storage_db.startswith("sqlite"):
        assert reader() is None
        return
    from tortoise import connections

    connection = reader()
    assert connection is not None and connection is not connections.get("default")
    assert isinstance(connection._lock, PriorityLock)  # type: ignore[attr-defined]
    await UserStats.create(guild_id=7, user_id=1)
    writer = connections.get("default")._lock
    await writer.acquire()  # the writer's connection busy: the reader still reads
    try:
        seen = await asyncio.wait_for(
            UserStats.all().using_db(connection).values_list("guild_id", flat=True), 5)
    finally:
        writer.release()
    assert seen == [7]
