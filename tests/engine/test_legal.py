"""`legal_commands` (what /help lists) held to the engine over simulated games.

Every path that sends a command is listed exactly when the engine accepts that command
from this person now for some argument (or refuses every argument only for a reason
the arguments, the clock or the wallet carry: tests/engine/test_guards.py,
ARGUMENT_CODES). A guide that offered a dead end, or hid a command the rules take, fails
here. The order is /help's (core.sight.legal.HELP).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.game import commands as c
from core.game.engine import apply
from core.game.errors import RuleError
from core.game.guards import Actor
from core.game.state import GameState, Options
from core.play.sim import MASTER, Table, random_phase
from core.sight.legal import HELP, legal_commands
from tests.conftest import slow_property
from tests.engine.test_guards import ARGUMENT_CODES, WRONG_ARGUMENT, probes

OUTSIDER = 99


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


def takes(state: GameState, uid: int, admin: bool, kind: str, at: datetime) -> bool:
    """Whether the engine takes `kind` from him for some argument (or refuses only what
    the arguments, the clock or the wallet carry)."""
    codes = set()
    for cmd in probes(state, Actor(uid, admin), kind, at):
        try:
            apply(state, cmd)
        except RuleError as exc:
            codes.add(exc.code)
            continue
        return True
    return bool(codes) and codes <= ARGUMENT_CODES.get(kind, frozenset()) | WRONG_ARGUMENT


def check(state: GameState, at: datetime,
          lister: Callable[..., list[str]] = legal_commands) -> None:
    for uid, admin in senders(state):
        listed = lister(state, uid, admin=admin)
        why = (uid, admin, state.phase, state.number, listed)
        for path in HELP:
            if path.kind is not None:
                ok = takes(state, uid, admin, path.kind, at)
                assert ok == (path.name in listed), (path.name, *why)
        assert listed == [p.name for p in HELP if p.name in listed], why  # /help's order


@pytest.mark.slow_property
@slow_property
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


def test_standby_is_listed_to_an_outsider_while_the_game_runs() -> None:
    """/game standby (issue 31): an outsider may offer to substitute during the game, and
    withdraw; a player, the master and a stand-in host may not."""
    table = Table(3, 7, Options())
    assert "game standby" not in legal_commands(table.state, OUTSIDER)
    table.send(c.Start(by=MASTER, at=table.clock, confirm=True))
    s = table.state
    assert "game standby" in legal_commands(s, OUTSIDER)
    assert "game standby" not in legal_commands(s, OUTSIDER, admin=True)
    assert "game standby" not in legal_commands(s, MASTER)
    assert "game standby" not in legal_commands(s, s.players[0].uid)
    on = apply(s, c.Standby(by=OUTSIDER, at=table.tick(), name="Sub")).state
    assert "game standby" in legal_commands(on, OUTSIDER)  # to withdraw
    check(on, table.tick())


def test_thank_is_listed_exactly_when_the_engine_takes_it() -> None:
    """After a finished game with the currency (each player once), never after a
    cancelled one: /help and the engine agree through the one guard."""
    from core.game.state import PhaseKind
    from core.play.sim import EPOCH, play

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


def test_cast_offers_ghosts_for_day_spells_only() -> None:
    """A ghost votes while the occultist lives, so a day spell may reach him; a night
    spell acts on a night move, which a ghost has not: /cast offers him for the first
    only (issue 31), and every offer is one the engine's target check takes."""
    from core.game.rules.items import spells
    from core.game.rules.shop import DAY_SPELLS, NIGHT_SPELLS, spell_target
    from core.sight.legal import cast_targets
    from tests.engine.scenario import Game
    from tests.engine.test_fidelity import BASE

    g = Game({**BASE, "Olga": "occultist"}, Options(currency=True, shop=True,
                                                       extra_roles=True))
    g.to_night(0)
    g.night("Don", "C1")
    g.advance()
    ghost, caster = g.id("C1"), g.p("Olga")
    assert not g.alive("C1")
    for spell in DAY_SPELLS:
        assert ghost in cast_targets(g.state, caster.uid, spell), spell
    for spell in NIGHT_SPELLS:
        assert ghost not in cast_targets(g.state, caster.uid, spell), spell
    for spell in spells():
        offered = cast_targets(g.state, caster.uid, spell)
        for p in g.state.players:
            try:
                spell_target(g.state, caster, spell, p.uid)
            except RuleError:
                assert p.uid not in offered
            else:
                assert p.uid in offered
            if p.uid not in offered:
                cast = c.Cast(by=caster.uid, at=g.tick(), spell=spell, target=p.uid,
                              funds={caster.uid: 1000})
                with pytest.raises(RuleError):
                    apply(g.state, cast)
