"""Issue 17, rules fidelity second round: one test (or a few) per point, each written from
the original's words (quoted in the docstrings; /work/shared/rules/original-ru.txt)."""

from __future__ import annotations

import pytest

from core.game import commands as c
from core.game.errors import RuleError
from core.game.rules.channels import known_to, teams
from core.game.rules.voting import tally
from core.game.state import Options, PhaseKind
from core.sight.visibility import card
from tests.engine.scenario import MASTER, Game

BASE = {
    "Don": "mafioso:1", "Vito": "mafioso:1", "Ivan": "investigator", "Serg": "sergeant",
    "Bob": "bouncer", "Kate": "killer", "C1": "citizen", "C2": "citizen", "C3": "citizen",
}
SHOP = Options(currency=True, shop=True)


def everyone_votes(g: Game, target: str, except_: tuple[str, ...] = ()) -> None:
    for n in g.names:
        if g.alive(n) and n not in except_ and n != target:
            g.vote(n, target)
    if g.alive(target) and target not in except_:
        other = next(n for n in g.names if g.alive(n) and n != target)
        g.vote(target, other)


def checkin(g: Game, except_: tuple[str, ...] = ()) -> None:
    for n in g.names:
        if g.alive(n) and n not in except_:
            g.do(c.CheckIn(by=g.id(n), at=g.tick()))


def acting(g: Game) -> str:
    """The clan's acting mafioso tonight (the rotation moves each night)."""
    return next(n for n in ("Don", "Vito") if g.state.clans[0].acting == g.id(n))


def quiet_night(g: Game) -> list:
    """The night's killers all shoot the bouncer's ward: nobody dies."""
    covered = g.state.covered.get(g.id("Bob"), [])
    ward = next(n for n in ("C4", "C3", "C2", "C1") if g.alive(n) and g.id(n) not in covered)
    g.night("Bob", ward)
    g.night(acting(g), ward)
    g.night("Kate", ward)
    return g.advance()


# --- 1. inactivity: a turn is a day and the night after it -----------------------------
def test_killer_who_votes_every_day_and_never_shoots_is_never_removed() -> None:
    """"Убийца – ... каждую ночь может убивать одного игрока": night powers are optional;
    "Каждый, кто пропустил два хода подряд, исключается" counts turns without any part."""
    g = Game(BASE)
    checkin(g)
    g.advance()
    g.advance()  # night 0: nobody gives an order
    for victim in ("C1", "C2", "C3"):
        everyone_votes(g, victim)
        g.advance()
        g.advance()
    assert not g.state.over and g.alive("Kate") and g.alive("Don")
    assert [t.missed for t in g.p("Kate").turns] == [False] * 4


def test_a_vote_or_an_order_is_taking_part_in_the_turn() -> None:
    """A turn is missed only with no vote that day and, if he had a move, no order."""
    g = Game(BASE)
    checkin(g, except_=("Kate",))
    g.advance()  # day 0: Kate did not check in...
    g.night("Kate", "C1")
    g.advance()  # ...but ordered in night 0: turn 0 not missed
    assert g.p("Kate").turns[-1].missed is False
    assert g.p("C2").turns[-1].missed is False


def test_misses_are_judged_when_the_night_closes_and_announced_in_the_morning() -> None:
    """Two turns in a row missed: removed at the end of the second turn's night, in the
    morning report, with no public removal at the night's end alone."""
    g = Game(BASE)
    checkin(g, except_=("C1",))
    g.advance()  # day 0: no check-in; nothing judged yet
    assert g.p("C1").turns == []
    events = g.advance()  # night 0 closes: turn 0 missed, a private warning
    assert g.p("C1").turns[-1].missed
    warning = [e for e in events if e.kind == "turn_warning"]
    assert [e.audience.players for e in warning] == [[g.id("C1")]]
    assert warning[0].audience.kind == "players" and warning[0].data["excused"] is False
    master = [e for e in events if e.kind == "turn_missed"]
    assert master and all(e.audience.kind == "master" for e in master)
    assert master[0].data["uid"] == g.id("C1") and master[0].data["removed"] is False
    everyone_votes(g, "C2", except_=("C1",))
    events = g.advance()  # day 1 closes: still alive (the turn is not over)
    assert g.alive("C1")
    events = g.advance()  # night 1 closes: second miss in a row
    assert not g.alive("C1") and g.p("C1").death.cause == "inactive"  # type: ignore[union-attr]
    public = [e for e in events if e.audience.kind == "public"]
    assert not any(e.kind == "player_died" for e in public)
    morning = next(e for e in public if e.kind == "morning")
    assert [r["uid"] for r in morning.data["removed"]] == [g.id("C1")]


