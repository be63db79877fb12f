"""Who still owes his turn, reminders before the deadline, and the early end of a night.

A turn is owed by a living player only: by day 0 his check-in, by a voting day a
standing vote, by night one order per move he has (Doubling gives two). The dead,
the removed and the replaced (his id is gone) owe nothing. By day this is public
(votes are public); by night it names role players, so it only ever goes to the
player himself and to the master (RULES.md, "Reminders").
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Literal

from core.game.errors import ErrorCode, RuleError
from core.game.events import Audience, EventKind
from core.game.rules import night as night_rules
from core.game.rules.context import Ctx
from core.game.rules.deadlines import MINUTE
from core.game.rules.voting import current_votes
from core.game.state import GameState, PhaseKind

Duty = Literal["checkin", "vote", "night"]
REMINDER = EventKind.REMINDER  # the private event kind (durable: it goes through the outbox)


def duty(state: GameState) -> Duty | None:
    """What the current phase asks of the players, if anything."""
    if state.phase is PhaseKind.DAY:
        return "checkin" if state.number == 0 else "vote"
    if state.phase is PhaseKind.NIGHT:
        return "night"
    return None


def owing(state: GameState) -> list[int]:
    """Living players who have not yet done what the current phase asks, in seat order."""
    what = duty(state)
    if what == "checkin":
        return [p.uid for p in state.living() if not p.checked_in]
    if what == "vote":
        standing = current_votes(state)
        return [p.uid for p in state.living() if p.uid not in standing]
    if what == "night":
        given: dict[int, int] = {}
        for o in state.orders:
            if o.night == state.number:
                given[o.actor] = given.get(o.actor, 0) + 1
        return [p.uid for p in state.living()
                if given.get(p.uid, 0) < night_rules.moves_allowed(state, p)]
    return []


def all_moves_in(state: GameState) -> bool:
    """By night: every living player with a move has given all his orders (Doubling: both;
    the desk's `night.all_orders_in` note does not wait for the second)."""
    return state.phase is PhaseKind.NIGHT and not owing(state)


def reminder_at(state: GameState) -> datetime | None:
    """When the scheduled reminder of the current deadline is due (None: none is).

    One per deadline: an extended deadline gets a new one. None when the lead time is
    off or does not fall inside the phase after its first minute (a phase not longer than
    the lead time starts with its announcement, which already says what to do and by
    when; the game's second of the minute makes a phase up to 59 s longer than its
    length, core/game/rules/deadlines.py)."""
    lead = state.options.reminder_minutes
    if duty(state) is None or state.deadline is None or lead <= 0 or state.over:
        return None
    if state.reminded == state.deadline:
        return None
    at = state.deadline - timedelta(minutes=lead)
    if state.opened is not None and at < state.opened + MINUTE:
        return None
    return at


def something_to_remind(state: GameState) -> Duty:
    """The turn the phase owes by its deadline, or the refusal: the guard of /master prod."""
    what = duty(state)
    if what is None or state.deadline is None:
        raise RuleError(ErrorCode.NOTHING_TO_REMIND)
    return what


def remind(ctx: Ctx, at: datetime, *, scheduled: bool) -> list[int]:
    """Emit one private reminder per player who owes his turn; returns them.

    By day the list is public too (who has not voted is no secret); by night nothing
    public names anybody. The master always gets the list."""
    state = ctx.state
    what = something_to_remind(state)
    assert state.deadline is not None
    if scheduled:
        due = reminder_at(state)
        if due is None or at < due:
            raise RuleError(ErrorCode.REMINDER_NOT_DUE)
        state.reminded = state.deadline
    excused = away(state)
    uids = [u for u in owing(state) if u not in excused]
    deadline = state.deadline.isoformat()
    for uid in uids:
        ctx.emit(EventKind.REMINDER, Audience.to(uid), what=what, number=state.number,
                 deadline=deadline)
    if what != "night" and uids:
        ctx.emit(EventKind.REMINDER_PUBLIC, what=what, number=state.number, deadline=deadline,
                 owing=uids)
    ctx.emit(EventKind.REMINDED, Audience.master(), what=what, number=state.number,
             deadline=deadline, owing=uids, scheduled=scheduled,
             away=[u for u in owing(state) if u in excused])
    return uids


def away(state: GameState) -> set[int]:
    """Living players whose /away warning covers the current turn (a day and its night,
    up to the day number the warning names): they are neither reminded nor named in the
    public list of who has not voted; the master's list still names them (RULES.md,
    "Warning the master")."""
    return {p.uid for p in state.living()
            if p.away_until is not None and state.number <= p.away_until}
