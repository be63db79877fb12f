"""Issue 43, rules fidelity fourth round: one test (or a few) per point decided in
RULES.md, each written from the original's words (quoted in the docstrings;
/work/shared/rules/original-ru.txt). The secrecy point is tests/engine/test_two_worlds.py."""

from __future__ import annotations

import pytest

from core.game import commands as c
from core.game.errors import RuleError
from core.game.rules.economy import payouts, prize_shares
from core.game.rules.voting import tally
from core.game.state import Options
from tests.engine.scenario import Game
from tests.engine.test_economy import make
from tests.engine.test_fidelity import BASE, SHOP, acting, quiet_night


def _cast(g: Game, who: str, spell: str, target: str) -> None:
    g.do(c.Cast(by=g.id(who), at=g.tick(), spell=spell, target=g.id(target)))


def _shop_game() -> Game:
    g = Game({**BASE, "C4": "citizen"}, SHOP)
    g.fund(300)
    return g


# --- 1. Silence: twice a turn ----------------------------------------------------------------
def test_silence_counts_twice_per_turn_a_day_and_the_night_after_it() -> None:
    """"Немота – ... Не может быть использовано более чем дважды за один ход", and a turn is
    a day and the night after it (RULES.md §6: "Первый день, первая ночь и последующие
    ходы"). Two Silences on day 1 use turn 1's two: a third in the evening of night 1 (it
    would act on day 2) is refused to the same caster; on day 2, turn 2, he may again."""
    g = _shop_game()
    g.to_night(0)
    quiet_night(g)
    _cast(g, "C1", "silence", "C2")
    _cast(g, "C1", "silence", "C2")
    g.advance()  # nobody voted: the evening of night 1
    before = g.state.model_dump_json()
    with pytest.raises(RuleError) as err:
        _cast(g, "C1", "silence", "C2")
    assert err.value.code == "spell_turn_limit" and err.value.params == {"limit": 2}
    assert g.state.model_dump_json() == before  # nothing charged
    quiet_night(g)
    _cast(g, "C1", "silence", "C2")
    _cast(g, "C1", "silence", "C2")


def test_the_evening_of_night_0_is_turn_0_and_day_1_is_turn_1() -> None:
    """Turn 0 is day 0 with night 0: two Silences cast in the evening of night 0 and two
    on day 1 are two turns' worth, so all four are accepted from one caster."""
    g = _shop_game()
    g.to_night(0)
    _cast(g, "C1", "silence", "C2")
    _cast(g, "C1", "silence", "C2")
    quiet_night(g)
    _cast(g, "C1", "silence", "C2")
    _cast(g, "C1", "silence", "C2")
    with pytest.raises(RuleError) as err:
        _cast(g, "C1", "silence", "C2")
    assert err.value.code == "spell_turn_limit"


def test_a_third_silence_of_one_turn_by_another_caster_is_paid_and_wasted() -> None:
    """Only two Silences of one turn act on a target (the others' spells are secret, so a
    third caster is not refused, RULES.md §13): three cast on day 1, two Free speeches
    ("защищает от одного заклинания") free the target's vote."""
    g = _shop_game()
    g.to_night(0)
    quiet_night(g)
    for caster in ("C1", "C3", "C4"):
        _cast(g, caster, "silence", "C2")
    _cast(g, "C2", "free_speech", "C2")
    _cast(g, "C2", "free_speech", "C2")
    g.vote("C2", "Don")
    assert tally(g.state).totals == {g.id("Don"): 2}