def test_two_unwarned_misses_not_in_a_row_remove() -> None:
    """"Также как и тот, кто пропустил два хода не подряд, но не предупредил мастера."""
    g = Game(BASE)
    checkin(g, except_=("C1",))
    g.advance()
    g.advance()  # turn 0 missed
    everyone_votes(g, "C2")
    g.advance()
    g.advance()  # turn 1 taken part
    everyone_votes(g, "C3", except_=("C1",))
    g.advance()
    assert g.alive("C1")
    g.advance()  # turn 2 missed: second unwarned miss
    assert g.p("C1").death.cause == "inactive"  # type: ignore[union-attr]


# --- 2. warning the master ---
def test_away_covers_the_current_and_next_turn_by_default() -> None:
    """A citizen who warns on day 1 is excused for turn 2 too (the old 'phase' window
    covered only the day he wrote it), so a turn-0 miss and a turn-2 miss leave him in."""
    g = Game(BASE)
    checkin(g, except_=("C1",))
    g.advance()
    g.advance()  # turn 0 missed, not warned
    everyone_votes(g, "C2")
    events = g.do(c.Away(by=g.id("C1"), at=g.tick(), reason="trip"))
    noted = next(e for e in events if e.kind == "away_noted")
    assert noted.audience.kind == "master" and noted.data["reason"] == "trip"
    assert noted.data["until"] == 2
    g.advance()
    g.advance()  # turn 1 taken part
    everyone_votes(g, "C3", except_=("C1",))
    g.advance()
    g.advance()  # turn 2 missed, warned
    assert g.alive("C1")
    assert [(t.missed, t.excused) for t in g.p("C1").turns] == [
        (True, False), (False, False), (True, True)]


def test_away_until_a_given_day_and_two_in_a_row_still_remove() -> None:
    """"Каждый, кто пропустил два хода подряд, исключается из игры" holds even when
    warned: the warning only excuses misses that are not in a row."""
    g = Game(BASE)
    g.do(c.Away(by=g.id("C1"), at=g.tick(), until=5, reason=None))
    checkin(g, except_=("C1",))
    g.advance()
    g.advance()  # turn 0 missed (warned)
    everyone_votes(g, "C2", except_=("C1",))
    g.advance()
    g.advance()  # turn 1 missed in a row: out, whatever the warning
    assert g.p("C1").death.cause == "inactive"  # type: ignore[union-attr]


def test_away_until_a_past_day_is_refused() -> None:
    g = Game(BASE)
    g.to_night(0)
    g.advance()
    with pytest.raises(RuleError) as err:
        g.do(c.Away(by=g.id("C1"), at=g.tick(), until=0))
    assert err.value.code == "away_until_past"


# --- 3. the sergeant does not know the investigator ---
EXTRA = {**BASE, "Oleg": "operative"}


def test_sergeant_card_names_nobody_and_investigator_card_names_him() -> None:
    """"Следователь знает сержанта. Остальные игроки друг друга не знают." (one way);
    the operative "знает следователя и следователь знает его"."""
    g = Game(EXTRA, Options(extra_roles=True))
    assert card(g.state, g.id("Serg")).mates == []
    assert {m.uid for m in card(g.state, g.id("Ivan")).mates} == {g.id("Serg"), g.id("Oleg")}
    assert {m.uid for m in card(g.state, g.id("Oleg")).mates} == {g.id("Ivan")}
    assert set(teams(g.state)["police"]) == {g.id("Ivan"), g.id("Oleg")}
    assert "police" not in card(g.state, g.id("Serg")).teams


def test_sergeant_joins_the_police_when_promoted_and_meets_the_operative() -> None:
    """"Становясь следователем, сержант узнает опера, равно как и опер его.\""""
    g = Game(EXTRA, Options(extra_roles=True))
    g.to_night(0)
    g.advance()
    everyone_votes(g, "Ivan")
    events = g.advance()
    police = [e for e in events if e.kind == "team_changed" and e.data["team"] == "police"]
    assert g.id("Serg") in police[-1].data["members"]
    assert g.id("Serg") in known_to(g.state, g.id("Oleg"))
    assert g.id("Oleg") in known_to(g.state, g.id("Serg"))


