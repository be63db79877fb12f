"""Phase races through the real command tree: late votes and orders, deadlines that fire
while a command is being applied, and two phase ends at once.

Interleavings are made deterministic with the service's per-game lock: the test holds
it, queues the contenders on it in a chosen order (asyncio locks are FIFO), then lets go.
The scheduler is made due by moving its clock past the phase deadline.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from core.game.roles import Role
from core.game.rules import night as night_rules
from core.game.state import PhaseKind
from core.sight.narrate import team_name
from core.text.i18n import t as tr
from tests.bot.helpers import ROLES, Table, confirmed, open_table
from tests.bot.helpers import wait_for as until
from tests.bot.test_bad_input import dump_db
from tests.harness import Harness, InteractionResult


# --- moves -------------------------------------------------------------------------------
async def to_day_one(h: Harness, *, kick: tuple[Role, ...] = ()) -> Table:
    """8 players dealt; day 0 checked in (after the master kicks one holder of each role in
    `kick`); in night 0 the mafia attacks a citizen the bouncer covers; day 1 is open.
    Everybody does his part, so nobody drops out for inactivity."""
    t = await open_table(h, 8, roles=ROLES)
    assert (await t.do(t.master, "game start")).ephemeral
    await t.settle()
    for role in kick:
        victim = (await t.holders(role))[-1]
        assert (await t.do(t.master, "master kick", player=str(victim.id))).ephemeral
    for p in await t.living():
        assert confirmed(await t.do(p, "checkin"))
    await t.advance()
    state = await t.state()
    citizen = (await t.holders(Role.CITIZEN))[0]
    acting = state.clans[0].acting
    if acting is not None:
        assert (await t.do(t.member(acting), "night", target=str(citizen.id))).ephemeral
    for bouncer in await t.holders(Role.BOUNCER):
        assert (await t.do(bouncer, "night", target=str(citizen.id))).ephemeral
    await t.advance()
    assert await t.phase() == (PhaseKind.DAY, 1)
    return t


async def to_night_one(h: Harness) -> Table:
    """Day 1 hangs a citizen (everybody votes); night 1 is open."""
    t = await to_day_one(h)
    victim = (await t.holders(Role.CITIZEN))[-1]
    for p in await t.living():
        target = victim if p.id != victim.id else (await t.holders(Role.CITIZEN))[0]
        assert confirmed(await t.do(p, "vote", player=str(target.id)))
    await t.advance()
    assert await t.phase() == (PhaseKind.NIGHT, 1)
    return t


def lock_of(t: Table) -> asyncio.Lock:
    return t.bot.service.cache(t.game_id).lock


def waiters(lock: asyncio.Lock) -> int:
    return len(lock._waiters or ())  # type: ignore[attr-defined]


async def fire_deadline(t: Table) -> None:
    """Move the scheduler's clock past the current deadline and wake it."""
    deadline = (await t.state()).deadline
    assert deadline is not None
    t.bot.scheduler.set_clock(lambda: deadline + timedelta(seconds=1))


async def scheduler_idle(t: Table) -> None:
    await until(lambda: not t.bot.scheduler.busy, "the scheduler's fire to end")


Contender = Callable[[], Any]


async def queued(t: Table, *contenders: Contender) -> list[Any]:
    """Hold the game's lock, start the contenders one by one (each must be waiting on the
    lock before the next starts), release, and return what each started."""
    lock = lock_of(t)
    started: list[Any] = []
    await lock.acquire()
    try:
        for n, contender in enumerate(contenders, start=1):
            started.append(await contender())
            await until(lambda n=n: waiters(lock) == n, f"contender {n} to queue on the lock")
    finally:
        lock.release()
    for item in started:
        if isinstance(item, InteractionResult):
            await t.h.finish(item)
    await scheduler_idle(t)
    await t.settle()
    return started


def slash(t: Table, user: Any, command: str, **options: Any) -> Contender:
    return lambda: t.do(user, command, wait=False, **options)


