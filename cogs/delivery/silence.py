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
process wrote stands over the cache until the cache shows it (cogs/delivery/overwrites.py
`Written`, shared with the team channels), so two changes in quick succession never undo
each other.

The game channel is the server's: a member's overwrite there may be a moderator's mute
or an admin's allow. Before the bot first changes a member's overwrite, the overwrite
as the server had it is stored with the game (`GameInfo.server_overwrites`, durable
across a restart), and giving the voice back restores exactly those bits (deleting the
overwrite only if there was none): a muted member stays muted after the game, an allow
comes back (issue 41). Muting only ever adds denies, so no bit a moderator denied is
ever granted.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import discord

from core.storage.kinds import SilencePayload
from core.storage.observer import DiscordPatch, GameInfo, ServerOverwrite, overwrite_key
from core.text.i18n import t

from .overwrites import (
    MEMBER,
    Entry,
    Written,
    cached_overwrites,
    payload_overwrites,
    with_bits,
    with_server,
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
            bits = mute_bits(held)
            kept = await self._remember(info, current, change.mute)
            restore = {uid: _entry(kept[key]) for uid in change.unmute
                       if (key := overwrite_key(cid, uid)) in kept}
            # a member muted before the server's overwrite was remembered (an older
            # version's game): his mute bits are cleared, as that version did
            after = with_bits(current, change.mute,
                              [u for u in change.unmute if u not in restore], bits)
            after = with_server(after, restore, bits)
            reason = t("places.reason", info.language, title=info.title[:80])
            touched = await write(self.bot.http, channel, guild, cid, current, after, reason)
            self._written.note(cid, after, touched)
            if restore:  # given back: a later mute remembers the server's overwrite anew
                left = {k: v for k, v in kept.items()
                        if k not in {overwrite_key(cid, u) for u in restore}}
                await self.bot.service.set_discord(
                    info.id, DiscordPatch(server_overwrites=left))

    async def _remember(self, info: GameInfo, current: dict[int, Entry], mute: list[int]
                        ) -> dict[str, ServerOverwrite]:
        """The game's remembered server overwrites, with those of the members about to
        be muted for the first time stored first (a retry after a crash finds them
        stored, and never takes the bot's own mute for the server's)."""
        cid = info.channel_id
        kept = dict((await self.bot.service.info(info.id)).server_overwrites)
        fresh = {overwrite_key(cid, uid): _stored(current.get(uid)) for uid in mute
                 if overwrite_key(cid, uid) not in kept}
        if fresh:
            kept |= fresh
            await self.bot.service.set_discord(info.id, DiscordPatch(server_overwrites=kept))
        return kept


def _stored(entry: Entry | None) -> ServerOverwrite:
    return None if entry is None else list(entry)


def _entry(stored: ServerOverwrite) -> Entry | None:
    if stored is None:
        return None
    kind, allow, deny = stored
    return (MEMBER if kind != 0 else 0, allow, deny)


def mute_bits(held: discord.Permissions) -> int:
    """`MUTE` as bits, those the bot holds (it may deny only what it holds)."""
    return discord.Permissions(**{n: True for n in MUTE
                                  if held.administrator or getattr(held, n)}).value