def test_master_option_sergeant_shares_the_police_channel() -> None:
    g = Game(BASE, Options(sergeant_in_police=True))
    assert set(teams(g.state)["police"]) == {g.id("Ivan"), g.id("Serg")}
    assert g.id("Ivan") in known_to(g.state, g.id("Serg"))


def test_share_reaches_the_sergeant_privately_without_the_name() -> None:
    """"следователь имеет право передать сержанту всю имеющуюся у него информацию"."""
    g = Game(BASE)
    g.to_night(0)
    g.advance()
    everyone_votes(g, "C1")
    g.advance()
    g.night("Ivan", "Vito")
    g.advance()
    events = g.do(c.Share(by=g.id("Ivan"), at=g.tick(), note="watch Vito"))
    assert [(e.kind, e.audience.kind, e.audience.players) for e in events] == [
        ("log_shared", "players", [g.id("Serg")])]
    data = events[0].data
    assert g.id("Ivan") not in {v for v in data.values() if isinstance(v, int)}
    assert data["note"] == "watch Vito" and data["checks"][0]["role"] == "mafioso"
    assert {n.kind for n in g.p("Serg").notices} >= {"shared_check", "police_note"}


# --- 4. the dying investigator's last check ------------------------------------------------
def _investigator_shot_after_checking(options: Options | None = None) -> Game:
    g = Game(BASE, options)
    g.to_night(0)
    g.advance()
    everyone_votes(g, "C1")
    g.advance()
    g.night("Ivan", "Vito")
    g.night("Kate", "Ivan")
    g.night(acting(g), "C2")
    g.advance()
    assert not g.alive("Ivan")
    return g


def test_whole_check_log_passes_including_the_nights_check() -> None:
    """"в случае выбывания следователя становится следователем"; the investigator acts
    before the dice ("первым ходит вышибала, потом следователь"), so his check of the
    night he is shot is carried out and passes to the new investigator."""
    g = _investigator_shot_after_checking()
    serg = g.p("Serg")
    assert serg.role is not None and serg.role.value == "investigator"
    assert any(n.kind == "shared_check" and n.data["target"] == g.id("Vito")
               for n in serg.notices)
    inherited = [e for e in g.events if e.kind == "log_inherited"]
    assert inherited[-1].audience.players == [g.id("Serg")]


def test_master_option_only_what_he_chose_to_send() -> None:
    g = _investigator_shot_after_checking(Options(inherit_checks=False))
    assert not any(n.kind == "shared_check" for n in g.p("Serg").notices)


# --- 5. Shout ---------------------------------------------------------------------------------
def test_second_shout_on_the_same_vote_adds_another_base_weight() -> None:
    """"Крик – ... Приводит к весу голоса на базовую стоимость ... Не может быть
    использовано чаще двух раз в день." Each Shout is +1, also on the same vote."""
    g = Game({**BASE, "C4": "citizen"}, SHOP)
    g.fund(150)
    g.to_night(0)
    quiet_night(g)
    g.vote("C1", "Don", shout=True)
    g.vote("C1", "Don", shout=True)
    assert tally(g.state).totals == {g.id("Don"): 6}  # 1 + 1 + 1 votes, in halves
    assert g.wallet is not None and g.wallet[g.id("C1")] == 140
    with pytest.raises(RuleError) as err:
        g.vote("C1", "Don", shout=True)
    assert err.value.code == "spell_limit"


def test_shout_on_a_final_vote_does_not_change_it() -> None:
    """With final votes (master option) a Shout on the standing vote is still a Shout."""
    g = Game({**BASE, "C4": "citizen"}, Options(currency=True, shop=True, votes_final=True))
    g.fund(150)
    g.to_night(0)
    quiet_night(g)
    g.vote("C1", "Don")
    g.vote("C1", "Don", shout=True)
    assert tally(g.state).totals == {g.id("Don"): 4}
    with pytest.raises(RuleError) as err:
        g.vote("C1", "Vito", shout=True)
    assert err.value.code == "votes_final"