# --- 2. The Alarm clock: by the turn cast in ----------------------------------------------
def test_an_evening_silence_and_a_next_day_sleep_are_two_turns_one_clock_each() -> None:
    """"Будильник – снимает заклинания молчания и сна. Действует лишь однажды.
    Соответственно, если в один ход таких заклинаний было наложено два, то будильник
    тратится впустую." Silence cast in the evening of night 0 (turn 0) and Sleep cast on
    day 1 (turn 1) act on the same day but were not cast in one turn: the one clock lifts
    the evening's Silence and the Sleep stands (one vote lost, the next counts)."""
    g = _shop_game()
    g.to_night(0)
    g.do(c.Buy(by=g.id("C2"), at=g.tick(), item="alarm_clock"))
    _cast(g, "C1", "silence", "C2")
    quiet_night(g)
    _cast(g, "C3", "sleep", "C2")
    g.vote("C2", "Don")
    assert tally(g.state).totals == {}  # the Sleep took this vote
    g.vote("C2", "Vito")
    assert tally(g.state).totals == {g.id("Vito"): 2}  # the Silence was lifted
    g.advance()
    assert not [i for i in g.state.inventory.get(g.id("C2"), []) if i.kind == "alarm_clock"]


def test_two_spells_of_one_turn_waste_the_one_clock() -> None:
    """The same two spells both cast on day 1, one turn: the clock is wasted, both stand."""
    g = _shop_game()
    g.to_night(0)
    g.do(c.Buy(by=g.id("C2"), at=g.tick(), item="alarm_clock"))
    quiet_night(g)
    _cast(g, "C1", "silence", "C2")
    _cast(g, "C3", "sleep", "C2")
    g.vote("C2", "Don")
    g.vote("C2", "Vito")
    assert tally(g.state).totals == {}
    g.advance()
    assert not [i for i in g.state.inventory.get(g.id("C2"), []) if i.kind == "alarm_clock"]


# --- 3. Payouts of the removed -------------------------------------------------------------
SIX = ["investigator", "sergeant", "citizen", "citizen", "citizen", "mafioso:1"]


@pytest.mark.parametrize("cause", ["inactive", "kicked"])
def test_a_removed_winner_forfeits_the_prize_but_keeps_his_days(cause: str) -> None:
    """"Каждый, кто пропустил два хода подряд, исключается из игры": the removal is a
    sanction, and the original pays the prize "За победу" without a word on the removed.
    By default (master option `removed_prize` off) a winner removed for missed turns or by
    the master has no share; his days lived are still paid ("За каждый день, включая
    нулевой, который прожил игрок")."""
    s = make(SIX, {1: (cause, 1, []), 2: ("killed", 2, [5]), 5: ("hanged", 3, [])},
             winners=["positive", "citizens"])
    shares = prize_shares(s)
    assert 101 not in shares
    # 6 players: prize 30 among the living 100, 103, 104 (3) and the dead 102 (1)
    assert shares == {100: 8, 102: 8, 103: 7, 104: 7}
    days = {p.uid: p.amount for p in payouts(s) if p.reason == "days"}
    assert days[101] == 2
    s.options.removed_prize = True  # the master's option: paid like a killed winner
    assert 101 in prize_shares(s)


def test_a_killed_or_gassed_winner_is_not_removed_by_a_sanction() -> None:
    """"помещается в газовую камеру (выводится из игры)" is the operative's own rule, not
    a sanction: he shares the prize like any dead winner."""
    roles = ["investigator", "operative", "citizen", "citizen", "citizen", "mafioso:1"]
    s = make(roles, {1: ("gas_chamber", 2, []), 5: ("hanged", 3, [])},
             winners=["positive", "citizens"])
    assert 101 in prize_shares(s)


# --- 4. As many living winners as dead --------------------------------------------------------
def test_as_many_living_winners_as_dead_share_equally() -> None:
    """"Если выживших победителей меньше, чем мертвых, то данная сумма делится надвое ...
    Если живых больше, чем мертвых, то вся сумма распределяется равномерно." Equal numbers
    are a reading: equally, which is what the halves would give each, up to the odd lira."""
    roles = ["investigator", "citizen", "citizen", "citizen", "mafioso:1", "mafioso:1"]
    s = make(roles, {2: ("killed", 0, [4]), 3: ("killed", 1, [4]), 4: ("hanged", 2, []),
                     5: ("hanged", 3, [])}, winners=["positive", "citizens"])
    # 6 players, prize 30; living 100, 101 and dead 102, 103: 7.5 each, the odd lira to
    # the first seats of all four (the halves would give 8 and 7 in each half instead)
    assert prize_shares(s) == {100: 8, 101: 8, 102: 7, 103: 7}
    s.players[1].alive, s.players[1].death = False, s.players[3].death  # 1 living, 3 dead
    assert prize_shares(s) == {100: 15, 101: 5, 102: 5, 103: 5}  # now the halves


