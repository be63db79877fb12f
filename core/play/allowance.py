"""How many balance estimates a member and a server may ask for (issue 41, item 6).

An estimate costs a worker process's core for seconds; the setup it describes costs
nothing. So a member re-running /game setup in a loop, or a server's thirty masters
at once, must not buy the machine: each may ask for a few estimates a window, and a
request beyond that is refused with the moment the oldest counted one leaves the
window (the setup itself is kept). Pure: the caller passes the clock.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Literal

Scope = Literal["member", "guild"]


@dataclass(frozen=True)
class Spent:
    """An estimate refused: whose allowance is spent, its size, and when (the same
    clock as the request's) the next one would be counted."""

    scope: Scope
    limit: int
    retry_at: float


@dataclass
class Allowance:
    """At most `per_member` estimates a member and `per_guild` a server in any
    `window_s` seconds; a refused request does not count."""

    per_member: int = 6
    per_guild: int = 30
    window_s: float = 60.0
    _asked: dict[tuple[Scope, int], deque[float]] = field(default_factory=dict)

    def _recent(self, key: tuple[Scope, int], now: float) -> deque[float]:
        times = self._asked.setdefault(key, deque())
        while times and times[0] <= now - self.window_s:
            times.popleft()
        return times

    def check(self, member: int, guild: int | None, now: float) -> Spent | None:
        """Whether a request now would be refused (counts nothing)."""
        keys: list[tuple[Scope, int, int]] = [("member", member, self.per_member)]
        if guild is not None:
            keys.append(("guild", guild, self.per_guild))
        for scope, ident, limit in keys:
            times = self._recent((scope, ident), now)
            if len(times) >= limit:
                return Spent(scope, limit, times[len(times) - limit] + self.window_s)
        return None

    def take(self, member: int, guild: int | None, now: float) -> Spent | None:
        """Count a request now, unless it is refused (then say why and until when)."""
        spent = self.check(member, guild, now)
        if spent is None:
            self._recent(("member", member), now).append(now)
            if guild is not None:
                self._recent(("guild", guild), now).append(now)
        return spent

    def forget(self, now: float) -> None:
        """Drop the members and servers with nothing in the window (memory stays
        bounded by those who asked within it)."""
        for key in [k for k in self._asked if not self._recent(k, now)]:
            del self._asked[key]
