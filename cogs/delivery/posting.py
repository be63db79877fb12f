"""How the outbox posts and finds things on Discord: shared by delivery, the desk and the
private places (cogs/delivery/deliverer.py explains the guarantees: limits, nonces, markers)."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
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


@dataclass(frozen=True)
class Recheck:
    """A look into the channel before an entry an earlier process may have posted more
    than NONCE_WINDOW ago is posted (cogs/delivery/deliverer.py `recheck_since`)."""

    since: datetime  # the entry's commit: nothing older can be it
    #: the process's own messages already taken for an entry (found by a recheck, or
    #: posted under one): never taken for another entry that reads the same
    claimed: set[int] = field(default_factory=set)


#: Set by the deliverer around such an entry: `post` then looks for each part in the
#: channel's recent history first and posts only what is not there. A part is found by
#: its nonce where Discord returns it, else by its text among the bot's messages since
#: the commit that no other entry took (`Recheck.claimed`), oldest first; an
#: interaction's response is never taken for an outbox post (it is found by its own
#: interaction id: cogs/delivery/deliverer.py `_replied`).
RECHECK: ContextVar[Recheck | None] = ContextVar("RECHECK", default=None)

#: What `post` does with files its first part should carry when that part is found
#: posted before without them (a recheck found it, or Discord returned the earlier
#: message for its nonce): they go as a message of their own (cogs/delivery/pictures.py).
Unfiled = Callable[[list[discord.File]], Awaitable[None]]


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
    """The bot's own messages in the channel since `since` (raw, oldest first), its
    interactions' responses left out (found by their interaction id, never by text)."""
    state = getattr(channel, "_state", None)
    channel_id = getattr(channel, "id", None)
    if state is None or channel_id is None:
        return []
    me = state.self_id
    since = since - timedelta(seconds=1)  # the two clocks may differ a little
    found = await state.http.logs_from(channel_id, HISTORY)
    return [m for m in reversed(found) if (me is None or int(m["author"]["id"]) == me)
            and "interaction_metadata" not in m and "interaction" not in m
            and datetime.fromisoformat(m["timestamp"]) >= since]


async def replied(channel: discord.abc.Messageable, replies: set[str]) -> set[str]:
    """Which of the interactions `replies` (their ids) answered with a message that
    is in the channel's recent history: Discord names the interaction on its response
    (`interaction_metadata.id`), an identity no other message shares."""
    state = getattr(channel, "_state", None)
    channel_id = getattr(channel, "id", None)
    if state is None or channel_id is None or not replies:
        return set()
    found = await state.http.logs_from(channel_id, HISTORY)
    named = {str((m.get("interaction_metadata") or m.get("interaction") or {}).get("id"))
             for m in found}
    return replies & named


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
               files: list[discord.File] | None = None, unfiled: Unfiled | None = None
               ) -> list[discord.Message]:
    """The one way the outbox posts: the payload split to Discord's limits (`pack`), each
    part sent with its own nonce (`key` and the part's number, from `first`) and explicit
    allowed mentions (nobody unless `mentions` says whom); the view goes on the last part.
    Part 0 is named `key.first`, further parts `key.first.i`: never the name another
    message of the same entry (which starts at another piece) uses. `files` go on the
    first part; if Discord refuses them (no Attach Files), the part goes without them:
    a picture or the archive never holds back an announcement. If the first part was
    posted before without them (found by a recheck, or Discord returned the earlier
    message for its nonce), `unfiled` is given them: the files are not dropped."""
    parts = pack(content, embeds)
    sent: list[discord.Message] = []
    check = RECHECK.get()
    earlier = [m for m in await _posted_before(channel, check.since)
               if int(m["id"]) not in check.claimed] if check is not None else []
    for i, part in enumerate(parts):
        extra: dict[str, Any] = {"view": view} if view is not None and i == len(parts) - 1 \
            else {}
        fields: dict[str, Any] = dict(
            content=part.content, embeds=part.embeds,
            nonce=nonce(key, first) if i == 0 else nonce(f"{key}.{first}", i),
            allowed_mentions=mentions or no_pings(), **extra)
        found = _already(earlier, fields["nonce"], part.content,
                         [dict[str, Any](e.to_dict()) for e in part.embeds or []]) \
            if earlier else None
        if found is not None:
            log.warning("part %s of %s was posted before a restart: not posted again",
                        i, key)
            earlier.remove(found)
            assert check is not None
            check.claimed.add(int(found["id"]))
            if i == 0 and files and unfiled is not None \
                    and not _carries(len(found.get("attachments") or []), files):
                await unfiled(files)
            continue
        if i == 0 and files:
            try:
                message = await channel.send(files=files, **fields)
            except discord.Forbidden as exc:
                log.warning("files refused in channel %s (%s); posting without them",
                            getattr(channel, "id", "?"), exc)
            else:
                sent.append(message)
                _claim(check, message)
                if unfiled is not None and not _carries(len(message.attachments), files):
                    # Discord returned the message an earlier try posted under this
                    # nonce, without them
                    await unfiled(files)
                continue
        sent.append(await channel.send(**fields))
        _claim(check, sent[-1])
    return sent


