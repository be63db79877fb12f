"""DeadlineScheduler: ends phases at their deadlines, including ones missed while down,
and sends the reminders due before them.

One task sleeps until the earliest known deadline or reminder (or until the service
says one moved) and then applies `Advance(by=0, deadline=True)`, or
`Remind(by=0, scheduled=True)`, through the service, so the scheduler's commands are
logged and replayed like anyone's. A reminder's time is derived from the stored state
(`core.game.rules.owing.reminder_at`: the deadline, the lead time, whether it was sent), so
a restart neither loses nor repeats one. Each due game fires in its own task: a game
whose lock is held for long never holds back another game's deadline.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import datetime, timedelta

from core.game.commands import Advance, Remind
from core.game.errors import RuleError
from core.game.rules.owing import reminder_at
from core.storage.service import GameService
from core.storage.timing import cancel_all, doze, utcnow

log = logging.getLogger(__name__)

# Refusals that only mean "someone got there first": the state is re-read instead.
RACES = frozenset({"deadline_not_reached", "game_over", "not_started"})
REMINDER_RACES = frozenset({"reminder_not_due", "nothing_to_remind", "game_over",
                            "not_started"})


class DeadlineScheduler:
    def __init__(self, service: GameService, *, now: Callable[[], datetime] = utcnow,
                 max_sleep: float = 60.0, retry_after: float = 30.0) -> None:
        """`max_sleep` bounds each wait so a jumping wall clock is noticed within it;
        `retry_after` spaces out retries of a game whose Advance failed unexpectedly."""
        self._service = service
        self._now = now
        self._max_sleep = max_sleep
        self._retry_after = timedelta(seconds=retry_after)
        self._deadlines: dict[int, datetime] = {}
        self._not_before: dict[int, datetime] = {}
        self._firing: dict[int, asyncio.Task[None]] = {}
        self._reminders: dict[int, datetime] = {}
        self._reminding: dict[int, asyncio.Task[None]] = {}
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.fired = 0  # Advances applied, for tests and the soak report
        self.reminded = 0  # scheduled Reminds applied
        self.looked = 0  # passes over the clock: a test waits for one instead of sleeping
        service.deadline_listeners.append(self.note)
        service.reminder_listeners.append(self.note_reminder)

    @property
    def deadlines(self) -> dict[int, datetime]:
        return dict(self._deadlines)

    @property
    def reminders(self) -> dict[int, datetime]:
        return dict(self._reminders)

    async def start(self) -> None:
        """Load every running game's deadline and reminder, then run; overdue ones fire
        at once (an overdue reminder only if its deadline is not overdue too)."""
        for game_id, deadline in (await self._service.pending_deadlines()).items():
            self._deadlines[game_id] = deadline
        for game_id, due in (await self._service.pending_reminders()).items():
            self._reminders[game_id] = due
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="deadline-scheduler")

    async def stop(self) -> None:
        tasks = [t for t in (self._task, *self._firing.values(), *self._reminding.values())
                 if t is not None]
        self._task = None
        await cancel_all(tasks)
        self._firing.clear()
        self._reminding.clear()

    def note(self, game_id: int, deadline: datetime | None) -> None:
        """The service's hook: a game's deadline changed (None: no deadline / game over)."""
        if deadline is None:
            self._deadlines.pop(game_id, None)
        else:
            self._deadlines[game_id] = deadline
        self._not_before.pop(game_id, None)
        self._wake.set()

    def note_reminder(self, game_id: int, due: datetime | None) -> None:
        """The service's hook: when a game's next reminder is due changed (None: none)."""
        if due is None:
            self._reminders.pop(game_id, None)
        else:
            self._reminders[game_id] = due
        self._wake.set()

    def wake(self) -> None:
        """Re-check the clock now (tests move their fake clock and call this)."""
        self._wake.set()

    def set_clock(self, now: Callable[[], datetime]) -> None:
        """Read the time from `now` from here on (a test's virtual clock), and look now."""
        self._now = now
        self._wake.set()

    @property
    def busy(self) -> bool:
        """A deadline's Advance is being applied right now."""
        return bool(self._firing)

    @property
    def reminding(self) -> bool:
        """A scheduled Remind is being applied right now."""
        return bool(self._reminding)

    async def _run(self) -> None:
        while True:
            self._wake.clear()
            now = self._now()
            waits: list[float] = []
            for game_id, deadline in list(self._deadlines.items()):
                if game_id in self._firing:
                    continue
                at = max(deadline, self._not_before.get(game_id, deadline))
                if at <= now:
                    self._firing[game_id] = asyncio.create_task(self._fire(game_id))
                else:
                    waits.append((at - now).total_seconds())
            for game_id, due in list(self._reminders.items()):
                if game_id in self._reminding:
                    continue
                ends = self._deadlines.get(game_id)
                if ends is not None and ends <= now:
                    continue  # the phase ends now: its reminder would come too late
                if due <= now:
                    self._reminding[game_id] = asyncio.create_task(self._remind(game_id))
                else:
                    waits.append((due - now).total_seconds())
            self.looked += 1
            await doze(self._wake, min([self._max_sleep, *waits]))

    async def _remind(self, game_id: int) -> None:
        due = self._reminders.get(game_id)
        try:
            await self._service.apply(game_id, Remind(by=0, at=self._now(), scheduled=True))
            self.reminded += 1
        except RuleError as exc:
            if exc.code not in REMINDER_RACES:
                log.error("reminder of game %s refused: %r", game_id, exc)
            await self._resync_reminder(game_id, due)
        except Exception:
            log.exception("reminder of game %s failed; retrying later", game_id)
            await asyncio.sleep(self._retry_after.total_seconds())
        finally:
            self._reminding.pop(game_id, None)
            self._wake.set()

    async def _resync_reminder(self, game_id: int, stale: datetime | None) -> None:
        """Re-read when the game's reminder is due (a refusal means we were out of date)."""
        try:
            state = await self._service.state(game_id)
        except RuleError:
            self._reminders.pop(game_id, None)
            return
        due = reminder_at(state)
        if due is None or due == stale:
            self._reminders.pop(game_id, None)  # never fire the same refused one again
        else:
            self._reminders[game_id] = due

    async def _fire(self, game_id: int) -> None:
        try:
            await self._service.apply(game_id, Advance(by=0, at=self._now(), deadline=True))
            self.fired += 1
        except RuleError as exc:
            if exc.code not in RACES:
                log.error("deadline of game %s refused: %r", game_id, exc)
                self._deadlines.pop(game_id, None)
            else:
                await self._resync(game_id)
        except Exception:
            log.exception("deadline of game %s failed; retrying later", game_id)
            self._not_before[game_id] = self._now() + self._retry_after
        finally:
            self._firing.pop(game_id, None)
            self._wake.set()

    async def _resync(self, game_id: int) -> None:
        try:
            state = await self._service.state(game_id)
        except RuleError:
            self._deadlines.pop(game_id, None)
            return
        if state.over or state.deadline is None:
            self._deadlines.pop(game_id, None)
        else:
            self._deadlines[game_id] = state.deadline

