"""Channel overwrites of a game's private channels, per member.

A reader (a dead player, everybody in an after-game archive) must be unable to post
in ANY form: Discord's Send Messages covers only plain messages in the channel, so
threads, reactions, files, polls, voice messages, application commands and webhooks
are each denied explicitly. A member overwrite beats his guild roles' allows.

Below, a channel's whole list as one PATCH sends it (cogs/delivery/silence.py, the team channels
of cogs/delivery/deliverer.py): what the cache holds, the bot's own part changed (bits on some
members: `with_bits`, given back as the server had them: `with_server`; whole
overwrites of the targets it owns: `with_owned`, a moderator's denies on the game's
members kept: `with_members`), every other overwrite (a server admin's) kept as it is,
bit for bit; `write` sends it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Collection
from typing import Any, Literal

import discord

# Every permission that lets a member put something into a channel or its threads.
POSTING: tuple[str, ...] = (
    "send_messages", "send_messages_in_threads", "create_public_threads",
    "create_private_threads", "add_reactions", "attach_files", "embed_links",
    "send_tts_messages", "send_voice_messages", "send_polls", "use_application_commands",
    "use_external_apps", "use_embedded_activities", "mention_everyone",
    "use_external_emojis", "use_external_stickers", "manage_threads", "manage_messages",
    "manage_webhooks", "pin_messages", "create_instant_invite",
)


def member_overwrite(writer: bool, bot: discord.Permissions | None = None
                     ) -> discord.PermissionOverwrite:
    """A member of a private channel: reads its history; writes only if `writer`.

    Discord lets a bot set (allow or deny) only the permissions it holds itself, so a
    reader is denied every posting permission the bot holds (`bot`, all if None); the
    ones a game needs are asked for at /game start (cogs.lobby.REQUIRED_TO_START)."""
    if writer:
        return discord.PermissionOverwrite(view_channel=True, read_message_history=True,
                                           send_messages=True)
    overwrite = discord.PermissionOverwrite(view_channel=True, read_message_history=True)
    held = bot if bot is not None else discord.Permissions.all()
    overwrite.update(**{name: False for name in POSTING
                        if held.administrator or getattr(held, name)})
    return overwrite


# --- a channel's whole list, for one PATCH ------------------------------------------------------
# An overwrite as Discord holds it, keyed by its target's id: (type, allow, deny).
Entry = tuple[int, int, int]
ROLE: Literal[0] = 0
MEMBER: Literal[1] = 1
# `permission_overwrites` of PATCH /channels/{id} holds at most this many (Discord's
# OpenAPI description, update_channel: maxItems 100).
MAX_OVERWRITES = 100


def cached_overwrites(channel: discord.abc.GuildChannel) -> dict[int, Entry]:
    """The channel's overwrites as discord.py's cache holds them (roles and members), bit
    for bit. Read from the private `_overwrites` (docs/dependencies.md): the public
    `overwrites` goes through PermissionOverwrite, which drops every bit this discord.py
    has no name for, and a PATCH of the whole list would take those from an admin's."""
    return {o.id: (ROLE if o.type == ROLE else MEMBER, o.allow, o.deny)
            for o in channel._overwrites}


def payload_overwrites(payload: Any) -> dict[int, Entry]:
    """The overwrites of a channel object from Discord's REST answer."""
    return {int(o["id"]): (int(o.get("type", ROLE)), int(o.get("allow") or 0),
                           int(o.get("deny") or 0))
            for o in payload.get("permission_overwrites") or []}


def with_bits(current: dict[int, Entry], deny: list[int], clear: list[int], bits: int
              ) -> dict[int, Entry]:
    """`current` with `bits` denied to the members `deny` (their other bits kept) and no
    longer denied to the members `clear` (an overwrite left empty goes). Every other
    overwrite (a role's, an admin's on someone else) is kept as it is."""
    out = dict(current)
    for uid in deny:
        _, allow, denied = out.get(uid, (MEMBER, 0, 0))
        out[uid] = (MEMBER, allow & ~bits, denied | bits)
    for uid in clear:
        if uid not in out:
            continue
        kind, allow, denied = out[uid]
        if allow or denied & ~bits:
            out[uid] = (kind, allow, denied & ~bits)
        else:
            del out[uid]
    return out


def with_server(current: dict[int, Entry], restore: dict[int, Entry | None], bits: int
                ) -> dict[int, Entry]:
    """`current` with `bits` of each member of `restore` given back as the server had set
    them before the bot first changed his overwrite (None: he had none), bit for bit: a
    moderator's deny stays denied, an admin's allow allowed. His other bits stay as they
    are now (what a moderator changed during the game); an overwrite the server never
    had and that holds nothing else goes."""
    out = dict(current)
    for uid, server in restore.items():
        kind, allow, deny = out.get(uid, (MEMBER, 0, 0))
        _, had_allow, had_deny = server if server is not None else (MEMBER, 0, 0)
        allow = allow & ~bits | had_allow & bits
        deny = deny & ~bits | had_deny & bits
        if server is None and not allow | deny:
            out.pop(uid, None)
        else:
            out[uid] = (server[0] if server is not None else kind, allow, deny)
    return out


def with_owned(current: dict[int, Entry], owned: Collection[int],
               wanted: dict[int, Entry]) -> dict[int, Entry]:
    """`current` with the overwrites of the targets the bot owns (`owned`, and those of
    `wanted`) made exactly `wanted` (an owned target not in it loses its overwrite).
    Every other overwrite (an admin's on a role, on a member outside the game) is kept as
    it is."""
    mine = {*owned, *wanted}
    return {**{target: e for target, e in current.items() if target not in mine}, **wanted}


