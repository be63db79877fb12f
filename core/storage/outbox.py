"""OutboxWorker: delivers what the service committed, in order, at least once.

Entries are written in the command's own transaction (see service.py), so a
crash can delay a message but never lose it. Per game the order is strict:
entry N+1 is not tried before N is delivered or parked. Games are served by
separate tasks, so a slow or failing channel does not hold back other games.
Delivery is at-least-once (a crash between sending and marking repeats the
send); `OutboxEntry.key` lets the deliverer skip a duplicate if it cares.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from core.events import Event
from core.storage.models import DELIVERED, PARKED, PENDING, Outbox
from core.storage.service import EVENT_KIND, GameService
from core.storage.timing import doze, utcnow

log = logging.getLogger(__name__)


class RetryAfter(Exception):
    """Raised by `deliver` when Discord rate-limits: try again after `seconds`.

    Not counted as a failed attempt: a rate limit says nothing about the message.
    """

    def __init__(self, seconds: float) -> None:
        super().__init__(f"retry after {seconds}s")
        self.seconds = max(0.0, float(seconds))


@dataclass(frozen=True)
class OutboxEntry:
    id: int
    game_id: int
    ordinal: int
    kind: str
    payload: dict[str, Any]
    attempts: int  # failed attempts so far

    @property
    def key(self) -> tuple[int, int]:
        """Stable identity of the message: (game, ordinal)."""
        return (self.game_id, self.ordinal)

    def event(self) -> Event | None:
        """The engine event of an 'event' entry (else None)."""
        if self.kind != EVENT_KIND:
            return None
        return Event.model_validate(self.payload["event"])


Deliver = Callable[[OutboxEntry], Awaitable[None]]
NotifyParked = Callable[[OutboxEntry, str], Awaitable[None]]


def exponential_backoff(base: float = 2.0, cap: float = 600.0) -> Callable[[int], float]:
    """Seconds to wait after the n-th failure: base, 2*base, 4*base ... up to cap."""
    return lambda failures: min(cap, base * 2 ** max(0, failures - 1))


class OutboxWorker:
    def __init__(
        self, deliver: Deliver, *, notify_parked: NotifyParked | None = None,
        max_attempts: int = 8, backoff: Callable[[int], float] | None = None,
        now: Callable[[], datetime] = utcnow, poll_interval: float = 30.0,
        max_concurrent: int = 16, service: GameService | None = None,
    ) -> None:
        """`service`, if given, wakes the worker whenever it commits new entries;
        `max_concurrent` bounds deliveries in flight across all games."""
        self._deliver = deliver
        self._notify_parked = notify_parked
        self._max_attempts = max_attempts
        self._backoff = backoff or exponential_backoff()
        self._now = now
        self._poll = poll_interval
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._serving: dict[int, asyncio.Task[None]] = {}
        self._slots = asyncio.Semaphore(max_concurrent)
        self.delivered = 0
        self.parked = 0
        if service is not None:
            service.outbox_listeners.append(self.wake)

    async def start(self) -> None:
        """Run in the background; anything left pending by a previous run is resumed."""
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="outbox-worker")

    async def stop(self) -> None:
        tasks = [t for t in (self._task, *self._serving.values()) if t is not None]
        self._task = None
        for t in tasks:
            t.cancel()
        for t in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await t
        self._serving.clear()

    def wake(self) -> None:
        self._wake.set()

    async def idle(self, within: float = 10.0) -> None:
        """Wait until nothing is due (tests, shutdown); entries waiting on backoff count."""
        loop = asyncio.get_running_loop()
        end = loop.time() + within
        while loop.time() < end:
            due = await Outbox.filter(status=PENDING, next_attempt_at__lte=self._now()).exists()
            if not due and not self._serving:
                return
            self.wake()
            await asyncio.sleep(0.005)
        raise TimeoutError("outbox still busy")

    async def prune(self, keep: timedelta = timedelta(days=7)) -> int:
        """Delete delivered entries older than `keep` (parked ones stay for the master)."""
        cutoff = self._now() - keep
        return await Outbox.filter(status=DELIVERED, delivered_at__lt=cutoff).delete()

    async def _run(self) -> None:
        while True:
            self._wake.clear()
            try:
                games = await Outbox.filter(status=PENDING).distinct() \
                    .values_list("game_id", flat=True)
            except Exception:
                log.exception("outbox scan failed")
                games = []
            for game_id in games:
                gid = int(game_id)  # type: ignore[call-overload]
                if gid not in self._serving:
                    self._serving[gid] = asyncio.create_task(self._serve(gid))
            await doze(self._wake, self._poll)

    async def _serve(self, game_id: int) -> None:
        """Deliver one game's entries strictly in ordinal order until none is due."""
        try:
            while True:
                head = await Outbox.filter(game_id=game_id, status=PENDING) \
                    .order_by("ordinal").first()
                if head is None:
                    return
                wait = (head.next_attempt_at - self._now()).total_seconds()
                if wait > 0:
                    await asyncio.sleep(min(wait, self._poll))
                    continue
                await self._attempt(head)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("outbox of game %s stalled; will rescan", game_id)
            await asyncio.sleep(min(self._poll, 1.0))
        finally:
            self._serving.pop(game_id, None)
            self._wake.set()  # rescan: entries may have arrived while we were finishing

    async def _attempt(self, row: Outbox) -> None:
        entry = OutboxEntry(id=row.id, game_id=row.game_id, ordinal=row.ordinal,  # type: ignore[attr-defined]
                            kind=row.kind, payload=json.loads(row.payload), attempts=row.attempts)
        try:
            async with self._slots:
                await self._deliver(entry)
        except asyncio.CancelledError:
            raise
        except RetryAfter as exc:
            row.next_attempt_at = self._now() + timedelta(seconds=exc.seconds)
            row.last_error = str(exc)
            await row.save(update_fields=["next_attempt_at", "last_error"])
            return
        except Exception as exc:
            await self._failed(row, entry, f"{type(exc).__name__}: {exc}")
            return
        row.status, row.delivered_at = DELIVERED, self._now()
        await row.save(update_fields=["status", "delivered_at"])
        self.delivered += 1

    async def _failed(self, row: Outbox, entry: OutboxEntry, error: str) -> None:
        row.attempts += 1
        row.last_error = error[:2000]
        if row.attempts < self._max_attempts:
            row.next_attempt_at = self._now() + timedelta(seconds=self._backoff(row.attempts))
            log.warning("outbox %s of game %s failed (attempt %s): %s",
                        entry.ordinal, entry.game_id, row.attempts, error)
            await row.save(update_fields=["attempts", "last_error", "next_attempt_at"])
            return
        row.status = PARKED
        await row.save(update_fields=["attempts", "last_error", "status"])
        self.parked += 1
        log.error("outbox %s of game %s parked after %s attempts: %s",
                  entry.ordinal, entry.game_id, row.attempts, error)
        if self._notify_parked is not None:
            parked = OutboxEntry(id=entry.id, game_id=entry.game_id, ordinal=entry.ordinal,
                                 kind=entry.kind, payload=entry.payload, attempts=row.attempts)
            try:
                await self._notify_parked(parked, error)
            except Exception:
                log.exception("notify_parked failed for outbox %s of game %s",
                              entry.ordinal, entry.game_id)
