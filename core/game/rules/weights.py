"""Who votes and with what base weight: the living 1, a ghost ½ while the occultist lives.

Apart from the tally (core/game/rules/voting.py) so that the shop's spells on votes can ask
who votes without importing the tally, which itself asks the shop about spells.
"""

from __future__ import annotations

from core.game.roles import info
from core.game.state import GameState

LIVING = 2
GHOST = 1


def ghosts_allowed(state: GameState) -> bool:
    """While a role raising ghosts (the occultist) lives, the dead vote."""
    return any(p.alive and p.role is not None and info(p.role).raises_ghosts
               for p in state.players)


def base_weight(state: GameState, voter: int) -> int:
    p = state.player(voter)
    if p is None or p.role is None:
        return 0
    if p.alive:
        return LIVING
    if p.death is not None and p.death.cause in ("kicked", "inactive"):
        return 0
    if ghosts_allowed(state) and voter not in state.occult_excluded:
        return GHOST
    return 0
