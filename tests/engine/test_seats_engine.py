"""Issue 28 (N1, N2) in the rules: who may take a seat, and what the table is told.

"Whoever plays is never a master" holds both ways: a member who may use the master's
tools, or has used them, is never seated; nor is one whose Discord rights show him the
other seats' places (core.game.access.seat_refusal). At the start the master must accept any
player who can read the places, and the table is told before the deal.
"""

from __future__ import annotations

import pytest

from core.game import commands as c
from core.game.access import Sight
from core.game.engine import apply, create_game
from core.game.errors import ErrorCode, RuleError
from core.game.state import GameState
from tests.engine.scenario import MASTER, T0, Game

ROLES = {"A": "mafioso:1", "B": "mafioso:1", "C": "investigator", "D": "sergeant",
         "E": "bouncer", "F": "citizen", "G": "citizen", "H": "citizen"}
HOST = 900


def refused(state: GameState, cmd: c.Command) -> ErrorCode:
    with pytest.raises(RuleError) as err:
        apply(state, cmd)
    return err.value.code


def test_a_host_who_used_a_tool_is_written_down_and_never_seated() -> None:
    g = Game(ROLES)
    g.do(c.Host(by=HOST, at=T0, admin=True))  # /master log by a stand-in host
    assert g.state.hosts == [HOST]
    # even without the right any more
    assert refused(g.state, c.Standby(by=HOST, at=T0, name="h")) is ErrorCode.HOST_CANNOT_PLAY
    assert refused(g.state, c.Replace(by=MASTER, at=T0, old=g.id("F"), new=HOST, name="h")) \
        is ErrorCode.HOST_CANNOT_SIT
    g.do(c.Extend(by=HOST + 1, at=T0, minutes=5, admin=True))
    assert g.state.hosts == [HOST, HOST + 1]
    g.do(c.Extend(by=MASTER, at=T0, minutes=5))
    assert g.state.hosts == [HOST, HOST + 1]  # the master is the master, not a stand-in


def test_who_could_host_or_sees_every_thread_never_sits() -> None:
    s = create_game(seed=1, master=MASTER, title="t")
    assert refused(s, c.Join(by=5, at=T0, name="x", admin=True)) is ErrorCode.HOST_CANNOT_PLAY
    assert refused(s, c.Join(by=5, at=T0, name="x", sight="threads")) is ErrorCode.SEES_PLACES
    assert refused(s, c.Join(by=5, at=T0, name="x", sight="all")) is ErrorCode.SEES_PLACES
    g = Game(ROLES)
    assert refused(g.state, c.Standby(by=5, at=T0, name="x", sight="threads")) \
        is ErrorCode.SEES_PLACES
    assert refused(g.state, c.Replace(by=MASTER, at=T0, old=g.id("F"), new=5, name="x",
                                      new_admin=True)) is ErrorCode.HOST_CANNOT_SIT
    assert refused(g.state, c.Replace(by=MASTER, at=T0, old=g.id("F"), new=5, name="x",
                                      new_sight="threads")) is ErrorCode.SEES_PLACES_SIT


def test_the_start_waits_for_the_master_and_tells_the_table_before_the_deal() -> None:
    s = create_game(seed=1, master=MASTER, title="t")
    for uid in range(10, 18):
        s = apply(s, c.Join(by=uid, at=T0, name=str(uid))).state
    sights: dict[int, Sight] = {10: "none", 12: "threads", 999: "all"}
    assert refused(s, c.Start(by=MASTER, at=T0, sights=sights)) is ErrorCode.SIGHT_UNCONFIRMED
    out = apply(s, c.Start(by=MASTER, at=T0, sights=sights, confirm_sight=True))
    assert out.state.sight == {12: "threads"}  # 999 has no seat: nothing to tell
    kinds = [e.kind for e in out.events]
    assert kinds.index("sight_threads") < kinds.index("role_dealt")
    told = next(e for e in out.events if e.kind == "sight_threads")
    assert told.public and told.data == {"uid": 12}


def test_a_right_given_during_the_game_is_told_once() -> None:
    g = Game(ROLES)
    events = g.do(c.Sight(by=g.id("F"), at=T0, sight="threads"))
    # told to the table, and to the master's desk as a warning of its own
    assert [e.kind for e in events] == ["sight_threads", "desk_sight"] and events[0].public
    assert events[1].audience.kind == "master" \
        and events[1].data == {"uid": g.id("F"), "sight": "threads"}
    assert refused(g.state, c.Sight(by=g.id("F"), at=T0, sight="threads")) \
        is ErrorCode.NOT_ALLOWED
    assert [e.kind for e in g.do(c.Sight(by=g.id("F"), at=T0, sight="all"))] \
        == ["sight_all", "desk_sight"]
    assert refused(g.state, c.Sight(by=HOST, at=T0, sight="all")) is ErrorCode.NOT_A_PLAYER
