"""Module 'Inventory and spells': each item and spell with hand-checked outcomes."""

from __future__ import annotations

import pytest

from core.game import commands as c
from core.game.errors import RuleError
from core.game.rules.economy import ledger_entries
from core.game.rules.shop import catalogue, protection_price
from core.game.rules.voting import tally
from core.game.state import Options, PhaseKind
from tests.engine.scenario import Game

ROLES = {
    "Don": "mafioso:1", "Vito": "mafioso:1", "Ivan": "investigator", "Serg": "sergeant",
    "Bob": "bouncer", "Kate": "killer", "C1": "citizen", "C2": "citizen", "C3": "citizen",
    "C4": "citizen",
}
SHOP = Options(currency=True, shop=True)


def game(amount: int = 150) -> Game:
    g = Game(ROLES, SHOP)
    g.fund(amount)
    return g


def buy(g: Game, who: str, item: str, against: str | None = None,
        if_hanged: str | None = None) -> list:
    return g.do(c.Buy(by=g.id(who), at=g.tick(), item=item, against=against,
                      if_hanged=g.id(if_hanged) if if_hanged else None))


def cast(g: Game, who: str, spell: str, target: str) -> list:
    return g.do(c.Cast(by=g.id(who), at=g.tick(), spell=spell, target=g.id(target)))


def quiet_night(g: Game) -> None:
    """Every move of the open night spent on the bouncer's ward: nobody dies, nobody idles."""
    g.night("Bob", "C4")
    g.night("Don", "C4")
    g.night("Kate", "C4")
    g.advance()


def to_day1(g: Game) -> None:
    g.to_night(0)
    quiet_night(g)
    assert g.state.phase is PhaseKind.DAY and g.state.number == 1


def test_protection_prices() -> None:
    g = game()
    uid = g.id("C1")
    g.to_night(0)
    assert protection_price(g.state, uid, "mafia:1") == 10
    buy(g, "C1", "protection", "mafia:1")
    assert protection_price(g.state, uid, "killer") == 15
    buy(g, "C1", "protection", "killer")
    assert protection_price(g.state, uid, "mafia:1") == 30  # (10 + 5*2) * 1.5
    assert protection_price(g.state, uid, "bouncer") == 20
    assert g.wallet is not None and g.wallet[uid] == 150 - 25
    assert ("protection", "mafia:1", 30) in catalogue(g.state, uid)


def test_not_enough_lira_changes_nothing() -> None:
    g = game(amount=5)
    g.to_night(0)
    before = g.state
    with pytest.raises(RuleError) as err:
        buy(g, "C1", "alarm_clock")
    assert err.value.code == "not_enough_lira"
    assert g.state == before and g.wallet == dict.fromkeys(g.ids.values(), 5)


def test_spending_cap_is_fifteen_per_player() -> None:
    g = game(amount=1000)  # 10 players: cap 150
    g.to_night(0)
    for _ in range(6):
        buy(g, "C1", "alarm_clock")  # 120
    buy(g, "C1", "cheque_book")  # 150: exactly the cap
    before = g.state
    with pytest.raises(RuleError) as err:
        buy(g, "C1", "alarm_clock")
    assert err.value.code == "spending_cap"
    assert g.state == before
    assert g.state.spent[g.id("C1")] == 150


def test_protection_absorbs_one_attack_of_its_kind() -> None:
    g = game()
    g.to_night(0)
    buy(g, "C1", "protection", "killer")
    g.night("Kate", "C1")
    g.night("Bob", "C4")
    g.night("Don", "C4")
    g.advance()
    assert g.alive("C1")
    assert g.state.inventory[g.id("C1")] == []
    assert any(n.kind == "action_failed" for n in g.p("Kate").notices)


def test_protection_of_another_kind_does_not_help() -> None:
    g = game()
    g.to_night(0)
    buy(g, "C1", "protection", "killer")
    g.night("Don", "C1")
    g.night("Bob", "C4")
    g.night("Kate", "C4")
    g.advance()
    assert not g.alive("C1")


def test_sleep_cancels_one_vote_of_a_player_who_has_not_voted() -> None:
    g = game()
    to_day1(g)
    cast(g, "C1", "sleep", "C2")
    g.vote("C2", "Don")
    assert tally(g.state).totals.get(g.id("Don"), 0) == 0
    g.vote("C2", "Vito")  # a second vote counts
    assert tally(g.state).totals[g.id("Vito")] == 2
    with pytest.raises(RuleError) as err:
        cast(g, "C1", "sleep", "C2")
    assert err.value.code == "already_voted"


