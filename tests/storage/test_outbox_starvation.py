"""No lane starves (issue 27): a steady flood of urgent work cannot keep the other lanes'
entries waiting past a bound in the OutboxWorker's slots (the request budget's share of
the global limit: tests/bot/test_budget.py).

On virtual time (tests/harness/virtualtime.py): every delivery takes its virtual second,
the flood arrives faster than it can be served, and the bound is read off the clock.
Also here: the periodic prune of delivered entries, and the lanes' health line."""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta
from pathlib import Path

import pytest

from core.play.sim import MASTER
from core.storage.db import close_db, init_db
from core.storage.models import DELIVERED, PENDING, Outbox
from core.storage.outbox import OutboxEntry, OutboxWorker, backlog, health_line
from core.storage.service import DiscordPatch, GameService, OutboxItem
from core.storage.turns import Stride, shares
from tests.harness.virtualtime import VirtualTimeLoop, virtual_time

LANES = {"announce": 0, "push": 1, "edit": 2}
WEIGHTS = (8.0, 4.0, 2.0)
SERVICE = 1.0  # virtual seconds a delivery takes
#: the bound: an entry of a slower lane waits at most this long however big the flood
#: (its lane's own slot frees within one delivery; the entries queued ahead of it in
#: its lane go at their lane's pace)
BOUND = 3 * SERVICE


def run(tmp_path: Path, body: object) -> None:
    with virtual_time() as loop:
        async def main() -> None:
            await init_db(f"sqlite://{tmp_path / 'o.db'}")
            svc = GameService(clock=loop.utcnow)
            try:
                await body(loop, svc)  # type: ignore[operator]
            finally:
                await svc.close()
                await close_db()
        loop.run_until_complete(main())


async def add(svc: GameService, gid: int, kind: str, n: int = 1) -> None:
    await svc.set_discord(gid, DiscordPatch(), extra_outbox=[
        OutboxItem(kind=kind, payload={"kind": kind}) for _ in range(n)])


def test_a_flood_of_announcements_cannot_hold_back_pushes_and_edits(tmp_path: Path
                                                                      ) -> None:
    async def body(loop: VirtualTimeLoop, svc: GameService) -> None:
        games = [await svc.create(1, 100 + g, MASTER, f"Flood {g}") for g in range(12)]
        delivered: dict[tuple[int, int], float] = {}

        async def deliver(entry: OutboxEntry) -> None:
            await asyncio.sleep(SERVICE)
            delivered[entry.key] = loop.elapsed()

        worker = OutboxWorker(deliver, service=svc, now=loop.utcnow, max_concurrent=7,
                              lane=lambda e: LANES[e.kind], lanes=3, weights=WEIGHTS,
                              late_after=2 * BOUND)
        await worker.start()
        flooding = True

        async def flood() -> None:  # twice what lane 0's slots can carry, for a minute
            while flooding:
                for gid in games:
                    await add(svc, gid, "announce", 2)
                await asyncio.sleep(SERVICE)

        flooder = asyncio.create_task(flood())
        await asyncio.sleep(10)
        # now, in the middle of the flood: one push and one edit for every game
        asked = loop.elapsed()
        for gid in games:
            await add(svc, gid, "push")
            await add(svc, gid, "edit")
        slow = {(r.game_id, r.ordinal): r.kind for r in  # type: ignore[attr-defined]
                await Outbox.filter(kind__in=["push", "edit"])}
        await asyncio.sleep(60)
        flooding = False
        await flooder
        pending = await Outbox.filter(status=PENDING).count()
        await worker.stop()
        waits = {kind: max(delivered[k] - asked for k, kd in slow.items() if kd == kind)
                 for kind in ("push", "edit")}
        # the flood is still queued (it outgrew its lane), the slow lanes are served
        assert pending > 100
        assert all(k in delivered for k in slow)
        # the bound: each game's push within the lane's share of slots, same for edits
        per_slot = shares(7, WEIGHTS)
        assert waits["push"] <= BOUND * len(games) / per_slot[1], waits
        assert waits["edit"] <= BOUND * len(games) / per_slot[2], waits
        print(f"slow lanes under a flood: slots {per_slot}, longest wait {waits}")

    run(tmp_path, body)


def test_old_rule_would_starve(tmp_path: Path) -> None:
    """The figure the fix is measured against: with strict lanes (every lane sharing the
    urgent lane's work) nothing of lane 1 would go out while lane 0 has work; here the
    shares say each lane has its own slots."""
    assert shares(16, (8.0, 4.0, 2.0, 2.0, 1.0)) == [8, 4, 2, 2, 1]
    assert shares(7, WEIGHTS) == [4, 2, 1]
    assert all(n >= 1 for n in shares(3, (100.0, 1.0, 1.0)))


