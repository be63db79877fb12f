"""Told when a game opens (issue 46): the server's opt-in list is a role the bot
manages, so a signup post pings everyone on it with one mention.

`/game notify on|off` costs one member-role request per opt-in (and the role's creation
once per server), never one per game. The role is found by its name in either language
(the bot keeps no server settings); it is mentionable, so that the bot may ping it
without "Mention Everyone".
"""

from __future__ import annotations

import discord

from core.text.i18n import t

from ..ui.markup import only_role

ROLE_KEY = "notify.role_name"


def notify_role(guild: discord.Guild | None) -> discord.Role | None:
    """The server's opt-in role, if it has one (by its name in Russian or English)."""
    if guild is None:
        return None
    names = {t(ROLE_KEY, "ru"), t(ROLE_KEY, "en")}
    return next((r for r in guild.roles if r.name in names), None)


async def switch(member: discord.Member, on: bool, lang: str) -> bool:
    """Put the member on the list or take him off; whether anything changed."""
    role = notify_role(member.guild)
    if on:
        if role is None:
            role = await member.guild.create_role(
                name=t(ROLE_KEY, lang), mentionable=True,
                reason="/game notify: members told when a game opens")
        if role in member.roles:
            return False
        await member.add_roles(role, reason="/game notify on")
        return True
    if role is None or role not in member.roles:
        return False
    await member.remove_roles(role, reason="/game notify off")
    return True


def signup_ping(guild: discord.Guild | None) -> dict[str, object]:
    """The signup post's content and allowed mentions: the opt-in role, it alone."""
    role = notify_role(guild)
    if role is None:
        return {}
    return {"content": role.mention, "mentions": only_role(role.id)}
