"""OutboxWorker: per-game order, retries with backoff, RetryAfter, parking, restarts."""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime, timedelta

import pytest

from core.game import commands as c
from core.play.sim import MASTER
from core.storage.db import close_db, init_db
from core.storage.models import DELIVERED, PARKED, PENDING, Outbox
from core.storage.outbox import (
    OutboxEntry,
    OutboxWorker,
    RetryAfter,
    Undeliverable,
    exponential_backoff,
)
from core.storage.service import DiscordPatch, GameService, OutboxItem
from tests.storage.helpers import until

T0 = datetime(2026, 1, 1, tzinfo=UTC)
TINY = exponential_backoff(base=0.002, cap=0.02)


async def game_with_entries(svc: GameService, channel: int, n: int) -> int:
    """A game whose outbox holds exactly `n` entries 'msg' with payload {'i': 1..n}."""
    gid = await svc.create(1, channel, MASTER, "Outbox")
    await svc.set_discord(gid, DiscordPatch(),
                          extra_outbox=[OutboxItem(kind="msg", payload={"i": i + 1})
                                        for i in range(n)])
    return gid


async def statuses(gid: int) -> list[str]:
    return list(await Outbox.filter(game_id=gid).order_by("ordinal")
                .values_list("status", flat=True))  # type: ignore[arg-type]


async def test_delivers_in_order_per_game(game_service: GameService) -> None:
    svc = game_service
    games = [await game_with_entries(svc, 10 + g, 5) for g in range(3)]
    seen: dict[int, list[int]] = {}

    async def deliver(entry: OutboxEntry) -> None:
        await asyncio.sleep(0.001 * (entry.game_id % 3))  # games interleave
        seen.setdefault(entry.game_id, []).append(entry.payload["i"])

    worker = OutboxWorker(deliver, service=svc, backoff=TINY)
    await worker.start()
    try:
        await worker.idle()
    finally:
        await worker.stop()
    assert seen == {gid: [1, 2, 3, 4, 5] for gid in games}
    for gid in games:
        assert await statuses(gid) == [DELIVERED] * 5
    assert await worker.prune(keep=timedelta(hours=1)) == 0
    assert await worker.prune(keep=timedelta(0)) == 15
    assert await Outbox.all().count() == 0


async def test_engine_events_reach_the_outbox_and_wake_the_worker(
        game_service: GameService) -> None:
    svc = game_service
    gid = await svc.create(1, 10, MASTER, "Wake")
    got: list[OutboxEntry] = []

    async def deliver(entry: OutboxEntry) -> None:
        got.append(entry)

    worker = OutboxWorker(deliver, service=svc, poll_interval=60.0)  # only a wake helps
    await worker.start()
    try:
        await asyncio.sleep(0.01)
        await svc.apply(gid, c.Join(by=100, at=T0, name="A"))
        await until(lambda: len(got) == 1, within=2.0)
        event = got[0].event()
        assert event is not None and event.kind == "joined" and event.data["uid"] == 100
        assert got[0].key == (gid, 1)
    finally:
        await worker.stop()


async def test_retry_with_backoff_keeps_order(game_service: GameService) -> None:
    svc = game_service
    gid = await game_with_entries(svc, 10, 3)
    calls: list[int] = []
    waits: list[int] = []

    def backoff(failures: int) -> float:
        waits.append(failures)
        return 0.01

    async def deliver(entry: OutboxEntry) -> None:
        calls.append(entry.payload["i"])
        if entry.payload["i"] == 1 and calls.count(1) < 3:
            raise ConnectionError("discord hiccup")

    worker = OutboxWorker(deliver, service=svc, backoff=backoff)
    await worker.start()
    try:
        await worker.idle()
        await until(lambda: len(calls) == 5)
    finally:
        await worker.stop()
    assert calls == [1, 1, 1, 2, 3] and waits == [1, 2]
    first = await Outbox.get(game_id=gid, ordinal=1)
    assert first.status == DELIVERED and first.attempts == 2
    assert first.last_error == "ConnectionError: discord hiccup"


def test_exponential_backoff() -> None:
    b = exponential_backoff(base=2.0, cap=60.0)
    assert [b(n) for n in range(1, 8)] == [2, 4, 8, 16, 32, 60, 60]