def deadline(t: Table) -> Contender:
    async def go() -> str:
        await fire_deadline(t)
        return "deadline"
    return go


def menu(t: Table, user: Any, day: int, target: Any) -> Contender:
    custom_id = f"mafia:vote:{t.game_id}:{day}"
    return lambda: t.h.click(user, custom_id, values=[str(target.id)], wait=False)


async def logged(t: Table, kind: str) -> list[dict[str, Any]]:
    return [e.data for _, _, events in await t.bot.service.log(t.game_id)
            for e in events if e.kind == kind]


def late(res: InteractionResult, lang: str = "en") -> None:
    assert res.ephemeral and res.text == tr("error.phase_ended", lang), res.text


# --- late votes and orders -----------------------------------------------------------------
async def test_day_one_vote_menu_clicked_after_day_one(h: Harness) -> None:
    t = await to_night_one(h)  # day 1 is over
    voter, target = (await t.living())[:2]
    before = await dump_db()
    res = await h.click(voter, f"mafia:vote:{t.game_id}:1", values=[str(target.id)],
                        locale="ru")
    assert res.ephemeral and res.text == tr("error.menu_expired", "ru")
    assert await dump_db() == before
    await t.advance()  # night 1 ends: day 2
    await t.settle()
    assert (await t.state()).phase is PhaseKind.DAY
    before = await dump_db()
    res = await h.click(voter, f"mafia:vote:{t.game_id}:1", values=[str(target.id)])
    assert res.ephemeral and res.text == tr("error.menu_expired", "en")
    assert await dump_db() == before
    assert (await t.state()).vote_log == []  # day 2 counts nothing of it


async def test_vote_menu_click_racing_the_deadline_is_refused_not_moved(h: Harness) -> None:
    t = await to_day_one(h)
    voter, target = (await t.living())[:2]
    _, res = await queued(t, deadline(t), menu(t, voter, 1, target))
    late(res)
    state = await t.state()
    assert (state.phase, state.number) == (PhaseKind.NIGHT, 1)
    assert voter.id not in state.days[-1].votes and state.vote_log == []


async def test_slash_vote_racing_the_deadline_is_refused(h: Harness) -> None:
    t = await to_day_one(h)
    voter, target = (await t.living())[:2]
    _, res = await queued(t, deadline(t), slash(t, voter, "vote", player=str(target.id)))
    late(res)
    state = await t.state()
    assert voter.id not in state.days[-1].votes


async def test_night_order_racing_the_night_end_never_counts_for_the_next_night(
        h: Harness) -> None:
    t = await to_night_one(h)
    state = await t.state()
    acting = t.member(state.clans[0].acting)  # type: ignore[arg-type]
    victim = (await t.holders(Role.CITIZEN))[0]
    _, res = await queued(t, deadline(t), slash(t, acting, "night", target=str(victim.id)))
    late(res)
    state = await t.state()
    assert (state.phase, state.number) == (PhaseKind.DAY, 2)
    assert not any(o.actor == acting.id for o in state.orders), state.orders
    await t.bot.service.verify(t.game_id)


async def test_a_day_order_racing_the_day_end_still_counts_for_that_night(h: Harness) -> None:
    """Orders for night N are given by day N or in night N: the day ending on the way
    does not change the night the order is for, so it is accepted, not refused."""
    t = await to_day_one(h)
    state = await t.state()
    acting = t.member(night_rules.acting_mafioso(state, 1))  # type: ignore[arg-type]
    victim = (await t.holders(Role.CITIZEN))[-1]
    _, res = await queued(t, deadline(t), slash(t, acting, "night", target=str(victim.id)))
    assert res.ephemeral and res.text != tr("error.phase_ended", "en"), res.text
    state = await t.state()
    assert (state.phase, state.number) == (PhaseKind.NIGHT, 1)
    assert [(o.actor, o.target, o.night) for o in state.orders] == [(acting.id, victim.id, 1)]


