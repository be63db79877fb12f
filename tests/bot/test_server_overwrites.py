"""Issue 41, point 1, through the real command tree: what the server set on a member in
the game channel survives the game bit for bit. A moderator's mute (a member overwrite
denying the posting bits) stays after the member spectated, played and died; an admin's
allow of Attach Files and Embed Links comes back; a member who had no overwrite has none
again. The server's own overwrite is remembered with the game before the bot first
changes it, so a restart in between changes nothing."""

from __future__ import annotations

from typing import Any

import discord
import pytest

from cogs.delivery import overwrites as overwrites_module
from cogs.delivery.silence import mute_bits
from core.text.i18n import t as tr
from tests.bot.helpers import Lives, Table, open_table, rebind
from tests.bot.test_rest_per_phase import TWO_DEATHS_ROLES, two_killed
from tests.harness import Harness

# A moderator's mute, as the attack set it.
MODERATED = discord.Permissions(send_messages=True, add_reactions=True,
                                send_messages_in_threads=True, create_public_threads=True,
                                create_private_threads=True).value
# An admin's allow, on another member.
FILES = discord.Permissions(attach_files=True, embed_links=True).value


def overwrites(h: Harness, channel: int) -> dict[int, tuple[int, int]]:
    return {int(o["id"]): (int(o["allow"]), int(o["deny"]))
            for o in h.world.channel(channel)["permission_overwrites"]}


async def watchers(h: Harness, t: Table) -> tuple[Any, Any]:
    """The issue's two members: one muted by a moderator, one an admin allowed files;
    both spectate."""
    muted, trusted = h.add_member("Muted", locale="en-US"), h.add_member("Trusted",
                                                                        locale="en-US")
    h.set_overwrite(t.channel, muted, (0, MODERATED))
    h.set_overwrite(t.channel, trusted, (FILES, 0))
    for member in (muted, trusted):
        res = await t.do(member, "game spectate")
        assert res.ephemeral and tr("spectate.done", "en", title="Palermo") in res.text, \
            res.text
    await t.settle()
    return muted, trusted


def spectating(h: Harness, t: Table, muted: Any, trusted: Any) -> None:
    """While they spectate: the bot's mute on both, the moderator's deny never lifted."""
    bits = mute_bits(h.guild().me.guild_permissions)
    listed = overwrites(h, t.channel)
    assert listed[muted.id] == (0, MODERATED | bits), listed
    assert listed[trusted.id] == (0, bits), listed
    for member in (muted, trusted):
        perms = h.permissions_in(member, t.channel)
        assert not perms.send_messages and not perms.add_reactions and perms.view_channel


async def test_spectators_get_the_servers_overwrites_back_at_a_cancel(h: Harness) -> None:
    t = await open_table(h, 8)
    muted, trusted = await watchers(h, t)
    spectating(h, t, muted, trusted)
    assert (await t.do(t.master, "game cancel")).ephemeral
    await t.settle()
    assert overwrites(h, t.channel) == {muted.id: (0, MODERATED), trusted.id: (FILES, 0)}
    assert not h.permissions_in(muted, t.channel).send_messages  # still muted


async def test_the_dead_and_spectators_get_them_back_at_the_end_across_a_restart(
        lives: Lives) -> None:
    """Two citizens die at night: one had the moderator's mute, one the admin's allow,
    the others no overwrite at all; a restart between the mute and the end (the
    remembered overwrites are the game's, in the database); the end gives every one back
    exactly, and deletes only the overwrites the server never had."""
    h = lives.h
    t = await open_table(h, 8, roles=TWO_DEATHS_ROLES)
    muted, trusted = await watchers(h, t)
    victims = await two_killed(t)
    h.set_overwrite(t.channel, victims[0], (0, MODERATED))
    h.set_overwrite(t.channel, victims[1], (FILES, 0))
    server = {muted.id: (0, MODERATED), trusted.id: (FILES, 0),
              victims[0].id: (0, MODERATED), victims[1].id: (FILES, 0)}
    assert (await t.do(t.master, "master advance")).ephemeral  # morning: both dead
    await t.settle()
    bits = mute_bits(h.guild().me.guild_permissions)
    assert overwrites(h, t.channel)[victims[0].id] == (0, MODERATED | bits)
    assert overwrites(h, t.channel)[victims[1].id] == (0, bits)
    h = await lives.restart()
    t = rebind(t, h)
    spectating(h, t, muted, trusted)
    assert (await t.do(t.master, "game cancel")).ephemeral
    await t.settle()
    assert overwrites(h, t.channel) == server
    for member in (muted, victims[0]):
        assert not h.permissions_in(member, t.channel).send_messages


async def test_a_moderators_change_during_the_game_stays(
        h: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    """A moderator changes a spectator's overwrite after the bot muted him (a minute
    later: what the bot wrote no longer stands over the cache, cogs/delivery/overwrites.py
    `Written`): the bits outside the bot's mute he set stay, and the server's bits from
    before the game come back under the mute's."""
    monkeypatch.setattr(overwrites_module, "RECALL", 0.0)
    t = await open_table(h, 8)
    muted, trusted = await watchers(h, t)
    bits = mute_bits(h.guild().me.guild_permissions)
    pins = discord.Permissions(read_message_history=True).value  # outside the mute
    h.set_overwrite(t.channel, trusted, (0, bits | pins))
    assert (await t.do(t.master, "game cancel")).ephemeral
    await t.settle()
    assert overwrites(h, t.channel) == {muted.id: (0, MODERATED), trusted.id: (FILES, pins)}
