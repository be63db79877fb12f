"""A client-side budget of Discord requests, so the bot never sends one it knows will be
refused with a 429.

Discord allows a bot 50 requests per second in all (interactions aside) and some routes
far less per channel or guild (5 messages per 5 s per channel; 2 renames per 10 minutes).
discord.py waits on the per-route buckets Discord announces in headers, but not on the
global limit (it only learns of it from a 429) nor on sub-limits the headers hide.  The
budget keeps, per key, the times of the last sends: a request goes out only when every
key it is charged to had fewer than `limit` sends in the last `window` seconds (a sliding
window: no fixed window Discord may count in can hold more), with a small margin for the
time a request takes to arrive.

Priority 0 (what an interaction waits for) goes first; the other priorities take
weighted turns (`weights`, core/storage/turns.py): announcements get the largest share,
but private pushes and edits keep theirs however long the announcements' queue (strict
priority starved them in a busy guild, issue 27). Within a priority, arrival order; a
waiter blocked only by its own channel's key does not hold back the others.

It is the Discord layer's (issue 30): core/storage holds the outbox and its worker, which
know nothing of Discord's limits; the weighted turns it borrows are generic.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from core.storage.turns import Stride

GLOBAL = "global"
GLOBAL_LIMIT = 50  # Discord: 50 requests per second per bot (unless it granted more)
#: shares of the global limit by priority when several wait (0: strict, always first):
#: announcements 24 of every 30 turns (issue 30: public first; at 8 of 14 a storm's
#: 500 announcements waited behind the places' backlog), private posts 4, edits 2, so
#: neither starves (issue 27)
WEIGHTS = (0.0, 24.0, 4.0, 2.0)
MARGIN = 1.05  # windows are kept this much longer than Discord's (arrival jitter)


def global_limit(configured: int | None) -> int:
    """The bot's global limit: GLOBAL_RATE_LIMIT where Discord granted a higher one
    (core/settings.py), else Discord's standard 50 per second."""
    return GLOBAL_LIMIT if configured is None else configured


@dataclass(frozen=True)
class Key:
    """What a request is charged to: `name` (a route group and its channel/guild) allows
    `limit` requests per `window` seconds."""

    name: str
    limit: int
    window: float


class SlidingWindow:
    """The sends of one key: those in flight, and the times the recent ones were
    answered.  A send in flight counts until it is answered (it may arrive at Discord
    late, e.g. after discord.py waited on a bucket), then as sent when answered, which is
    no earlier than it arrived: so no window Discord counts in can hold more than
    `limit`."""

    __slots__ = ("inflight", "limit", "sent", "window")

    def __init__(self, limit: int, window: float) -> None:
        self.limit = limit
        self.window = window * MARGIN
        self.sent: deque[float] = deque()
        self.inflight = 0

    def wait(self, now: float) -> float:
        """Seconds until one more send fits (0: now; inf: when one in flight is answered)."""
        sent = self.sent
        while sent and sent[0] + self.window <= now:
            sent.popleft()
        if len(sent) + self.inflight < self.limit:
            return 0.0
        if len(sent) + self.inflight - self.limit >= len(sent):
            return float("inf")
        return max(0.0, sent[len(sent) + self.inflight - self.limit] + self.window - now)

    def take(self) -> None:
        self.inflight += 1

    def done(self, now: float) -> None:
        self.inflight = max(0, self.inflight - 1)
        self.sent.append(now)


@dataclass
class _Waiter:
    priority: int
    keys: tuple[Key, ...]
    future: asyncio.Future[None]


