"""Channel overwrites of a game's private channels, per member.

A reader (a dead player, everybody in an after-game archive) must be unable to post
in ANY form: Discord's Send Messages covers only plain messages in the channel, so
threads, reactions, files, polls, voice messages, application commands and webhooks
are each denied explicitly. A member overwrite beats his guild roles' allows.

Below, a channel's whole list as one PATCH sends it (cogs/silence.py): what the cache
holds, bits set or cleared on some members, the rest kept as it is.
"""

from __future__ import annotations

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


def as_payload(entries: dict[int, Entry]) -> list[dict[str, Any]]:
    """`permission_overwrites` of PATCH /channels/{id}, as discord.py's edit sends it."""
    return [{"id": target, "type": kind, "allow": allow, "deny": deny}
            for target, (kind, allow, deny) in entries.items()]


def settable(entries: dict[int, Entry], held: discord.Permissions) -> bool:
    """Whether the bot may send every bit of these overwrites: Discord lets it set only
    the permissions it holds in the guild, Manage Roles only as an administrator."""
    if held.administrator:
        return True
    manage_roles = discord.Permissions(manage_roles=True).value
    return all(not (allow | deny) & (~held.value | manage_roles)
               for _, allow, deny in entries.values())
