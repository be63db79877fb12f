"""How the outbox posts and finds things on Discord: shared by delivery, the desk and the
private places (cogs/delivery.py explains the guarantees: limits, nonces, markers)."""

from __future__ import annotations

import logging
from contextvars import ContextVar
from datetime import UTC, datetime, timedelta
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
# How long Discord remembers a nonce for `enforce_nonce`: "a few minutes" (docs), taken
# short. An entry that an earlier process may have posted longer ago than that is looked
# for in the channel's history before it is posted (`RECHECK`).
NONCE_WINDOW = timedelta(minutes=2)
HISTORY = 50  # recent messages of a channel looked at by a recheck
#: Set by the deliverer around an entry an earlier process may have posted more than
#: NONCE_WINDOW ago (cogs/delivery.py `recheck_since`): `post` then looks for each part
#: in the channel's recent history first (by its nonce where Discord returns it, else by
#: its text) and posts only what is not there.
RECHECK: ContextVar[datetime | None] = ContextVar("RECHECK", default=None)


def recheck_since(created: datetime | None, started: datetime,
                  now: datetime | None = None) -> datetime | None:
    """When an entry committed at `created` must be looked for before it is posted: it
    was pending when this process started (an earlier one may have posted it), and its
    nonce may be forgotten by now (older than NONCE_WINDOW). None: the nonce covers it."""
    if created is None:
        return None
    if created.tzinfo is None:
        created = created.replace(tzinfo=UTC)
    now = now or datetime.now(UTC)
    if created >= started or now - created <= NONCE_WINDOW:
        return None
    return created


def _fingerprint(content: str | None, embeds: list[dict[str, Any]]) -> tuple[Any, ...]:
    """What a part shows: its text and its embeds' words (what a re-post would repeat)."""
    return (content or "", tuple((e.get("title") or "", e.get("description") or "",
                                  tuple((f.get("name"), f.get("value"))
                                        for f in e.get("fields") or []))
                                 for e in embeds))


async def _posted_before(channel: discord.abc.Messageable, since: datetime
                         ) -> list[dict[str, Any]]:
    """The bot's own messages in the channel since `since` (raw, newest first)."""
    state = getattr(channel, "_state", None)
    channel_id = getattr(channel, "id", None)
    if state is None or channel_id is None:
        return []
    me = state.self_id
    since = since - timedelta(seconds=1)  # the two clocks may differ a little
    found = await state.http.logs_from(channel_id, HISTORY)
    return [m for m in found if (me is None or int(m["author"]["id"]) == me)
            and datetime.fromisoformat(m["timestamp"]) >= since]


def nonce(key: str, part: int) -> str:
    """The nonce of part `part` of the message `key` names (stable across retries)."""
    value = f"{key}.{part}"
    if len(value) <= NONCE_MAX:
        return value
    import hashlib

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
    sent: list[discord.Message] = []
    since = RECHECK.get()
    earlier = await _posted_before(channel, since) if since is not None else []
    for i, part in enumerate(parts):
        extra: dict[str, Any] = {"view": view} if view is not None and i == len(parts) - 1 \
            else {}
        fields: dict[str, Any] = dict(
            content=part.content, embeds=part.embeds,
            nonce=nonce(key, first) if i == 0 else nonce(f"{key}.{first}", i),
            allowed_mentions=mentions or no_pings(), **extra)
        if earlier and _already(earlier, fields["nonce"], part.content,
                                [dict(e.to_dict()) for e in part.embeds or []]):
            log.warning("part %s of %s was posted before a restart: not posted again",
                        i, key)
            continue
        if i == 0 and files:
            try:
                sent.append(await channel.send(files=files, **fields))
                continue
            except discord.Forbidden as exc:
                log.warning("files refused in channel %s (%s); posting without them",
                            getattr(channel, "id", "?"), exc)
        sent.append(await channel.send(**fields))
    return sent


def _already(earlier: list[dict[str, Any]], part_nonce: str, content: str | None,
             embeds: list[dict[str, Any]]) -> bool:
    """Whether one of `earlier` is this part: its nonce (where Discord returns it) or,
    else, the same text and embeds."""
    mine = _fingerprint(content, embeds)
    for message in earlier:
        if str(message.get("nonce") or "") == part_nonce:
            return True
        if _fingerprint(message.get("content"), message.get("embeds") or []) == mine:
            return True
    return False


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
