"""Weighted turns: urgent work first, but every kind of work gets its share.

Strict priority ("a lane sends nothing while a more urgent lane has work") starves the
slower lanes whenever the urgent one never runs dry, which is what a busy guild looks
like (issue 27). Generic tools, nothing here knows whom the work is for:

- `Stride`, for short turns (a request's grant by the Discord layer's budget,
  cogs/delivery/budget.py): of the lanes that have work now, the one that has had the
  least service for its weight goes next (stride scheduling). With weights 8, 4, 2 and
  every lane busy, lane 0 gets 4/7 of the turns, the others 2/7 and 1/7, whatever the
  flood; a lane alone gets every turn; a lane back from idle starts level with the busy
  ones (it banks no turns).
- `shares`, for long holds (the outbox's delivery slots, held for a whole delivery):
  each lane has its own pool sized by its weight, so a lane whose deliveries wait long
  (on whatever the deliverer waits for) cannot take the slots of another.
- `FairSlots`, one such pool: a freed slot goes to the longest waiter, so within a lane
  the games take turns.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Iterable, Sequence


class Stride:
    """Which of the lanes with work goes next, by weight."""

    def __init__(self, weights: Sequence[float]) -> None:
        self._step = [1.0 / max(w, 1e-9) for w in weights]
        self._pass = [0.0] * len(weights)
        self._floor = 0.0

    def pick(self, ready: Iterable[int]) -> int | None:
        """The ready lane whose turn it is (charged for it), or None."""
        best: int | None = None
        for lane in ready:
            self._pass[lane] = max(self._pass[lane], self._floor)  # no banked turns
            if best is None or self._pass[lane] < self._pass[best]:
                best = lane
        if best is not None:
            self._floor = self._pass[best]
            self._pass[best] += self._step[best]
        return best


def shares(total: int, weights: Sequence[float]) -> list[int]:
    """`total` slots split by weight, at least one each (a lane's own pool: what another
    lane holds, however long, never takes it)."""
    whole = sum(weights) or 1.0
    return [max(1, round(total * w / whole)) for w in weights]


class FairSlots:
    """A semaphore that hands a freed slot to the longest waiter (a task that releases
    and asks again queues behind the others): games take turns."""

    def __init__(self, slots: int) -> None:
        self._free = slots
        self._waiters: deque[asyncio.Future[None]] = deque()

    async def __aenter__(self) -> None:
        if self._free > 0 and not self._waiters:
            self._free -= 1
            return
        future = asyncio.get_running_loop().create_future()
        self._waiters.append(future)
        try:
            await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self._release()  # the slot was handed over as we were cancelled
            elif future in self._waiters:
                self._waiters.remove(future)
            raise

    async def __aexit__(self, *exc: object) -> None:
        self._release()

    def _release(self) -> None:
        while self._waiters:
            future = self._waiters.popleft()
            if not future.done():
                future.set_result(None)
                return
        self._free += 1