def test_silence_cancels_every_vote_of_the_day() -> None:
    g = game()
    to_day1(g)
    g.vote("C2", "Don")
    cast(g, "C1", "silence", "C2")
    assert tally(g.state).totals == {}
    g.vote("C2", "Vito")
    assert tally(g.state).totals == {}


def test_two_sleeps_against_one_alarm_clock_waste_it() -> None:
    g = game()
    g.to_night(0)
    buy(g, "C2", "alarm_clock")
    quiet_night(g)
    cast(g, "C1", "sleep", "C2")
    cast(g, "C3", "sleep", "C2")
    g.vote("C2", "Don")
    g.vote("C2", "Vito")
    g.vote("C2", "Kate")
    assert tally(g.state).totals == {g.id("Kate"): 2}  # two votes lost, the clock did nothing
    for n in g.names:
        if g.alive(n) and n not in ("C2", "Kate"):
            g.vote(n, "Kate")
    g.advance()
    assert g.state.inventory[g.id("C2")] == []  # wasted


def test_two_clocks_cover_two_spells() -> None:
    g = game()
    g.to_night(0)
    buy(g, "C2", "alarm_clock")
    buy(g, "C2", "alarm_clock")
    quiet_night(g)
    cast(g, "C1", "sleep", "C2")
    cast(g, "C3", "silence", "C2")
    g.vote("C2", "Don")
    assert tally(g.state).totals == {g.id("Don"): 2}


def test_free_speech_protects_from_one_spell() -> None:
    g = game()
    to_day1(g)
    cast(g, "C2", "free_speech", "C2")
    cast(g, "C1", "silence", "C2")
    g.vote("C2", "Don")
    assert tally(g.state).totals == {g.id("Don"): 2}
    cast(g, "C3", "silence", "C2")
    assert tally(g.state).totals == {}


def test_spell_limit_twice_a_day_per_target() -> None:
    """Two Sleeps a day act on one target; a third by another caster (who cannot know
    of the first two: spells are secret) is accepted, paid and wasted; the caster's own
    third is refused, since he knows of his own two."""
    g = game()
    to_day1(g)
    cast(g, "C1", "sleep", "C2")
    cast(g, "C3", "sleep", "C2")
    cast(g, "C4", "sleep", "C2")  # accepted: a refusal would tell C4 of the others' spells
    assert g.wallet is not None and g.wallet[g.id("C4")] == 150 - 3
    g.vote("C2", "Don")
    g.vote("C2", "Vito")
    g.vote("C2", "Kate")  # the third vote counts: only two Sleeps act
    assert tally(g.state).totals == {g.id("Kate"): 2}
    cast(g, "C1", "sleep", "C4")
    cast(g, "C1", "sleep", "C4")
    with pytest.raises(RuleError) as err:
        cast(g, "C1", "sleep", "C4")
    assert err.value.code == "spell_limit"
    cast(g, "C1", "silence", "C4")
    cast(g, "C1", "silence", "C4")
    with pytest.raises(RuleError) as err:  # Silence counts by the turn (issue 43)
        cast(g, "C1", "silence", "C4")
    assert err.value.code == "spell_turn_limit"


def test_shout_adds_the_base_weight_twice_a_day() -> None:
    g = game()
    to_day1(g)
    g.vote("C1", "Don", shout=True)
    assert tally(g.state).totals == {g.id("Don"): 4}
    g.vote("C1", "Vito", shout=True)
    with pytest.raises(RuleError) as err:
        g.vote("C1", "Kate", shout=True)
    assert err.value.code == "spell_limit"
    assert g.wallet is not None and g.wallet[g.id("C1")] == 140


def test_helplessness_blocks_the_next_night_and_lira() -> None:
    g = game()
    to_day1(g)
    cast(g, "C1", "helplessness", "Kate")  # ordered by day, cast in the evening
    for n in g.names:
        if g.alive(n) and n != "C3":
            g.vote(n, "C3")
    g.vote("C3", "C2")
    g.advance()
    assert g.state.helpless[g.id("Kate")] == 1
    with pytest.raises(RuleError) as err:
        g.night("Kate", "C1")
    assert err.value.code == "helpless_night"
    with pytest.raises(RuleError) as err:
        buy(g, "Kate", "alarm_clock")
    assert err.value.code == "helpless"


