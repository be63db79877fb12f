"""Who votes and with what base weight: the living 1, a ghost ½ while the occultist lives;
and what the table knows of it when the roles of the dead are hidden.

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


def ghosts_may_vote(state: GameState) -> bool:
    """Whether the table may still believe the dead vote, from public facts alone: a role
    raising ghosts was dealt (the composition is public) and none of its holders is known
    to be out. With the roles of the dead hidden ("тайно рассылает игрокам их роли") a dead
    occultist is a dead player like any other, so this stays true after his hidden death."""
    shown = state.options.reveal_roles or state.over
    return any(p.role is not None and info(p.role).raises_ghosts and (p.alive or not shown)
               for p in state.players)


def known_voiceless(state: GameState, uid: int) -> bool:
    """A dead player everybody knows has no vote: removed for missed turns or by the
    master (the cause is public), excluded by the occultist (announced), or no occultist
    may be alive (`ghosts_may_vote`). A dead player whose only lack is a hidden dead
    occultist is not: refusing him would tell the sender the occultist is dead (issue 43)."""
    p = state.player(uid)
    if p is None or p.role is None:
        return True
    if p.alive:
        return False
    if p.death is not None and p.death.cause in ("kicked", "inactive"):
        return True
    return uid in state.occult_excluded or not ghosts_may_vote(state)
