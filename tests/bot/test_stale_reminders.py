"""A reminder whose reason is gone when it is delivered is dropped (issue 30): a prod
held back by Discord's limits must not reach a player who has voted meanwhile."""

from __future__ import annotations

from typing import Any

from core.storage.models import DELIVERED, Outbox
from tests.bot.helpers import confirmed, day_one
from tests.bot.test_places import place, pushes
from tests.harness import Harness


async def test_a_prod_is_dropped_for_who_voted_before_it_went_out(h: Harness) -> None:
    bot: Any = h.bot
    t = await day_one(h)
    living = await t.living()
    voter, idle = living[0], living[1]
    before = {p.id: len(pushes(h, await place(t, p.id))) for p in (voter, idle)}
    await bot.outbox.stop()  # the prod waits (a busy server) ...
    res = await t.do(t.master, "master prod")
    assert res.ephemeral, res.text
    # ... while the voter votes
    assert confirmed(await t.do(voter, "vote", player=str(idle.id)))
    await bot.outbox.start()
    await t.settle()
    assert len(pushes(h, await place(t, idle.id))) == before[idle.id] + 1  # reminded
    assert len(pushes(h, await place(t, voter.id))) == before[voter.id]  # not: he voted
    statuses = {r.status for r in await Outbox.filter(game_id=t.game_id)}
    assert statuses == {DELIVERED}  # dropped is done, not parked or pending
