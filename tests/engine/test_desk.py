"""The master's desk in the engine: master events, the night explained, the master log,
standby and replacement keeping the seat."""

from __future__ import annotations

import pytest

from core.game import commands as c
from core.game.errors import RuleError
from core.game.events import Event
from core.game.rules.context import Ctx
from core.game.rules.phases import team_access
from core.game.state import Options
from core.sight.desk import desk_text, known_names, log_lines, master_log, paginate
from tests.engine.scenario import MASTER, Game
from tests.engine.test_rules import BASE, blocked_night, everyone_votes, scattered_votes


def master_events(events: list[Event], kind: str) -> list[Event]:
    return [e for e in events if e.kind == kind and e.audience.kind == "master"]


def test_every_night_order_reaches_the_master_with_fallback_and_story() -> None:
    g = Game(BASE)
    g.to_night(0)
    events = g.do(c.NightOrder(by=g.id("Kate"), at=g.tick(), target=g.id("C1"),
                               fallback=g.id("C2"), story="in the rain"))
    [order] = master_events(events, "desk_order")
    assert order.data == {"actor": g.id("Kate"), "role": "killer", "action": "kill",
                          "target": g.id("C1"), "fallback": g.id("C2"),
                          "story": "in the rain", "night": 0, "replaced": False}
    text = desk_text(order, str, "en")
    assert "in the rain" in text and str(g.id("C2")) in text


def test_all_orders_in_once_when_the_last_move_arrives() -> None:
    g = Game(BASE)
    g.to_night(0)
    assert not master_events(g.night("Bob", "C1"), "all_orders_in")
    assert not master_events(g.night("Don", "C2"), "all_orders_in")
    [done] = master_events(g.night("Kate", "C3"), "all_orders_in")
    assert done.data == {"night": 0}
    # changing an order when everything is in does not announce it again
    assert not master_events(g.night("Kate", "C2"), "all_orders_in")


def test_all_orders_in_when_the_last_idle_player_is_removed() -> None:
    g = Game(BASE)
    g.to_night(0)
    g.night("Bob", "C1")
    g.night("Don", "C2")
    events = g.do(c.Kick(by=MASTER, at=g.tick(), target=g.id("Kate")))
    assert [e.data for e in master_events(events, "all_orders_in")] == [{"night": 0}]


def test_all_orders_given_by_day_are_announced_when_the_night_falls() -> None:
    g = Game(BASE)
    g.to_night(0)
    blocked_night(g)  # day 1: nobody votes, nobody is hanged
    for actor, target in (("Bob", "C2"), ("Vito", "C2"), ("Kate", "C3"), ("Ivan", "C1")):
        assert not master_events(g.night(actor, target), "all_orders_in")
    events = g.advance()
    assert [e.data for e in master_events(events, "all_orders_in")] == [{"night": 1}]


def test_the_night_is_explained_step_by_step() -> None:
    g = Game(BASE)
    g.to_night(0)
    g.night("Bob", "C1")
    g.night("Don", "C1")
    g.night("Kate", "C2")
    [explained] = master_events(g.advance(), "night_explained")
    steps = explained.data["steps"]
    sequence = steps[0]
    assert sequence["step"] == "sequence" and sequence["actors"][0] == g.id("Bob")
    assert set(sequence["actors"]) == {g.id("Bob"), g.id("Don"), g.id("Kate")}
    by_kind = {s["step"]: s for s in steps[1:]}
    assert by_kind["protect"]["actor"] == g.id("Bob") and by_kind["protect"]["target"] == g.id("C1")
    assert by_kind["blocked"] == {"step": "blocked", "actor": g.id("Don"), "action": "kill",
                                  "target": g.id("C1"), "fallback": None, "bouncer": g.id("Bob")}
    assert by_kind["kill"]["actor"] == g.id("Kate") and by_kind["kill"]["target"] == g.id("C2")
    assert explained.data["deaths"] == {str(g.id("C2")): [g.id("Kate")]}
    names = {v: k for k, v in g.ids.items()}
    text = desk_text(explained, lambda u: names.get(u, "?"), "en")
    assert "Bob" in text and "protects C1" in text and "fails, Bob protects C1" in text
    assert "Out of the game: C2 (by Kate)" in text
    ru = desk_text(explained, lambda u: names.get(u, "?"), "ru")
    assert "Нулевая ночь по шагам" in ru and "{" not in ru


