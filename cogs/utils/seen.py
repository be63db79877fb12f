"""Which phase the interaction being handled was sent in (see MafiaBot.apply)."""

from __future__ import annotations

from contextvars import ContextVar

from core.state import GameState

_seen_phase: ContextVar[tuple[int, int, int] | None] = ContextVar("mafia_seen_phase",
                                                                 default=None)


def saw_phase(game_id: int, state: GameState) -> None:
    """Remember which phase (GameState.serial, .number) the interaction being handled was
    sent in: a context variable, private to the interaction's own task."""
    _seen_phase.set((game_id, state.serial, state.number))
