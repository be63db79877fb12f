"""One guard per command: the precondition the engine raises from and core.sight.legal lists
from, like python-chess's one move generator behind legal_moves and is_legal.

A guard weighs the sender and the state, never the command's arguments (its target,
text, premium): given who sends it (an Actor), it raises the RuleError the engine has
always raised, in the order it has always checked, so every refusal keeps its words.
The engine calls a command's guard before its handler reads the arguments
(engine._dispatch); core.sight.legal lists a command exactly when its guard passes; a command
type without a guard fails tests/engine/test_guards.py. A new command is one guard and
one row in GUARDS.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from core.game import commands as c
from core.game.access import SIGHT_RANK, Sight, master_refusal, require_master, seat_refusal
from core.game.errors import ErrorCode, RuleError
from core.game.roles import info
from core.game.rules import crypto, owing
from core.game.rules import night as night_rules
from core.game.rules.setup import MAX_PLAYERS, composition_for
from core.game.rules.shop import helpless_now
from core.game.rules.voting import current_votes
from core.game.rules.weights import base_weight
from core.game.state import GameState, PhaseKind, Player

MAX_STANDBY = 25  # one autocomplete page of substitutes


@dataclass(frozen=True)
class Actor:
    """Who sends a command, as far as a guard may weigh him: his id, whether he holds
    "Manage Server", what his rights show him of the places, whether he is a bot, and
    whether he is the scheduler's clock at a deadline (by=0)."""

    uid: int
    admin: bool = False
    sight: Sight = "none"
    bot: bool = False
    clock: bool = False

    @classmethod
    def of(cls, cmd: c.Command) -> Actor:
        sight: Sight = cmd.sight if isinstance(cmd, c.Join | c.Standby | c.Sight) else "none"
        bot = cmd.bot if isinstance(cmd, c.Join | c.Standby | c.Spectate) else False
        clock = ((isinstance(cmd, c.Advance) and cmd.deadline)
                 or (isinstance(cmd, c.Remind) and cmd.scheduled))
        return cls(cmd.by, cmd.admin, sight, bot, clock)


#: (state, sender): raises RuleError, or returns.
Guard = Callable[[GameState, Actor], None]


# --- the building blocks ----------------------------------------------------------------
def not_over(state: GameState) -> None:
    if state.over:
        raise RuleError(ErrorCode.GAME_OVER)


def in_play(state: GameState) -> None:
    not_over(state)
    if state.phase is PhaseKind.SIGNUP:
        raise RuleError(ErrorCode.NOT_STARTED)


def player(state: GameState, uid: int, *, alive: bool = True) -> Player:
    p = state.player(uid)
    if p is None:
        raise RuleError(ErrorCode.NOT_A_PLAYER)
    if alive and not p.alive:
        raise RuleError(ErrorCode.YOU_ARE_DEAD)
    return p


def playing(state: GameState, a: Actor) -> Player:
    """A living player of a game being played: most of the players' commands."""
    in_play(state)
    return player(state, a.uid)


def _no_bot(a: Actor) -> None:
    if a.bot:
        raise RuleError(ErrorCode.BOT_CANNOT_PLAY)


def _outsider(state: GameState, a: Actor) -> None:
    """Not seated (the sender himself), not a spectator (he has read what no player may)."""
    if state.player(a.uid) is not None:
        raise RuleError(ErrorCode.ALREADY_SIGNED_UP)
    if state.spectating(a.uid):
        raise RuleError(ErrorCode.SPECTATOR_CANNOT_PLAY)


def _seat(state: GameState, a: Actor) -> None:
    refusal = seat_refusal(state, a.uid, admin=a.admin, sight=a.sight)
    if refusal is not None:
        raise refusal


def _voting_day(state: GameState) -> None:
    in_play(state)
    if state.phase is not PhaseKind.DAY or state.number == 0:
        raise RuleError(ErrorCode.NOT_VOTING_TIME)


def _module(on: bool, module: str) -> None:
    if not on:
        raise RuleError(ErrorCode.MODULE_OFF, module=module)


# --- the master's commands --------------------------------------------------------------
def master(state: GameState, a: Actor) -> None:
    """/master log (its Host record): the master, any time."""
    require_master(state, a.uid, admin=a.admin)


def setup(state: GameState, a: Actor) -> None:
    """/game setup: the master, before the start."""
    master(state, a)
    if state.phase is not PhaseKind.SIGNUP:
        raise RuleError(ErrorCode.SIGNUP_CLOSED)


