"""PATCH /channels/{id} with `permission_overwrites`, as Discord answers it: the list
replaces the channel's whole list; it needs Manage Channels and Manage Roles (PUT of one
overwrite needs only Manage Roles); at most 100 entries; a role's must exist; and it is
no rename (Discord's 2 per 10 minutes hold name and topic only)."""

from __future__ import annotations

from typing import Any

import discord
import pytest

from tests.harness import Harness
from tests.harness.permissions import DEFAULT_BOT

PATCH = "PATCH /channels/{channel_id}"
SEND = discord.Permissions(send_messages=True).value


def _client() -> discord.Client:
    return discord.Client(intents=discord.Intents.default())


def _listed(h: Harness, cid: int) -> dict[int, tuple[int, int]]:
    return {int(o["id"]): (int(o["allow"]), int(o["deny"]))
            for o in h.world.channel(cid)["permission_overwrites"]}


async def _setup(h: Harness) -> tuple[int, Any, Any]:
    h.add_guild()
    alice, bob = h.add_member("Alice"), h.add_member("Bob")
    cid = h.default_guild.general_id
    h.set_overwrite(cid, bob, (0, SEND))  # an admin's, before the bot's edit
    return cid, alice, bob


def _member(uid: int, deny: int) -> dict[str, Any]:
    return {"id": uid, "type": 1, "allow": 0, "deny": deny}


async def test_the_list_replaces_the_channels_and_reaches_the_cache() -> None:
    async with Harness(_client()) as h:
        cid, alice, bob = await _setup(h)
        await h.bot.http.edit_channel(cid, permission_overwrites=[_member(alice.id, SEND)])
        assert _listed(h, cid) == {alice.id: (0, SEND)}  # Bob's, not listed, is gone
        channel = h.guild().get_channel(cid)
        assert isinstance(channel, discord.TextChannel)
        assert channel.overwrites_for(discord.Object(alice.id)).send_messages is False
        assert channel.overwrites_for(discord.Object(bob.id)).is_empty()
        # the same request again: the same list (a retry is harmless)
        await h.bot.http.edit_channel(cid, permission_overwrites=[_member(alice.id, SEND)])
        assert _listed(h, cid) == {alice.id: (0, SEND)}
        # many overwrite edits, no rename: only the channel-edit bucket, never 429
        h.world.ratelimits.reset()
        for _ in range(3):
            await h.bot.http.edit_channel(cid, permission_overwrites=[])
        assert h.world.ratelimits.limited == 0 and _listed(h, cid) == {}


@pytest.mark.parametrize("lacking", ["manage_roles", "manage_channels"])
async def test_without_manage_roles_or_manage_channels_it_is_refused(lacking: str) -> None:
    async with Harness(_client()) as h:
        cid, alice, bob = await _setup(h)
        h.set_bot_permissions(DEFAULT_BOT & ~discord.Permissions(**{lacking: True}).value)
        with pytest.raises(discord.Forbidden) as info:
            await h.bot.http.edit_channel(cid, permission_overwrites=[_member(alice.id, SEND)])
        assert info.value.code == 50013
        assert _listed(h, cid) == {bob.id: (0, SEND)}  # nothing changed
        if lacking == "manage_channels":  # one overwrite's PUT needs Manage Roles only
            await h.bot.http.edit_channel_permissions(cid, alice.id, "0", str(SEND), 1)
            assert _listed(h, cid) == {bob.id: (0, SEND), alice.id: (0, SEND)}


async def test_bits_the_bot_lacks_more_than_100_entries_or_an_unknown_role() -> None:
    async with Harness(_client()) as h:
        cid, alice, bob = await _setup(h)
        webhooks = discord.Permissions(manage_webhooks=True).value  # not the bot's
        with pytest.raises(discord.Forbidden) as refused:
            await h.bot.http.edit_channel(
                cid, permission_overwrites=[_member(alice.id, webhooks)])
        assert refused.value.code == 50013
        with pytest.raises(discord.HTTPException) as long:
            await h.bot.http.edit_channel(
                cid, permission_overwrites=[_member(alice.id + i, SEND) for i in range(101)])
        assert long.value.status == 400 and long.value.code == 50035
        with pytest.raises(discord.NotFound) as unknown:
            await h.bot.http.edit_channel(cid, permission_overwrites=[
                {"id": alice.id + 1000, "type": 0, "allow": 0, "deny": SEND}])
        assert unknown.value.code == 10011
        assert _listed(h, cid) == {bob.id: (0, SEND)}
        await h.bot.http.edit_channel(
            cid, permission_overwrites=[_member(alice.id + i, SEND) for i in range(100)])
        assert len(_listed(h, cid)) == 100
        assert h.requests_to(PATCH, channel_id=cid)