# --- 5. The clan's rotation: night 0 is the first night ------------------------------------
def test_the_originals_rotation_example_with_night_0_as_the_first_night() -> None:
    """"Например, пусть в одном клане есть три мафиози. В первую ночь ходит мафиози №1, во
    вторую ночь номер 2, а если к моменту третьей ночи мафиози №3 уже выбудет из игры, то
    настанет ход мафиози №1." The clan's first night is night 0 ("В нулевую ночь ходят все
    «ролевики», кроме следователя"): #1 on night 0, #2 on night 1, and with #3 hanged on
    day 2, #1 again on night 2."""
    roles = {"Don": "mafioso:1", "Vito": "mafioso:1", "Tony": "mafioso:1",
             "Ivan": "investigator", "Serg": "sergeant", "Bob": "bouncer", "Kate": "killer",
             "C1": "citizen", "C2": "citizen", "C3": "citizen", "C4": "citizen",
             "C5": "citizen"}
    g = Game(roles)
    assert [g.p(n).rank for n in ("Don", "Vito", "Tony")] == [1, 2, 3]
    g.to_night(0)
    assert g.state.clans[0].acting == g.id("Don")
    g.advance()
    g.advance()  # day 1: nobody voted
    assert g.state.clans[0].acting == g.id("Vito")
    g.advance()
    for n in g.names:
        if g.alive(n) and n != "Tony":
            g.vote(n, "Tony")
    g.advance()  # day 2: Tony (#3) hanged
    assert not g.alive("Tony")
    assert g.state.number == 2 and g.state.clans[0].acting == g.id("Don")


# --- 6. The bouncer's save of himself; his protection and spells --------------------------
def test_the_bouncer_saving_himself_is_paid_as_a_save_armour_is_not() -> None:
    """"Каждый раз, когда действия игрока приводят к спасению не враждебного ему игрока,
    ему начисляется 3 лиры. (Под подобные действия подпадают: защита вышибалы ...)": the
    bouncer is not hostile to himself, so his protection saving him is a save; a bought
    armour is a thing, not an action of the player, and earns nothing."""
    g = Game(BASE, Options(currency=True, shop=True))
    g.fund(100)
    g.to_night(0)
    g.do(c.Buy(by=g.id("C1"), at=g.tick(), item="protection", against="killer"))
    g.night("Bob", "Bob")
    g.night(acting(g), "Bob")
    g.night("Kate", "C1")
    g.advance()
    assert g.alive("Bob") and g.alive("C1")
    assert (g.id("Bob"), g.id("Bob")) in [tuple(x) for x in g.state.saves]
    saves = {(p.uid, p.amount) for p in payouts(g.state) if p.reason == "saves"}
    assert saves == {(g.id("Bob"), 3)}


def test_the_bouncers_protection_does_not_stop_a_spell_on_his_ward() -> None:
    """"если этот игрок становится целью чьих-то ночных действий, игрок, эти действия
    инициировавший, получает сообщение о неудачности оных": a spell is bought in the shop,
    not one of the roles' night actions, so Helplessness on the bouncer's ward goes
    through, the caster is not told of a failure, and the protection counts as having
    blocked nothing (he may protect that player again)."""
    g = _shop_game()
    g.to_night(0)
    quiet_night(g)
    g.advance()  # night 1
    g.night("Bob", "Ivan")
    events = g.do(c.Cast(by=g.id("C1"), at=g.tick(), spell="helplessness",
                         target=g.id("Ivan")))
    assert not [e for e in events if e.kind == "action_failed"]
    with pytest.raises(RuleError) as err:
        g.night("Ivan", "Don")
    assert err.value.code == "helpless_night"
    g.advance()
    assert g.id("Ivan") not in g.state.covered.get(g.id("Bob"), [])
