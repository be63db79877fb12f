"""Who may do what to a game, beyond the rules of play: the master's seat.

Kept in core so every surface (engine guards, the Discord cogs' master tools) asks
the same question and gets the same answer.
"""

from __future__ import annotations

from core.errors import RuleError
from core.state import GameState


def master_refusal(state: GameState, uid: int, *, admin: bool) -> RuleError | None:
    """Why `uid` may not use the master's tools of this game, or None if he may.

    Whoever plays in a game is never its master, whatever his guild permissions: a
    player with "Manage Server" would otherwise read every role (RULES.md §8). Else the
    game's master may, and so may a member with "Manage Server" (a stand-in host)."""
    if state.player(uid) is not None:
        return RuleError("player_cannot_master")
    if uid != state.master and not admin:
        return RuleError("not_master")
    return None


def may_master(state: GameState, uid: int, *, admin: bool) -> bool:
    return master_refusal(state, uid, admin=admin) is None


def require_master(state: GameState, uid: int, *, admin: bool) -> None:
    refusal = master_refusal(state, uid, admin=admin)
    if refusal is not None:
        raise refusal