def _claim(check: Recheck | None, message: discord.Message) -> None:
    if check is not None:
        check.claimed.add(message.id)


def _carries(attached: int, files: list[discord.File]) -> bool:
    """Whether a message with `attached` attachments carries `files` (counted: Discord
    may rename a file it stores)."""
    return attached >= len(files)


def _already(earlier: list[dict[str, Any]], part_nonce: str, content: str | None,
             embeds: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The one of `earlier` (oldest first, none taken by another entry) that is this
    part: its nonce (where Discord returns it) or, else, the same text and embeds."""
    mine = _fingerprint(content, embeds)
    for message in earlier:
        if str(message.get("nonce") or "") == part_nonce:
            return message
    for message in earlier:
        if _fingerprint(message.get("content"), message.get("embeds") or []) == mine:
            return message
    return None


def translated(exc: discord.HTTPException) -> Exception:
    """What the outbox should do about a refusal: wait (429), give up at once (404: the
    channel or message is gone, and retrying for minutes would only delay telling the
    master), or count a failed attempt (anything else)."""
    if exc.status == 429:
        return RetryAfter(retry_after(exc))
    if exc.status == 404:
        return Undeliverable(str(exc))
    return exc


#: The invisible characters a marker is written in: four that Discord shows as nothing
#: (zero-width space, non-joiner, joiner, word joiner), two bits each, between two
#: zero-width no-break spaces. People read the topic; only the bot reads the marker.
_BITS = "\u200b\u200c\u200d\u2060"
_EDGE = "\ufeff"


def channel_marker(game_id: int, team: str) -> str:
    """What a private channel's topic ends with: which game and team it belongs to, so a
    creation repeated after a crash finds the channel instead of making a second one.
    Written in invisible characters (issue 42: "[mafia 1 clan:1]" in a topic is a machine
    tag everyone reads); `find_marked` still knows the old visible form."""
    data = f"mafia {game_id} {team}".encode()
    return _EDGE + "".join(_BITS[(byte >> shift) & 3] for byte in data
                           for shift in (6, 4, 2, 0)) + _EDGE


def legacy_marker(game_id: int, team: str) -> str:
    """The visible marker channels made before issue 42 carry (adopted all the same)."""
    return f"[mafia {game_id} {team}]"


def marked_topic(topic: str, marker: str) -> str:
    """A topic people read, the marker after it, within Discord's 1,024 characters."""
    return topic[:1024 - len(marker)].rstrip() + marker


def find_marked(guild: discord.Guild, marker: str, *, exclude: set[int],
                legacy: str | None = None) -> discord.TextChannel | None:
    for channel in guild.text_channels:
        topic = (channel.topic or "").rstrip(" ")
        if channel.id not in exclude and (topic.endswith(marker) or (
                legacy is not None and topic.endswith(legacy))):
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
