"""The dead's silence in the game channel (cogs/delivery/silence.py): one PATCH of the channel's
whole overwrite list per change, exact across a restart, never undone by a cache the
gateway has not updated yet, and one PUT per member where one request cannot carry it."""

from __future__ import annotations

import json
from typing import Any

import discord
import pytest

from cogs.delivery.silence import mute_bits
from core.sight.places import SILENCE_KIND
from core.storage.models import Outbox
from tests.bot.helpers import Lives, Table, open_table, rebind, wait_for
from tests.bot.test_delivery import freeze
from tests.bot.test_rest_per_phase import TWO_DEATHS_ROLES, overwrite_requests, two_killed
from tests.harness import Harness

PATCH = "PATCH /channels/{channel_id}"
PUT = "PUT /channels/{channel_id}/permissions/{target}"
THREADS = discord.Permissions(manage_threads=True).value


def overwrites(h: Harness, channel: int) -> dict[int, tuple[int, int]]:
    return {int(o["id"]): (int(o["allow"]), int(o["deny"]))
            for o in h.world.channel(channel)["permission_overwrites"]}


async def silent_exactly(h: Harness, t: Table, dead: list[Any]) -> None:
    """The dead post nothing (their overwrite: the mute bits, plus what an admin set on
    the first), the living post, and the game channel holds no other overwrite."""
    bits = mute_bits(h.guild().me.guild_permissions)  # MUTE, as far as the bot holds it
    listed = overwrites(h, t.channel)
    assert set(listed) == {d.id for d in dead}, listed
    assert listed[dead[0].id] == (0, bits | THREADS)  # the admin's deny is kept
    for d in dead[1:]:
        assert listed[d.id] == (0, bits)
    for d in dead:
        perms = h.permissions_in(d, t.channel)
        assert perms.view_channel and not perms.send_messages and not perms.add_reactions
    assert all(h.permissions_in(p, t.channel).send_messages for p in await t.living())


async def night_ready(h: Harness) -> tuple[Table, list[Any]]:
    t = await open_table(h, 8, roles=TWO_DEATHS_ROLES)
    victims = await two_killed(t)
    h.set_overwrite(t.channel, victims[0], (0, THREADS))  # an admin's
    return t, victims


async def test_a_restart_between_commit_and_delivery_silences_exactly(lives: Lives) -> None:
    t, victims = await night_ready(lives.h)
    await t.bot.outbox.stop()  # the process dies before the outbox gets to the night's end
    assert (await t.do(t.master, "master advance")).ephemeral
    assert overwrites(lives.h, t.channel) == {victims[0].id: (0, THREADS)}  # not yet
    h = await lives.restart()
    t = rebind(t, h)
    first = len(h.fake.requests)
    await t.settle()
    assert overwrite_requests(h, t.channel, first) == [PATCH]
    await silent_exactly(h, t, victims)


async def test_a_crash_after_the_patch_sends_nothing_again(lives: Lives) -> None:
    """Posted, then dead before the entry is marked delivered: the next life finds the
    list in place (its cache, from the gateway's GUILD_CREATE) and sends no request."""
    t, victims = await night_ready(lives.h)
    bot: Any = t.bot
    real, hit = bot.outbox._mark_delivered, []

    async def die(ids: list[int]) -> None:
        kinds = await Outbox.filter(id__in=ids).values_list("kind", flat=True)
        if SILENCE_KIND not in kinds:
            await real(ids)
            return
        hit.append(ids)
        await freeze()

    bot.outbox._mark_delivered = die
    assert (await t.do(t.master, "master advance")).ephemeral
    await wait_for(lambda: bool(hit), "the silence to be sent")
    h = await lives.restart()
    t = rebind(t, h)
    first = len(h.fake.requests)
    await t.settle()
    assert overwrite_requests(h, t.channel, first) == []
    await silent_exactly(h, t, victims)
    rows = await Outbox.filter(game_id=t.game_id, kind=SILENCE_KIND)
    assert rows and all(r.status == "delivered" for r in rows), [r.status for r in rows]


async def test_a_lagging_gateway_never_undoes_the_last_change(h: Harness) -> None:
    """Two changes before the gateway told the cache of the first: the second list
    still carries the first's (what this process wrote stands over the stale cache)."""
    t, victims = await night_ready(h)
    assert h.gateway is not None
    h.gateway.enabled = False  # CHANNEL_UPDATE does not reach discord.py's cache
    try:
        await t.advance()  # the night ends: two silenced
        kicked = next(p for p in await t.living() if p.id != t.master.id)
        assert (await t.do(t.master, "master kick", player=str(kicked.id))).ephemeral
        await t.settle()
    finally:
        h.gateway.enabled = True
    assert not (await t.state()).over
    patches = [json.dumps(r.json) for r in h.requests_to(PATCH, channel_id=t.channel)]
    assert len(patches) == 2
    await silent_exactly(h, t, [*victims, kicked])


@pytest.mark.parametrize("blocker", ["no_manage_channels", "an_admins_bits"])
async def test_where_one_patch_cannot_carry_it_each_member_is_one_put(
        h: Harness, blocker: str) -> None:
    """PATCH needs Manage Channels in the channel (one PUT only Manage Roles), and the
    whole list would carry bits the bot may not set (an admin's allow of Manage Messages
    to a role): member by member then, as before, exact all the same."""
    t, victims = await night_ready(h)
    if blocker == "no_manage_channels":
        target, kept = h.world.bot_id, (0, discord.Permissions(manage_channels=True).value)
    else:
        target = h.add_role("Moderators").id
        kept = (discord.Permissions(manage_messages=True).value, 0)
    h.set_overwrite(t.channel, target, kept)
    first = len(h.fake.requests)
    await t.advance()
    assert overwrite_requests(h, t.channel, first) == [PUT, PUT]
    assert overwrites(h, t.channel)[target] == kept
    h.set_overwrite(t.channel, target, None)
    await silent_exactly(h, t, victims)
