"""Weighted turns: urgent work first, but every kind of work gets its share.

Strict priority ("a lane sends nothing while a more urgent lane has work") starves the
slower lanes whenever the urgent one never runs dry, which is what a busy guild looks
like (issue 27). Two tools instead:

- `Stride`, for short turns (a request's grant by the budget): of the lanes that have
  work now, the one that has had the least service for its weight goes next (stride
  scheduling). With weights 8, 4, 2 and every lane busy, lane 0 gets 4/7 of the turns,
  the others 2/7 and 1/7, whatever the flood; a lane alone gets every turn; a lane back
  from idle starts level with the busy ones (it banks no turns).
- `shares`, for long holds (the outbox's delivery slots, held for a whole delivery):
  each lane has its own pool sized by its weight, so a lane whose deliveries wait long
  (member roles, channel creations) cannot take the slots of another.
"""

from __future__ import annotations

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