async def test_a_command_ahead_of_the_deadline_is_applied_first(h: Harness) -> None:
    """The deadline waits for the command being applied: the vote counts, then the day
    closes with it; the log replays to the same state."""
    t = await to_day_one(h)
    voter, target = (await t.living())[:2]
    res, _ = await queued(t, slash(t, voter, "vote", player=str(target.id)), deadline(t))
    assert confirmed(res), res.text  # the red vote embed, confirmed to the voter
    state = await t.state()
    assert (state.phase, state.number) == (PhaseKind.NIGHT, 1)
    assert state.days[-1].votes == {voter.id: target.id}
    await t.bot.service.verify(t.game_id)


async def test_night_order_ahead_of_the_deadline_is_resolved_that_night(h: Harness) -> None:
    t = await to_night_one(h)
    state = await t.state()
    acting = t.member(state.clans[0].acting)  # type: ignore[arg-type]
    victim = (await t.holders(Role.CITIZEN))[0]
    res, _ = await queued(t, slash(t, acting, "night", target=str(victim.id)), deadline(t))
    assert res.ephemeral and res.text != tr("error.phase_ended", "en")
    state = await t.state()
    assert (state.phase, state.number) == (PhaseKind.DAY, 2)
    assert not state.player(victim.id).alive  # type: ignore[union-attr]


# --- two phase ends at once -----------------------------------------------------------------
async def test_two_master_advances_change_the_phase_once(h: Harness) -> None:
    t = await to_day_one(h)
    serial = (await t.state()).serial
    phases = len(await logged(t, "phase_started"))
    a, b = await queued(t, slash(t, t.master, "master advance"),
                        slash(t, t.master, "master advance"))
    assert a.ephemeral and a.text == tr("master.advanced", "en")
    late(b)
    state = await t.state()
    assert state.serial == serial + 1 and (state.phase, state.number) == (PhaseKind.NIGHT, 1)
    assert len(await logged(t, "phase_started")) == phases + 1
    await t.bot.service.verify(t.game_id)


ORDERS = {
    "master-master": lambda t: (slash(t, t.master, "master advance"),
                                slash(t, t.master, "master advance")),
    "scheduler-master": lambda t: (deadline(t), slash(t, t.master, "master advance")),
    "master-scheduler": lambda t: (slash(t, t.master, "master advance"), deadline(t)),
}


@pytest.mark.parametrize("order", list(ORDERS))
async def test_the_game_ends_once(h: Harness, order: str) -> None:
    """The day's vote hangs the last mafioso; two phase ends race at the deadline:
    exactly one phase change, one game over (logged and posted), nobody dies twice."""
    t = await to_day_one(h, kick=(Role.MAFIOSO, Role.BOUNCER))
    don = (await t.holders(Role.MAFIOSO))[0]
    for p in await t.living():
        if p.id != don.id:
            assert confirmed(await t.do(p, "vote", player=str(don.id)))
    serial = (await t.state()).serial
    results = await queued(t, *ORDERS[order](t))
    replies = [r for r in results if isinstance(r, InteractionResult)]
    state = await t.state()
    assert state.over and state.serial == serial + 1
    assert not state.player(don.id).alive  # type: ignore[union-attr]
    assert len(await logged(t, "game_over")) == 1
    deaths = [d["uid"] for d in await logged(t, "player_died")]
    assert len(deaths) == len(set(deaths))
    posted = [m for m in h.messages_in(t.channel) for e in m.embeds
              if tr("event.game_over.head", "ru", winners="")[:12] in e.get("description", "")]
    assert len(posted) == 1
    # the advance that ended the game says so, and who won (issue 32)
    winners = ", ".join(team_name(w, "en") for w in state.winners)
    advanced = [r for r in replies
                if r.text == tr("master.advanced_over", "en", winners=winners)]
    if order == "master-scheduler":
        assert len(advanced) == 1  # the master won; the scheduler found the game over
    elif order == "scheduler-master":
        assert advanced == [] and replies[0].ephemeral  # refused: the day had just ended
    else:
        assert len(advanced) == 1 and replies[1].ephemeral and replies[1] is not advanced[0]
    await t.bot.service.verify(t.game_id)