# --- 6. nothing charged once the game has ended ---
def test_evening_order_after_a_game_ending_lynch_is_not_charged() -> None:
    g = Game({"Don": "mafioso:1", "Ivan": "investigator", "C1": "citizen", "C2": "citizen",
              "C3": "citizen", "C4": "citizen"}, SHOP)
    g.fund(100)
    g.to_night(0)
    g.night("Don", "C4")
    g.advance()
    g.do(c.Buy(by=g.id("C1"), at=g.tick(), item="alarm_clock", if_hanged=g.id("Don")))
    everyone_votes(g, "Don")
    events = g.advance()
    assert g.state.phase is PhaseKind.ENDED
    assert "purchase" not in g.kinds(events)
    assert g.wallet is not None and g.wallet[g.id("C1")] == 100
    assert g.state.inventory.get(g.id("C1"), []) == []


# --- 7. day spells bought in the evening ---
def test_sleep_bought_at_night_works_from_the_opening_of_the_next_day() -> None:
    """"Вещи и заклинания ... можно покупать вечером. То есть, перед ночью, но с
    использованием информации об итогах дня": Sleep bought in the evening acts from the
    next day's opening, before the target can vote."""
    g = Game({**BASE, "C4": "citizen"}, SHOP)
    g.fund(150)
    g.to_night(0)
    g.do(c.Cast(by=g.id("C1"), at=g.tick(), spell="sleep", target=g.id("C2")))
    quiet_night(g)
    g.vote("C2", "Don")
    assert tally(g.state).totals == {}
    g.vote("C2", "Vito")  # a second vote counts (Sleep takes one)
    assert tally(g.state).totals == {g.id("Vito"): 2}


@pytest.mark.parametrize(("condition", "hanged", "carried"), [
    ({"if_hanged": "C3"}, "C3", True), ({"if_hanged": "C3"}, "C4", False),
    ({"unless_hanged": "C3"}, "C4", True), ({"unless_hanged": "C3"}, "C3", False),
    ({"if_nobody_hanged": True}, None, True), ({"if_nobody_hanged": True}, "C3", False),
])
def test_conditional_day_spell_ordered_by_day_acts_the_next_day(
        condition: dict[str, object], hanged: str | None, carried: bool) -> None:
    """"с возможностью заказывать их в условной форме вида: «Если произойдет событие А, то
    покупаю вещь Б»": if X is hanged, if X is not hanged, if nobody is hanged."""
    g = Game({**BASE, "C4": "citizen"}, SHOP)
    g.fund(150)
    g.to_night(0)
    quiet_night(g)
    cond = {k: (g.id(v) if isinstance(v, str) else v) for k, v in condition.items()}
    g.do(c.Cast(by=g.id("C1"), at=g.tick(), spell="silence", target=g.id("C2"),
                **cond))  # type: ignore[arg-type]
    assert g.wallet is not None and g.wallet[g.id("C1")] == 150
    if hanged is not None:
        everyone_votes(g, hanged, except_=("C1",))
    g.advance()
    assert (g.wallet[g.id("C1")] == 142) is carried
    quiet_night(g)
    g.vote("C2", "Don")
    assert (tally(g.state).totals == {}) is carried


def test_two_conditions_at_once_are_refused() -> None:
    g = Game({**BASE, "C4": "citizen"}, SHOP)
    g.fund(150)
    g.to_night(0)
    quiet_night(g)
    with pytest.raises(RuleError) as err:
        g.do(c.Buy(by=g.id("C1"), at=g.tick(), item="alarm_clock", if_hanged=g.id("C2"),
                   if_nobody_hanged=True))
    assert err.value.code == "one_condition"


