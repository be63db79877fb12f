"""Discord permission arithmetic, computed from raw (payload-shaped) world data.

This is an independent implementation of Discord's documented algorithm
(https://discord.com/developers/docs/topics/permissions#permission-overwrites) so the
harness can audit channel secrecy without trusting discord.py's cache.  The bit values
are taken from :class:`discord.Permissions` so they can never drift from the library.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import discord

_P = discord.Permissions

ADMINISTRATOR: int = _P.administrator.flag
MANAGE_CHANNELS: int = _P.manage_channels.flag
MANAGE_ROLES: int = _P.manage_roles.flag
MANAGE_EVENTS: int = _P.manage_events.flag
CREATE_EVENTS: int = _P.create_events.flag
MANAGE_MESSAGES: int = _P.manage_messages.flag
MANAGE_NICKNAMES: int = _P.manage_nicknames.flag
MANAGE_THREADS: int = _P.manage_threads.flag
CHANGE_NICKNAME: int = _P.change_nickname.flag
KICK_MEMBERS: int = _P.kick_members.flag
MODERATE_MEMBERS: int = _P.moderate_members.flag
MUTE_MEMBERS: int = _P.mute_members.flag
DEAFEN_MEMBERS: int = _P.deafen_members.flag
MOVE_MEMBERS: int = _P.move_members.flag
VIEW_CHANNEL: int = _P.view_channel.flag
SEND_MESSAGES: int = _P.send_messages.flag
SEND_MESSAGES_IN_THREADS: int = _P.send_messages_in_threads.flag
CREATE_PUBLIC_THREADS: int = _P.create_public_threads.flag
CREATE_PRIVATE_THREADS: int = _P.create_private_threads.flag
READ_MESSAGE_HISTORY: int = _P.read_message_history.flag
EMBED_LINKS: int = _P.embed_links.flag
ATTACH_FILES: int = _P.attach_files.flag
ADD_REACTIONS: int = _P.add_reactions.flag
MENTION_EVERYONE: int = _P.mention_everyone.flag
SEND_TTS_MESSAGES: int = _P.send_tts_messages.flag
PIN_MESSAGES: int = _P.pin_messages.flag

ALL: int = _P.all().value
VOICE: int = _P.voice().value
ALL_CHANNEL: int = _P.all_channel().value

#: Bits a timed-out member keeps (Discord strips everything else).
TIMEOUT_ALLOWED: int = VIEW_CHANNEL | READ_MESSAGE_HISTORY

#: Default @everyone permissions of a freshly created Discord server (text-relevant subset).
DEFAULT_EVERYONE: int = _P(
    view_channel=True,
    create_instant_invite=True,
    change_nickname=True,
    send_messages=True,
    send_messages_in_threads=True,
    create_public_threads=True,
    create_private_threads=True,
    embed_links=True,
    attach_files=True,
    add_reactions=True,
    use_external_emojis=True,
    use_external_stickers=True,
    read_message_history=True,
    use_application_commands=True,
    connect=True,
    speak=True,
).value

#: Default permissions granted to the bot's managed role by the harness.
DEFAULT_BOT: int = _P(
    view_channel=True,
    send_messages=True,
    send_messages_in_threads=True,
    create_public_threads=True,
    create_private_threads=True,
    manage_threads=True,
    embed_links=True,
    attach_files=True,
    add_reactions=True,
    use_external_emojis=True,
    read_message_history=True,
    manage_messages=True,
    pin_messages=True,
    manage_channels=True,
    manage_roles=True,
    manage_nicknames=True,
    moderate_members=True,
    use_application_commands=True,
).value


def as_bits(value: int | discord.Permissions | None) -> int:
    """Coerce ``int`` / :class:`discord.Permissions` / ``None`` to raw permission bits."""
    if value is None:
        return 0
    if isinstance(value, discord.Permissions):
        return value.value
    return int(value)


def bit_names(bits: int) -> list[str]:
    """Human readable names of the set bits, e.g. ``['send_messages', 'view_channel']``."""
    return sorted(name for name, on in discord.Permissions(bits) if on)


def base_permissions(
    *,
    guild_id: int,
    owner_id: int | None,
    user_id: int,
    member_role_ids: Iterable[int],
    roles: Mapping[int, Mapping[str, Any]],
) -> int:
    """Guild-level permissions of a member (owner, @everyone, roles, administrator)."""
    if owner_id is not None and user_id == owner_id:
        return ALL
    everyone = roles.get(guild_id)
    perms = int(everyone["permissions"]) if everyone else 0
    for role_id in member_role_ids:
        role = roles.get(role_id)
        if role is not None:
            perms |= int(role["permissions"])
    if perms & ADMINISTRATOR:
        return ALL
    return perms


def apply_overwrites(
    base: int,
    *,
    guild_id: int,
    user_id: int,
    member_role_ids: Iterable[int],
    overwrites: Iterable[Mapping[str, Any]],
) -> int:
    """Apply a channel's ``permission_overwrites`` to guild-level ``base`` permissions."""
    if base & ADMINISTRATOR:
        return ALL
    by_id = {int(o["id"]): o for o in overwrites}
    perms = base
    everyone = by_id.get(guild_id)
    if everyone is not None:
        perms &= ~int(everyone["deny"])
        perms |= int(everyone["allow"])
    allow = deny = 0
    for role_id in member_role_ids:
        ow = by_id.get(int(role_id))
        if ow is not None and int(ow["type"]) == 0:
            allow |= int(ow["allow"])
            deny |= int(ow["deny"])
    perms &= ~deny
    perms |= allow
    member_ow = by_id.get(user_id)
    if member_ow is not None and int(member_ow["type"]) == 1:
        perms &= ~int(member_ow["deny"])
        perms |= int(member_ow["allow"])
    return perms


def apply_implicit(perms: int, *, timed_out: bool = False, text: bool = True) -> int:
    """Discord's implicit rules: no VIEW_CHANNEL => nothing; no SEND => no embeds/files/etc.

    ``text`` strips voice-only bits, as discord.py does for text channels."""
    if text:
        perms &= ~VOICE
    if perms & ADMINISTRATOR:
        return perms
    if timed_out:
        perms &= TIMEOUT_ALLOWED
    if not perms & SEND_MESSAGES:
        perms &= ~(SEND_TTS_MESSAGES | MENTION_EVERYONE | EMBED_LINKS | ATTACH_FILES)
    if not perms & VIEW_CHANNEL:
        perms &= ~ALL_CHANNEL
    return perms
