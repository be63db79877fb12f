"""Which commands a person may send now: a pure function of the game state.

/help lists these (core.guide) and a property test holds them to the engine
(tests/engine/test_legal.py): a command listed here is one the rules would accept from
this person in this phase (for some target), a command left out one they would refuse.
Names are the slash-command paths ("vote", "game join", "master advance"). The master's
commands are listed from their guards (core.guards), the very checks the engine raises
from, so the two cannot drift apart.
"""

from __future__ import annotations

from core.access import may_master, seat_refusal
from core.guards import MASTER_COMMANDS, passes, thank
from core.roles import info
from core.rules.night import acting_mafioso, takes_turns
from core.rules.voting import base_weight
from core.state import GameState, PhaseKind

#: Commands anyone may use anywhere: they read, they change nothing.
ALWAYS = ["help", "rules", "profile"]
#: The master's commands of the game group (besides the `master` group).
MASTER_GAME = frozenset({"game setup", "game options", "game start", "game cancel"})


def legal_commands(state: GameState, uid: int, *, admin: bool = False) -> list[str]:
    """The command paths `uid` may use in this game now, in the order /help lists them
    (`admin`: he holds "Manage Server", which counts as the master's seat)."""
    seat = state.player(uid)
    cmds: list[str] = ["game status", *_master_commands(state, uid, admin)]
    if state.phase is PhaseKind.SIGNUP:
        if (seat is None and not state.spectating(uid)
                and seat_refusal(state, uid, admin=admin, sight="none") is None):
            cmds.append("game join")
        elif seat is not None:
            cmds.append("game leave")
    elif state.over:
        if seat is not None:
            cmds.append("role")
            if passes(thank, state, uid, admin):
                cmds.append("thank")
    elif seat is not None:
        cmds += _player_commands(state, uid)
    if state.options.currency and seat is not None:
        cmds.append("wallet")
    if (seat is None and not may_master(state, uid, admin=admin) and not state.over
            and not state.spectating(uid)):
        cmds.append("game spectate")
    return list(dict.fromkeys(cmds + ALWAYS))


def master_only(path: str) -> bool:
    """A master's tool: /help shows it to the master alone."""
    return path.startswith("master ") or path in MASTER_GAME


#: The master's commands in the order /help lists them.
MASTER_ORDER = ("game setup", "game options", "game start", "master advance", "master extend",
                "master kick", "master bonus", "master log", "master replace", "master prod",
                "master pings", "game cancel")


def _master_commands(state: GameState, uid: int, admin: bool) -> list[str]:
    """Guarded commands by their guard; the rest (whose engine check reads the arguments,
    or which only read) by phase: /game options before the start, /master log,
    /master replace and /master pings while the game is played."""
    if not may_master(state, uid, admin=admin):
        return []
    if state.phase is PhaseKind.SIGNUP:
        by_phase = {"game options"}
    elif state.over:
        by_phase = set()
    else:
        by_phase = {"master log", "master replace", "master pings"}
    return [name for name in MASTER_ORDER
            if (passes(MASTER_COMMANDS[name], state, uid, admin) if name in MASTER_COMMANDS
                else name in by_phase)]


def _player_commands(state: GameState, uid: int) -> list[str]:
    seat = state.player(uid)
    assert seat is not None
    day = state.phase is PhaseKind.DAY
    out = ["role"]
    if not seat.alive:
        if day and state.number > 0 and base_weight(state, uid):
            out += ["vote", "unvote", "votes"]
        return out
    role = seat.role
    if day and state.number == 0 and not seat.checked_in:
        out.append("checkin")
    if day and state.number > 0:
        out += ["vote", "votes"] + ([] if state.options.votes_final else ["unvote"])
    row = info(role) if role is not None else None
    # a mafioso whose clan's move is another's tonight (or the coming night) has none:
    # the engine refuses him (not_your_turn), so /help does not offer /night
    if row is not None and row.action is not None and not (
            takes_turns(seat) and acting_mafioso(state, seat.clan or 0) != uid):
        out.append("night")
    if row is not None and any(state.with_role(r) for r in row.knows):
        out.append("share")
    if row is not None and row.raises_ghosts:
        out.append("occult exclude")
    out.append("away")
    if state.options.shop:
        out += ["shop", "buy", "cast"]
    if state.options.crypto:
        out += ["anon", "whisper"]
        if state.options.public_moves and row is not None and row.can_reveal:
            out.append("reveal")
    return out
