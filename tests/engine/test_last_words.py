"""Issue 46.7, house option "last words" (RULES.md §4): a player killed at night may post
one message within the master's window after the morning; nobody else, never twice."""

from __future__ import annotations

from datetime import timedelta

import pytest

from core.game import commands as c
from core.game.errors import RuleError
from core.game.events import EventKind
from core.game.state import Options
from tests.engine.scenario import MASTER, Game

BASE = {
    "Don": "mafioso:1", "Vito": "mafioso:1", "Ivan": "investigator", "Serg": "sergeant",
    "Bob": "bouncer", "Kate": "killer", "C1": "citizen", "C2": "citizen", "C3": "citizen",
}


def _morning(minutes: int) -> tuple[Game, list]:
    g = Game(BASE, Options(last_words_minutes=minutes))
    g.to_night(0)
    acting = next(n for n in ("Don", "Vito") if g.state.clans[0].acting == g.id(n))
    g.night(acting, "C1")
    return g, g.advance()


def _say(g: Game, who: str, text: str = "It was Vito", at_minutes: int = 1) -> list:
    return g.do(c.LastWords(by=g.id(who), at=g.clock + timedelta(minutes=at_minutes),
                            text=text))


def test_the_killed_is_told_privately_and_may_speak_once() -> None:
    g, events = _morning(30)
    assert not g.alive("C1")
    opened = [e for e in events if e.kind is EventKind.LAST_WORDS_OPEN]
    assert len(opened) == 1 and opened[0].audience.players == [g.id("C1")]
    said = _say(g, "C1")
    assert [(e.kind, e.audience.kind, e.data) for e in said] == [
        (EventKind.LAST_WORDS, "public", {"uid": g.id("C1"), "text": "It was Vito"})]
    before = g.state.model_dump_json()
    with pytest.raises(RuleError) as err:
        _say(g, "C1", "and one more thing")
    assert err.value.code == "no_last_words" and g.state.model_dump_json() == before


@pytest.mark.parametrize("who", ["C2", "Vito"])
def test_nobody_else_speaks_for_the_dead(who: str) -> None:
    g, _ = _morning(30)
    with pytest.raises(RuleError) as err:
        _say(g, who)
    assert err.value.code in ("no_last_words", "not_a_player")


def test_the_window_closes() -> None:
    g, _ = _morning(30)
    with pytest.raises(RuleError) as err:
        _say(g, "C1", at_minutes=31)
    assert err.value.code == "no_last_words"


def test_off_by_default_and_never_for_the_hanged_or_removed() -> None:
    g, events = _morning(0)
    assert not [e for e in events if e.kind is EventKind.LAST_WORDS_OPEN]
    with pytest.raises(RuleError):
        _say(g, "C1")
    g, _ = _morning(30)
    g.do(c.Kick(by=MASTER, at=g.tick(), target=g.id("C2")))
    with pytest.raises(RuleError):
        _say(g, "C2")
