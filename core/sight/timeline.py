"""A day's vote timeline: who had how many votes when, and the hammer moment.

Pure data for the vote picture and the archive. It replays the day's vote log
with the same weights the tie-break uses (core.game.rules.voting: the weights of the
moment the day closes, shouts and ghost half-votes included, voided votes at
zero), so the last step equals the /votes tally and the hanged player's marked
moment is exactly the one that decided a tie (RULES.md, 'Vote timeline').
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from pydantic import BaseModel, Field

from core.game.rules.voting import close_day, mark_weight, voided
from core.game.state import GameState, VoteMark


class Step(BaseModel):
    """One vote mark and the counts right after it (halves; zero counts omitted)."""

    seq: int
    at: datetime | None
    voter: int
    target: int | None  # None: a withdrawal
    previous: int | None  # the voter's vote this mark replaced, if any
    weight: int  # halves this mark carries (0: voided, or a voter without weight)
    shouts: int = 0
    void: bool = False
    totals: dict[int, int] = Field(default_factory=dict)


class DayTimeline(BaseModel):
    day: int
    start: datetime | None = None
    deadline: datetime | None = None
    end: datetime | None = None
    candidates: list[int] = Field(default_factory=list)  # every target, first vote first
    steps: list[Step] = Field(default_factory=list)
    final: dict[int, int] = Field(default_factory=dict)
    hanged: int | None = None
    tied: list[int] = Field(default_factory=list)
    hammer_seq: int | None = None  # the mark that gave the hanged player his final count
    hammer_at: datetime | None = None
    hammer_by: int | None = None

    def series(self, uid: int) -> list[tuple[datetime | None, int]]:
        """(moment, halves) at every step where `uid`'s count changed, from zero."""
        out: list[tuple[datetime | None, int]] = []
        last = 0
        for step in self.steps:
            now = step.totals.get(uid, 0)
            if now != last:
                out.append((step.at, now))
                last = now
        return out


def day_timeline(state: GameState, times: Mapping[int, datetime] | None = None, *,
                 start: datetime | None = None, deadline: datetime | None = None,
                 end: datetime | None = None) -> DayTimeline:
    """The timeline of the day `state` is in, taken just before the day closes.

    `times` maps a vote mark's seq to when it was cast (the command log has it)."""
    times = times or {}
    void = voided(state)
    record = close_day(state)
    running: dict[int, int] = {}
    live: dict[int, VoteMark] = {}
    candidates: list[int] = []
    steps: list[Step] = []
    final = dict(record.tally)
    hammer: Step | None = None
    for mark in state.vote_log:
        old = live.pop(mark.voter, None)
        before = running.get(record.hanged, 0) if record.hanged is not None else 0
        if old is not None and old.target is not None:
            running[old.target] -= mark_weight(state, old, void)
        weight = mark_weight(state, mark, void)
        if mark.target is not None:
            live[mark.voter] = mark
            running[mark.target] = running.get(mark.target, 0) + weight
            if mark.target not in candidates:
                candidates.append(mark.target)
        step = Step(seq=mark.seq, at=times.get(mark.seq), voter=mark.voter, target=mark.target,
                    previous=old.target if old else None, weight=weight, shouts=mark.shouts,
                    void=mark.void or mark.seq in void,
                    totals={t: n for t, n in running.items() if n})
        steps.append(step)
        if record.hanged is not None:
            goal = final.get(record.hanged, 0)
            if before < goal <= running.get(record.hanged, 0):
                hammer = step
    return DayTimeline(
        day=state.number, start=start, deadline=deadline, end=end, candidates=candidates,
        steps=steps, final=final, hanged=record.hanged, tied=list(record.tied),
        hammer_seq=hammer.seq if hammer else None, hammer_at=hammer.at if hammer else None,
        hammer_by=hammer.voter if hammer else None)
