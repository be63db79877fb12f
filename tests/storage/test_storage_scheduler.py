"""DeadlineScheduler with a fake clock: fires on time, re-arms, survives restarts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from core.game import commands as c
from core.game.commands import COMMAND_ADAPTER
from core.game.state import PhaseKind
from core.play.sim import MASTER
from core.storage.db import close_db, init_db
from core.storage.models import EventLog
from core.storage.scheduler import DeadlineScheduler
from core.storage.service import GameService
from tests.storage.helpers import looked_again, until

T0 = datetime(2026, 1, 1, tzinfo=UTC)


class Clock:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


async def started_game(svc: GameService, channel: int = 10, players: int = 7) -> int:
    gid = await svc.create(1, channel, MASTER, "Timed", seed=channel)
    for i in range(players):
        await svc.apply(gid, c.Join(by=100 + i, at=T0, name=f"P{i}"))
    await svc.apply(gid, c.Start(by=MASTER, at=T0))
    return gid


async def test_deadline_fires_and_rearms(game_service: GameService) -> None:
    svc = game_service
    gid = await started_game(svc)
    first = (await svc.state(gid)).deadline
    assert first is not None
    clock = Clock(first - timedelta(seconds=1))
    sched = DeadlineScheduler(svc, now=clock)
    await sched.start()
    try:
        assert sched.deadlines == {gid: first}
        await looked_again(sched)
        assert not sched.busy and sched.fired == 0  # not yet
        assert (await svc.state(gid)).number == 0
        clock.now = first
        sched.wake()
        await until(lambda: sched.fired == 1)
        state = await svc.state(gid)
        assert state.phase is PhaseKind.NIGHT and state.deadline is not None
        assert sched.deadlines == {gid: state.deadline}  # re-armed by the service
        last = await EventLog.filter(game_id=gid).order_by("-seq").first()
        assert last is not None
        cmd = COMMAND_ADAPTER.validate_json(last.command)
        assert isinstance(cmd, c.Advance) and cmd.by == 0 and cmd.deadline and cmd.at == first
    finally:
        await sched.stop()


async def test_extend_moves_the_deadline(game_service: GameService) -> None:
    svc = game_service
    gid = await started_game(svc)
    first = (await svc.state(gid)).deadline
    assert first is not None
    clock = Clock(T0)
    sched = DeadlineScheduler(svc, now=clock)
    await sched.start()
    try:
        await svc.apply(gid, c.Extend(by=MASTER, at=T0, minutes=60))
        later = first + timedelta(minutes=60)
        assert sched.deadlines == {gid: later}
        clock.now = first
        await looked_again(sched)
        assert sched.fired == 0 and not sched.busy
        clock.now = later
        sched.wake()
        await until(lambda: sched.fired == 1)
    finally:
        await sched.stop()


async def test_stale_deadline_is_resynced_not_fired(game_service: GameService) -> None:
    svc = game_service
    gid = await started_game(svc)
    real = (await svc.state(gid)).deadline
    assert real is not None
    clock = Clock(T0 + timedelta(minutes=5))
    sched = DeadlineScheduler(svc, now=clock)
    await sched.start()
    try:
        sched.note(gid, T0)  # a wrong, past deadline: the engine refuses deadline_not_reached
        await until(lambda: sched.deadlines.get(gid) == real)
        assert sched.fired == 0 and (await svc.state(gid)).number == 0
    finally:
        await sched.stop()


async def test_many_games_and_game_end(game_service: GameService) -> None:
    svc = game_service
    games = [await started_game(svc, channel=10 + i) for i in range(4)]
    clock = Clock(T0)
    sched = DeadlineScheduler(svc, now=clock)
    await sched.start()
    try:
        await svc.apply(games[0], c.Cancel(by=MASTER, at=T0))
        assert games[0] not in sched.deadlines and len(sched.deadlines) == 3
        clock.now = T0 + timedelta(days=30)
        sched.wake()
        await until(lambda: sched.fired == 3)
        for gid in games[1:]:
            assert (await svc.state(gid)).phase is PhaseKind.NIGHT
    finally:
        await sched.stop()


async def test_restart_resumes_and_overdue_fires_at_once(storage_url: str) -> None:
    await init_db(storage_url)
    svc = GameService()
    gid = await started_game(svc)
    late = await started_game(svc, channel=11)
    first = (await svc.state(gid)).deadline
    assert first is not None
    await close_db()  # the bot goes down before any deadline

    await init_db(storage_url)
    try:
        svc = GameService()
        clock = Clock(first - timedelta(minutes=1))
        sched = DeadlineScheduler(svc, now=clock)
        await sched.start()
        assert set(sched.deadlines) == {gid, late}  # loaded from the database
        await sched.stop()

        clock.now = first + timedelta(hours=6)  # down across the deadline
        sched = DeadlineScheduler(svc, now=clock)
        await sched.start()  # no wake(): overdue deadlines fire on start
        await until(lambda: sched.fired == 2)
        for g in (gid, late):
            state = await svc.state(g)
            assert state.phase is PhaseKind.NIGHT
            assert state.deadline is not None and state.deadline > clock.now
            await svc.verify(g)
        await sched.stop()
    finally:
        await close_db()