# The posting bits `/game start` needs the bot to hold (cogs.lobby.REQUIRED_TO_START):
# every reader's overwrite the bot writes in a team channel denies all of them.
READER_MARK = discord.Permissions(
    send_messages=True, send_messages_in_threads=True, create_public_threads=True,
    create_private_threads=True, add_reactions=True, embed_links=True,
    manage_threads=True).value
ALL_POSTING = discord.Permissions(**dict.fromkeys(POSTING, True)).value


def server_denies(entry: Entry | None) -> int:
    """The deny bits of a game member's overwrite in a team channel that are not the
    bot's (a moderator's mute): the bot denies a writer nothing, and a reader exactly the
    posting bits. So an overwrite denying every bit of `READER_MARK` is the bot's reader
    overwrite, its posting denies the bot's; any other deny is the server's. A
    moderator's deny of every one of those bits on a writer reads as the bot's (RULES.md
    §3, "What the bot does to the server's overwrites")."""
    if entry is None or entry[0] != MEMBER:
        return 0
    deny = entry[2]
    return deny & ~ALL_POSTING if deny & READER_MARK == READER_MARK else deny


def with_members(current: dict[int, Entry], owned: Collection[int],
                 wanted: dict[int, Entry], members: Collection[int],
                 held: discord.Permissions) -> dict[int, Entry]:
    """`with_owned`, where each of the game's `members` (and those who left) keeps the
    server's denies on his overwrite (`server_denies`): what the bot allows him goes
    without those bits, and a member who left keeps an overwrite of them alone. The bot
    decides who reads and writes its channels; a moderator's sanction only narrows it.
    An overwrite the bot changes may carry only bits it may set (`settable`): a deny of
    one it may not is lost with the change (Discord would refuse the whole overwrite)."""
    out = with_owned(current, owned, wanted)
    for uid in {*owned, *members}:
        kept = server_denies(current.get(uid))
        if not kept:
            continue
        kind, allow, deny = wanted.get(uid, (MEMBER, 0, 0))
        entry = (kind, allow & ~kept, deny | kept)
        if entry != current.get(uid):  # written: what the bot may set of them
            kept &= settable_bits(held)
            entry = (kind, allow & ~kept, deny | kept)
        if entry[1] | entry[2]:
            out[uid] = entry
        else:
            out.pop(uid, None)
    return out


def as_entry(overwrite: discord.PermissionOverwrite, kind: int) -> Entry:
    allow, deny = overwrite.pair()
    return (kind, allow.value, deny.value)


def as_payload(entries: dict[int, Entry]) -> list[dict[str, Any]]:
    """`permission_overwrites` of PATCH /channels/{id}, as discord.py's edit sends it."""
    return [{"id": target, "type": kind, "allow": allow, "deny": deny}
            for target, (kind, allow, deny) in entries.items()]


def settable_bits(held: discord.Permissions) -> int:
    """The bits the bot may put in an overwrite: Discord lets it set only the permissions
    it holds in the guild, Manage Roles only as an administrator."""
    if held.administrator:
        return ~0  # every bit
    return held.value & ~discord.Permissions(manage_roles=True).value


def settable(entries: dict[int, Entry], held: discord.Permissions) -> bool:
    """Whether the bot may send every bit of these overwrites (`settable_bits`)."""
    if held.administrator:
        return True
    bits = settable_bits(held)
    return all(not (allow | deny) & ~bits for _, allow, deny in entries.values())


# The JSON error codes of a member who left the guild (nothing to set on him).
UNKNOWN_MEMBER, UNKNOWN_USER = 10007, 10013


async def write(http: Any, channel: object, guild: discord.Guild | None, cid: int,
                current: dict[int, Entry], after: dict[int, Entry], reason: str
                ) -> list[int]:
    """Make the channel's list `after` (it holds `current`): one PATCH of the whole list
    where Discord takes it, else one request per changed target. The targets changed
    (nothing sent when none)."""
    touched = sorted(u for u in {*current, *after} if current.get(u) != after.get(u))
    if not touched:
        return touched
    held = guild.me.guild_permissions if guild is not None else discord.Permissions.all()
    if _whole(channel, guild, held, after):
        await http.edit_channel(cid, permission_overwrites=as_payload(after), reason=reason)
    else:
        await _each(http, cid, after, touched, reason)
    return touched


def _whole(channel: object, guild: discord.Guild | None, held: discord.Permissions,
           after: dict[int, Entry]) -> bool:
    """Whether one PATCH carries the list: Discord would take it as it is."""
    if len(after) > MAX_OVERWRITES:
        return False
    if guild is None or not isinstance(channel, discord.abc.GuildChannel):
        return True
    return channel.permissions_for(guild.me).manage_channels and settable(after, held)


async def _each(http: Any, cid: int, after: dict[int, Entry], touched: list[int],
                reason: str) -> None:
    """One request per target (the way before the whole list)."""
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


RECALL = 60.0  # seconds a written overwrite stands over a cache that does not show it


class Written:
    """What this process wrote lately to channels' overwrite lists. The cache learns a
    new list from the gateway, which may lag the answer: what was written stands over
    the cache until the cache shows it (at most `RECALL` seconds), so two changes in
    quick succession never undo each other (a replaced player let in again)."""

    def __init__(self) -> None:
        # channel -> target -> (when, what was written: None, no overwrite)
        self._written: dict[int, dict[int, tuple[float, Entry | None]]] = {}

    def recall(self, cid: int, current: dict[int, Entry]) -> dict[int, Entry]:
        """The cache, with what was written lately and the cache does not show yet."""
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

    def note(self, cid: int, after: dict[int, Entry], touched: list[int]) -> None:
        now = asyncio.get_running_loop().time()
        self._written.setdefault(cid, {}).update({u: (now, after.get(u)) for u in touched})
