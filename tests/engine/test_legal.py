"""`legal_commands` (what /help lists) held to the engine over simulated games.

For the commands below the list and the rules must agree both ways: a listed command
is accepted for some target, an unlisted one is refused for every target. A guide that
offered a dead end, or hid a command the rules take, fails here. The master's guarded
commands (core.guards) are held closer still: a guard that refuses is the engine's
refusal, word for word, for every target.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core import commands as c
from core.engine import apply
from core.errors import RuleError
from core.guards import GUARDED, MASTER_COMMANDS
from core.legal import legal_commands
from core.sim import MASTER, Table, random_phase
from core.state import GameState, Options

OUTSIDER = 99


def attempts(state: GameState, uid: int, name: str, at: datetime,
             admin: bool = False) -> list[c.Command]:
    """Every way to send the command `name`: one command per possible target."""
    seats = [p.uid for p in state.players]
    by = {"by": uid, "at": at, "admin": admin}
    match name:
        case "vote":
            return [c.Vote(**by, target=t) for t in seats]
        case "checkin":
            return [c.CheckIn(**by)]
        case "game join":
            return [c.Join(**by, name="Newcomer")]
        case "game leave":
            return [c.Leave(**by)]
        case "game start":
            return [c.Start(**by, confirm=True)]
        case "master advance":
            return [c.Advance(**by)]
        case "master extend":
            return [c.Extend(**by, minutes=60)]
        case "master kick":
            return [c.Kick(**by, target=t) for t in seats]
        case "unvote":
            return [c.Unvote(**by)]
        case "night":
            return [c.NightOrder(**by, target=t) for t in seats]
        case "share":
            return [c.Share(**by, note="x")]
        case "occult exclude":
            return [c.OccultExclude(**by, target=t) for t in seats]
        case "away":
            return [c.Away(**by)]
        case "game cancel":
            return [c.Cancel(**by)]
        case "game setup":
            return [c.Configure(**by, roles=f"mafioso; citizen x{max(len(seats), 6) - 1}")]
        case "master bonus":
            return [c.Bonus(**by, target=t, amount=1, reason="style") for t in seats]
        case "master prod":
            return [c.Remind(**by)]
        case "thank":
            return [c.Thank(**by, premium=0)]
    raise AssertionError(name)


CHECKED = ("vote", "checkin", "game join", "game leave", "game start", "master advance",
           "master extend", "master kick", "master bonus", "game cancel", "thank")
#: Listed, these may still be refused for want of a target (no vote to withdraw, no
#: dead to exclude, no move tonight, nobody owing his turn, a composition the deal
#: refuses); left out, they are refused whatever the target.
LISTED_OR_REFUSED = ("unvote", "night", "share", "occult exclude", "away", "master prod",
                     "game setup")


def accepted(state: GameState, cmd: c.Command) -> bool:
    try:
        apply(state, cmd)
    except RuleError:
        return False
    return True


def senders(state: GameState) -> list[tuple[int, bool]]:
    """(uid, holds "Manage Server"): the master, an outsider, an outsider admin (a stand-in
    host), a seated admin (never a master), and every seat."""
    seats = [p.uid for p in state.players]
    return [(MASTER, False), (OUTSIDER, False), (OUTSIDER, True),
            *([(seats[0], True)] if seats else []), *((u, False) for u in seats)]


def check(state: GameState, at: datetime,
          lister: Callable[..., list[str]] = legal_commands) -> None:
    for uid, admin in senders(state):
        listed = lister(state, uid, admin=admin)
        why = (uid, admin, state.phase, state.number, listed)
        for name in CHECKED:
            ok = any(accepted(state, cmd) for cmd in attempts(state, uid, name, at, admin))
            assert ok == (name in listed), (name, *why)
        for name in LISTED_OR_REFUSED:
            if name not in listed:
                ok = any(accepted(state, cmd) for cmd in attempts(state, uid, name, at, admin))
                assert not ok, (name, *why)
        check_guards(state, uid, admin, at)


def check_guards(state: GameState, uid: int, admin: bool, at: datetime) -> None:
    """A guarded command its guard refuses is refused by the engine in the guard's words,
    whatever its arguments."""
    for name, guard in GUARDED.items():
        try:
            guard(state, uid, admin)
        except RuleError as refused:
            for cmd in attempts(state, uid, name, at, admin):
                with pytest.raises(RuleError) as got:
                    apply(state, cmd)
                assert got.value.code == refused.code, (name, uid, admin, cmd)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), players=st.integers(6, 9),
       votes_final=st.booleans(), shop=st.booleans())
def test_listed_commands_are_the_ones_the_engine_accepts(seed: int, players: int,
                                                         votes_final: bool,
                                                         shop: bool) -> None:
    options = Options(votes_final=votes_final, shop=shop, currency=shop)
    table = Table(seed, players, options)
    check(table.state, table.tick())
    table.send(c.Start(by=MASTER, at=table.clock, confirm=True))
    for _ in range(8):
        if table.state.over:
            break
        check(table.state, table.tick())
        random_phase(table)
    check(table.state, table.tick())


def test_the_check_sees_a_command_listed_wrongly_or_left_out() -> None:
    """The property can fail: a list offering a vote at signup, or hiding the master's
    /game start, is caught."""
    table = Table(1, 7, Options())
    check(table.state, table.tick())
    with pytest.raises(AssertionError):
        check(table.state, table.tick(),
              lambda s, u, admin: [*legal_commands(s, u, admin=admin), "vote"])
    with pytest.raises(AssertionError):
        check(table.state, table.tick(),
              lambda s, u, admin: [x for x in legal_commands(s, u, admin=admin)
                                   if x != "game start"])


def test_every_master_command_is_guarded_or_listed_by_phase() -> None:
    """Nothing the master may send is left out of /help's order, and every guard names a
    command /help knows."""
    from core.legal import MASTER_ORDER

    assert set(MASTER_COMMANDS) <= set(MASTER_ORDER)
    assert [n for n in MASTER_ORDER if n in MASTER_COMMANDS] == list(MASTER_COMMANDS)


def test_thank_is_listed_exactly_when_the_engine_takes_it() -> None:
    """After a finished game with the currency (each player once), never after a
    cancelled one: /help and the engine agree through the one guard."""
    from core.sim import EPOCH, play
    from core.state import PhaseKind

    played = play(5, 7, Options(currency=True))
    ended = played.state
    assert ended.phase is PhaseKind.ENDED
    check(ended, EPOCH)
    seat = ended.players[0].uid
    assert "thank" in legal_commands(ended, seat)
    thanked = apply(ended, c.Thank(by=seat, at=EPOCH)).state
    assert "thank" not in legal_commands(thanked, seat)
    check(thanked, EPOCH)
    table = Table(2, 7, Options(currency=True))
    table.send(c.Start(by=MASTER, at=table.clock, confirm=True))
    table.send(c.Cancel(by=MASTER, at=table.tick()))
    assert table.state.phase is PhaseKind.CANCELLED
    assert "thank" not in legal_commands(table.state, table.state.players[0].uid)
    check(table.state, table.tick())
