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
process wrote stands over the cache until the cache shows it (at most `RECALL` seconds),
so two changes in quick succession never undo each other.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

import discord

from core.storage.kinds import SilencePayload
from core.storage.observer import GameInfo
from core.text.i18n import t

from .overwrites import (
    MAX_OVERWRITES,
    MEMBER,
    ROLE,
    Entry,
    as_payload,
    cached_overwrites,
    payload_overwrites,
    settable,
    with_bits,
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
RECALL = 60.0  # seconds a written overwrite stands over a cache that does not show it
UNKNOWN_MEMBER, UNKNOWN_USER = 10007, 10013


class Silencer:
    def __init__(self, bot: MafiaBot) -> None:
        self.bot = bot
        self._locks: dict[int, asyncio.Lock] = {}  # channel -> one change at a time
        # channel -> member -> (when, what this process wrote: None, no overwrite)
        self._written: dict[int, dict[int, tuple[float, Entry | None]]] = {}

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
            current = self._recall(cid, current)
            after = with_bits(current, change.mute, change.unmute,
                              mute_bits(held))
            touched = sorted(u for u in {*current, *after} if current.get(u) != after.get(u))
            if not touched:
                return
            reason = t("places.reason", info.language, title=info.title[:80])
            if self._whole(channel, guild, held, after):
                await self.bot.http.edit_channel(
                    cid, permission_overwrites=as_payload(after), reason=reason)
            else:
                await self._each(cid, after, touched, reason)
            now = asyncio.get_running_loop().time()
            self._written.setdefault(cid, {}).update(
                {u: (now, after.get(u)) for u in touched})

    @staticmethod
    def _whole(channel: object, guild: discord.Guild | None, held: discord.Permissions,
               after: dict[int, Entry]) -> bool:
        """Whether one PATCH carries the list: Discord would take it as it is."""
        if len(after) > MAX_OVERWRITES:
            return False
        if guild is None or not isinstance(channel, discord.abc.GuildChannel):
            return True
        return channel.permissions_for(guild.me).manage_channels and settable(after, held)

    def _recall(self, cid: int, current: dict[int, Entry]) -> dict[int, Entry]:
        """The cache, with what this process wrote lately and the cache does not show yet
        (its gateway event still on the way)."""
        written = self._written.get(cid, {})
        now = asyncio.get_running_loop().time()
        out = dict(current)
        for uid, (when, entry) in list(written.items()):
            if now - when > RECALL or current.get(uid) == entry:
                del written[uid]  # the cache has caught up (or an admin has since)
            elif entry is None:
                out.pop(uid, None)
            else:
                out[uid] = entry
        return out

    async def _each(self, cid: int, after: dict[int, Entry], touched: list[int],
                    reason: str) -> None:
        """One request per member (the way before the whole list)."""
        http = self.bot.http
        for uid in touched:
            entry = after.get(uid)
            if entry is None:
                with contextlib.suppress(discord.NotFound):
                    await http.delete_channel_permissions(cid, uid, reason=reason)
                continue
            kind, allow, deny = entry
            try:
                await http.edit_channel_permissions(
                    cid, uid, str(allow), str(deny), ROLE if kind == ROLE else MEMBER,
                    reason=reason)
            except discord.NotFound as exc:  # a member who left the guild: nothing to do
                if exc.code not in (UNKNOWN_MEMBER, UNKNOWN_USER):
                    raise


def mute_bits(held: discord.Permissions) -> int:
    """`MUTE` as bits, those the bot holds (it may deny only what it holds)."""
    return discord.Permissions(**{n: True for n in MUTE
                                  if held.administrator or getattr(held, n)}).value
