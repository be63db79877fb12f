"""The deadline players read is the moment the phase ends (issue 30): the timestamps in
the game channel carry the game's own second of the minute, and the scheduler fires at
that second, not before; firing a few seconds late (a storm) moves no later deadline."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from core.game.rules.deadlines import offset
from core.game.state import PhaseKind
from tests.bot.helpers import ROLES, Table, open_table, posted, start
from tests.bot.helpers import wait_for as until
from tests.harness import Harness
from tests.storage.helpers import looked_again

SHOWN = re.compile(r"<t:(\d+):d> <t:(\d+):T> \(<t:(\d+):R>\)")


def shown(h: Harness, t: Table, after: int) -> set[datetime]:
    """Every deadline the game channel shows in its posts from the `after`-th on."""
    found: set[datetime] = set()
    for message in posted(h, t.channel)[after:]:
        for stamps in SHOWN.findall(message.text):
            assert len(set(stamps)) == 1, stamps  # date, time and "in N hours" agree
            found.add(datetime.fromtimestamp(int(stamps[0]), UTC))
    return found


async def fire_at(t: Table, moment: datetime) -> None:
    """The scheduler's clock at `moment`; wait until the Advance it owes is through."""
    sched = t.bot.scheduler
    before = sched.fired
    sched.set_clock(lambda: moment)
    await until(lambda: sched.fired > before and not sched.busy, "the deadline to fire")
    await t.settle()


async def test_the_deadline_players_see_is_the_one_that_fires(h: Harness) -> None:
    t = await open_table(h, 8, roles=ROLES)
    assert (await t.do(t.master, "game options", language="en")).ephemeral
    await start(t)
    state = await t.state()
    assert state.deadline is not None
    (day0,) = shown(h, t, 0)
    assert day0 == state.deadline  # to the microsecond: the shown second is the whole
    assert day0.second == offset(state.seed)
    sched = t.bot.scheduler
    sched.set_clock(lambda: day0 - timedelta(milliseconds=1))
    await looked_again(sched)  # the reminder an hour ahead is due, the deadline not yet
    await until(lambda: not sched.reminding, "the reminder")
    await t.settle()
    assert not sched.busy and await t.phase() == (PhaseKind.DAY, 0)
    assert shown(h, t, 0) == {day0}  # the reminder names the same moment
    seen = len(posted(h, t.channel))
    await fire_at(t, day0)
    assert await t.phase() == (PhaseKind.NIGHT, 0)
    (night0,) = shown(h, t, seen)
    assert night0 == day0 + timedelta(hours=12) == (await t.state()).deadline
    seen = len(posted(h, t.channel))
    await fire_at(t, night0 + timedelta(seconds=4.5))  # late, as in a storm
    assert await t.phase() == (PhaseKind.DAY, 1)
    (day1,) = shown(h, t, seen)
    assert day1 == night0 + timedelta(hours=24) == (await t.state()).deadline
