"""Scheduled reminders: due at the master's lead time, sent once through the service
(logged, outbox entries per player), and durable across restarts."""

from __future__ import annotations

import json
from datetime import timedelta

from core.game import commands as c
from core.game.commands import COMMAND_ADAPTER
from core.game.events import Event
from core.game.state import PhaseKind
from core.storage.db import close_db, init_db
from core.storage.models import EventLog, Outbox
from core.storage.scheduler import DeadlineScheduler
from core.storage.service import EVENT_KIND, GameService

from .helpers import looked_again
from .test_storage_scheduler import MASTER, T0, Clock, started_game, until


async def reminder_entries(gid: int) -> list[Event]:
    rows = await Outbox.filter(game_id=gid, kind=EVENT_KIND).order_by("ordinal")
    events = [Event.model_validate(json.loads(r.payload)["event"]) for r in rows]
    return [e for e in events if e.kind == "reminder"]


async def test_reminder_fires_once_at_the_lead_time(game_service: GameService) -> None:
    svc = game_service
    gid = await started_game(svc)
    await svc.apply(gid, c.CheckIn(by=100, at=T0))
    deadline = (await svc.state(gid)).deadline
    assert deadline is not None
    due = deadline - timedelta(minutes=60)  # the default lead time
    clock = Clock(due - timedelta(seconds=1))
    sched = DeadlineScheduler(svc, now=clock)
    await sched.start()
    try:
        assert sched.reminders == {gid: due}
        await looked_again(sched)
        assert sched.reminded == 0 and not sched.reminding
        clock.now = due
        sched.wake()
        await until(lambda: sched.reminded == 1)
        assert sched.reminders == {}  # sent: nothing more for this deadline
        entries = await reminder_entries(gid)
        assert [e.audience.players for e in entries] == [[100 + i] for i in range(1, 7)]
        assert all(e.audience.kind == "players" and e.data["what"] == "checkin"
                   for e in entries)
        last = await EventLog.filter(game_id=gid).order_by("-seq").first()
        assert last is not None
        cmd = COMMAND_ADAPTER.validate_json(last.command)
        assert isinstance(cmd, c.Remind) and cmd.by == 0 and cmd.scheduled
        await svc.verify(gid)
        # the master extends: a new deadline, a new reminder
        await svc.apply(gid, c.Extend(by=MASTER, at=due, minutes=30))
        assert sched.reminders == {gid: due + timedelta(minutes=30)}
    finally:
        await sched.stop()


async def test_prod_writes_the_same_outbox_entries(game_service: GameService) -> None:
    svc = game_service
    gid = await started_game(svc)
    await svc.apply(gid, c.Remind(by=MASTER, at=T0))
    entries = await reminder_entries(gid)
    assert len(entries) == 7 and {u for e in entries for u in e.audience.players} == set(
        range(100, 107))


async def test_reminders_survive_restarts_and_are_never_repeated(storage_url: str) -> None:
    await init_db(storage_url)
    svc = GameService()
    gid = await started_game(svc)
    deadline = (await svc.state(gid)).deadline
    assert deadline is not None
    due = deadline - timedelta(minutes=60)
    await svc.close()
    await close_db()  # down before the reminder

    await init_db(storage_url)
    try:
        svc = GameService()
        clock = Clock(due + timedelta(minutes=5))  # came back after it was due
        sched = DeadlineScheduler(svc, now=clock)
        await sched.start()  # loaded from the stored state, fires at once
        await until(lambda: sched.reminded == 1)
        assert len(await reminder_entries(gid)) == 7
        await sched.stop()
        await svc.close()
    finally:
        await close_db()

    await init_db(storage_url)  # a second restart: the reminder is not sent again
    try:
        svc = GameService()
        sched = DeadlineScheduler(svc, now=Clock(due + timedelta(minutes=10)))
        await sched.start()
        assert sched.reminders == {}
        await looked_again(sched)
        assert sched.reminded == 0 and not sched.reminding
        assert len(await reminder_entries(gid)) == 7
        await sched.stop()
        await svc.close()
    finally:
        await close_db()


async def test_overdue_deadline_wins_over_its_reminder(storage_url: str) -> None:
    await init_db(storage_url)
    svc = GameService()
    gid = await started_game(svc)
    deadline = (await svc.state(gid)).deadline
    assert deadline is not None
    await svc.close()
    await close_db()

    await init_db(storage_url)
    try:
        svc = GameService()
        clock = Clock(deadline + timedelta(minutes=1))  # down across both
        sched = DeadlineScheduler(svc, now=clock)
        await sched.start()
        await until(lambda: sched.fired == 1)
        state = await svc.state(gid)
        assert state.phase is PhaseKind.NIGHT and sched.reminded == 0
        assert await reminder_entries(gid) == []
        assert state.deadline is not None  # the night's own reminder is armed
        assert sched.reminders == {gid: state.deadline - timedelta(minutes=60)}
        await sched.stop()
        await svc.close()
    finally:
        await close_db()
