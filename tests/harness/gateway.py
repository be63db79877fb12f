"""Gateway side of the fake: events into discord.py, and the few websocket *sends*.

* :class:`GatewayBridge` receives events emitted by the fake world (``CHANNEL_CREATE``
  after a REST create, ``MESSAGE_CREATE`` after a send...) and feeds them to
  ``ConnectionState.parse_<event>`` exactly like ``DiscordWebSocket`` would, honouring the
  bot's intents (an event the bot didn't subscribe to is dropped, and message content is
  blanked without the ``message_content`` intent).
* :class:`FakeGatewayWebSocket` is assigned to ``client.ws`` so ``change_presence`` and
  member chunk requests (``guild.chunk()``, ``guild.query_members``) work and are recorded.
* :class:`IdentifyGate` is Discord's identify concurrency: shards identify in buckets
  (shard_id % max_concurrency), one IDENTIFY per bucket per 5 s; one gate shared by
  every client (process) of a bot refuses an IDENTIFY that breaks it, as Discord answers
  it with INVALID_SESSION.
"""

from __future__ import annotations

import asyncio
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import discord

from .world import FakeWorld, clone

if TYPE_CHECKING:
    from discord.state import ConnectionState

    from .transport import FakeDiscord

EVENT_INTENTS: dict[str, str] = {
    "GUILD_CREATE": "guilds",
    "GUILD_UPDATE": "guilds",
    "GUILD_DELETE": "guilds",
    "GUILD_ROLE_CREATE": "guilds",
    "GUILD_ROLE_UPDATE": "guilds",
    "GUILD_ROLE_DELETE": "guilds",
    "CHANNEL_CREATE": "guilds",
    "CHANNEL_UPDATE": "guilds",
    "CHANNEL_DELETE": "guilds",
    "THREAD_CREATE": "guilds",
    "THREAD_UPDATE": "guilds",
    "THREAD_DELETE": "guilds",
    "THREAD_MEMBERS_UPDATE": "guilds",
    "GUILD_MEMBER_ADD": "members",
    "GUILD_MEMBER_UPDATE": "members",
    "GUILD_MEMBER_REMOVE": "members",
}
MESSAGE_EVENTS = {"MESSAGE_CREATE", "MESSAGE_UPDATE", "MESSAGE_DELETE", "MESSAGE_DELETE_BULK"}


