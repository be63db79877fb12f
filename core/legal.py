"""Which commands a person may send now: a pure function of the game state.

/help lists these (core.guide) and a property test holds them to the engine
(tests/engine/test_legal.py): a command listed here is one the rules would accept from
this person in this phase (for some target), a command left out one they would refuse.
Names are the slash-command paths ("vote", "game join", "master advance").
"""

from __future__ import annotations

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
    master = uid == state.master or admin
    cmds: list[str] = ["game status"]
    if master:
        cmds += _master_commands(state)
    if state.phase is PhaseKind.SIGNUP:
        if seat is None and uid != state.master:
            cmds.append("game join")
        elif seat is not None:
            cmds.append("game leave")
    elif state.over:
        if seat is not None:
            cmds.append("role")
            if state.options.currency:
                cmds.append("thank")
    elif seat is not None:
        cmds += _player_commands(state, uid)
    if state.options.currency and seat is not None:
        cmds.append("wallet")
    return list(dict.fromkeys(cmds + ALWAYS))


def master_only(path: str) -> bool:
    """A master's tool: /help shows it to the master alone."""
    return path.startswith("master ") or path in MASTER_GAME


def _master_commands(state: GameState) -> list[str]:
    if state.phase is PhaseKind.SIGNUP:
        return ["game setup", "game options", "game start", "game cancel"]
    if state.over:
        return []
    out = ["master advance", "master extend", "master kick", "master log", "master replace",
           "master prod", "game cancel"]
    if state.options.currency:
        out.insert(3, "master bonus")
    return out


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
