"""Module 'Additional roles': advocate, operative, occultist (hand-checked)."""

from __future__ import annotations

import pytest

from core.game import commands as c
from core.game.errors import RuleError
from core.game.rules.voting import tally
from core.game.state import Options
from tests.engine.scenario import MASTER, Game

EXTRA = {
    "Don": "mafioso:1", "Adv": "advocate:1", "Ivan": "investigator", "Op": "operative",
    "Occ": "occultist", "Bob": "bouncer", "C1": "citizen", "C2": "citizen", "C3": "citizen",
    "C4": "citizen",
}


def game() -> Game:
    return Game(EXTRA, Options(extra_roles=True))


def test_advocate_is_in_the_clan_and_checks_from_night_zero() -> None:
    g = game()
    g.to_night(0)
    g.night("Adv", "Ivan")
    g.night("Don", "C1")
    g.advance()
    assert any(n.kind == "check" and n.data["role"] == "investigator"
               for n in g.p("Adv").notices)
    with pytest.raises(RuleError):
        g.night("Don", "Adv")  # clan mate, day order for night 1


def shielded_night(g: Game, shield: str, *others: tuple[str, str]) -> list:
    """Mafia moves are spent on a player the bouncer covers: nobody idles, nobody dies."""
    g.night("Bob", shield)
    g.night("Don", shield)
    if g.alive("Adv"):
        g.night("Adv", shield)
    for actor, target in others:
        g.night(actor, target)
    return g.advance()


def hang(g: Game, victim: str, victim_votes: str) -> None:
    for n in g.names:
        if g.alive(n) and n != victim:
            g.vote(n, victim)
    g.vote(victim, victim_votes)
    g.advance()


def test_operative_benched_after_killing_a_citizen_then_gassed() -> None:
    g = game()
    g.to_night(0)
    with pytest.raises(RuleError) as err:
        g.night("Op", "C1")
    assert err.value.code == "no_move_tonight"  # from night 1 only
    shielded_night(g, "C2")
    hang(g, "C4", "C3")
    shielded_night(g, "C3", ("Op", "C1"), ("Ivan", "Don"))
    assert not g.alive("C1")
    assert g.state.operative_benched[g.id("Op")] == 2
    hang(g, "Occ", "Ivan")
    with pytest.raises(RuleError) as err:
        g.night("Op", "C2")  # benched for night 2 only
    assert err.value.code == "no_move_tonight"
    shielded_night(g, "Ivan", ("Ivan", "Adv"))
    hang(g, "Adv", "Ivan")
    events = shielded_night(g, "Op", ("Op", "C2"), ("Ivan", "Bob"))  # second bad kill
    assert not g.alive("C2")
    assert g.p("Op").death.cause == "gas_chamber"  # type: ignore[union-attr]
    died = [e for e in events if e.kind == "player_died" and e.data["uid"] == g.id("Op")]
    assert died and died[0].public and died[0].data["role"] == "operative"


def test_operative_killing_a_negative_is_not_penalised() -> None:
    g = game()
    g.to_night(0)
    g.advance()
    for n in g.names:
        if g.alive(n) and n != "C4":
            g.vote(n, "C4")
    g.vote("C4", "C3")
    g.advance()
    g.night("Op", "Don")
    g.advance()
    assert not g.alive("Don") and g.id("Op") not in g.state.operative_benched


def test_ghost_votes_weigh_half_and_exclusion_applies_at_once() -> None:
    g = game()
    g.do(c.Kick(by=MASTER, at=g.tick(), target=g.id("C1")))
    g.do(c.Kick(by=MASTER, at=g.tick(), target=g.id("C2")))
    # Kicked players are out for good: only ghosts of the dead vote, so kill via the night
    g.to_night(0)
    g.night("Don", "C3")
    g.advance()
    assert not g.alive("C3")
    g.vote("C3", "Ivan")  # ghost: 0.5
    g.vote("C4", "Bob")  # living: 1
    t = tally(g.state)
    assert t.totals == {g.id("Ivan"): 1, g.id("Bob"): 2}
    with pytest.raises(RuleError):
        g.vote("C1", "Ivan")  # kicked players never vote
    g.do(c.OccultExclude(by=g.id("Occ"), at=g.tick(), target=g.id("C3")))
    assert tally(g.state).totals == {g.id("Bob"): 2}


def test_ghost_votes_stop_when_the_occultist_dies() -> None:
    g = game()
    g.to_night(0)
    g.night("Don", "C3")
    g.advance()
    g.vote("C3", "Ivan")
    assert tally(g.state).totals == {g.id("Ivan"): 1}
    g.do(c.Kick(by=MASTER, at=g.tick(), target=g.id("Occ")))
    assert tally(g.state).totals == {}
    with pytest.raises(RuleError):
        g.vote("C3", "Bob")


def test_fractional_tie_break() -> None:
    g = game()
    g.to_night(0)
    g.night("Don", "C3")
    g.advance()
    g.vote("C3", "Ivan")  # 0.5 first
    g.vote("C4", "Bob")  # 1
    g.vote("C1", "Ivan")  # Ivan 1.5
    g.vote("C2", "Bob")  # Bob 2
    g.vote("Occ", "Ivan")  # Ivan 2.5
    g.vote("Op", "Bob")  # Bob 3
    g.unvote("Op")  # Bob 2
    t = tally(g.state)
    assert t.totals == {g.id("Ivan"): 5, g.id("Bob"): 4}
    assert t.leader == g.id("Ivan")


def test_extra_roles_need_the_module() -> None:
    from core.play.sim import Table

    # /game setup refuses at once what /game start would refuse, in the same words.
    with pytest.raises(RuleError) as err:
        Table(1, 10, roles="mafioso; advocate; investigator; operative")
    assert err.value.code == "setup_needs_extra_roles"
    with pytest.raises(RuleError) as err:
        Table(1, 10, Options(extra_roles=True), roles="mafioso; advocate; operative")
    assert err.value.code == "setup_needs_investigator"