async def test_retry_after_is_honoured_and_not_counted(game_service: GameService) -> None:
    svc = game_service
    gid = await game_with_entries(svc, 10, 2)
    loop = asyncio.get_running_loop()
    times: list[tuple[int, float]] = []

    async def deliver(entry: OutboxEntry) -> None:
        times.append((entry.payload["i"], loop.time()))
        if len(times) == 1:
            raise RetryAfter(0.05)

    worker = OutboxWorker(deliver, service=svc, max_attempts=1, backoff=TINY)
    await worker.start()
    try:
        await until(lambda: len(times) == 3)
        await worker.idle()
    finally:
        await worker.stop()
    assert [i for i, _ in times] == [1, 1, 2]
    assert times[1][1] - times[0][1] >= 0.045
    first = await Outbox.get(game_id=gid, ordinal=1)
    assert first.status == DELIVERED and first.attempts == 0  # a rate limit is no failure


async def test_parks_after_max_attempts_and_tells(game_service: GameService,
                                                  caplog: pytest.LogCaptureFixture) -> None:
    svc = game_service
    gid = await game_with_entries(svc, 10, 3)
    other = await game_with_entries(svc, 11, 2)
    delivered: list[tuple[int, int]] = []
    parked: list[tuple[OutboxEntry, str]] = []

    async def deliver(entry: OutboxEntry) -> None:
        if entry.key == (gid, 2):
            raise PermissionError("missing access")
        delivered.append(entry.key)

    async def notify(entry: OutboxEntry, error: str) -> None:
        parked.append((entry, error))

    worker = OutboxWorker(deliver, service=svc, notify_parked=notify, max_attempts=3,
                          backoff=TINY)
    with caplog.at_level(logging.WARNING, logger="core.storage.outbox"):
        await worker.start()
        try:
            await until(lambda: len(delivered) == 4)
            await worker.idle()
        finally:
            await worker.stop()
    assert [k for k in delivered if k[0] == gid] == [(gid, 1), (gid, 3)]
    assert [k for k in delivered if k[0] == other] == [(other, 1), (other, 2)]
    assert len(parked) == 1 and parked[0][0].key == (gid, 2) and parked[0][0].attempts == 3
    assert parked[0][1] == "PermissionError: missing access"
    assert await statuses(gid) == [DELIVERED, PARKED, DELIVERED]
    assert any("parked" in r.getMessage() and r.levelno == logging.ERROR for r in caplog.records)
    assert worker.parked == 1


async def test_undeliverable_parks_at_once(game_service: GameService) -> None:
    """A destination that is gone (Discord 404) is not retried through every backoff."""
    svc = game_service
    gid = await game_with_entries(svc, 10, 2)
    tries: list[tuple[int, int]] = []
    parked: list[OutboxEntry] = []

    async def deliver(entry: OutboxEntry) -> None:
        tries.append(entry.key)
        if entry.key == (gid, 1):
            raise Undeliverable("404 Not Found (error code: 10003): Unknown Channel")

    async def notify(entry: OutboxEntry, error: str) -> None:
        parked.append(entry)

    worker = OutboxWorker(deliver, service=svc, notify_parked=notify, max_attempts=8,
                          backoff=TINY)
    await worker.start()
    try:
        await until(lambda: len(tries) == 2)
        await worker.idle()
    finally:
        await worker.stop()
    assert tries == [(gid, 1), (gid, 2)]
    assert [e.attempts for e in parked] == [1]
    assert await statuses(gid) == [PARKED, DELIVERED]


async def test_slow_channel_does_not_hold_back_other_games(game_service: GameService) -> None:
    svc = game_service
    stuck = await game_with_entries(svc, 10, 3)
    others = [await game_with_entries(svc, 20 + g, 3) for g in range(4)]
    release = asyncio.Event()
    done: list[tuple[int, int]] = []

    async def deliver(entry: OutboxEntry) -> None:
        if entry.game_id == stuck:
            await release.wait()
        done.append(entry.key)

    worker = OutboxWorker(deliver, service=svc, backoff=TINY)
    await worker.start()
    try:
        await until(lambda: len(done) == 12, within=3.0)
        assert {g for g, _ in done} == set(others)
        release.set()
        await until(lambda: len(done) == 15)
    finally:
        await worker.stop()
    assert [o for g, o in done if g == stuck] == [1, 2, 3]


