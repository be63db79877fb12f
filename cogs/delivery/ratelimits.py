"""Every REST request the bot makes passes the client-side budget (cogs/delivery/budget.py)
first, so none goes out that Discord would answer with a 429.

Installed on the bot's discord.py HTTP client (interaction responses and follow-ups go
another way and are not limited by Discord's global limit, so not here either).  Each
request is charged to the global limit and, where Discord limits a route per channel or
guild more tightly than the headers tell in advance, to that key; it waits by priority:

  URGENT    anything an interaction may be waiting for (lookups, DMs opened ...)
  ANNOUNCE  a message in a public channel (a game's announcements)
  PRIVATE   a message in a private channel, thread or DM; channel set-up; the game's
            ping role (created, given, taken: announcements never wait for it)
  COSMETIC  an edit of a message (the signup message, a live tally)

URGENT goes first; the others take weighted turns (cogs/delivery/budget.py), so a flood
of announcements cannot starve private pushes or the live count.

The outbox's deliveries run with PATIENCE set: a request that would wait longer than
that for its channel's or guild's own window (a guild that created 50 channels in ten
minutes, a busy member-role route) is not sent into a long wait holding a delivery slot;
it raises `discord.RateLimited`, and the outbox entry backs off for that long while the
other entries and games go on.

While an edit of a message waits, a newer edit of the same message joins it: one request
carries both (the newer fields win) and both callers get its answer.

discord.py keeps one bucket per route and channel and, once it holds 256, looks through
all of them for expired ones on every new bucket: a bot with thousands of channels busy
within 5 minutes (a deadline storm) scanned them all on every request to a new channel,
a fifth of its CPU. `install` makes that clean-up amortized (`_cleanup_amortized`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import discord
from discord.http import Route

from .budget import Key, RateBudget

if TYPE_CHECKING:
    from cogs.utils.bot import MafiaBot

URGENT, ANNOUNCE, PRIVATE, COSMETIC = 0, 1, 2, 3

MESSAGES = "POST /channels/{channel_id}/messages"
EDIT = "PATCH /channels/{channel_id}/messages/{message_id}"
CHANNEL_EDIT = "PATCH /channels/{channel_id}"
SETUP = frozenset({
    "POST /guilds/{guild_id}/channels", CHANNEL_EDIT, "DELETE /channels/{channel_id}",
    "PUT /channels/{channel_id}/permissions/{target}",
    "DELETE /channels/{channel_id}/permissions/{target}",
    "POST /channels/{channel_id}/threads",
    "PUT /channels/{channel_id}/thread-members/{user_id}",
})
# the game's ping role and who holds it
ROLES = frozenset({
    "POST /guilds/{guild_id}/roles", "PATCH /guilds/{guild_id}/roles/{role_id}",
    "PUT /guilds/{guild_id}/members/{user_id}/roles/{role_id}",
    "DELETE /guilds/{guild_id}/members/{user_id}/roles/{role_id}",
})


# Creations per guild over long windows, which Discord enforces beside the 5 per 5 s
# bucket and does not announce in its headers: a guild starting many games at once waits
# here rather than collecting 429s (too many of them get the bot's IP banned).
CHANNEL_CREATIONS = (50, 600.0)
ROLE_CREATIONS = (250, 48 * 3600.0)
# Member-role changes: 10 per 10 s per guild (one bucket for adding and removing).
MEMBER_ROLES = (10, 10.0)
MEMBER_ROLE = frozenset({"PUT /guilds/{guild_id}/members/{user_id}/roles/{role_id}",
                         "DELETE /guilds/{guild_id}/members/{user_id}/roles/{role_id}"})

#: seconds a request of the outbox may wait for its own channel's/guild's window before
#: it gives up (discord.RateLimited) and its entry backs off instead (None: no limit)
PATIENCE: ContextVar[float | None] = ContextVar("budget_patience", default=None)


def keys(route: Route, payload: Any) -> list[Key]:
    """The per-channel/guild limits a request counts against besides the global one:
    5 messages per 5 s per channel, 5 edits per 5 s, 5 channel edits per 5 s of which 2
    per 10 minutes may rename or re-topic it, 5 creations per 5 s per guild and, over
    longer windows, CHANNEL_CREATIONS and ROLE_CREATIONS per guild."""
    method_path = f"{route.method} {route.path}"
    cid, gid = route.channel_id, route.guild_id
    if method_path == MESSAGES:
        return [Key(f"msg:{cid}", 5, 5.0)]
    if method_path == EDIT:
        return [Key(f"edit:{cid}", 5, 5.0)]
    if method_path == CHANNEL_EDIT:
        out = [Key(f"chedit:{cid}", 5, 5.0)]
        if isinstance(payload, dict) and ("name" in payload or "topic" in payload):
            out.append(Key(f"rename:{cid}", 2, 600.0))
        return out
    if method_path == "POST /guilds/{guild_id}/channels":
        return [Key(f"chcreate:{gid}", 5, 5.0), Key(f"chcreates:{gid}", *CHANNEL_CREATIONS)]
    if method_path == "POST /guilds/{guild_id}/roles":
        return [Key(f"rolecreate:{gid}", 5, 5.0), Key(f"rolecreates:{gid}", *ROLE_CREATIONS)]
    if method_path == "POST /channels/{channel_id}/threads":
        return [Key(f"thread:{cid}", 5, 5.0)]
    if method_path in MEMBER_ROLE:
        return [Key(f"memberrole:{gid}", *MEMBER_ROLES)]
    return []


@dataclass
class _Edit:
    """An edit waiting for the budget, which newer edits of the message join."""

    payload: dict[str, Any]
    answer: asyncio.Future[Any]
    joined: int = 0


@dataclass
class BudgetedHTTP:
    """The wrapper around `HTTPClient.request`."""

    bot: MafiaBot
    budget: RateBudget
    send: Callable[..., Awaitable[Any]]
    coalesced: int = 0
    #: requests of the outbox that backed off rather than wait past PATIENCE
    deferred: int = 0
    _edits: dict[str, _Edit] = field(default_factory=dict)

    def priority(self, route: Route) -> int:
        method_path = f"{route.method} {route.path}"
        if method_path == EDIT:
            return COSMETIC
        if method_path == MESSAGES:
            cid = int(route.channel_id) if route.channel_id is not None else 0
            channel = self.bot.get_channel(cid)
            public = isinstance(channel, discord.TextChannel) \
                and cid not in self.bot.private_index
            return ANNOUNCE if public else PRIVATE
        if method_path in SETUP or method_path in ROLES:
            return PRIVATE
        return URGENT

    async def request(self, route: Route, **kwargs: Any) -> Any:
        payload = kwargs.get("json")
        patience = PATIENCE.get()
        # (a budget that skips its waits, the tests' virtual clock, makes waiting free)
        if patience is not None and self.budget.skip is None:
            wait = self.budget.delay(keys(route, payload))
            if wait > patience:
                self.deferred += 1
                raise discord.RateLimited(wait)
        if f"{route.method} {route.path}" == EDIT and isinstance(payload, dict) \
                and not kwargs.get("files") and not kwargs.get("form"):
            return await self._edit(route, payload, kwargs)
        release = await self.budget.acquire(keys(route, payload), self.priority(route))
        try:
            return await self.send(route, **kwargs)
        finally:
            release()

    async def _edit(self, route: Route, payload: dict[str, Any], kwargs: dict[str, Any]
                    ) -> Any:
        waiting = self._edits.get(route.url)
        if waiting is not None:
            waiting.payload.update(payload)
            waiting.joined += 1
            self.coalesced += 1
            return await asyncio.shield(waiting.answer)
        edit = _Edit(dict(payload), asyncio.get_running_loop().create_future())
        edit.answer.add_done_callback(_retrieved)
        self._edits[route.url] = edit
        try:
            release = await self.budget.acquire(keys(route, payload), COSMETIC)
        except BaseException as exc:
            self._edits.pop(route.url, None)
            if not edit.answer.done():
                edit.answer.set_exception(exc if isinstance(exc, Exception)
                                          else asyncio.CancelledError())
            raise
        self._edits.pop(route.url, None)
        kwargs["json"] = edit.payload
        try:
            answer = await self.send(route, **kwargs)
        except BaseException as exc:
            if not edit.answer.done():
                edit.answer.set_exception(exc if isinstance(exc, Exception)
                                          else asyncio.CancelledError())
            raise
        finally:
            release()
        edit.answer.set_result(answer)
        return answer


def _retrieved(future: asyncio.Future[Any]) -> None:
    """Mark an edit's failure as seen (it is raised to the caller that sent it)."""
    if not future.cancelled():
        future.exception()


def _cleanup_amortized(http: discord.http.HTTPClient) -> None:
    """Let discord.py drop its expired buckets only when their number has doubled since
    the last clean-up (instead of at every new bucket past 256): the same clean-up,
    amortized O(1) per request, and at most twice the live buckets kept."""
    clear = http._try_clear_expired_ratelimits
    buckets: dict[str, Any] = http._buckets
    threshold = [256]

    def amortized() -> None:
        if len(buckets) < threshold[0]:
            return
        clear()
        threshold[0] = max(256, 2 * len(buckets))

    http._try_clear_expired_ratelimits = amortized  # type: ignore[method-assign]


def install(bot: MafiaBot, budget: RateBudget) -> BudgetedHTTP:
    """Route every REST request of `bot` through `budget`."""
    wrapper = BudgetedHTTP(bot, budget, bot.http.request)
    bot.http.request = wrapper.request  # type: ignore[method-assign]
    _cleanup_amortized(bot.http)
    return wrapper
