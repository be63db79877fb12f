"""How the outbox posts and finds things on Discord: shared by delivery, the desk and the
private places (cogs/delivery.py explains the guarantees: limits, nonces, markers)."""

from __future__ import annotations

import hashlib
import logging
from typing import Any

import discord

from core.storage.outbox import OutboxEntry, RetryAfter, Undeliverable

from ..ui.limits import pack
from ..ui.markup import no_pings

log = logging.getLogger("cogs.delivery")


# The bot's own overwrite: what it needs in a channel @everyone cannot see. Managing
# the channel comes from its guild role (granting manage_permissions in an
# overwrite would need Administrator).
BOT_ALLOW = discord.PermissionOverwrite(
    view_channel=True, send_messages=True, read_message_history=True, embed_links=True)
HIDDEN = discord.PermissionOverwrite(view_channel=False)


NONCE_MAX = 25  # Discord: a nonce is at most 25 characters


def nonce(key: str, part: int) -> str:
    """The nonce of part `part` of the message `key` names (stable across retries)."""
    value = f"{key}.{part}"
    if len(value) <= NONCE_MAX:
        return value
    return hashlib.blake2b(value.encode(), digest_size=12).hexdigest()[:NONCE_MAX]


def entry_key(entry: OutboxEntry, step: str = "") -> str:
    """A message's identity from the outbox entry that owes it: game, ordinal and which
    of the entry's messages (`step`)."""
    return f"g{entry.game_id}o{entry.ordinal}{step}"


async def post(channel: discord.abc.Messageable, key: str, *, content: str | None = None,
               embeds: list[discord.Embed] | None = None, view: discord.ui.View | None = None,
               mentions: discord.AllowedMentions | None = None, first: int = 0,
               files: list[discord.File] | None = None) -> list[discord.Message]:
    """The one way the outbox posts: the payload split to Discord's limits (`pack`), each
    part sent with its own nonce (`key` and the part's number, from `first`) and explicit
    allowed mentions (nobody unless `mentions` says whom); the view goes on the last part.
    Part 0 is named `key.first`, further parts `key.first.i`: never the name another
    message of the same entry (which starts at another piece) uses. `files` go on the
    first part; if Discord refuses them (no Attach Files), the part goes without them:
    a picture or the archive never holds back an announcement."""
    parts = pack(content, embeds)
    sent = []
    for i, part in enumerate(parts):
        extra: dict[str, Any] = {"view": view} if view is not None and i == len(parts) - 1 \
            else {}
        fields: dict[str, Any] = dict(
            content=part.content, embeds=part.embeds,
            nonce=nonce(key, first) if i == 0 else nonce(f"{key}.{first}", i),
            allowed_mentions=mentions or no_pings(), **extra)
        if i == 0 and files:
            try:
                sent.append(await channel.send(files=files, **fields))
                continue
            except discord.Forbidden as exc:
                log.warning("files refused in channel %s (%s); posting without them",
                            getattr(channel, "id", "?"), exc)
        sent.append(await channel.send(**fields))
    return sent


def translated(exc: discord.HTTPException) -> Exception:
    """What the outbox should do about a refusal: wait (429), give up at once (404: the
    channel or message is gone, and retrying for minutes would only delay telling the
    master), or count a failed attempt (anything else)."""
    if exc.status == 429:
        return RetryAfter(retry_after(exc))
    if exc.status == 404:
        return Undeliverable(str(exc))
    return exc


def channel_marker(game_id: int, team: str) -> str:
    """What a private channel's topic ends with: which game and team it belongs to, so a
    creation repeated after a crash finds the channel instead of making a second one."""
    return f"[mafia {game_id} {team}]"


def find_marked(guild: discord.Guild, marker: str, *, exclude: set[int]
                ) -> discord.TextChannel | None:
    for channel in guild.text_channels:
        if channel.id not in exclude and (channel.topic or "").endswith(marker):
            return channel
    return None


def retry_after(exc: discord.HTTPException) -> float:
    """The wait Discord asked for after a 429 discord.py stopped retrying."""
    headers = getattr(exc.response, "headers", None) or {}
    for name in ("Retry-After", "retry-after", "X-RateLimit-Reset-After"):
        try:
            value = float(headers[name])
        except (KeyError, TypeError, ValueError):
            continue
        if value > 0:
            return value
    return 1.0