def test_cheque_book_stops_helplessness() -> None:
    g = game()
    g.to_night(0)
    buy(g, "Kate", "cheque_book")
    quiet_night(g)
    cast(g, "C1", "helplessness", "Kate")
    for n in g.names:
        if g.alive(n) and n != "C3":
            g.vote(n, "C3")
    g.vote("C3", "C2")
    g.advance()
    assert g.id("Kate") not in g.state.helpless
    g.night("Kate", "C1")


def test_doubling_gives_two_moves_each_with_its_fallback() -> None:
    g = game()
    to_day1(g)
    cast(g, "Kate", "doubling", "Kate")
    g.night("Kate", "C1", fallback="C2")
    g.night("Kate", "C3")
    for n in g.names:
        if g.alive(n) and n != "C1":
            g.vote(n, "C1")
    g.vote("C1", "C2")
    g.advance()  # C1 hanged: the first move falls back to C2
    g.night("Bob", "Ivan")
    g.night("Vito", "Ivan")
    g.advance()
    assert not g.alive("C2") and not g.alive("C3")
    assert g.p("C2").death.by == [g.id("Kate")]  # type: ignore[union-attr]


def test_destruction_ignores_the_bouncer_and_the_spiked_club_strikes() -> None:
    g = game()
    g.to_night(0)
    buy(g, "Bob", "spiked_club")
    cast(g, "Kate", "destruction", "Kate")
    g.night("Bob", "C1")
    g.night("Kate", "C1")
    g.night("Don", "C4")
    g.advance()
    assert not g.alive("C1")  # the protection was ignored
    assert g.p("Kate").death.cause == "spiked"  # type: ignore[union-attr]
    assert g.p("Kate").death.by == [g.id("Bob")]  # type: ignore[union-attr]


def test_spiked_club_kills_the_first_attacker_only() -> None:
    g = game()
    g.to_night(0)
    buy(g, "Bob", "spiked_club")
    g.night("Bob", "C1")
    g.night("Kate", "C1")
    g.night("Don", "C1")
    g.advance()
    assert g.alive("C1")
    dead = [n for n in ("Kate", "Don") if not g.alive(n)]
    assert len(dead) == 1 and g.p(dead[0]).death.cause == "spiked"  # type: ignore[union-attr]


def test_conditional_order_charged_only_if_the_condition_holds() -> None:
    g = game()
    to_day1(g)
    buy(g, "C1", "alarm_clock", if_hanged="Don")
    buy(g, "C2", "alarm_clock", if_hanged="C3")
    assert g.wallet is not None and g.wallet[g.id("C1")] == 150  # nothing charged yet
    for n in g.names:
        if g.alive(n) and n != "C3":
            g.vote(n, "C3")
    g.vote("C3", "C2")
    g.advance()
    assert g.wallet[g.id("C1")] == 150 and g.wallet[g.id("C2")] == 130
    assert [i.kind for i in g.state.inventory[g.id("C2")]] == ["alarm_clock"]


def test_purchases_are_ledger_entries() -> None:
    g = game()
    g.to_night(0)
    events = buy(g, "C1", "protection", "mafia:1")
    purchase = next(e for e in events if e.kind == "purchase")
    assert not purchase.public
    assert ledger_entries("purchase", purchase.data, master=1) == [
        (g.id("C1"), -10, "shop.protection")]


def test_shop_needs_the_module_and_currency() -> None:
    g = Game(ROLES)
    g.to_night(0)
    with pytest.raises(RuleError) as err:
        buy(g, "C1", "alarm_clock")
    assert err.value.code == "module_off"
    from core.game.engine import create_game

    with pytest.raises(RuleError) as err:
        create_game(seed=1, master=1, title="x", options=Options(shop=True))
    assert err.value.code == "shop_needs_currency"


def test_protection_kind_parsing() -> None:
    from core.game.rules.shop import parse_attacker

    g = game()
    s = g.state
    assert parse_attacker("mafioso", s) == "mafia:1"
    assert parse_attacker("Убийца", s) == "killer"
    assert parse_attacker("clan 1", s) == "mafia:1"
    assert parse_attacker("bouncer", s) == "bouncer"
    assert parse_attacker("wizard", s) == "wizard"  # refused later as unknown_protection
