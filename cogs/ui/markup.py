"""User text the bot republishes, made harmless; who a message may ping.

Text players and masters typed (anonymous posts, whispers, night stories, titles, plots,
bonus reasons, names) is shown in the bot's own messages, so it must read as the
words typed, never as markup that changes meaning: a masked link
`[official rules](https://evil.example/login)` would show a trusted-looking link under
the bot's name. `user_text` is the one escape, applied where such text enters rendering.

Pings: the bot's default is `AllowedMentions.none()` and every send states its own
`allowed_mentions` anyway, so user text can never ping; a message that means to ping
says exactly whom (`only_users`, `only_role`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import discord

# Keys of event data (and of notices) that carry text a person typed.
USER_TEXT_KEYS = frozenset({"text", "story", "stories", "reason", "title", "plot", "name",
                            "names"})
_MASS_PING = re.compile(r"@(everyone|here)")


def user_text(text: str) -> str:
    """`text` as literal words: Markdown (masked links, emphasis, headings, quotes, code,
    spoilers) escaped, and @everyone/@here defused (they would read as a ping)."""
    escaped = discord.utils.escape_markdown(text)
    return _MASS_PING.sub("@\u200b\\1", escaped)


def user_data(data: dict[str, Any]) -> dict[str, Any]:
    """Event or notice data with every user-typed string escaped (see USER_TEXT_KEYS)."""
    out = dict(data)
    for key in USER_TEXT_KEYS & data.keys():
        value = data[key]
        if isinstance(value, str):
            out[key] = user_text(value)
        elif isinstance(value, list):
            out[key] = [user_text(v) if isinstance(v, str) else v for v in value]
    return out


def no_pings() -> discord.AllowedMentions:
    """Nobody is pinged: mentions still show as names."""
    return discord.AllowedMentions.none()


def only_users(uids: Iterable[int]) -> discord.AllowedMentions:
    """Exactly these members may be pinged (mentioned in the content), nobody else."""
    return discord.AllowedMentions(everyone=False, roles=False, replied_user=False,
                                   users=[discord.Object(id=u) for u in uids])


def only_role(role_id: int) -> discord.AllowedMentions:
    """Exactly this role may be pinged (e.g. a game's players' role in a phase
    announcement), no member, no other role, never @everyone."""
    return discord.AllowedMentions(everyone=False, users=False, replied_user=False,
                                   roles=[discord.Object(id=role_id)])
