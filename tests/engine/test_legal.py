"""`legal_commands` (what /help lists) held to the engine over simulated games.

For the commands below the list and the rules must agree both ways: a listed command
is accepted for some target, an unlisted one is refused for every target. A guide that
offered a dead end, or hid a command the rules take, fails here.
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
from core.legal import legal_commands
from core.sim import MASTER, Table, random_phase
from core.state import GameState, Options

OUTSIDER = 99


def attempts(state: GameState, uid: int, name: str, at: datetime) -> list[c.Command]:
    """Every way to send the command `name`: one command per possible target."""
    seats = [p.uid for p in state.players]
    by = {"by": uid, "at": at}
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
    raise AssertionError(name)


CHECKED = ("vote", "checkin", "game join", "game leave", "game start", "master advance",
           "master extend", "master kick")
#: Listed, these may still be refused for want of a target (no vote to withdraw, no
#: dead to exclude, no move tonight); left out, they are refused whatever the target.
LISTED_OR_REFUSED = ("unvote", "night", "share", "occult exclude", "away", "game cancel")


def accepted(state: GameState, cmd: c.Command) -> bool:
    try:
        apply(state, cmd)
    except RuleError:
        return False
    return True


def check(state: GameState, at: datetime,
          lister: Callable[[GameState, int], list[str]] = legal_commands) -> None:
    for uid in [MASTER, OUTSIDER, *(p.uid for p in state.players)]:
        listed = lister(state, uid)
        for name in CHECKED:
            ok = any(accepted(state, cmd) for cmd in attempts(state, uid, name, at))
            assert ok == (name in listed), (name, uid, state.phase, state.number, listed)
        for name in LISTED_OR_REFUSED:
            if name not in listed:
                ok = any(accepted(state, cmd) for cmd in attempts(state, uid, name, at))
                assert not ok, (name, uid, state.phase, state.number, listed)


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
        check(table.state, table.tick(), lambda s, u: [*legal_commands(s, u), "vote"])
    with pytest.raises(AssertionError):
        check(table.state, table.tick(),
              lambda s, u: [x for x in legal_commands(s, u) if x != "game start"])
