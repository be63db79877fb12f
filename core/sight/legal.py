"""Which commands a person may send now: a pure function of the game state.

/help lists these (core.sight.guide). Each path that sends a command is listed exactly when
that command's guard passes (core.game.guards.GUARDS, the very check the engine raises from
first), so the list and the rules cannot drift apart; tests/engine/test_guards.py holds
every command to the engine both ways. The paths that only read have their guard here.
Names are the slash-command paths ("vote", "game join", "master advance").
"""

from __future__ import annotations

from dataclasses import dataclass

from core.game import guards
from core.game.errors import ErrorCode, RuleError
from core.game.guards import GUARDS, Actor, Guard, passes
from core.game.rules.shop import spell_target
from core.game.state import GameState, PhaseKind

#: Commands anyone may use anywhere: they read, they change nothing.
ALWAYS = ["help", "rules", "profile"]
#: The master's commands of the game group (besides the `master` group).
MASTER_GAME = frozenset({"game setup", "game options", "game start", "game cancel"})


def anyone(state: GameState, a: Actor) -> None:
    """/game status, /help, /rules, /profile: they read what anyone may."""


def seated(state: GameState, a: Actor) -> None:
    """/role: a player, once the deal is made."""
    if state.phase is PhaseKind.SIGNUP:
        raise RuleError(ErrorCode.NOT_STARTED)
    guards.player(state, a.uid, alive=False)


def wallet(state: GameState, a: Actor) -> None:
    """/wallet: a player of a game with the currency."""
    if not state.options.currency:
        raise RuleError(ErrorCode.MODULE_OFF, module="currency")
    guards.player(state, a.uid, alive=False)


@dataclass(frozen=True)
class Path:
    """A slash-command path /help may list: the command kind it sends (its guard is the
    engine's), or None and the guard of what it reads."""

    name: str
    kind: str | None = None
    reads: Guard = anyone

    @property
    def guard(self) -> Guard:
        return GUARDS[self.kind] if self.kind is not None else self.reads


#: Every path /help may list, in its order.
HELP: tuple[Path, ...] = (
    Path("game status"),
    Path("game setup", "configure"),
    Path("game options", "options"),
    Path("game start", "start"),
    Path("master advance", "advance"),
    Path("master extend", "extend"),
    Path("master kick", "kick"),
    Path("master bonus", "bonus"),
    Path("master log", reads=guards.conduct),
    Path("master replace", "replace"),
    Path("master prod", "remind"),
    Path("master pings", reads=guards.conduct),
    Path("master cohost add", "cohost"),
    Path("master cohost remove", "cohost"),
    Path("master cohost handover", "cohost"),
    Path("game cancel", "cancel"),
    Path("game join", "join"),
    Path("game leave", "leave"),
    Path("game standby", "standby"),
    Path("role", reads=seated),
    Path("checkin", "checkin"),
    Path("vote", "vote"),
    Path("unvote", "unvote"),
    Path("votes", reads=guards.vote),
    Path("night", "night"),
    Path("menu vote", "vote"),  # the member context menus (right click): as /vote, /night
    Path("menu night", "night"),
    Path("share", "share"),
    Path("occult exclude", "occult_exclude"),
    Path("away", "away"),
    Path("shop", reads=guards.shop_open),
    Path("buy", "buy"),
    Path("cast", "cast"),
    Path("anon", "anon"),
    Path("whisper", "whisper"),
    Path("reveal", "reveal"),
    Path("thank", "thank"),
    Path("wallet", reads=wallet),
    Path("game spectate", "spectate"),
    *(Path(name) for name in ALWAYS),
)


def legal_commands(state: GameState, uid: int, *, admin: bool = False) -> list[str]:
    """The command paths `uid` may use in this game now, in the order /help lists them
    (`admin`: he holds "Manage Server", which counts as the master's seat)."""
    sender = Actor(uid, admin)
    return [path.name for path in HELP if passes(path.guard, state, sender)]


def master_only(path: str) -> bool:
    """A master's tool: /help shows it to the master alone."""
    return path.startswith("master ") or path in MASTER_GAME


def cast_targets(state: GameState, uid: int, spell: str) -> list[int]:
    """Whom /cast may name with `spell` (the engine's own target check): a day spell
    offers the ghosts who vote, a night spell never a ghost (issue 31)."""
    caster = state.player(uid)
    if caster is None:
        return []
    out = []
    for p in state.players:
        try:
            spell_target(state, caster, spell, p.uid)
        except RuleError:
            continue
        out.append(p.uid)
    return out
