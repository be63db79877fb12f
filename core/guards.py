"""One guard per command: the precondition the engine raises from and core.legal
lists from (so far the master's commands and /thank; the other players' commands are
held to the engine by tests/engine/test_legal.py alone).

A guard checks what does not depend on the command's arguments (who sends it, the
phase, the modules), in the order the engine has always checked it, so every refusal
keeps its words. The engine calls a command's guard before it reads the arguments;
core.legal lists the command exactly when its guard passes; tests/engine/test_legal.py
holds each guarded command to the engine both ways. A new master command is one guard
and one row in MASTER_COMMANDS (or GUARDED).
"""

from __future__ import annotations

from collections.abc import Callable

from core.access import require_master
from core.errors import ErrorCode, RuleError
from core.state import GameState, PhaseKind

#: (state, sender, whether he holds "Manage Server"): raises RuleError, or returns.
Guard = Callable[[GameState, int, bool], None]


def not_over(state: GameState) -> None:
    if state.over:
        raise RuleError(ErrorCode.GAME_OVER)


def in_play(state: GameState) -> None:
    not_over(state)
    if state.phase is PhaseKind.SIGNUP:
        raise RuleError(ErrorCode.NOT_STARTED)


def setup(state: GameState, uid: int, admin: bool) -> None:
    """/game setup: the master, before the start."""
    require_master(state, uid, admin=admin)
    if state.phase is not PhaseKind.SIGNUP:
        raise RuleError(ErrorCode.SIGNUP_CLOSED)


def start(state: GameState, uid: int, admin: bool) -> None:
    """/game start: the master, once."""
    require_master(state, uid, admin=admin)
    if state.phase is not PhaseKind.SIGNUP:
        raise RuleError(ErrorCode.ALREADY_STARTED)


def cancel(state: GameState, uid: int, admin: bool) -> None:
    """/game cancel: the master, any time before the end."""
    require_master(state, uid, admin=admin)
    not_over(state)


def conduct(state: GameState, uid: int, admin: bool) -> None:
    """/master advance, extend, kick, prod: the master, while the game is played."""
    require_master(state, uid, admin=admin)
    in_play(state)


def bonus(state: GameState, uid: int, admin: bool) -> None:
    """/master bonus: the master, while the game is played, with the currency module."""
    conduct(state, uid, admin)
    if not state.options.currency:
        raise RuleError(ErrorCode.MODULE_OFF, module="currency")


#: Guarded master commands in the order /help lists them.
MASTER_COMMANDS: dict[str, Guard] = {
    "game setup": setup,
    "game start": start,
    "master advance": conduct,
    "master extend": conduct,
    "master kick": conduct,
    "master bonus": bonus,
    "master prod": conduct,
    "game cancel": cancel,
}


def thank(state: GameState, uid: int, admin: bool) -> None:
    """/thank: a player of a game that ended (not cancelled), once, with the currency."""
    if not state.options.currency:
        raise RuleError(ErrorCode.MODULE_OFF, module="currency")
    if state.phase is not PhaseKind.ENDED:
        raise RuleError(ErrorCode.THANK_AFTER_GAME)
    if state.player(uid) is None:
        raise RuleError(ErrorCode.NOT_A_PLAYER)
    if uid in state.thanked:
        raise RuleError(ErrorCode.ALREADY_THANKED)


#: Every guarded command.
GUARDED: dict[str, Guard] = {**MASTER_COMMANDS, "thank": thank}


def passes(guard: Guard, state: GameState, uid: int, admin: bool) -> bool:
    try:
        guard(state, uid, admin)
    except RuleError:
        return False
    return True
