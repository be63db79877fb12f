"""The dead are silent in the game channel: one request per change of who may post.

A night end with two deaths changes two member overwrites of the game channel. PUT
/channels/{id}/permissions/{member} sets one each; PATCH /channels/{id} with
`permission_overwrites` replaces the whole list at once (Manage Channels and Manage
Roles; no rename: Discord's 2 renames per 10 minutes hold only name and topic). So the
list is taken from discord.py's cache, the `MUTE` bits set or cleared on the members
concerned, every other overwrite (a server admin's, the roles') kept as it is, and the
list sent whole. Where one request cannot carry it (over Discord's 100 overwrites, a
kept overwrite with bits the bot may not set, no Manage Channels there) the members go
one PUT each, as before. Idempotent: a retry computes the same list, and sends nothing
once the channel holds it.

The cache learns the new list from the gateway, which may lag the answer: what this
process wrote stands over the cache until the cache shows it (cogs/overwrites.py
`Written`, shared with the team channels), so two changes in quick succession never undo
each other.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import discord

from core.storage.kinds import SilencePayload
from core.storage.observer import GameInfo
from core.text.i18n import t

from .overwrites import (
    Written,
    cached_overwrites,
    payload_overwrites,
    with_bits,
    write,
)

if TYPE_CHECKING:
    from cogs.utils.bot import MafiaBot

# What a silenced (dead) member is denied in the game channel and its threads: every way
# of posting, but not application commands: a ghost's vote is /vote (RULES.md §3).
MUTE: tuple[str, ...] = (
    "send_messages", "send_messages_in_threads", "create_public_threads",
    "create_private_threads", "add_reactions", "attach_files", "embed_links",
    "send_tts_messages", "send_voice_messages", "send_polls", "use_external_apps",
)


class Silencer:
    def __init__(self, bot: MafiaBot) -> None:
        self.bot = bot
        self._locks: dict[int, asyncio.Lock] = {}  # channel -> one change at a time
        self._written = Written()  # what it wrote, over a cache that lags

    async def apply(self, info: GameInfo, change: SilencePayload) -> None:
        """Deny `MUTE` to the members `change.mute`, give it back to `change.unmute`."""
        cid = info.channel_id
        async with self._locks.setdefault(cid, asyncio.Lock()):
            channel = self.bot.get_channel(cid)
            guild = self.bot.get_guild(info.guild_id)
            held = guild.me.guild_permissions if guild is not None \
                else discord.Permissions.all()
            if isinstance(channel, discord.abc.GuildChannel):
                current = cached_overwrites(channel)
            else:  # not in the cache (the guild unavailable): Discord's own list
                current = payload_overwrites(await self.bot.http.get_channel(cid))
            current = self._written.recall(cid, current)
            after = with_bits(current, change.mute, change.unmute,
                              mute_bits(held))
            reason = t("places.reason", info.language, title=info.title[:80])
            touched = await write(self.bot.http, channel, guild, cid, current, after, reason)
            self._written.note(cid, after, touched)


def mute_bits(held: discord.Permissions) -> int:
    """`MUTE` as bits, those the bot holds (it may deny only what it holds)."""
    return discord.Permissions(**{n: True for n in MUTE
                                  if held.administrator or getattr(held, n)}).value
