"""Issue 19, the words: what the engine's events say once rendered (core.sight.narrate).

A hanging is announced once; a morning never says "everybody is alive" when
someone left; a missed turn says whose; a conditional order is confirmed when
carried out and names the item in full; phase lengths read in hours.
"""

from __future__ import annotations

from core.game import commands as c
from core.game.events import Event
from core.game.state import Options, PhaseKind
from core.sight.guide import guide
from core.sight.narrate import describe, duration, plain
from tests.engine.scenario import Game
from tests.engine.test_shop import ROLES, buy, game, to_day1


def lines(g: Game, events: list[Event], lang: str = "en", public: bool = True) -> list[str]:
    names = {uid: name for name, uid in g.ids.items()}
    return [describe(e, lambda u: names.get(u, str(u)), lang) for e in events
            if e.public == public]


def test_a_hanging_is_announced_once() -> None:
    g = Game(ROLES)
    g.to_night(0)
    g.night("Bob", "C4")
    g.night("Don", "C4")
    g.night("Kate", "C4")
    g.advance()
    for n in g.names:
        if g.alive(n) and n != "C3":
            g.vote(n, "C3")
    g.vote("C3", "C2")
    events = g.advance()
    for lang in ("en", "ru"):
        text = "\n".join(lines(g, events, lang))
        assert text.count("C3") >= 1
        said = [line for line in text.splitlines() if "C3" in line and "•" not in line]
        assert len(said) == 1, said  # only the player_died line, not also "C3 is out"


def test_a_quiet_morning_is_still_quiet() -> None:
    g = Game(ROLES)
    g.to_night(0)
    g.night("Bob", "C4")
    g.night("Don", "C4")
    g.night("Kate", "C4")
    events = g.advance()
    morning = next(e for e in events if e.kind == "morning")
    assert morning.data["left"] == []
    assert "quiet night" in lines(g, [morning])[0]


def test_a_missed_turn_says_whose_to_the_master() -> None:
    g = Game(ROLES)
    g.advance()  # day 0 ends with nobody checked in
    events = g.advance()  # turn 0 ends: those with no part in it missed it
    master = [e for e in events if e.kind == "turn_missed"]
    assert master and all(e.audience.kind == "master" for e in master)
    for lang in ("en", "ru"):
        for line in lines(g, master, lang, public=False):
            assert line.split()[0].rstrip(":") in g.names, line


def test_a_conditional_order_is_confirmed_when_carried_out() -> None:
    g = game()
    to_day1(g)
    buy(g, "C1", "protection", "killer", if_hanged="C3")
    buy(g, "C2", "alarm_clock", if_hanged="Don")
    for n in g.names:
        if g.alive(n) and n != "C3":
            g.vote(n, "C3")
    g.vote("C3", "C2")
    events = g.advance()
    done = [e for e in events if e.kind == "buy_done"]
    assert [e.audience.players for e in done] == [[g.id("C1")]]
    assert lines(g, done, "en", public=False) == [
        "The condition “if C3 is hanged” held; your order is carried out: "
        "Protection from the killer."]
    assert lines(g, done, "ru", public=False) == [
        "Условие «если повесят игрока C3» выполнилось, заказ исполнен: Защита от убийцы."]
    skipped = [e for e in events if e.kind == "buy_skipped"]
    assert [e.audience.players for e in skipped] == [[g.id("C2")]]


def test_the_purchase_names_the_protection_in_full() -> None:
    g = game()
    g.to_night(0)
    events = buy(g, "C1", "protection", "mafia:1")
    text = lines(g, [e for e in events if e.kind == "purchase"], "en", public=False)[0]
    assert "Protection from clan 1" in text and "…" not in text


def test_phase_lengths_read_in_hours() -> None:
    assert [duration(m, "ru") for m in (1440, 720, 90, 45)] == [
        "24 ч", "12 ч", "1 ч 30 мин", "45 мин"]
    assert duration(1440, "en") == "24 h"


def test_plain_drops_markdown_for_the_console() -> None:
    assert plain("• **Ann** — mafioso\n> a story \\*x\\*") == "• Ann — mafioso\n  a story *x*"


def test_the_guide_lists_what_the_phase_allows() -> None:
    g = Game(ROLES, Options(currency=True, shop=True))
    c1 = g.id("C1")
    day0 = guide(g.state, c1)
    assert day0.duties == ["checkin"] and "checkin" in day0.commands
    assert "vote" not in day0.commands and "master advance" not in day0.commands
    g.do(c.CheckIn(by=c1, at=g.tick()))
    assert guide(g.state, c1).duties == ["checked_in"]
    don = guide(g.state, g.id("Don"))
    assert "pre_order" in don.duties and "night" in don.commands
    master = guide(g.state, 1)
    assert master.duties == ["master_run"] and "master advance" in master.commands
    assert "vote" not in master.commands
    for n in g.names:
        if n != "C1":
            g.do(c.CheckIn(by=g.id(n), at=g.tick()))
    g.advance()
    assert guide(g.state, c1).duties == ["wait_morning"]
    assert guide(g.state, g.id("Don")).duties == ["night_move"]
    assert guide(g.state, g.id("Ivan")).duties == ["no_move_tonight"]  # from night 1
    assert g.state.phase is PhaseKind.NIGHT
    stranger = guide(g.state, 999)
    assert stranger.duties == ["spectator"] and stranger.role is None
    assert guide(None, 5).commands[0] == "game create"


def test_a_morning_after_a_kick_in_the_night_is_not_quiet() -> None:
    g = Game(ROLES)
    g.to_night(0)
    g.do(c.Kick(by=1, at=g.tick(), target=g.id("C1")))
    g.night("Bob", "C4")
    g.night("Don", "C4")
    g.night("Kate", "C4")
    events = g.advance()
    morning = next(e for e in events if e.kind == "morning")
    assert morning.data["left"] == [g.id("C1")]
    assert lines(g, [morning], "ru")[0] == "Утро первого дня: этой ночью никто не убит."


def test_a_clan_order_without_a_story_ends_at_its_target() -> None:
    """The clan's channel reads the order; with no story the line has no trailing blank."""
    for story, lang in (("", "en"), ("", "ru"), ("at dawn", "en")):
        ev = Event(kind="clan_order", data={"actor": 1, "target": 2, "night": 1,
                                            "story": story})
        text = describe(ev, str, lang)
        assert text == text.rstrip() and text.endswith(story or "."), text


def test_a_re_sent_clan_order_says_it_replaces_the_earlier_one() -> None:
    """A re-sent /night reads to the clan as a change of order (issue 40): the line says
    the earlier order is void, in both languages; a first order says nothing of it, and a
    row stored before issue 40 (no `replaced`) reads as a first order."""
    data = {"actor": 1, "target": 2, "night": 1, "story": ""}
    again = Event(kind="clan_order", data=data | {"replaced": True})
    assert describe(again, str, "en") == (
        "1 changes the order: the kill of 2 for night 1. This replaces the earlier order.")
    assert describe(again, str, "ru") == (
        "1 меняет заказ: на первую ночь — убийство игрока 2. Этот заказ заменяет прежний.")
    for first in (Event(kind="clan_order", data=data | {"replaced": False}),
                  Event(kind="clan_order", data=data)):
        for lang in ("en", "ru"):
            assert "replace" not in describe(first, str, lang)
            assert "заменяет" not in describe(first, str, lang)