def test_stride_gives_each_lane_its_weight_and_banks_nothing() -> None:
    stride = Stride((8.0, 4.0, 2.0))
    picks = [stride.pick([0, 1, 2]) for _ in range(140)]
    assert (picks.count(0), picks.count(1), picks.count(2)) == (80, 40, 20)
    # lane 2 idle for a long while, then back: it does not get a long run of turns
    for _ in range(200):
        stride.pick([0, 1])
    back = [stride.pick([0, 1, 2]) for _ in range(14)]
    assert back.count(2) <= 2


def test_delivered_entries_are_pruned_after_the_retention(tmp_path: Path) -> None:
    async def body(loop: VirtualTimeLoop, svc: GameService) -> None:
        gid = await svc.create(1, 7, MASTER, "Prune")
        await add(svc, gid, "announce", 3)

        async def deliver(entry: OutboxEntry) -> None:
            if entry.ordinal == max_ordinal:
                raise RuntimeError("keeps failing")

        max_ordinal = max(await Outbox.filter(game_id=gid).values_list(
            "ordinal", flat=True))  # type: ignore[type-var]
        worker = OutboxWorker(deliver, service=svc, now=loop.utcnow, max_attempts=1,
                              retention=timedelta(days=7), prune_interval=3600,
                              poll_interval=600)
        await worker.start()
        await asyncio.sleep(5)
        statuses = sorted(await Outbox.filter(game_id=gid).values_list(
            "status", flat=True))  # type: ignore[type-var]
        assert statuses.count(DELIVERED) == len(statuses) - 1  # one parked
        await asyncio.sleep(6 * 86400)  # six days: nothing is old enough
        assert await Outbox.filter(game_id=gid).count() == len(statuses)
        await add(svc, gid, "announce")  # delivered now, kept a week from now
        await asyncio.sleep(2 * 86400)  # eight days after the first ones
        left = await Outbox.filter(game_id=gid).values_list("status", flat=True)
        assert sorted(left) == [DELIVERED, "parked"], left  # the new one, the parked one
        assert worker.pruned == len(statuses) - 1
        await worker.stop()

    run(tmp_path, body)


def test_the_health_line_counts_each_lanes_backlog(tmp_path: Path,
                                                   caplog: pytest.LogCaptureFixture) -> None:
    async def body(loop: VirtualTimeLoop, svc: GameService) -> None:
        gid = await svc.create(1, 8, MASTER, "Health")
        await add(svc, gid, "push", 2)
        await asyncio.sleep(30)
        await add(svc, gid, "edit")
        lanes = await backlog(lambda e: LANES[e.kind], 3, loop.utcnow(),
                              names=["announce", "places", "cosmetic"])
        assert [(h.name, h.pending) for h in lanes] == [
            ("announce", 0), ("places", 2), ("cosmetic", 1)]
        assert lanes[0].oldest is None and lanes[1].oldest == pytest.approx(30, abs=1)
        line = health_line(lanes, [0, 3, 0])
        assert line == ("outbox: announce 0 pending; places 2 pending, oldest 30 s "
                        "(late 3); cosmetic 1 pending, oldest 0 s")
        # the worker logs it at its interval
        gate = asyncio.Event()

        async def deliver(entry: OutboxEntry) -> None:
            await gate.wait()

        worker = OutboxWorker(deliver, service=svc, now=loop.utcnow, health_interval=60,
                              lane=lambda e: LANES[e.kind], lanes=3,
                              names=["announce", "places", "cosmetic"])
        with caplog.at_level(logging.INFO, logger="core.storage.outbox"):
            await worker.start()
            await asyncio.sleep(61)
            gate.set()
            await asyncio.sleep(1)
            await worker.stop()
        lines = [r.getMessage() for r in caplog.records if "pending" in r.getMessage()]
        assert lines and "places 2 pending" in lines[0]

    run(tmp_path, body)


def test_mafia_bot_status_prints_the_backlog(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """`mafia-bot status` reads the database of DATABASE_URL, no bot running."""
    import cli

    url = f"sqlite://{tmp_path / 'o.db'}"

    async def seed() -> None:
        await init_db(url)
        svc = GameService()
        gid = await svc.create(1, 9, MASTER, "Status")
        await svc.set_discord(gid, DiscordPatch(), extra_outbox=[
            OutboxItem(kind="place", payload={"seat": 0}),
            OutboxItem(kind="tally", payload={"op": "edit"})])
        await svc.close()
        await close_db()

    asyncio.run(seed())
    monkeypatch.setenv("DATABASE_URL", url)
    assert cli.main(["status"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("outbox: announce 0 pending; places 1 pending, oldest ")
    assert "cosmetic 1 pending" in out and "roles 0 pending" in out