def test_fallback_and_check_steps() -> None:
    g = Game(BASE)
    g.to_night(0)
    blocked_night(g)
    g.night("Kate", "C1", fallback="C2")  # during day 1, for night 1
    g.night("Ivan", "Don")
    everyone_votes(g, "C1")
    g.advance()
    [explained] = master_events(g.advance(), "night_explained")
    steps = {s["step"]: s for s in explained.data["steps"]}
    assert steps["fallback"]["actor"] == g.id("Kate") and steps["fallback"]["target"] == g.id("C2")
    assert steps["check"]["target"] == g.id("Don") and steps["check"]["result"] == "mafioso"


def test_day_explained_names_the_tie_and_its_decider() -> None:
    g = Game(BASE)
    g.to_night(0)
    blocked_night(g)
    scattered_votes(g)
    g.vote("C1", "Don")
    g.vote("C2", "Vito")
    g.vote("C3", "Vito")
    g.vote("Ivan", "Don")
    [day] = master_events(g.advance(), "day_explained")
    assert day.data["hanged"] == g.id("Vito") and day.data["decider"] == g.id("C3")
    names = {v: k for k, v in g.ids.items()}
    text = desk_text(day, lambda u: names.get(u, "?"), "en")
    assert "A tie between Vito, Don: Vito reached the count first (the vote of C3)" in text


def test_purchases_and_spells_reach_the_master() -> None:
    g = Game(BASE, Options(currency=True, shop=True))
    g.fund()
    g.to_night(0)
    events = g.do(c.Buy(by=g.id("C1"), at=g.tick(), item="alarm_clock"))
    [bought] = master_events(events, "desk_purchase")
    assert bought.data["uid"] == g.id("C1") and bought.data["item"] == "alarm_clock"
    events = g.do(c.Cast(by=g.id("C2"), at=g.tick(), spell="helplessness", target=g.id("Kate")))
    [spell] = master_events(events, "desk_spell")
    assert spell.data == {"uid": g.id("C2"), "spell": "helplessness", "target": g.id("Kate")}


def test_standby_toggles_and_refuses_players_and_the_master() -> None:
    g = Game(BASE)
    with pytest.raises(RuleError) as err:
        g.do(c.Standby(by=g.id("C1"), at=g.tick(), name="C1"))
    assert err.value.code == "already_signed_up"
    with pytest.raises(RuleError) as err:
        g.do(c.Standby(by=MASTER, at=g.tick(), name="M"))
    assert err.value.code == "master_cannot_play"
    g.do(c.Standby(by=900, at=g.tick(), name="Sub"))
    assert [s.uid for s in g.state.standby] == [900]
    g.do(c.Standby(by=900, at=g.tick(), name="Sub"))
    assert g.state.standby == []


def test_replace_from_standby_keeps_the_seat() -> None:
    g = Game(BASE, Options(currency=True, shop=True))
    g.fund()
    g.to_night(0)
    g.do(c.Buy(by=g.id("Kate"), at=g.tick(), item="alarm_clock"))
    g.night("Kate", "C1", fallback="C2")
    spent = g.state.spent[g.id("Kate")]
    with pytest.raises(RuleError) as err:
        g.do(c.Replace(by=MASTER, at=g.tick(), old=g.id("Kate")))
    assert err.value.code == "standby_empty"
    g.do(c.Standby(by=900, at=g.tick(), name="Sub"))
    events = g.do(c.Replace(by=MASTER, at=g.tick(), old=g.id("Kate")))
    seat = g.state.player(900)
    assert seat is not None and seat.role is not None and seat.role.value == "killer"
    assert seat.name == "Sub" and g.state.player(g.id("Kate")) is None
    assert g.state.spent == {900: spent} and [i.kind for i in g.state.inventory[900]] == [
        "alarm_clock"]
    assert [o.actor for o in g.state.orders] == [900]
    assert g.state.standby == []
    public = [e for e in events if e.audience.kind == "public"]
    assert [(e.kind, e.data) for e in public] == [
        ("replaced", {"old": g.id("Kate"), "new": 900})]
    told = [e.kind for e in events if e.audience.players == [900]]
    assert "role_dealt" in told and "seat_taken" in told


def test_master_reads_team_channels_only_when_the_option_is_on() -> None:
    g = Game(BASE)
    members, writers = team_access(Ctx(g.state), "clan:1")
    assert MASTER not in members
    g2 = Game(BASE, Options(master_reads_teams=True))
    members, writers = team_access(Ctx(g2.state), "clan:1")
    assert MASTER in members and MASTER not in writers


