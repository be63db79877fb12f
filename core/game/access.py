"""Who may do what to a game, beyond the rules of play: the master's seat, how many
games may be open, and where a game may open.

Kept in core so every surface (engine guards, the service, the Discord cogs) asks
the same question and gets the same answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from core.game.errors import ErrorCode, RuleError
from core.game.state import GameState


def master_refusal(state: GameState, uid: int, *, admin: bool) -> RuleError | None:
    """Why `uid` may not use the master's tools of this game, or None if he may.

    The game's master may, his co-host, and a member with "Manage Server" (a stand-in
    host); but whoever plays in a game is never its master, whatever his guild
    permissions: a player with "Manage Server" would otherwise read every role (RULES.md
    §8)."""
    if uid != state.master and uid != state.cohost and not admin:
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


# --- who may take a seat ---------------------------------------------------------------
# What a member's Discord rights let him read of a game's private places, worked out by
# the Discord layer in the game channel (cogs/sight.py): "none"; "threads" (Manage
# Threads there: Discord shows him every private thread of the channel, so every seat's
# place); "all" (Administrator: every channel and thread of the server).
Sight = Literal["none", "threads", "all"]
SIGHT_RANK: dict[str, int] = {"none": 0, "threads": 1, "all": 2}


def seat_refusal(state: GameState, uid: int, *, admin: bool, sight: Sight,
                 named: bool = False) -> RuleError | None:
    """Why `uid` may not take a seat of this game (join, the standby list, a
    replacement), or None. "Whoever plays is never a master" in both directions: the
    master, anyone who may use this game's master tools ("Manage Server", core's
    `admin`) or has used them (`state.hosts`: he may have read every role) never plays.
    Nor does a member whose rights show him the other seats' places (RULES.md §8).
    `named`: the master names him (/master replace), so the words speak of him, not "you".
    Every refusal rests on what the asker knows: his own rights, his own acts."""
    if uid == state.master:
        return RuleError(ErrorCode.MASTER_CANNOT_PLAY)
    if admin or uid in state.hosts:
        return RuleError(ErrorCode.HOST_CANNOT_SIT if named else ErrorCode.HOST_CANNOT_PLAY,
                         target=uid)
    if sight != "none":
        return RuleError(ErrorCode.SEES_PLACES_SIT if named else ErrorCode.SEES_PLACES,
                         target=uid)
    return None


def cohost_refusal(state: GameState, uid: int, *, bot: bool) -> RuleError | None:
    """Why `uid` may not be named this game's co-host, or None: not the master, not a
    bot, not the co-host already, and never a member who has or had a seat (he knows a
    role: RULES.md §8, "The co-host")."""
    if uid == state.master:
        return RuleError(ErrorCode.COHOST_IS_MASTER)
    if bot:
        return RuleError(ErrorCode.COHOST_BOT, target=uid)
    if uid == state.cohost:
        return RuleError(ErrorCode.COHOST_ALREADY, target=uid)
    if state.player(uid) is not None or uid in state.former:
        return RuleError(ErrorCode.COHOST_SEATED, target=uid)
    return None


def records_host(state: GameState, uid: int) -> bool:
    """Whether a master tool used by `uid` must be written down (he is not the master and
    not yet known to have used them): the Discord layer asks before a read-only tool."""
    return uid != state.master and uid not in state.hosts


def sight_rose(state: GameState, uid: int, sight: Sight) -> bool:
    """Whether a seated player's rights now show him more of the places than the game has
    on record (a role given during the game): the table is then told (engine `Sight`)."""
    p = state.player(uid)
    if p is None or not p.alive or not state.started or state.over:
        return False
    return SIGHT_RANK[sight] > SIGHT_RANK[state.sight.get(uid, "none")]


def seated_sight(state: GameState, sights: dict[int, Sight]) -> dict[int, Sight]:
    """The seated players among `sights` who can read other seats' places."""
    return {uid: s for uid, s in sights.items() if s != "none" and state.player(uid)}
