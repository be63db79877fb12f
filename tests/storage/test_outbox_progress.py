"""A multi-request entry's progress is durable, and an entry that keeps being told to
wait without moving is parked (issue 40)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from core.storage.models import PARKED, Outbox
from core.storage.outbox import (
    OutboxEntry,
    OutboxWorker,
    RetryAfter,
    backlog,
    exponential_backoff,
    health_line,
    parked_count,
)
from core.storage.service import GameService
from tests.storage.helpers import until
from tests.storage.test_storage_outbox import game_with_entries

TINY = exponential_backoff(base=0.002, cap=0.02)


async def test_steps_that_went_out_are_never_sent_again(game_service: GameService) -> None:
    """Three steps a try, a window after each three: every step is sent exactly once,
    across tries and across a new worker (a restart) reading the stored progress."""
    svc = game_service
    gid = await game_with_entries(svc, 10, 1)
    sent: list[str] = []

    def deliverer(worker_of: list[OutboxWorker]) -> object:
        async def deliver(entry: OutboxEntry) -> None:
            worker = worker_of[0]
            budget = 3
            for step in (f"m{i}" for i in range(10)):
                if step in worker.done(entry):
                    continue
                if budget == 0:
                    raise RetryAfter(0.01)
                sent.append(step)
                await worker.progressed(entry, step)
                budget -= 1
        return deliver

    first: list[OutboxWorker] = []
    worker = OutboxWorker(deliverer(first), service=svc, backoff=TINY)  # type: ignore[arg-type]
    first.append(worker)
    await worker.start()
    await until(lambda: len(sent) >= 6, within=5.0)
    await worker.stop()
    row = await Outbox.get(game_id=gid)
    assert row.progress is not None and len(row.progress) > 2  # stored, not in memory only
    second: list[OutboxWorker] = []
    again = OutboxWorker(deliverer(second), service=svc, backoff=TINY)  # type: ignore[arg-type]
    second.append(again)
    await again.start()
    try:
        await until(lambda: len(sent) >= 10, within=5.0)
        await again.idle()
    finally:
        await again.stop()
    assert sent == [f"m{i}" for i in range(10)]


async def test_an_entry_that_never_moves_is_parked_and_counted(
        game_service: GameService) -> None:
    svc = game_service
    gid = await game_with_entries(svc, 11, 1)
    now = [datetime.now(UTC)]
    told: list[str] = []

    async def deliver(entry: OutboxEntry) -> None:
        raise RetryAfter(0.01)  # a window that never opens

    async def notify(entry: OutboxEntry, error: str) -> None:
        told.append(error)

    worker = OutboxWorker(deliver, service=svc, backoff=TINY, now=lambda: now[0],
                          stuck_after=60.0, notify_parked=notify)
    await worker.start()
    try:
        await until(lambda: worker.delivered == 0 and bool(worker._serving), within=2.0)
        assert await parked_count() == 0
        now[0] += timedelta(seconds=61)  # a minute without a step
        worker.wake()
        await until(lambda: bool(told), within=5.0)
    finally:
        await worker.stop()
    assert (await Outbox.get(game_id=gid)).status == PARKED
    assert "no progress for 60 s" in told[0]
    assert await parked_count() == 1
    line = health_line(await backlog(lambda e: 0, 1, now[0]), None, await parked_count())
    assert line.endswith("parked 1")


async def test_the_worker_is_fed_by_the_commit_not_by_scans(
        game_service: GameService) -> None:
    """Issue 40/45: after each commit the worker serves the rows the commit wrote; it
    scans the whole table at its start and at its poll interval, not after every
    commit (a fifth to a half of a busy shard's time went to those scans)."""
    from core.game import commands as c
    from core.play.sim import MASTER

    svc = game_service
    gid = await svc.create(1, 20, MASTER, "Fed")
    got: list[int] = []

    async def deliver(entry: OutboxEntry) -> None:
        got.append(entry.ordinal)

    worker = OutboxWorker(deliver, service=svc, lanes=2, lane=lambda e: 0,
                          poll_interval=60.0)
    scans = 0
    scan = worker._pending_lanes

    async def counted() -> list[tuple[int, int]]:
        nonlocal scans
        scans += 1
        return await scan()

    worker._pending_lanes = counted  # type: ignore[method-assign]
    await worker.start()
    try:
        await until(lambda: scans >= 1, within=2.0)
        await worker.idle()
        before, start = scans, len(got)
        at = datetime.now(UTC)
        for i in range(5):
            await svc.apply(gid, c.Join(by=100 + i, at=at, name=f"P{i}"))
        await until(lambda: len(got) >= start + 5, within=5.0)
    finally:
        await worker.stop()
    assert got == sorted(got) and len(got) == len(set(got))
    assert scans == before  # five commits, no scan of the table