@dataclass
class RateBudget:
    """The bot's budget; `acquire` before each REST request."""

    global_limit: int = GLOBAL_LIMIT
    clock: Callable[[], float] = time.monotonic
    #: tests with a virtual clock: instead of waiting until a moment, move the clock
    #: there (`clock` must then be that clock)
    skip: Callable[[float], None] | None = None
    #: requests granted, per priority (what went out)
    granted: dict[int, int] = field(default_factory=dict)
    _windows: dict[str, SlidingWindow] = field(default_factory=dict)
    _queues: dict[int, deque[_Waiter]] = field(default_factory=dict)
    _timer: asyncio.Handle | None = None
    _timer_at: float = float("inf")
    weights: tuple[float, ...] = WEIGHTS
    _stride: Stride | None = None

    def window(self, key: Key) -> SlidingWindow:
        # the global window always follows `global_limit` (hook of cogs/delivery/sharedbudget.py:
        # a waiter's key keeps the limit of when it asked, and must not restore it)
        limit = self.global_limit if key.name == GLOBAL else key.limit
        w = self._windows.get(key.name)
        if w is None:
            w = self._windows[key.name] = SlidingWindow(limit, key.window)
        elif w.limit != limit:  # the limit was changed (e.g. global_limit)
            w.limit = limit
        return w

    def delay(self, keys: Iterable[Key]) -> float:
        """Seconds a request charged to `keys` would wait for them now (not counting
        the global limit, nor requests in flight: those are answered soon)."""
        now = self.clock()
        waits = (self.window(k).wait(now) for k in keys)
        return max((w for w in waits if w != float("inf")), default=0.0)

    @property
    def waiting(self) -> int:
        return sum(len(q) for q in self._queues.values())

    # --- hook of the shared budget (cogs/delivery/sharedbudget.py): the share of the token's
    # global limit this process leased; waiters held by the old one get their turn now
    def set_global_limit(self, limit: int) -> None:
        self.global_limit = limit
        if self.waiting:
            self._pump()

    async def acquire(self, keys: Iterable[Key] = (), priority: int = 0
                      ) -> Callable[[], None]:
        """Wait until a request charged to the global limit and to `keys` may go out now;
        count it in flight.  Call the returned function when it was answered (or failed).
        Lower `priority` goes first."""
        loop = asyncio.get_running_loop()
        waiter = _Waiter(priority, (Key(GLOBAL, self.global_limit, 1.0), *keys),
                         loop.create_future())
        self._queues.setdefault(priority, deque()).append(waiter)
        self._pump()
        try:
            await waiter.future
        except asyncio.CancelledError:
            if waiter.future.done() and not waiter.future.cancelled():
                self._release(waiter.keys)  # granted as we were cancelled
            else:
                queue = self._queues.get(priority)
                if queue is not None and waiter in queue:
                    queue.remove(waiter)
            raise
        released = False

        def release() -> None:
            nonlocal released
            if not released:
                released = True
                self._release(waiter.keys)

        return release

    def _release(self, keys: tuple[Key, ...]) -> None:
        now = self.clock()
        for k in keys:
            self.window(k).done(now)
        if self.waiting:
            self._pump()

    def wake(self) -> None:
        """Grant what fits now (tests move their fake clock, then call this)."""
        self._pump()

    def _pump(self) -> None:
        """Grant every waiter that fits now (priority 0 first, the others by weighted
        turns, arrival order within one); arm a timer for the soonest moment another
        one may fit."""
        now = self.clock()
        glob = self.window(Key(GLOBAL, self.global_limit, 1.0))
        soonest = float("inf")
        ready: dict[int, deque[_Waiter]] = {}
        for priority, queue in self._queues.items():
            live: deque[_Waiter] = deque()
            fits: deque[_Waiter] = deque()
            for waiter in queue:
                if waiter.future.done():
                    continue
                live.append(waiter)
                wait = max((self.window(k).wait(now) for k in waiter.keys[1:]), default=0.0)
                if wait > 0:
                    soonest = min(soonest, wait)
                else:
                    fits.append(waiter)
            self._queues[priority] = live
            if fits:
                ready[priority] = fits
        while ready:
            g = glob.wait(now)
            if g > 0:
                soonest = min(soonest, g)
                break
            priority = self._next(ready)
            waiter = ready[priority].popleft()
            if not ready[priority]:
                del ready[priority]
            wait = max((self.window(k).wait(now) for k in waiter.keys[1:]), default=0.0)
            if wait > 0:  # an earlier grant filled a key it shares
                soonest = min(soonest, wait)
                continue
            for k in waiter.keys:
                self.window(k).take()
            self.granted[priority] = self.granted.get(priority, 0) + 1
            waiter.future.set_result(None)
        if soonest < float("inf"):  # (inf: the next answer pumps)
            if self.skip is not None:
                self.skip(now + soonest)
                if self._timer is None:
                    self._timer = asyncio.get_running_loop().call_soon(self._fire)
                return
            self._arm(now + soonest)

    def _next(self, ready: dict[int, deque[_Waiter]]) -> int:
        """Which priority is served next: a strict one (weight 0, or unknown) first."""
        strict = [p for p in ready if not 0 <= p < len(self.weights) or not self.weights[p]]
        if strict:
            return min(strict)
        if self._stride is None:
            self._stride = Stride([w or 1.0 for w in self.weights])
        picked = self._stride.pick(ready)
        assert picked is not None
        return picked

    def _arm(self, at: float) -> None:
        if self._timer is not None and self._timer_at <= at:
            return
        if self._timer is not None:
            self._timer.cancel()
        loop = asyncio.get_running_loop()
        self._timer_at = at
        self._timer = loop.call_later(max(0.0, at - self.clock()) + 0.0005, self._fire)

    def _fire(self) -> None:
        self._timer = None
        self._timer_at = float("inf")
        self._pump()