# --- 8. a kicked vote leader ---
def test_kicked_vote_leader_is_never_recorded_as_hanged() -> None:
    """"Набравший по итогам дня больше всех голосов игрок будет выведен из игры": a player
    the master removed is not among them; his votes and the votes for him drop out."""
    g = Game({**BASE, "C4": "citizen"}, SHOP)
    g.fund(150)
    g.to_night(0)
    quiet_night(g)
    g.do(c.Buy(by=g.id("C4"), at=g.tick(), item="alarm_clock", if_hanged=g.id("C1")))
    for n in ("Don", "Vito", "Ivan"):
        g.vote(n, "C1")
    g.vote("C1", "C2")
    g.vote("Bob", "C3")
    g.do(c.Kick(by=MASTER, at=g.tick(), target=g.id("C1")))
    g.advance()
    day = g.state.days[-1]
    assert day.hanged == g.id("C3")  # decided among the others: C1's vote for C2 is out
    assert g.id("C1") not in day.votes and g.id("C1") not in day.votes.values()
    assert g.id("C1") not in day.tally
    assert g.p("C1").death.cause == "kicked"  # type: ignore[union-attr]
    assert g.wallet is not None and g.wallet[g.id("C4")] == 150  # not carried out


# --- 9. composition ---
def _lobby(n: int, roles: str) -> Game:
    g = Game.__new__(Game)
    g.names = [f"P{i}" for i in range(n)]
    g.ids = {name: 100 + i for i, name in enumerate(g.names)}
    from tests.engine.scenario import T0

    g.clock, g.events, g.wallet = T0, [], None
    from core.game.engine import create_game

    g.state = create_game(seed=7, master=MASTER, title="t")
    for name in g.names:
        g.do(c.Join(by=g.ids[name], at=g.clock, name=name))
    g.do(c.Configure(by=MASTER, at=g.clock, roles=roles))
    return g


def test_rival_clans_at_half_the_players_start_after_confirmation() -> None:
    """"Задача отрицательных героев – уничтожить всех, кроме представителей своего
    клана": two clans at half the table have not won; the start only asks to confirm."""
    g = _lobby(8, "clan A: mafioso x2; clan B: mafioso x2; investigator")
    roles_set = next(e for e in g.events if e.kind == "roles_set")
    assert roles_set.data["lopsided"] is True
    with pytest.raises(RuleError) as err:
        g.do(c.Start(by=MASTER, at=g.clock))
    assert err.value.code == "setup_lopsided"
    g.do(c.Start(by=MASTER, at=g.clock, confirm=True))
    assert g.state.phase is PhaseKind.DAY


def test_a_composition_already_won_is_refused() -> None:
    g = _lobby(6, "mafioso")
    g.state.roles_text = "mafioso x6"
    with pytest.raises(RuleError) as err:
        g.do(c.Start(by=MASTER, at=g.clock, confirm=True))
    assert err.value.code == "setup_already_won"


@pytest.mark.parametrize(("roles", "code"), [
    ("investigator; citizen x3", "setup_no_mafia"),
    ("mafioso x31", "setup_bad_count"),
    ("mafioso x20; mafioso x11", "setup_too_many_roles"),
    ("mafioso x6", "setup_already_won"),
])
def test_setup_is_refused_when_written_in_the_starts_words(roles: str, code: str) -> None:
    """Issue 19: /game setup refuses at once what /game start would refuse."""
    g = _lobby(6, "mafioso")
    with pytest.raises(RuleError) as err:
        g.do(c.Configure(by=MASTER, at=g.clock, roles=roles))
    assert err.value.code == code
    g.state.roles_text = roles
    with pytest.raises(RuleError) as start_err:
        g.do(c.Start(by=MASTER, at=g.clock, confirm=True))
    assert start_err.value.code == err.value.code or code == "setup_too_many_roles"


# --- random games: removals only ever come with a morning ---
@pytest.mark.parametrize("seed", range(12))
def test_random_games_announce_removals_only_in_the_morning(seed: int) -> None:
    """Point 1 over whole random games (low activity, so players do miss turns)."""
    from core.play import sim

    table = sim.Table(seed, 10, Options(extra_roles=True, currency=True, shop=True))
    table.send(c.Start(by=sim.MASTER, at=table.clock, confirm=True))
    for _ in range(60):
        if table.state.over:
            break
        sim.random_phase(table, activity=0.6)
    events = table.played.events
    assert not any(e.kind == "player_died" and e.data["cause"] == "inactive" for e in events)
    in_morning = {r["uid"] for e in events if e.kind == "morning" for r in e.data["removed"]}
    inactive = {p.uid for p in table.state.players
                if p.death is not None and p.death.cause == "inactive"}
    assert inactive == in_morning
    for p in table.state.players:
        if p.death is not None and p.death.cause == "inactive":
            assert p.death.phase is PhaseKind.NIGHT