async def test_resumes_after_restart(storage_url: str) -> None:
    await init_db(storage_url)
    svc = GameService()
    gid = await game_with_entries(svc, 10, 5)
    first_run: list[int] = []
    hang = asyncio.Event()
    sending_3 = asyncio.Event()

    async def deliver_then_die(entry: OutboxEntry) -> None:
        if entry.payload["i"] == 3:
            sending_3.set()
            await hang.wait()  # the bot dies while sending entry 3
        first_run.append(entry.payload["i"])

    worker = OutboxWorker(deliver_then_die, service=svc, backoff=TINY)
    await worker.start()
    await asyncio.wait_for(sending_3.wait(), 30)  # no sleep: the worker is inside entry 3
    await worker.stop()
    await close_db()
    assert first_run == [1, 2]

    await init_db(storage_url)
    try:
        assert await statuses(gid) == [DELIVERED, DELIVERED, PENDING, PENDING, PENDING]
        second_run: list[int] = []

        async def deliver(entry: OutboxEntry) -> None:
            second_run.append(entry.payload["i"])

        worker = OutboxWorker(deliver, backoff=TINY)  # no service: finds the backlog itself
        await worker.start()
        try:
            await until(lambda: len(second_run) == 3)
            await worker.idle()
        finally:
            await worker.stop()
        assert second_run == [3, 4, 5]
        assert await statuses(gid) == [DELIVERED] * 5
    finally:
        await close_db()


async def test_games_take_turns_so_none_starves(game_service: GameService) -> None:
    """One game with a long backlog does not hold back the others: with one slot, the
    games are served in turn (round robin), not one game's backlog first."""
    svc = game_service
    big = await game_with_entries(svc, 40, 12)
    small = [await game_with_entries(svc, 41 + g, 3) for g in range(3)]
    order: list[int] = []

    async def deliver(entry: OutboxEntry) -> None:
        order.append(entry.game_id)
        await asyncio.sleep(0.001)

    worker = OutboxWorker(deliver, service=svc, backoff=TINY, max_concurrent=1)
    await worker.start()
    try:
        await worker.idle()
    finally:
        await worker.stop()
    assert sorted(order) == sorted([big] * 12 + [g for g in small for _ in range(3)])
    # every small game is done long before the big one's backlog: within 4 turns each
    last_small = max(i for i, g in enumerate(order) if g != big)
    assert last_small < 4 * 4, order


async def test_lanes_take_weighted_turns_and_keep_their_order(
        game_service: GameService) -> None:
    """Each lane has its own slots (by weight): lane 0 does not wait for the others, the
    others do not wait until lane 0 of every game is done (issue 27); within a lane and
    game the order of the entries is kept."""
    svc = game_service
    lanes = {"announce": 0, "push": 1, "edit": 2}
    games = []
    for g in range(4):
        gid = await svc.create(1, 60 + g, MASTER, "Lanes")
        items = [OutboxItem(kind=kind, payload={"i": i}) for i, kind in enumerate(
            ["push", "edit", "announce", "push", "announce", "edit"])]
        await svc.set_discord(gid, DiscordPatch(), extra_outbox=items)
        games.append(gid)
    seen: list[tuple[int, str, int]] = []

    async def deliver(entry: OutboxEntry) -> None:
        seen.append((entry.game_id, entry.kind, entry.payload["i"]))
        await asyncio.sleep(0.001)

    worker = OutboxWorker(deliver, service=svc, backoff=TINY, max_concurrent=3,
                          lane=lambda e: lanes[e.kind], lanes=3, weights=(1, 1, 1))
    await worker.start()
    try:
        await worker.idle()
    finally:
        await worker.stop()
    assert len(seen) == 4 * 6
    kinds = [lanes[k] for _, k, _ in seen]
    # every lane got going early, long before lane 0 was done (strict lanes waited)
    last_urgent = max(i for i, k in enumerate(kinds) if k == 0)
    assert kinds.index(1) < last_urgent and kinds.index(2) < last_urgent, seen
    for gid in games:
        mine = [(k, i) for g, k, i in seen if g == gid]
        assert [i for k, i in mine if k == "push"] == [0, 3]
        assert [i for k, i in mine if k == "announce"] == [2, 4]
        assert [i for k, i in mine if k == "edit"] == [1, 5]
