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
# A mention typed as its raw form (`<@id>`, `<@&role>`, `<#channel>`, `</cmd:id>`) would
# render as a name or a link under the bot's name: escaped, it shows as typed.
_RAW_MENTION = re.compile(r"<(?=[@#/]|a?:\w+:\d+>|t:\d+)")
# A bare URL stays as typed (escaping inside it would break it; a bare URL shows where it
# goes, so it is no disguise). It stops at brackets so that none escapes the escaping.
_URL = re.compile(r"(?:https?|steam)://[^\s<>\[\]()]+")
_INLINE = re.compile(r"([\\*_~|`\[\]])")  # emphasis, code, spoilers, link brackets
_LINE_START = re.compile(r"(?m)^(\s*)([>#+-])")  # quotes, headings, bullet lists
_NUMBERED = re.compile(r"(?m)^(\s*\d+)\.(?=\s)")  # "1. " starts a numbered list


def _escape(text: str) -> str:
    text = _INLINE.sub(r"\\\1", text)
    text = _LINE_START.sub(r"\1\\\2", text)
    return _NUMBERED.sub(r"\1\\.", text)


def user_text(text: str) -> str:
    """`text` as literal words: every Markdown mark escaped (masked links, emphasis,
    code, spoilers, headings, quotes, lists; Discord shows an escaped mark as the mark
    itself), bare URLs left intact, @everyone/@here and raw mentions (`<@id>`) defused.
    discord.utils.escape_markdown
    is not enough: with two masked links on one line it escapes only the first bracket."""
    out: list[str] = []
    last = 0
    for url in _URL.finditer(text):
        out.append(_escape(text[last:url.start()]))
        out.append(url.group(0))
        last = url.end()
    out.append(_escape(text[last:]))
    return _RAW_MENTION.sub(r"\\<", _MASS_PING.sub("@\u200b\\1", "".join(out)))


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


def role_and_users(role_id: int, uids: Iterable[int]) -> discord.AllowedMentions:
    """Exactly this role and these members may be pinged (a phase announcement while the
    role is still being given: cogs/delivery/places.py `unheld`), never @everyone."""
    return discord.AllowedMentions(everyone=False, replied_user=False,
                                   roles=[discord.Object(id=role_id)],
                                   users=[discord.Object(id=u) for u in uids])


def only_role(role_id: int) -> discord.AllowedMentions:
    """Exactly this role may be pinged (e.g. a game's players' role in a phase
    announcement), no member, no other role, never @everyone."""
    return discord.AllowedMentions(everyone=False, users=False, replied_user=False,
                                   roles=[discord.Object(id=role_id)])
