"""Who may do what to a game, beyond the rules of play: the master's seat, how many
games may be open, and where a game may open.

Kept in core so every surface (engine guards, the service, the Discord cogs) asks
the same question and gets the same answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from core.errors import ErrorCode, RuleError
from core.state import GameState


def master_refusal(state: GameState, uid: int, *, admin: bool) -> RuleError | None:
    """Why `uid` may not use the master's tools of this game, or None if he may.

    The game's master may, and so may a member with "Manage Server" (a stand-in host);
    but whoever plays in a game is never its master, whatever his guild permissions: a
    player with "Manage Server" would otherwise read every role (RULES.md §8)."""
    if uid != state.master and not admin:
        return RuleError(ErrorCode.NOT_MASTER)
    if state.player(uid) is not None:
        return RuleError(ErrorCode.PLAYER_CANNOT_MASTER)
    return None


def may_master(state: GameState, uid: int, *, admin: bool) -> bool:
    return master_refusal(state, uid, admin=admin) is None


def require_master(state: GameState, uid: int, *, admin: bool) -> None:
    refusal = master_refusal(state, uid, admin=admin)
    if refusal is not None:
        raise refusal


# --- opening games ---------------------------------------------------------------------
@dataclass(frozen=True)
class GameLimits:
    """How many games may be open (signup or running) at once: per member who opened
    them (as master), and per guild. Settings: MAX_GAMES_PER_MEMBER, MAX_GAMES_PER_GUILD."""

    per_member: int = 3
    per_guild: int = 25


def open_game_refusal(by_member: int, in_guild: int, limits: GameLimits) -> RuleError | None:
    """Why one more game may not be opened, given the games already open."""
    if by_member >= limits.per_member:
        return RuleError(ErrorCode.TOO_MANY_GAMES_MEMBER, limit=limits.per_member)
    if in_guild >= limits.per_guild:
        return RuleError(ErrorCode.TOO_MANY_GAMES_GUILD, limit=limits.per_guild)
    return None


ChannelKind = Literal["text", "thread", "other"]


def game_place_refusal(kind: ChannelKind, owner: int | None) -> RuleError | None:
    """Where `/game create` may open signup: an ordinary text channel of a guild that no
    game of the bot owns (a private channel of a game, running or archived, belongs to
    it; a thread is never an ordinary channel)."""
    if kind != "text":
        return RuleError(ErrorCode.CREATE_HERE_NOT_TEXT)
    if owner is not None:
        return RuleError(ErrorCode.CREATE_HERE_GAME_CHANNEL)
    return None