def options(state: GameState, a: Actor) -> None:
    """/game options: the master, before the end (in play, only what changes no rule)."""
    master(state, a)
    if state.over:
        raise RuleError(ErrorCode.SIGNUP_CLOSED)


def start(state: GameState, a: Actor) -> None:
    """/game start: the master, once, with a composition the table can be dealt (enough
    players for it; the SetupError names what is missing). A cancelled or finished game
    is over, not started (a stale start offer says which)."""
    master(state, a)
    not_over(state)
    if state.phase is not PhaseKind.SIGNUP:
        raise RuleError(ErrorCode.ALREADY_STARTED)
    composition_for(state.roles_text, len(state.players), extra_roles=state.options.extra_roles)


def cancel(state: GameState, a: Actor) -> None:
    """/game cancel: the master, any time before the end."""
    master(state, a)
    not_over(state)


def conduct(state: GameState, a: Actor) -> None:
    """/master advance, extend, kick: the master while the game is played (or the clock
    at a deadline)."""
    if a.clock:
        in_play(state)
        return
    master(state, a)
    in_play(state)


def cohost(state: GameState, a: Actor) -> None:
    """/master cohost: the game's hosts, before the end (the co-host only takes the game
    over when the master has left the server: core/game/rules/cohost.py)."""
    master(state, a)
    not_over(state)


def prod(state: GameState, a: Actor) -> None:
    """/master prod (or the scheduled reminder): while somebody owes a turn by a deadline."""
    conduct(state, a)
    owing.something_to_remind(state)


def bonus(state: GameState, a: Actor) -> None:
    """/master bonus: the master, while the game is played, with the currency module."""
    conduct(state, a)
    _module(state.options.currency, "currency")


def replace(state: GameState, a: Actor) -> None:
    """/master replace: the master, before the end."""
    master(state, a)
    not_over(state)


# --- joining, watching, standing by -----------------------------------------------------
def join(state: GameState, a: Actor) -> None:
    """/game join: during the signup, whoever may sit, once, while seats are left."""
    if state.phase is not PhaseKind.SIGNUP:
        raise RuleError(ErrorCode.SIGNUP_CLOSED)
    _seat(state, a)
    _no_bot(a)
    _outsider(state, a)
    if len(state.players) >= MAX_PLAYERS:
        raise RuleError(ErrorCode.GAME_FULL, max=MAX_PLAYERS)


def leave(state: GameState, a: Actor) -> None:
    """/game leave: a player, during the signup."""
    if state.phase is not PhaseKind.SIGNUP:
        raise RuleError(ErrorCode.SIGNUP_CLOSED)
    player(state, a.uid)


def standby(state: GameState, a: Actor) -> None:
    """/game standby: whoever may sit offers to substitute while the game runs; one on the
    list may always withdraw."""
    in_play(state)
    _no_bot(a)
    _outsider(state, a)
    if any(x.uid == a.uid for x in state.standby):
        return
    _seat(state, a)
    if len(state.standby) >= MAX_STANDBY:
        raise RuleError(ErrorCode.STANDBY_FULL, max=MAX_STANDBY)


def spectate(state: GameState, a: Actor) -> None:
    """/game spectate: anyone without a seat but the master, before the end, once."""
    not_over(state)
    if a.uid == state.master:
        raise RuleError(ErrorCode.MASTER_CANNOT_SPECTATE)
    _no_bot(a)
    if state.player(a.uid) is not None:
        raise RuleError(ErrorCode.PLAYER_CANNOT_SPECTATE)
    if state.spectating(a.uid):
        raise RuleError(ErrorCode.ALREADY_SPECTATING)


def sight(state: GameState, a: Actor) -> None:
    """A seat's rights were seen to show more than the table was told (no slash command)."""
    p = playing(state, a)
    if SIGHT_RANK[a.sight] <= SIGHT_RANK[state.sight.get(p.uid, "none")]:
        raise RuleError(ErrorCode.NOT_ALLOWED)


# --- the players' commands --------------------------------------------------------------
def checkin(state: GameState, a: Actor) -> None:
    """/checkin: a living player on day 0, once."""
    p = playing(state, a)
    if not (state.phase is PhaseKind.DAY and state.number == 0):
        raise RuleError(ErrorCode.CHECKIN_DAY_ZERO_ONLY)
    if p.checked_in:
        raise RuleError(ErrorCode.ALREADY_CHECKED_IN)


