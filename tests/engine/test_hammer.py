"""Issue 46.7, house option "the hammer" (RULES.md §4): the vote that gives one player an
absolute majority of the living weight ends the day, or tells the master so."""

from __future__ import annotations

from core.game.events import EventKind
from core.game.rules.voting import hammered
from core.game.state import Options, PhaseKind
from tests.engine.scenario import Game

BASE = {
    "Don": "mafioso:1", "Vito": "mafioso:1", "Ivan": "investigator", "Serg": "sergeant",
    "Bob": "bouncer", "Kate": "killer", "C1": "citizen", "C2": "citizen", "C3": "citizen",
}
AGAINST_C1 = ("Don", "Vito", "Ivan", "Serg")  # 4 of 9 living: no majority yet


def _day_one(**options: bool) -> Game:
    g = Game(BASE, Options(**options))
    g.to_night(0)
    g.advance()
    assert (g.state.phase, g.state.number) == (PhaseKind.DAY, 1)
    return g


def test_the_fifth_vote_of_nine_ends_the_day_and_hangs() -> None:
    g = _day_one(hammer=True)
    for n in AGAINST_C1:
        g.vote(n, "C1")
    assert g.state.phase is PhaseKind.DAY and not hammered(g.state, g.id("C1"))
    events = g.vote("Bob", "C1")
    kinds = [e.kind for e in events]
    assert kinds.index(EventKind.VOTE_CAST) < kinds.index(EventKind.HAMMER) \
        < kinds.index(EventKind.DAY_RESULT)
    hammer = next(e for e in events if e.kind is EventKind.HAMMER)
    assert hammer.audience.kind == "public" and hammer.data["target"] == g.id("C1")
    assert g.state.days[-1].hanged == g.id("C1") and not g.alive("C1")
    assert (g.state.phase, g.state.number) == (PhaseKind.NIGHT, 1)


def test_off_by_default_the_day_runs_to_its_end() -> None:
    g = _day_one()
    for n in (*AGAINST_C1, "Bob", "Kate"):
        g.vote(n, "C1")
    assert g.state.phase is PhaseKind.DAY


def test_with_confirmation_the_master_is_told_once_and_the_day_runs_on() -> None:
    g = _day_one(hammer=True, hammer_confirm=True)
    for n in AGAINST_C1:
        g.vote(n, "C1")
    events = g.vote("Bob", "C1")
    desk = [e for e in events if e.kind is EventKind.DESK_HAMMER]
    assert len(desk) == 1 and desk[0].audience.kind == "master"
    assert not [e for e in events if e.kind is EventKind.HAMMER]
    assert g.state.phase is PhaseKind.DAY
    assert not [e for e in g.vote("Kate", "C1") if e.kind is EventKind.DESK_HAMMER]
    g.advance()  # the master confirms
    assert g.state.days[-1].hanged == g.id("C1")


def test_the_input_state_is_left_untouched_by_a_hammer() -> None:
    from core.game import commands as c
    from core.game.engine import apply

    g = _day_one(hammer=True)
    for n in AGAINST_C1:
        g.vote(n, "C1")
    before = g.state.model_dump_json()
    apply(g.state, c.Vote(by=g.id("Bob"), at=g.tick(), target=g.id("C1")))
    assert g.state.model_dump_json() == before
