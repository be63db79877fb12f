"""Discord's rate limits, enforced by the fake: 429s and X-RateLimit-* headers.

What is enforced (Discord's "Rate Limits" topic; numbers Discord does not publish are the
values bots observe, and each is a field of :class:`RateLimits` a test may change):

- the global limit: ``global_limit`` requests per second per bot, interaction callbacks
  and webhook (interaction follow-up) requests excluded as Discord excludes them;
- per-route buckets, counted per top-level resource (channel, guild or webhook id, the
  "major parameter"), fixed windows that start with their first request; every answer
  of a limited route carries ``X-RateLimit-Limit/Remaining/Reset/Reset-After/Bucket``,
  which is what discord.py's ``Ratelimit`` reads to wait before a bucket runs dry;
- sub-limits Discord keeps behind a bucket's back (the headers do not show them): a
  channel's name or topic at most 2 edits per 10 minutes, channel and role creation per
  guild over longer windows, and edits of messages older than an hour held to about 3
  per 6 s per channel (``old_edits``), answered by a 429 with Discord's error code 30046
  "Maximum number of edits to messages older than 1 hour reached. Try again later".

An exceeded limit answers 429 with the JSON body ``{message, retry_after, global}`` and
the headers Discord sends (``Retry-After``, ``X-RateLimit-Scope``, ``X-RateLimit-Global``
on a global limit, and ``Via``: discord.py treats a 429 without it as a Cloudflare ban).
Every 429 is recorded in :attr:`RateLimits.hits`; ``limited`` counts them.

Time is a :class:`VirtualClock`: real monotonic time plus the waits discord.py skipped.
The harness scales discord.py's sleeps (``retry_sleep_scale``, default 0: no real wait);
each scaled sleep moves the clock at least as far as the unscaled sleep would have, so a
client that waits as told finds its bucket refilled, as against the real API, without the
test waiting for it.  A sleep moves the clock for everyone (lenient, never stricter).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from hashlib import blake2b

GLOBAL_LIMIT = 50  # requests per second per bot (Discord: "50 requests per second")
DISCORD_EPOCH_MS = 1420070400000
#: Discord's JSON error for the old-message edit limit (its "JSON Error Codes" table)
OLD_EDIT_CODE = 30046
OLD_EDIT_MESSAGE = ("Maximum number of edits to messages older than 1 hour reached. "
                    "Try again later")
OLD_EDIT_ROUTE = "PATCH /channels/{channel_id}/messages/{message_id}"


class VirtualClock:
    """Monotonic seconds that a skipped wait can move forward (never back)."""

    def __init__(self, base: Callable[[], float] = time.monotonic) -> None:
        self._base = base
        self.offset = 0.0

    def __call__(self) -> float:
        return self._base() + self.offset

    def at_least(self, moment: float) -> None:
        """Make it at least `moment` (a wait that should have lasted until then)."""
        now = self()
        if moment > now:
            self.offset += moment - now


@dataclass(frozen=True)
class Limit:
    """`limit` requests per `window` seconds; `scope` as Discord names it on a 429."""

    limit: int
    window: float
    scope: str = "user"


@dataclass
class Window:
    """One fixed window of a bucket: opened by its first request."""

    start: float
    count: int = 0


@dataclass(frozen=True)
class RateLimitHit:
    """One 429 the fake answered."""

    route: str | None
    bucket: str
    scope: str
    retry_after: float
    is_global: bool
    at: float


def _major(params: dict[str, int | str]) -> str:
    """The top-level resource a per-route limit counts per (Discord's "major parameter")."""
    for name in ("channel_id", "guild_id", "webhook_id"):
        if name in params:
            return f"{name}={params[name]}"
    return ""


def bucket_hash(name: str) -> str:
    """A stable opaque id like Discord's ``X-RateLimit-Bucket``."""
    return blake2b(name.encode(), digest_size=16).hexdigest()


#: Per-route buckets: template key -> (bucket name, limit). Routes sharing a name share a
#: bucket (and so an ``X-RateLimit-Bucket``).  A route not listed is in its own bucket of
#: `RateLimits.default`.
ROUTE_LIMITS: dict[str, tuple[str, Limit]] = {
    # the per-channel message limit: 5 messages per 5 s per channel
    "POST /channels/{channel_id}/messages": ("messages", Limit(5, 5.0)),
    "PATCH /channels/{channel_id}/messages/{message_id}": ("message-edit", Limit(5, 5.0)),
    "DELETE /channels/{channel_id}/messages/{message_id}": ("message-delete", Limit(5, 1.0)),
    "PATCH /channels/{channel_id}": ("channel-edit", Limit(5, 5.0)),
    "DELETE /channels/{channel_id}": ("channel-delete", Limit(5, 5.0)),
    "PUT /channels/{channel_id}/permissions/{target}": ("overwrite", Limit(5, 5.0)),
    "DELETE /channels/{channel_id}/permissions/{target}": ("overwrite", Limit(5, 5.0)),
    "POST /guilds/{guild_id}/channels": ("channel-create", Limit(5, 5.0)),
    "POST /guilds/{guild_id}/roles": ("role-create", Limit(5, 5.0)),
    "PATCH /guilds/{guild_id}/roles/{role_id}": ("role-edit", Limit(5, 5.0)),
    "POST /channels/{channel_id}/threads": ("thread-create", Limit(5, 5.0)),
    "POST /channels/{channel_id}/messages/{message_id}/threads": ("thread-create",
                                                                   Limit(5, 5.0)),
    "PUT /channels/{channel_id}/thread-members/{user_id}": ("thread-member", Limit(5, 1.0)),
    "PUT /guilds/{guild_id}/members/{user_id}/roles/{role_id}": ("member-role",
                                                                 Limit(10, 10.0)),
    "DELETE /guilds/{guild_id}/members/{user_id}/roles/{role_id}": ("member-role",
                                                                    Limit(10, 10.0)),
}


@dataclass
class RateLimits:
    """The fake's rate limiter; one per world, ``enabled`` by default.

    ``check`` is called by the transport for each request before its handler: it returns
    the 429 to answer (or None) and the headers a successful answer carries."""

    clock: VirtualClock = field(default_factory=VirtualClock)
    enabled: bool = True
    global_limit: int = GLOBAL_LIMIT
    default: Limit = field(default_factory=lambda: Limit(10, 1.0))
    routes: dict[str, tuple[str, Limit]] = field(default_factory=lambda: dict(ROUTE_LIMITS))
    #: a channel's name/topic: 2 edits per 10 minutes per channel (Discord's sub-limit)
    rename: Limit = field(default_factory=lambda: Limit(2, 600.0, "shared"))
    #: channel creations per guild beyond the bucket (observed, unpublished)
    channel_creations: Limit = field(default_factory=lambda: Limit(50, 600.0, "shared"))
    #: role creations per guild (Discord: 250 per 48 hours)
    role_creations: Limit = field(default_factory=lambda: Limit(250, 48 * 3600.0, "shared"))
    #: edits of messages older than `old_age` s: about 3 per 6 s per channel (observed);
    #: beyond, a 429 carrying error code 30046
    old_edits: Limit = field(default_factory=lambda: Limit(3, 6.0, "user"))
    old_age: float = 3600.0
    hits: list[RateLimitHit] = field(default_factory=list)
    #: requests counted against the global limit (successful or not)
    counted: int = 0
    _windows: dict[tuple[str, str], Window] = field(default_factory=dict)

    @property
    def limited(self) -> int:
        """How many 429s the fake answered."""
        return len(self.hits)

    def reset(self) -> None:
        """Forget every window and hit (e.g. after a test's set-up)."""
        self._windows.clear()
        self.hits.clear()
        self.counted = 0

    # ------------------------------------------------------------------ the check

    def _window(self, key: tuple[str, str], limit: Limit, now: float) -> Window:
        w = self._windows.get(key)
        if w is None or now >= w.start + limit.window:
            w = self._windows[key] = Window(now)
        return w

    def _full(self, key: tuple[str, str], limit: Limit, now: float) -> float | None:
        """Seconds until the window of `key` has room, or None if it has room now."""
        w = self._window(key, limit, now)
        if w.count < limit.limit:
            return None
        return max(0.001, w.start + limit.window - now)

    def check(self, method: str, route: str | None, params: dict[str, int | str],
              body: object, *, counts_globally: bool
              ) -> tuple[tuple[dict[str, object], dict[str, str]] | None, dict[str, str]]:
        """(the 429 body and headers, or None; the X-RateLimit headers of the answer)."""
        if not self.enabled or route is None:
            return None, {}
        now = self.clock()
        major = _major(params)
        name, limit = self.routes.get(route, (route, self.default))
        bucket = bucket_hash(name)
        key = (name, major)
        # sub-limits Discord does not show in the bucket's headers
        subs: list[tuple[tuple[str, str], Limit]] = []
        if route == "PATCH /channels/{channel_id}" and isinstance(body, dict) \
                and ("name" in body or "topic" in body):
            subs.append((("rename", major), self.rename))
        if route == "POST /guilds/{guild_id}/channels":
            subs.append((("channel-creations", major), self.channel_creations))
        if route == "POST /guilds/{guild_id}/roles":
            subs.append((("role-creations", major), self.role_creations))
        old = route == OLD_EDIT_ROUTE and self.message_age(params) >= self.old_age
        if old:
            subs.append((("old-edits", major), self.old_edits))

        if counts_globally:
            wait = self._full(("global", ""), Limit(self.global_limit, 1.0), now)
            if wait is not None:
                return self._limited(route, bucket, "global", wait, now, limit, key), {}
        wait = self._full(key, limit, now)
        if wait is not None:
            return self._limited(route, bucket, limit.scope, wait, now, limit, key), {}
        for sub_key, sub in subs:
            wait = self._full(sub_key, sub, now)
            if wait is not None:
                answer = self._limited(route, bucket, sub.scope, wait, now, limit, key)
                if sub_key[0] == "old-edits":
                    answer[0].update(code=OLD_EDIT_CODE, message=OLD_EDIT_MESSAGE)
                return answer, {}

        if counts_globally:
            self._windows[("global", "")].count += 1
            self.counted += 1
        for sub_key, _ in subs:
            self._windows[sub_key].count += 1
        w = self._windows[key]
        w.count += 1
        return None, self._headers(bucket, limit, w, now)

    def wall(self) -> float:
        """The fake's wall-clock time (seconds since 1970): real time plus the waits the
        clock skipped, so a test ages a message by moving the clock."""
        return time.time() + self.clock.offset

    def message_age(self, params: dict[str, int | str]) -> float:
        """Seconds since the message in `params` was created (its snowflake's time)."""
        mid = params.get("message_id")
        if not isinstance(mid, int):
            return 0.0
        return self.wall() - ((mid >> 22) + DISCORD_EPOCH_MS) / 1000

    def _headers(self, bucket: str, limit: Limit, w: Window, now: float) -> dict[str, str]:
        # rounded up: a client that waits exactly this long finds the window over
        reset_after = math.ceil(max(0.0, w.start + limit.window - now) * 1000) / 1000
        return {
            "X-RateLimit-Limit": str(limit.limit),
            "X-RateLimit-Remaining": str(max(0, limit.limit - w.count)),
            "X-RateLimit-Reset": f"{time.time() + reset_after:.3f}",
            "X-RateLimit-Reset-After": f"{reset_after:.3f}",
            "X-RateLimit-Bucket": bucket,
        }

    def _limited(self, route: str, bucket: str, scope: str, wait: float, now: float,
                 limit: Limit, key: tuple[str, str]
                 ) -> tuple[dict[str, object], dict[str, str]]:
        is_global = scope == "global"
        retry_after = math.ceil(wait * 1000) / 1000
        self.hits.append(RateLimitHit(route, bucket, scope, retry_after, is_global, now))
        body: dict[str, object] = {"message": "You are being rate limited.",
                                   "retry_after": retry_after, "global": is_global}
        headers = {
            "Via": "1.1 google",
            "Retry-After": str(max(1, math.ceil(retry_after))),
            "X-RateLimit-Scope": scope,
        }
        if is_global:
            headers["X-RateLimit-Global"] = "true"
        else:
            w = self._window(key, limit, now)
            headers.update(self._headers(bucket, limit, w, now))
        return body, headers


__all__ = ["GLOBAL_LIMIT", "OLD_EDIT_CODE", "OLD_EDIT_MESSAGE", "ROUTE_LIMITS", "Limit",
           "RateLimitHit", "RateLimits", "VirtualClock", "bucket_hash"]
