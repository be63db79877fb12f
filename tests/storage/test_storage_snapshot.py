"""A day's votes and night orders store the whole state only every SNAPSHOT_EVERY-th
commit (core.storage.commit.stores_state): the game row's state may lag a few
commands behind, and a load (another process, a restart, an evicted cache) catches
up from the log. Every other command, a phase change and the end store it."""

from __future__ import annotations

from datetime import timedelta

import pytest

from core.game import commands as c
from core.game.engine import legal_targets, night_move
from core.game.errors import RuleError
from core.game.state import GameState, Options, PhaseKind
from core.play.sim import MASTER
from core.storage.commit import SNAPSHOT_EVERY
from core.storage.models import Game
from core.storage.service import GameService, ReplayMismatch
from tests.storage.test_storage_service import T0, lobby


async def _stored(gid: int) -> GameState:
    return GameState.model_validate_json((await Game.get(id=gid)).state)


async def _day_one(svc: GameService) -> int:
    gid = await lobby(svc, players=8)
    await svc.apply(gid, c.Start(by=MASTER, at=T0, confirm=True))
    for uid in range(100, 108):
        await svc.apply(gid, c.CheckIn(by=uid, at=T0))
    for _ in range(2):
        await svc.apply(gid, c.Advance(by=MASTER, at=T0))
    return gid


async def test_votes_store_the_state_every_nth_and_a_load_catches_up(
        game_service: GameService) -> None:
    svc = game_service
    gid = await _day_one(svc)
    state = await svc.state(gid)
    assert state.phase is PhaseKind.DAY and state.number == 1
    assert (await _stored(gid)).seq == state.seq  # the Advance stored it
    living = [p.uid for p in state.living()]
    lags, at = [], T0
    for i in range(6 * SNAPSHOT_EVERY):
        if len(lags) > 2 * SNAPSHOT_EVERY and lags[-1] > 0:
            break
        at += timedelta(minutes=5)  # past the vote cooldown
        voter = living[i % len(living)]
        target = living[(i + 1 + i // len(living)) % len(living)]
        if target == voter:
            target = living[(i + 2) % len(living)]
        cur = await svc.state(gid)
        if i % 3 == 0 and (actor := next(
                (u for u in living if night_move(cur, u) and legal_targets(cur, u, "night")),
                None)):
            cmd: c.Command = c.NightOrder(by=actor, at=at,
                                          target=legal_targets(cur, actor, "night")[0])
        else:
            cmd = c.Vote(by=voter, at=at, target=target)
        try:
            await svc.apply(gid, cmd)
        except RuleError:  # e.g. the same target again
            continue
        row = await Game.get(id=gid)
        lags.append(row.seq - (await _stored(gid)).seq)
    assert max(lags) == SNAPSHOT_EVERY - 1 and 0 in lags[1:]  # it lagged, then caught up
    assert lags[-1] > 0  # the last commands are in the log only
    live = (await svc.state(gid)).model_dump_json()
    await svc.verify(gid)
    svc.forget(gid)  # as an evicted cache or another process would: read and catch up
    assert (await svc.state(gid)).model_dump_json() == live
    fresh = GameService()  # a restarted bot
    assert (await fresh.state(gid)).model_dump_json() == live
    # ... and it goes on from there: the next Advance stores the whole state again
    await fresh.apply(gid, c.Advance(by=MASTER, at=at))
    assert (await _stored(gid)).model_dump_json() == (await fresh.state(gid)).model_dump_json()
    await fresh.verify(gid)


async def test_a_stored_state_that_differs_from_its_replay_is_found(
        game_service: GameService) -> None:
    svc = game_service
    gid = await _day_one(svc)
    state = await svc.state(gid)
    living = [p.uid for p in state.living()]
    await svc.apply(gid, c.Vote(by=living[0], at=T0 + timedelta(minutes=1), target=living[1]))
    row = await Game.get(id=gid)
    assert (await _stored(gid)).seq == row.seq - 1  # the vote is in the log only
    forged = (await _stored(gid)).model_copy(update={"title": "Forged"})
    await Game.filter(id=gid).update(state=forged.model_dump_json())
    with pytest.raises(ReplayMismatch):
        await svc.verify(gid)


def test_only_a_days_small_commands_skip_the_state() -> None:
    from core.storage.commit import stores_state

    day = GameState(seed=1, title="t", master=MASTER, options=Options(), phase=PhaseKind.DAY,
                    seq=10)
    vote = c.Vote(by=100, at=T0, target=101)
    assert not stores_state(vote, day, day.model_copy(update={"seq": 11}), 10)
    assert stores_state(vote, day, day.model_copy(update={"seq": 10 + SNAPSHOT_EVERY}), 10)
    night = day.model_copy(update={"seq": 11, "phase": PhaseKind.NIGHT})
    assert stores_state(c.NightOrder(by=100, at=T0, target=101), day, night, 10)
    ended = day.model_copy(update={"seq": 11, "phase": PhaseKind.ENDED})
    assert stores_state(vote, day, ended, 10)
    assert stores_state(c.Extend(by=MASTER, at=T0, minutes=1), day,
                        day.model_copy(update={"seq": 11}), 10)
