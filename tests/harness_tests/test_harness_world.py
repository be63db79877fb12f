"""Fake-world behaviour: secrecy operations, waiting semantics, intents, concurrency."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import discord
import pytest
from discord import app_commands
from discord.ext import commands

from tests.harness import Harness, InteractionTimeout


class SecrecyCog(commands.Cog):
    def __init__(self, bot: commands.Bot) -> None:
        self.bot = bot

    @app_commands.command(name="night", description="Open the mafia night chat")
    @app_commands.guild_only()
    async def night(self, interaction: discord.Interaction, mafioso: discord.Member) -> None:
        guild = interaction.guild
        assert guild is not None
        category = await guild.create_category(
            "Night",
            overwrites={
                guild.default_role: discord.PermissionOverwrite(view_channel=False),
                guild.me: discord.PermissionOverwrite(view_channel=True),
            },
        )
        chat = await category.create_text_channel("mafia")  # synced with the category
        await chat.set_permissions(mafioso, view_channel=True, send_messages=True)
        log = await guild.create_text_channel("log")
        await log.edit(
            overwrites={guild.default_role: discord.PermissionOverwrite(send_messages=False)}
        )
        await interaction.response.send_message(f"{chat.id} {log.id}", ephemeral=True)

    @app_commands.command(name="dawn", description="Close the night chat")
    @app_commands.guild_only()
    async def dawn(self, interaction: discord.Interaction, channel_id: str) -> None:
        assert interaction.guild is not None
        channel = interaction.guild.get_channel(int(channel_id))
        assert channel is not None
        await channel.delete(reason="day comes")
        await interaction.response.send_message("closed")

    @app_commands.command(name="ask", description="Waits for the user's next message")
    async def ask(self, interaction: discord.Interaction) -> None:
        await interaction.response.send_message("Name a suspect")

        def check(m: discord.Message) -> bool:
            return m.author.id == interaction.user.id and m.channel.id == interaction.channel_id

        reply = await self.bot.wait_for("message", check=check, timeout=5)
        await interaction.followup.send(f"You accuse {reply.content}")

    @app_commands.command(name="hang", description="Never finishes")
    async def hang(self, interaction: discord.Interaction) -> None:
        await interaction.response.defer()
        await asyncio.sleep(3600)

    @app_commands.command(name="slow", description="Takes a little while")
    async def slow(self, interaction: discord.Interaction, n: int) -> None:
        await asyncio.sleep(0.01 * n)
        await interaction.response.send_message(f"done {n}")

    @app_commands.command(name="members", description="Counts cached members")
    @app_commands.guild_only()
    async def members(self, interaction: discord.Interaction) -> None:
        assert interaction.guild is not None
        me = interaction.guild.me
        await interaction.response.send_message(
            f"{len(interaction.guild.members)} {type(interaction.user).__name__} {me is not None}"
        )


def make_bot(*, members_intent: bool = True) -> commands.Bot:
    intents = discord.Intents.default()
    intents.members = members_intent
    intents.message_content = True
    bot = commands.Bot(command_prefix="!", intents=intents)

    async def setup_hook() -> None:
        await bot.add_cog(SecrecyCog(bot))

    bot.setup_hook = setup_hook  # type: ignore[method-assign]
    return bot


@pytest.fixture
async def h() -> AsyncIterator[Harness]:
    async with Harness(make_bot(), timeout=1.0) as harness:
        harness.add_guild()
        yield harness


async def test_category_sync_set_permissions_and_edit(h: Harness) -> None:
    alice = h.add_member("Alice")
    maf = h.add_member("Maf")
    res = await h.slash(alice, "night", mafioso=maf)
    chat_id, log_id = (int(x) for x in res.text.split())
    guild = h.default_guild

    chat = h.channel(chat_id)
    assert chat.parent_id == h.channel_named("Night").id
    # inherited @everyone deny from the category + explicit member allow
    assert chat.overwrites[guild.id].denies("view_channel")
    assert chat.overwrites[maf.id].allows("view_channel", "send_messages")
    assert h.visible_channels(maf).can_send(chat_id)
    assert not h.visible_channels(alice).can_view(chat_id)
    assert h.requests_to("PUT /channels/{channel_id}/permissions/{target}", target=maf.id)

    log = h.channel(log_id)
    assert log.overwrites[guild.id].denies("send_messages")
    report = h.visible_channels(alice)
    assert report.can_view(log_id) and not report.can_send(log_id)
    assert "log" in report.view_names and "log" not in report.send_names

    # discord.py's cache was updated by the CHANNEL_UPDATE events
    dchat = h.guild().get_channel(chat_id)
    assert isinstance(dchat, discord.TextChannel)
    member = h.guild().get_member(maf.id)
    assert member is not None and dchat.permissions_for(member).send_messages


async def test_bot_that_hides_a_channel_from_itself_gets_missing_access(h: Harness) -> None:
    """Real Discord behaviour the fake reproduces: deny @everyone VIEW without allowing
    the bot, and the bot can no longer manage the channel (403 50001)."""
    alice = h.add_member("Alice")
    guild = h.guild()
    channel = await guild.create_text_channel(
        "hidden", overwrites={guild.default_role: discord.PermissionOverwrite(view_channel=False)}
    )
    with pytest.raises(discord.Forbidden) as info:
        await channel.set_permissions(guild.get_member(alice.id), view_channel=True)  # type: ignore[arg-type]
    assert info.value.code == 50001


async def test_channel_delete_updates_world_and_cache(h: Harness) -> None:
    alice = h.add_member("Alice")
    maf = h.add_member("Maf")
    res = await h.slash(alice, "night", mafioso=maf)
    chat_id = int(res.text.split()[0])
    await h.slash(alice, "dawn", channel_id=str(chat_id))
    assert h.channel(chat_id).deleted
    assert h.guild().get_channel(chat_id) is None
    [delete] = h.requests_to("DELETE /channels/{channel_id}", channel_id=chat_id)
    assert delete.reason == "day comes"


async def test_wait_for_flow_with_finish(h: Harness) -> None:
    alice = h.add_member("Alice")
    pending = await h.slash(alice, "ask", wait=False)
    assert pending.pending and pending.content == "Name a suspect"
    await h.user_message(alice, h.default_guild.general_id, "Bob")
    done = await h.finish(pending)
    assert done.text == "Name a suspect\nYou accuse Bob"
    assert not done.pending


async def test_hanging_handler_times_out_clearly(h: Harness) -> None:
    alice = h.add_member("Alice")
    with pytest.raises(InteractionTimeout, match=r"still running after 1.0s \(responded=True\)"):
        await h.slash(alice, "hang")


async def test_concurrent_interactions(h: Harness) -> None:
    users = [h.add_member(f"U{i}") for i in range(3)]
    results = await asyncio.gather(*(h.slash(u, "slow", n=3 - i) for i, u in enumerate(users)))
    assert [r.text for r in results] == ["done 3", "done 2", "done 1"]
    assert all(len(r.requests) == 1 for r in results)


async def test_without_members_intent_the_cache_stays_empty() -> None:
    async with Harness(make_bot(members_intent=False)) as h:
        h.add_guild()
        alice = h.add_member("Alice")
        res = await h.slash(alice, "members")
        # only the bot (and the guild owner from GUILD_CREATE) are known; interaction.user
        # is still a full Member built from the interaction payload
        assert res.text == "1 Member True"
        assert ("GUILD_MEMBER_ADD", "members") in (h.gateway.dropped if h.gateway else [])


async def test_member_payload_permissions_reflect_overwrites(h: Harness) -> None:
    alice = h.add_member("Alice")
    muted = h.add_text_channel(
        "muted", overwrites={h.default_guild.id: discord.PermissionOverwrite(send_messages=False)}
    )
    res = await h.slash(alice, "slow", n=0, channel=muted)
    perms = discord.Permissions(int(res.payload["member"]["permissions"]))
    assert perms.view_channel and not perms.send_messages
    assert res.payload["channel"]["permission_overwrites"][0]["deny"] == str(
        discord.Permissions(send_messages=True).value
    )


def test_overwrite_helpers() -> None:
    from tests.harness import Overwrite

    ow = Overwrite(1, 0, allow=discord.Permissions(view_channel=True).value, deny=0)
    assert ow.allows("view_channel") and not ow.denies("view_channel") and ow.is_role
    pair: Any = ow.to_discord()
    assert pair.view_channel is True and pair.send_messages is None
