"""Deadlines: when a phase ends, at the game's own second of the minute.

Masters set round-hour deadlines, so hundreds of games would change phase in the same
second, and Discord's 50 requests/s turn that into a wall (issue 30). Each game ends
its phases at its own second of the minute, drawn from its seed alone: the same for
every phase, the same on a replay, so games due in one minute spread over it (RULES.md
section 4, "Deadlines"). Games created before this rule (`Options.spread_deadlines`
off) keep their exact deadlines, so their logs replay as they were played.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta

from core.game.state import GameState

SPREAD = 60  # seconds: a game's offset is in [0, SPREAD)
MINUTE = timedelta(seconds=SPREAD)


def offset(seed: int) -> int:
    """The game's second within the minute: a pure function of the seed (a string seed
    is hashed with SHA-512 by `random`, the same in every process and on every replay)."""
    return random.Random(f"{seed}:deadline").randrange(SPREAD)


def game_offset(state: GameState) -> int:
    """The seconds this game's deadlines sit past the minute (0 for an older game)."""
    return offset(state.seed) if state.options.spread_deadlines else 0


def after(state: GameState, at: datetime, minutes: int) -> datetime:
    """The deadline `minutes` after `at`: from that whole second forward to the game's
    second, so a phase is never shorter than its length (less the fraction of a second
    the timestamps players see leave out) and less than a minute longer."""
    nominal = at + timedelta(minutes=minutes)
    if not state.options.spread_deadlines:
        return nominal
    whole = nominal.replace(microsecond=0)
    return whole + timedelta(seconds=(offset(state.seed) - whole.second) % SPREAD)


def next_phase(state: GameState, at: datetime, minutes: int) -> datetime:
    """The deadline of the phase opening at `at`. Opened by its predecessor's deadline
    (within the minute after it, however late the scheduler came in a storm), it runs
    from that deadline: a second of lateness would otherwise push every later deadline
    of the game by a minute."""
    previous = state.deadline
    if state.options.spread_deadlines and previous is not None \
            and previous <= at < previous + MINUTE:
        at = previous
    return after(state, at, minutes)