def voter(state: GameState, a: Actor) -> Player:
    """A voting day's voter: a living player, or a ghost whose vote counts."""
    _voting_day(state)
    p = player(state, a.uid, alive=False)
    if not p.alive and base_weight(state, a.uid) == 0:
        raise RuleError(ErrorCode.YOU_ARE_DEAD)
    return p


def vote(state: GameState, a: Actor) -> None:
    """/vote (and /votes): a voter of a voting day; the target is the handler's."""
    voter(state, a)


def unvote(state: GameState, a: Actor) -> None:
    """/unvote: a voter with a standing vote, unless votes are final."""
    voter(state, a)
    if a.uid not in current_votes(state):
        raise RuleError(ErrorCode.NO_VOTE_TO_WITHDRAW)
    if state.options.votes_final:
        raise RuleError(ErrorCode.VOTES_FINAL)


def night(state: GameState, a: Actor) -> None:
    """/night: a living player with a move in the current (or coming) night."""
    night_rules.order_move(state, playing(state, a))


def share(state: GameState, a: Actor) -> None:
    """/share: the investigator, while a sergeant lives."""
    p = playing(state, a)
    known = info(p.role).knows if p.role is not None else ()
    if not known:
        raise RuleError(ErrorCode.WRONG_ROLE, role="investigator")
    if not any(state.with_role(r) for r in known):
        raise RuleError(ErrorCode.NO_SERGEANT)


def occult(state: GameState, a: Actor) -> None:
    """/occult exclude: the occultist; the ghost is the handler's."""
    p = playing(state, a)
    if p.role is None or not info(p.role).raises_ghosts:
        raise RuleError(ErrorCode.WRONG_ROLE, role="occultist")


def alive_in_play(state: GameState, a: Actor) -> None:
    """/away: a living player while the game is played."""
    playing(state, a)


def shop_open(state: GameState, a: Actor) -> None:
    """/shop: a living player, with the shop module."""
    playing(state, a)
    _module(state.options.shop, "shop")


def shop(state: GameState, a: Actor) -> None:
    """/buy, /cast: a living player with the shop module, unless Helplessness holds him
    (he was told so when it was cast)."""
    shop_open(state, a)
    if helpless_now(state, a.uid):
        raise RuleError(ErrorCode.HELPLESS)


def crypto_post(state: GameState, a: Actor) -> None:
    """/anon, /whisper: a living player, with the cryptography module."""
    playing(state, a)
    _module(state.options.crypto, "crypto")


def reveal(state: GameState, a: Actor) -> None:
    """/reveal: a checker with an unrevealed check, public moves on."""
    crypto_post(state, a)
    crypto.last_check(state, player(state, a.uid))


def thank(state: GameState, a: Actor) -> None:
    """/thank: a player of a game that ended (not cancelled), once, with the currency."""
    _module(state.options.currency, "currency")
    if state.phase is not PhaseKind.ENDED:
        raise RuleError(ErrorCode.THANK_AFTER_GAME)
    player(state, a.uid, alive=False)
    if a.uid in state.thanked:
        raise RuleError(ErrorCode.ALREADY_THANKED)


def last_words(state: GameState, a: Actor) -> None:
    """/lastwords: a player killed at night, while his window is open (house option)."""
    in_play(state)
    p = player(state, a.uid, alive=False)
    if p.alive or p.uid not in state.last_words:
        raise RuleError(ErrorCode.NO_LAST_WORDS)


#: Every command kind's guard (core.game.commands): the engine raises from it first.
GUARDS: dict[str, Guard] = {
    "join": join, "leave": leave, "configure": setup, "options": options, "start": start,
    "cancel": cancel, "checkin": checkin, "vote": vote, "unvote": unvote, "night": night,
    "share": share, "away": alive_in_play, "occult_exclude": occult, "advance": conduct,
    "remind": prod, "extend": conduct, "kick": conduct, "replace": replace,
    "standby": standby, "spectate": spectate, "bonus": bonus, "thank": thank, "buy": shop,
    "cast": shop, "anon": crypto_post, "whisper": crypto_post, "reveal": reveal,
    "host": master, "sight": sight, "cohost": cohost, "last_words": last_words,
}


def check(state: GameState, cmd: c.Command) -> None:
    """Raise the refusal the rules give `cmd`'s sender before its arguments are read."""
    GUARDS[cmd.kind](state, Actor.of(cmd))


def passes(guard: Guard, state: GameState, a: Actor) -> bool:
    try:
        guard(state, a)
    except RuleError:
        return False
    return True


def may_master(state: GameState, a: Actor) -> bool:
    return master_refusal(state, a.uid, admin=a.admin) is None
