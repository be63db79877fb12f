"""Commands on one game are serialized; different games never wait for each other."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path

from core.game import commands as c
from core.game.rules.voting import current_votes
from core.game.state import PhaseKind
from core.play.sim import MASTER
from core.storage.models import EventLog
from core.storage.service import GameService

from .helpers import on_virtual_time, settled

T0 = datetime(2026, 1, 1, tzinfo=UTC)


async def day_one(svc: GameService, players: int, channel: int = 10) -> int:
    """A game on day 1 with everybody alive: all check in, nobody acts at night 0."""
    gid = await svc.create(1, channel, MASTER, "Crowd", seed=1)
    for i in range(players):
        await svc.apply(gid, c.Join(by=100 + i, at=T0, name=f"P{i}"))
    await svc.apply(gid, c.Start(by=MASTER, at=T0))
    for p in (await svc.state(gid)).players:
        await svc.apply(gid, c.CheckIn(by=p.uid, at=T0 + timedelta(minutes=1)))
    for _ in range(2):
        deadline = (await svc.state(gid)).deadline
        assert deadline is not None
        await svc.apply(gid, c.Advance(by=0, at=deadline, deadline=True))
    state = await svc.state(gid)
    assert state.phase is PhaseKind.DAY and state.number == 1
    return gid


async def test_thirty_simultaneous_votes(game_service: GameService) -> None:
    svc = game_service
    gid = await day_one(svc, 30)
    state = await svc.state(gid)
    voters = [p.uid for p in state.living()]
    assert len(voters) == 30
    seq0 = state.seq
    at = T0 + timedelta(days=1, hours=13)
    results = await asyncio.gather(*(
        svc.apply(gid, c.Vote(by=uid, at=at, target=voters[(i + 1) % 30]))
        for i, uid in enumerate(voters)))
    assert sorted(r.seq for r in results) == list(range(seq0 + 1, seq0 + 31))
    final = await svc.state(gid)
    assert final.seq == seq0 + 30
    assert len(current_votes(final)) == 30
    assert {m.voter for m in final.vote_log} == set(voters)
    logged = await EventLog.filter(game_id=gid, seq__gt=seq0).order_by("seq") \
        .values_list("seq", flat=True)
    assert logged == list(range(seq0 + 1, seq0 + 31))
    await svc.verify(gid)


def test_a_held_game_does_not_block_others(tmp_path: Path) -> None:
    """On SQLite: the virtual clock sees its worker thread, not a PostgreSQL socket
    (the lock is the process's own on either backend)."""
    async def body(svc: GameService) -> None:
        busy = await svc.create(1, 10, MASTER, "Busy")
        free = [await svc.create(1, 20 + i, MASTER, f"Free {i}") for i in range(5)]
        lock = svc.cache.slots[busy].lock
        await lock.acquire()  # stands for a command stuck on this game
        try:
            waiting = asyncio.create_task(svc.apply(busy, c.Join(by=100, at=T0, name="W")))
            await settled()  # everything that could run has run
            assert not waiting.done()
            done = await asyncio.gather(*(
                svc.apply(gid, c.Join(by=100 + k, at=T0, name=f"P{k}"))
                for gid in free for k in range(6)))
            await settled()
            assert len(done) == 30 and not waiting.done()
        finally:
            lock.release()
        assert (await waiting).seq == 1
        for gid in free:
            assert [p.uid for p in (await svc.state(gid)).players] == list(range(100, 106))
            await svc.verify(gid)

    on_virtual_time(f"sqlite://{tmp_path / 'v.db'}", body)


async def test_many_games_interleaved(game_service: GameService) -> None:
    svc = game_service
    games = [await svc.create(1, 100 + g, MASTER, f"G{g}", seed=g) for g in range(12)]
    await asyncio.gather(*(
        svc.apply(gid, c.Join(by=100 + k, at=T0, name=f"P{k}"))
        for k in range(8) for gid in games))
    await asyncio.gather(*(svc.apply(gid, c.Start(by=MASTER, at=T0)) for gid in games))
    for gid in games:
        state = await svc.state(gid)
        assert len(state.players) == 8 and state.phase is PhaseKind.DAY
        await svc.verify(gid)