@dataclass
class GatewayBridge:
    """World listener that dispatches events into a discord.py ``ConnectionState``."""

    state: ConnectionState[Any]
    world: FakeWorld
    enabled: bool = True
    delivered: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    dropped: list[tuple[str, str]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def _intent_for(self, event: str, data: dict[str, Any]) -> str | None:
        if event in MESSAGE_EVENTS:
            return "guild_messages" if data.get("guild_id") else "dm_messages"
        return EVENT_INTENTS.get(event)

    def _strip_content(self, data: dict[str, Any]) -> None:
        """Without MESSAGE_CONTENT, Discord blanks content of others' guild messages."""
        if self.state._intents.message_content or not data.get("guild_id"):
            return
        author = int(data.get("author", {}).get("id", 0))
        mentioned = any(int(m["id"]) == self.world.bot_id for m in data.get("mentions", []))
        if author == self.world.bot_id or mentioned:
            return
        data.update({"content": "", "embeds": [], "attachments": [], "components": []})

    def __call__(self, event: str, data: dict[str, Any]) -> None:
        if not self.enabled:
            return
        intent = self._intent_for(event, data)
        if intent is not None and not getattr(self.state._intents, intent):
            self.dropped.append((event, intent))
            return
        parser = getattr(self.state, f"parse_{event.lower()}", None)
        if parser is None:
            self.dropped.append((event, "no parser"))
            return
        if event in ("MESSAGE_CREATE", "MESSAGE_UPDATE"):
            self._strip_content(data)
        self.delivered.append((event, clone(data)))
        try:
            parser(data)
        except Exception:
            self.errors.append(f"parse_{event.lower()} failed:\n{traceback.format_exc()}")


class FakeGatewayWebSocket:
    """Minimal stand-in for ``DiscordWebSocket`` (assigned to ``client.ws``)."""

    open = True
    latency = 0.0
    shard_id: int | None = None
    sequence: int | None = None
    session_id: str | None = "harness-session"

    def __init__(
        self, transport: FakeDiscord, world: FakeWorld, state: ConnectionState[Any]
    ) -> None:
        self._transport = transport
        self._world = world
        self._state = state
        self.presence: dict[str, Any] = {}

    def is_ratelimited(self) -> bool:
        return False

    async def change_presence(
        self,
        *,
        activity: discord.BaseActivity | None = None,
        status: str | None = None,
        since: float = 0.0,
    ) -> None:
        self.presence = {
            "activities": [activity.to_dict()] if activity is not None else [],
            "status": status,
            "since": since,
            "afk": False,
        }
        self._transport.record_gateway_send("PRESENCE_UPDATE", clone(self.presence))

    async def request_chunks(
        self,
        guild_id: int,
        query: str | None = None,
        *,
        limit: int,
        user_ids: list[int] | None = None,
        presences: bool = False,
        nonce: str | None = None,
    ) -> None:
        self._transport.record_gateway_send(
            "REQUEST_GUILD_MEMBERS",
            {
                "guild_id": str(guild_id),
                "query": query,
                "limit": limit,
                "user_ids": user_ids,
                "nonce": nonce,
            },
        )
        g = self._world.guild(guild_id)
        ids = list(g.members)
        if user_ids:
            ids = [u for u in ids if u in set(user_ids)]
        if query:
            ids = [
                u
                for u in ids
                if str(self._world.users[u]["username"]).lower().startswith(query.lower())
            ]
        if limit:
            ids = ids[:limit]
        chunk: dict[str, Any] = {
            "guild_id": str(guild_id),
            "members": [self._world.member_payload(guild_id, u) for u in ids],
            "chunk_index": 0,
            "chunk_count": 1,
        }
        if nonce is not None:
            chunk["nonce"] = nonce
        state = self._state
        asyncio.get_running_loop().call_soon(lambda: state.parse_guild_members_chunk(chunk))  # type: ignore[arg-type]

    async def voice_state(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError("the harness does not fake voice connections")

    async def close(self, code: int = 1000) -> None:
        self.open = False


@dataclass(frozen=True)
class Identify:
    """One IDENTIFY the gate saw."""

    shard_id: int
    shard_count: int
    bucket: int
    at: float
    accepted: bool


@dataclass
class IdentifyGate:
    """Discord's identify rate limit across every process of one bot (Discord's
    "Sharding", "Max Concurrency": rate_limit_key = shard_id % max_concurrency; each
    bucket may IDENTIFY once per 5 s).  An IDENTIFY that comes sooner is refused: Discord
    answers opcode 9 INVALID_SESSION (d=false) and the client must wait and identify
    again; :meth:`identify` returns False and records it in :attr:`refused`.

    ``clock`` is shared by every client that identifies through the gate (a test may
    give it a virtual one)."""

    max_concurrency: int = 1
    window: float = 5.0
    clock: Callable[[], float] = time.monotonic
    seen: list[Identify] = field(default_factory=list)
    _last: dict[int, float] = field(default_factory=dict)

    @property
    def refused(self) -> list[Identify]:
        return [i for i in self.seen if not i.accepted]

    @property
    def accepted(self) -> list[Identify]:
        return [i for i in self.seen if i.accepted]

    def identify(self, shard_id: int, shard_count: int) -> bool:
        """An IDENTIFY of `shard_id` arrives now: accepted (READY follows) or refused."""
        bucket = shard_id % self.max_concurrency
        now = self.clock()
        last = self._last.get(bucket)
        ok = last is None or now >= last + self.window
        if ok:
            self._last[bucket] = now
        self.seen.append(Identify(shard_id, shard_count, bucket, now, ok))
        return ok

    async def connect(self, client: discord.Client, shard_id: int, shard_count: int, *,
                      initial: bool = True) -> bool:
        """What discord.py's gateway does before each IDENTIFY (DiscordWebSocket.identify):
        call the client's before_identify hook, then send; the gate answers."""
        await client.before_identify_hook(shard_id, initial=initial)
        return self.identify(shard_id, shard_count)