def test_master_log_filters_and_pages_without_cutting() -> None:
    g = Game(BASE)
    g.to_night(0)
    for n in range(30):  # many orders: a long night
        g.do(c.NightOrder(by=g.id("Kate"), at=g.tick(), target=g.id("C1"),
                          story=f"story {n} " + "x" * 300))
    history = [(1, c.Join(by=g.id("Kate"), at=g.tick(), name="Kate"), g.events)]
    everything = master_log(history)
    assert len([e for e in everything if e.event.kind == "desk_order"]) == 30
    nights = master_log(history, phase="night", number=0)
    assert {e.event.kind for e in nights} >= {"desk_order", "order_accepted"} - {
        "order_accepted"}  # the player's copy of an order is left out for the desk's own
    assert all(e.event.kind != "order_accepted" for e in everything)
    assert len([e for e in nights if e.event.kind == "desk_order"]) == 30
    days = master_log(history, phase="day")
    assert days and all(e.phase == "day" for e in days)
    assert all(e.event.kind != "desk_order" for e in days)
    about_c2 = master_log(history, player=g.id("C2"))
    assert about_c2 and all(g.id("C2") in e.event.audience.players or
                            str(g.id("C2")) in str(e.event.data) for e in about_c2)
    assert not any(e.event.kind == "desk_order" for e in about_c2)
    lines = log_lines(everything, str, "en")
    pages = paginate(lines, budget=1000)
    assert len(pages) > 5 and all(len(p) <= 1000 for p in pages)
    joined = "".join(p.replace("\n", "") for p in pages)
    for n in range(30):
        assert f"story {n} " + "x" * 300 in joined
    names = known_names(history, g.state)
    assert names[g.id("Kate")] == "Kate"


def test_evening_orders_carried_out_or_skipped_reach_the_master() -> None:
    from tests.engine.test_shop import buy, game, to_day1

    g = game()
    to_day1(g)
    events = buy(g, "C1", "alarm_clock", if_hanged="Don")
    [ordered] = master_events(events, "desk_buy_ordered")
    assert ordered.data["uid"] == g.id("C1") and ordered.data["if_hanged"] == g.id("Don")
    buy(g, "C2", "alarm_clock", if_hanged="C3")
    for n in g.names:
        if g.alive(n) and n != "C3":
            g.vote(n, "C3")
    g.vote("C3", "C2")
    events = g.advance()
    [skipped] = master_events(events, "desk_buy_skipped")
    assert skipped.data["uid"] == g.id("C1")
    [bought] = master_events(events, "desk_purchase")
    assert bought.data["uid"] == g.id("C2")
    names = {v: k for k, v in g.ids.items()}
    assert desk_text(skipped, lambda u: names.get(u, "?"), "en") == (
        "C1's evening order of Alarm clock is not carried out: the condition "
        "“if Don is hanged” did not hold.")
    assert desk_text(ordered, lambda u: names.get(u, "?"), "ru") == (
        "C1 заказывает на вечер предмет «Будильник» — если повесят игрока Don.")


def test_paginate_carries_a_long_line_over_at_a_space() -> None:
    line = " ".join(f"<@{10**17 + n}>" for n in range(200))  # about 4,400 characters
    pages = paginate(["head", line, "tail"], budget=1000)
    assert all(len(p) <= 1000 for p in pages) and pages[0] == "head" and pages[-1].endswith(
        "tail")
    middle = "".join(pages[1:]).removesuffix("\ntail")
    assert middle == line  # nothing lost, and every cut fell after a space:
    assert all(p.endswith(" ") for p in pages[1:-1])
    assert paginate([]) == [""]


def test_missed_turns_and_absences_reach_the_master() -> None:
    g = Game(BASE)
    g.do(c.Away(by=g.id("C2"), at=g.tick(), reason="trip"))
    for n in g.names:
        if n not in ("C1", "C2"):
            g.do(c.CheckIn(by=g.id(n), at=g.tick()))
    g.advance()
    g.night("Bob", "C3")
    g.night("Don", "C3")
    g.night("Kate", "C3")
    events = g.advance()  # the turn (day 0 and night 0) is judged at the night's end
    missed = master_events(events, "turn_missed")
    assert [(e.data["uid"], e.data["excused"]) for e in missed] == [
        (g.id("C1"), False), (g.id("C2"), True)]
    names = {v: k for k, v in g.ids.items()}
    assert all(names[e.data["uid"]] in desk_text(e, lambda u: names.get(u, "?"), "en")
               for e in missed)
    [away] = master_events(g.events, "away_noted")
    assert "trip" in desk_text(away, lambda u: names.get(u, "?"), "en")


