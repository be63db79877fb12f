"""The fake Discord's threads archive themselves, and its nonces deduplicate, as Discord's.

- A thread is archived `auto_archive_duration` minutes after its last activity (on the
  fake's virtual clock); an archived thread refuses member changes (400, 50083 "Thread
  is archived"), a message opens it unless it is locked, and only Manage Threads opens a
  locked one.
- `enforce_nonce` (discord.py sends it with every nonce): a nonce this author used in
  this channel within the last few minutes returns that message instead of posting;
  after the window the same nonce posts again.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import discord
import pytest
from discord.ext import commands

from tests.harness import Harness

DAY = 24 * 3600


def make_bot() -> commands.Bot:
    return commands.Bot(command_prefix="!", intents=discord.Intents.default())


@pytest.fixture
async def h() -> AsyncIterator[Harness]:
    async with Harness(make_bot(), timeout=2.0) as harness:
        harness.add_guild()
        yield harness


async def thread(h: Harness, minutes: int = 1440) -> int:
    payload = await h.bot.http.start_thread_without_message(
        h.default_guild.general_id, name="place", auto_archive_duration=minutes,
        type=discord.ChannelType.private_thread.value, invitable=False)
    return int(payload["id"])


async def test_a_quiet_thread_archives_after_its_duration(h: Harness) -> None:
    tid = await thread(h)
    member = h.add_member("Alice")
    await h.bot.http.add_user_to_thread(tid, member.id)
    h.world.pass_time(DAY - 60)
    await h.bot.http.send_message(tid, params=_text("still here"))  # activity: clock reset
    h.world.pass_time(DAY - 60)
    await h.bot.http.add_user_to_thread(tid, member.id)
    assert not h.world.channels[tid]["thread_metadata"]["archived"]
    h.world.pass_time(120)
    with pytest.raises(discord.HTTPException) as err:
        await h.bot.http.remove_user_from_thread(tid, member.id)
    assert (err.value.status, err.value.code) == (400, 50083)
    assert h.world.channels[tid]["thread_metadata"]["archived"]
    assert member.id in h.world.thread_members[tid]
    # a message opens an archived thread
    await h.bot.http.send_message(tid, params=_text("hello again"))
    assert not h.world.channels[tid]["thread_metadata"]["archived"]
    await h.bot.http.remove_user_from_thread(tid, member.id)


async def test_a_locked_archived_thread_takes_no_message_until_opened(h: Harness) -> None:
    tid = await thread(h, 60)
    await h.bot.http.edit_channel(tid, archived=True, locked=True)
    with pytest.raises(discord.HTTPException) as err:
        await h.bot.http.send_message(tid, params=_text("x"))
    assert err.value.code == 50083
    with pytest.raises(discord.HTTPException) as err:
        await h.bot.http.edit_channel(tid, name="renamed")
    assert err.value.code == 50083
    await h.bot.http.edit_channel(tid, archived=False, locked=False)
    await h.bot.http.send_message(tid, params=_text("x"))


async def test_enforce_nonce_returns_the_earlier_message_within_minutes(h: Harness) -> None:
    channel = h.bot.get_partial_messageable(h.default_guild.general_id)
    first = await channel.send("one", nonce="g1o1.0")
    again = await channel.send("one", nonce="g1o1.0")
    assert again.id == first.id
    assert len(h.messages_in(h.default_guild.general_id)) == 1
    h.world.pass_time(h.world.nonce_window + 1)  # Discord forgets nonces after minutes
    late = await channel.send("one", nonce="g1o1.0")
    assert late.id != first.id
    assert len(h.messages_in(h.default_guild.general_id)) == 2


def _text(content: str) -> discord.http.MultipartParameters:
    return discord.http.handle_message_parameters(content=content)
