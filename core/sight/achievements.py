"""Achievements (issue 46.5; RULES.md §16): a handful of marks drawn from a finished
game's own record, each earned once per member per server (storage keeps the first,
core/storage/ratings.py). Pure: the final state in, the marks each seat earned out.
"""

from __future__ import annotations

from enum import StrEnum

from core.game.roles import Role, Side
from core.game.state import GameState, PhaseKind, Player
from core.sight.ratings import removed

POLICE = (Role.INVESTIGATOR, Role.SERGEANT, Role.OPERATIVE)


class Mark(StrEnum):
    """An achievement: its catalogue key is `achievement.<value>`; a value never changes
    once released (stored rows name it)."""

    WIN_NEGATIVE = "win_negative"  # first win as a mafioso (or his clan's advocate)
    WIN_POSITIVE = "win_positive"
    WIN_NEUTRAL = "win_neutral"
    WIN_CITIZENS = "win_citizens"
    STILL_STANDING = "still_standing"  # won and alive at the end
    LAST_INVESTIGATOR = "last_investigator"  # the only one of the police left, and won
    DECIDING_VOTE = "deciding_vote"  # broke a tie that hanged a negative


def _won(state: GameState, p: Player) -> bool:
    return not state.draw and p.team is not None and p.team in state.winners \
        and not removed(p)


def _wins(state: GameState, p: Player) -> list[Mark]:
    if not _won(state, p) or p.side is None:
        return []
    marks = [Mark(f"win_{p.side}")]
    if p.alive:
        marks.append(Mark.STILL_STANDING)
    others = [q for q in state.players if q.uid != p.uid and q.role in POLICE]
    if p.alive and p.role is Role.INVESTIGATOR and others and not any(q.alive for q in others):
        marks.append(Mark.LAST_INVESTIGATOR)
    return marks


def _deciders(state: GameState) -> set[int]:
    """Voters whose vote broke a tie ("вешают того, кто набрал свои голоса первым") and
    so hanged a negative, when they are not of his side."""
    found: set[int] = set()
    for day in state.days:
        hanged = state.player(day.hanged) if day.hanged is not None else None
        voter = state.player(day.decider) if day.decider is not None else None
        if hanged is not None and voter is not None and hanged.side is Side.NEGATIVE \
                and voter.side is not Side.NEGATIVE and not removed(voter):
            found.add(voter.uid)
    return found


def earned(state: GameState) -> dict[int, list[Mark]]:
    """uid -> the marks this game earned him (a cancelled game earns none)."""
    if state.phase is not PhaseKind.ENDED:
        return {}
    deciders = _deciders(state)
    out: dict[int, list[Mark]] = {}
    for p in state.players:
        marks = _wins(state, p) + ([Mark.DECIDING_VOTE] if p.uid in deciders else [])
        if marks:
            out[p.uid] = marks
    return out
