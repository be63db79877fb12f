"""Issue 46.5: the ratings (an OpenSkill Plackett-Luce model over the teams) and the
achievements, pure, from a finished game's state (RULES.md §16)."""

from __future__ import annotations

from core.game import commands as c
from core.sight.achievements import Mark, earned
from core.sight.ratings import Skill, rated, update
from tests.engine.scenario import MASTER, Game

TOWN = {"Don": "mafioso:1", "Ivan": "investigator", "Serg": "sergeant", "C1": "citizen",
        "C2": "citizen", "C3": "citizen", "C4": "citizen"}


def _day_one() -> Game:
    g = Game(TOWN)
    g.to_night(0)
    g.advance()
    return g


def _hang(g: Game, target: str) -> None:
    for n in g.names:
        if g.alive(n) and n != target:
            g.vote(n, target)
    g.advance()


def test_the_winners_rise_the_losers_fall_and_a_removed_player_falls_furthest() -> None:
    g = _day_one()
    g.do(c.Kick(by=MASTER, at=g.tick(), target=g.id("C3")))
    _hang(g, "Don")
    assert g.state.over and rated(g.state)
    after = update(g.state, {})
    start = Skill()
    assert after[g.id("Ivan")].mu > start.mu and after[g.id("C1")].mu > start.mu
    assert after[g.id("Don")].mu < start.mu
    assert after[g.id("C3")].mu < start.mu  # removed: rated apart, with the losers
    # the next game starts from the stored ratings: a second win moves less than none
    again = update(g.state, after)
    assert again[g.id("Ivan")].sigma < after[g.id("Ivan")].sigma


def test_a_cancelled_game_is_neither_rated_nor_earns_marks() -> None:
    g = _day_one()
    g.do(c.Cancel(by=MASTER, at=g.tick()))
    assert not rated(g.state) and update(g.state, {}) == {} and earned(g.state) == {}


def test_the_marks_of_a_won_game() -> None:
    g = _day_one()
    g.do(c.Kick(by=MASTER, at=g.tick(), target=g.id("Ivan")))  # the sergeant takes over
    # a tie, Don 1 : C1 1; Don reached his count first, so C2's vote hangs him
    g.vote("C2", "Don")
    g.vote("Don", "C1")
    g.advance()
    assert g.state.days[-1].hanged == g.id("Don") and g.state.days[-1].decider == g.id("C2")
    assert g.state.over
    marks = earned(g.state)
    assert marks[g.id("Serg")] == [Mark.WIN_POSITIVE, Mark.STILL_STANDING,
                                   Mark.LAST_INVESTIGATOR]
    assert marks[g.id("C2")] == [Mark.WIN_CITIZENS, Mark.STILL_STANDING, Mark.DECIDING_VOTE]
    assert marks[g.id("C1")] == [Mark.WIN_CITIZENS, Mark.STILL_STANDING]
    assert g.id("Ivan") not in marks  # removed: his side's win is not his
    assert g.id("Don") not in marks


def test_a_mafia_win_is_marked_as_such() -> None:
    g = Game({"Don": "mafioso:1", "Vito": "mafioso:1", "Ivan": "investigator",
              "C1": "citizen", "C2": "citizen", "C3": "citizen"})
    g.to_night(0)
    g.advance()
    for victim in ("Ivan", "C1", "C2", "C3"):
        g.vote("Don", victim)
        g.vote("Vito", victim)
        g.advance()
        if g.state.over:
            break
        g.advance()
        if g.state.over:
            break
    assert g.state.over
    marks = earned(g.state)
    assert Mark.WIN_NEGATIVE in marks[g.id("Don")]
