"""Issue 46, last paragraph: a vote whose target leaves the game mid-day is neither lost
silently nor left counting against nobody (RULES.md §4, "A vote whose target leaves")."""

from __future__ import annotations

from core.game import commands as c
from core.game.events import EventKind
from core.game.rules.voting import current_votes
from core.game.state import Options
from tests.engine.scenario import MASTER, Game

BASE = {
    "Don": "mafioso:1", "Vito": "mafioso:1", "Ivan": "investigator", "Serg": "sergeant",
    "Bob": "bouncer", "Kate": "killer", "C1": "citizen", "C2": "citizen", "C3": "citizen",
}


def _day_one(options: Options | None = None) -> Game:
    g = Game(BASE, options) if options is not None else Game(BASE)
    g.to_night(0)
    g.advance()
    return g


def test_a_kicked_target_releases_the_votes_and_tells_each_voter_alone() -> None:
    g = _day_one()
    g.vote("Don", "C1")
    g.vote("Ivan", "C1")
    g.vote("C1", "C2")
    g.vote("Bob", "C3")
    events = g.do(c.Kick(by=MASTER, at=g.tick(), target=g.id("C1")))
    released = [e for e in events if e.kind is EventKind.VOTE_RELEASED]
    assert len(released) == 1
    assert sorted(released[0].audience.players) == sorted([g.id("Don"), g.id("Ivan")])
    assert released[0].data["target"] == g.id("C1")
    standing = current_votes(g.state)
    assert g.id("Don") not in standing and g.id("Ivan") not in standing
    assert standing[g.id("Bob")].target == g.id("C3")  # the others' votes stand


def test_a_released_vote_may_be_cast_again_when_votes_are_final() -> None:
    """Votes final forbids changing one's vote; the voter did not change it, the target
    left, so he votes again (before: refused `votes_final`, his vote lost for the day)."""
    g = _day_one(Options(votes_final=True))
    g.vote("Don", "C1")
    g.do(c.Kick(by=MASTER, at=g.tick(), target=g.id("C1")))
    g.vote("Don", "C2")
    assert current_votes(g.state)[g.id("Don")].target == g.id("C2")
    g.advance()
    assert g.state.days[-1].votes[g.id("Don")] == g.id("C2")


def test_a_replaced_target_keeps_the_votes_and_their_voters_are_told() -> None:
    g = _day_one()
    g.vote("Don", "C1")
    g.vote("C2", "C1")
    events = g.do(c.Replace(by=MASTER, at=g.tick(), old=g.id("C1"), new=9999, name="Sub"))
    moved = [e for e in events if e.kind is EventKind.VOTE_MOVED]
    assert len(moved) == 1
    assert sorted(moved[0].audience.players) == sorted([g.id("Don"), g.id("C2")])
    assert moved[0].data == {"old": g.id("C1"), "new": 9999}
    assert current_votes(g.state)[g.id("Don")].target == 9999
    g.advance()
    assert g.state.days[-1].hanged == 9999


def test_a_kick_at_night_releases_nothing() -> None:
    g = Game(BASE)
    g.to_night(0)
    events = g.do(c.Kick(by=MASTER, at=g.tick(), target=g.id("C1")))
    assert not [e for e in events if e.kind is EventKind.VOTE_RELEASED]