@pytest.mark.parametrize("sees", [True, False])
def test_anonymous_senders_reach_the_master_only_when_the_option_allows(sees: bool) -> None:
    g = Game(BASE, Options(crypto=True, master_sees_anon=sees))
    events = g.do(c.Anon(by=g.id("C1"), at=g.tick(), text="I know who did it"))
    senders = master_events(events, "anon_sender")
    assert len(senders) == (1 if sees else 0)
    if sees:
        names = {v: k for k, v in g.ids.items()}
        assert desk_text(senders[0], lambda u: names.get(u, "?"), "en") == (
            "The anonymous post is by C1: I know who did it")


def test_the_desk_says_each_evening_condition_and_a_spell_orders_target() -> None:
    """Whichever condition an evening order has (or none), the desk says that one."""
    from tests.engine.test_shop import game, to_day1

    g = game()
    to_day1(g)
    names = {v: k for k, v in g.ids.items()}

    def line(events: list[Event], lang: str) -> str:
        [ordered] = master_events(events, "desk_buy_ordered")
        return desk_text(ordered, lambda u: names.get(u, "?"), lang)

    unless = g.do(c.Buy(by=g.id("C1"), at=g.tick(), item="alarm_clock",
                        unless_hanged=g.id("Don")))
    assert line(unless, "ru") == \
        "C1 заказывает на вечер предмет «Будильник» — если не повесят игрока Don."
    nobody = g.do(c.Buy(by=g.id("C2"), at=g.tick(), item="alarm_clock", if_nobody_hanged=True))
    assert line(nobody, "en") == "C2 orders Alarm clock for this evening, if nobody is hanged."
    spell = g.do(c.Cast(by=g.id("C1"), at=g.tick(), spell="sleep", target=g.id("C3"),
                        if_hanged=g.id("Don")))
    assert line(spell, "ru") == (
        "C1 заказывает на вечер заклинание «Усыпление» на игрока C3 — если повесят игрока Don.")


def test_evening_results_and_the_alarm_clock_stay_on_the_card() -> None:
    """Issue 42.6: what a player's place was told of his evening orders (skipped, carried
    out) and of his alarm clock stays on his card, in his words, and on no one else's."""
    from cogs.ui.render import notice_text
    from tests.engine.test_shop import buy, cast, game, quiet_night, to_day1

    g = game()
    to_day1(g)
    buy(g, "C1", "alarm_clock", if_hanged="Don")
    buy(g, "C2", "alarm_clock", if_hanged="C3")
    for n in g.names:
        if g.alive(n) and n != "C3":
            g.vote(n, "C3")
    g.vote("C3", "C2")
    g.advance()
    kinds = {n: [x.kind for x in g.p(n).notices] for n in ("C1", "C2")}
    assert "buy_skipped" in kinds["C1"] and "buy_done" in kinds["C2"]
    assert "buy_done" not in kinds["C1"] and "buy_skipped" not in kinds["C2"]
    skipped = next(x for x in g.p("C1").notices if x.kind == "buy_skipped")
    assert notice_text(skipped.kind, skipped.data, skipped.night, "ru") == (
        "День 1: условие заказа «Будильник» не выполнилось, ничего не куплено.")
    assert notice_text(skipped.kind, skipped.data, skipped.night, "en").startswith(
        "Day 1: the condition of your order of Alarm clock")
    # the clock lifts a spell cast on its owner: his card says so
    g = game()
    g.to_night(0)
    buy(g, "C2", "alarm_clock")
    quiet_night(g)
    cast(g, "C1", "sleep", "C2")
    for n in g.names:
        if g.alive(n) and n != "Kate":
            g.vote(n, "Kate")
    g.vote("Kate", "C1")
    g.advance()
    [clock] = [x for x in g.p("C2").notices if x.kind == "alarm_clock_used"]
    assert notice_text(clock.kind, clock.data, clock.night, "en") == (
        "Day 1: your alarm clock lifted 1 spell cast on you.")
    assert notice_text(clock.kind, clock.data, clock.night, "ru") == (
        "День 1: будильник снял с вас 1 заклинание.")
