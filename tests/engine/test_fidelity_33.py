"""Issue 33, rules fidelity third round: one test (or a few) per point, each written from
the original's words (quoted in the docstrings; /work/shared/rules/original-ru.txt)."""

from __future__ import annotations

import pytest

from core.game import commands as c
from core.game.engine import apply
from core.game.errors import RuleError
from core.game.events import Event
from core.game.rules.voting import tally
from core.game.state import Options
from core.sight.desk import desk_text, master_log
from core.sight.narrate import describe
from tests.engine.scenario import MASTER, Game
from tests.engine.test_fidelity import BASE, SHOP, acting, quiet_night


def _names(g: Game):  # type: ignore[no-untyped-def]
    by_id = {v: k for k, v in g.ids.items()}
    return lambda uid: by_id.get(uid, str(uid))


def _public(events: list[Event], kind: str) -> list[Event]:
    return [e for e in events if e.kind == kind and e.public]


# --- S26: the Shout is said in the vote post ----------------------------------------------
def test_a_shouted_vote_says_so_in_its_public_post() -> None:
    """"Крик – применяется в явном виде в посте по ходу голосования." The Shout is a public
    act made in the vote post itself: the public vote event carries it and its words say
    the vote was shouted, in both languages."""
    g = Game({**BASE, "C4": "citizen"}, SHOP)
    g.fund(150)
    g.to_night(0)
    quiet_night(g)
    plain, = _public(g.vote("C2", "Don"), "vote_cast")
    shouted, = _public(g.vote("C1", "Don", shout=True), "vote_cast")
    assert plain.data["shout"] is False and shouted.data["shout"] is True
    assert shouted.data["again"] is False
    names = _names(g)
    assert describe(shouted, names, "en") == (
        "C1 votes against Don with a Shout (total against: 3 votes).")
    assert "с Криком голосует против игрока Don" in describe(shouted, names, "ru")
    assert "Shout" not in describe(plain, names, "en")


def test_a_second_shout_on_the_standing_vote_reads_as_a_shout_not_a_new_vote() -> None:
    """"Не может быть использовано чаще двух раз в день": a second Shout on the vote that
    stands is one more Shout in the post, not a repeated vote."""
    g = Game({**BASE, "C4": "citizen"}, SHOP)
    g.fund(150)
    g.to_night(0)
    quiet_night(g)
    g.vote("C1", "Don", shout=True)
    again, = _public(g.vote("C1", "Don", shout=True), "vote_cast")
    assert again.data["shout"] is True and again.data["again"] is True
    names = _names(g)
    assert describe(again, names, "en") == (
        "C1 backs the vote against Don with another Shout (total against: 3 votes).")
    assert "ещё одним Криком" in describe(again, names, "ru")
    assert "голосует" not in describe(again, names, "ru")


def test_a_ghosts_shout_is_a_ghosts_shout() -> None:
    """"Крик – ... (то есть на 1 для всех, кроме призраков, для последних 0,5)": the ghost's
    shouted vote says both that it is a ghost's and that it was shouted."""
    g = Game({**BASE, "Olga": "occultist"}, Options(currency=True, shop=True,
                                                       extra_roles=True))
    g.fund(150)
    g.to_night(0)
    g.night("Don", "C1")
    g.advance()
    assert not g.alive("C1")
    ev, = _public(g.vote("C1", "Vito", shout=True), "vote_cast")
    assert ev.data["ghost"] is True and ev.data["shout"] is True
    assert describe(ev, _names(g), "en") == (
        "The ghost of C1 votes against Vito with a Shout (total against: 1 vote).")


def test_an_old_log_without_the_field_reads_as_a_plain_vote() -> None:
    """Events stored before the field existed still render (the log is kept forever)."""
    ev = Event(kind="vote_cast", data={"voter": 1, "target": 2, "ghost": False,
                                       "previous": None, "total": 2})
    assert describe(ev, str, "en") == "1 votes against 2 (total against: 1 vote)."


# --- public_move: neither the checker nor his role ---------------------------------------
def test_a_public_move_names_neither_the_checker_nor_which_role_checked() -> None:
    """"Адвокат и следователь имеют право объявить публичный ход." The announcement is the
    check (night, target, role); the investigator's and the advocate's read alike, so the
    public event carries no field telling them apart."""
    g = Game({**BASE, "Adam": "advocate:1"}, Options(crypto=True, public_moves=True,
                                                    extra_roles=True))
    g.to_night(0)
    g.night("Adam", "C1")  # the advocate checks from night 0
    g.advance()
    g.advance()  # day 1: nobody voted, nobody hanged
    g.night("Ivan", "C2")
    g.advance()
    moves = [e for who in ("Adam", "Ivan")
             for e in g.do(c.Reveal(by=g.id(who), at=g.tick())) if e.kind == "public_move"]
    assert [e.public for e in moves] == [True, True]
    assert [sorted(e.data) for e in moves] == [["night", "role", "target"]] * 2
    assert [e.data["target"] for e in moves] == [g.id("C1"), g.id("C2")]


# --- K11: the master and a whisper's sender ------------------------------------------------
def _history(g: Game, cmds: list[c.Command]) -> list[tuple[int, c.Command, list[Event]]]:
    return [(i, cmd, g.do(cmd)) for i, cmd in enumerate(cmds)]


@pytest.mark.parametrize("sees", [False, True])
def test_the_master_log_names_a_whispers_sender_only_when_the_option_says_so(
        sees: bool) -> None:
    """"Каждый игрок имеет право делать тайные послания на роль (роли). По тем же правилам,
    что и открытые послания" (which go "через мастера"). RULES.md §11: the master sees the
    sender only with the option `master_sees_anon`; off, neither the desk nor `/master log`
    (filtered by the sender, or whole) points at him."""
    g = Game(BASE, Options(crypto=True, master_sees_anon=sees))
    sender = g.id("C1")
    history = _history(g, [
        c.Whisper(by=sender, at=g.tick(), role="investigator", text="Don is the one"),
        c.Anon(by=sender, at=g.tick(60), text="I saw it"),
    ])
    mine = master_log(history, player=sender)
    assert bool(mine) == sees
    assert [e.event.kind for e in mine] == (["anon_sender", "anon_sender"] if sees else [])
    whole = [e.event.kind for e in master_log(history)]
    assert "whisper_sent" not in whole and "whisper" in whole and "anon_post" in whole
    assert all(sender not in e.event.audience.players and sender not in e.event.data.values()
               for e in master_log(history) if e.event.kind != "anon_sender")


# --- S34: Sleep and Silence reach ghost voters -----------------------------------------------
GHOSTS = {**BASE, "Olga": "occultist"}
GHOST_SHOP = Options(currency=True, shop=True, extra_roles=True)


def _ghost_day() -> Game:
    """Day 1 with the occultist alive and C1 killed in night 0: C1 is a ghost voter."""
    g = Game(GHOSTS, GHOST_SHOP)
    g.fund(150)
    g.to_night(0)
    g.night("Don", "C1")
    g.advance()
    assert not g.alive("C1") and g.alive("Olga")
    return g


def _cast(g: Game, who: str, spell: str, target: str) -> list[Event]:
    return g.do(c.Cast(by=g.id(who), at=g.tick(), spell=spell, target=g.id(target)))


def test_silence_on_a_ghost_voids_the_ghosts_vote() -> None:
    """"Оккультист – ... Покуда игрок жив, все погибшие имеют право голоса, хотя оно и
    оценивается как пол голоса." "Немота – приводит к тому, что ни один голос игрока не
    засчитывается в этот день." A ghost has a vote, so Silence reaches it (the Shout's
    clause itself weighs ghosts' votes: "для последних 0,5")."""
    g = _ghost_day()
    g.vote("C1", "Vito")
    assert tally(g.state).totals == {g.id("Vito"): 1}
    _cast(g, "Kate", "silence", "C1")
    assert tally(g.state).totals == {}


def test_sleep_on_a_ghost_that_has_not_voted_voids_its_next_vote() -> None:
    """"Усыпление – приводит к тому, что голос (один) еще не проголосовавшего игрока не
    засчитывается." The ghost has not voted yet: its next vote does not count."""
    g = _ghost_day()
    _cast(g, "Kate", "sleep", "C1")
    g.vote("C1", "Vito")
    assert tally(g.state).totals == {}
    assert any(e.kind == "spell_on_you" and e.audience.players == [g.id("C1")]
               for e in g.events)


def test_free_speech_reaches_a_ghost_too() -> None:
    """"Свобода слова – защищает от одного заклинания «Усыпление» или «Немота»": what
    Silence reaches, Free speech protects."""
    g = _ghost_day()
    _cast(g, "Kate", "silence", "C1")
    _cast(g, "C2", "free_speech", "C1")
    g.vote("C1", "Vito")
    assert tally(g.state).totals == {g.id("Vito"): 1}


def test_a_dead_player_without_a_vote_is_refused_as_having_no_vote() -> None:
    """Without a vote (the occultist's exclusion, "имеет право указать мастеру, кого из
    мертвых не стоит засчитывать") Sleep and Silence have nothing to act on: refused with
    "no vote", not "dead", and nothing is charged. Night spells still need the living."""
    g = _ghost_day()
    g.do(c.OccultExclude(by=g.id("Olga"), at=g.tick(), target=g.id("C1")))
    before = g.state.model_dump_json()
    for spell in ("sleep", "silence", "free_speech"):
        with pytest.raises(RuleError) as err:
            _cast(g, "Kate", spell, "C1")
        assert err.value.code == "target_no_vote"
    assert g.state.model_dump_json() == before
    with pytest.raises(RuleError) as err:
        _cast(g, "Kate", "helplessness", "C1")
    assert err.value.code == "target_dead"


def test_without_the_occultist_the_dead_have_no_vote_to_silence() -> None:
    g = Game(BASE, SHOP)
    g.fund(150)
    g.to_night(0)
    g.night("Don", "C1")
    g.advance()
    with pytest.raises(RuleError) as err:
        _cast(g, "Kate", "silence", "C1")
    assert err.value.code == "target_no_vote"


# --- N27: a bouncer killed earlier in the night ---------------------------------------------
def dice_order(g: Game, first: str, then: str) -> list[Event]:
    """Close the night with `first` moving before `then` in the dice order: the dice are
    drawn from the seed and the command counter, so the master extends the night (a
    command that changes nothing else) until they fall that way. Returns the events."""
    for _ in range(50):
        out = apply(g.state, c.Advance(by=MASTER, at=g.clock))
        night = next(e for e in out.events if e.kind == "night_explained")
        seq = night.data["steps"][0]["actors"]
        if seq.index(g.id(first)) < seq.index(g.id(then)):
            return g.advance()
        g.do(c.Extend(by=MASTER, at=g.tick(), minutes=1))
    raise AssertionError("the dice never fell that way")


def _club_night(first: str, then: str) -> tuple[Game, list[Event]]:
    """Night 0: Bob protects C1 with a spiked club; Kate kills Bob; Don attacks C1."""
    g = Game(BASE, SHOP)
    g.fund(150)
    g.to_night(0)
    g.do(c.Buy(by=g.id("Bob"), at=g.tick(), item="spiked_club"))
    g.night("Bob", "C1")
    g.night("Kate", "Bob")
    g.night("Don", "C1")
    return g, dice_order(g, first, then)


def test_a_bouncer_killed_earlier_still_protects_but_swings_no_club() -> None:
    """"первым ходит вышибала": his protection was given before anybody else moved, so it
    holds all night even once he is killed. "Шипованная дубина – позволяет вышибале убить
    первого ролевика, атаковавшего на его защиту": the bouncer kills, and a bouncer killed
    earlier in the order moves no more (RULES.md §4), so the club does not strike."""
    g, events = _club_night("Kate", "Don")
    assert not g.alive("Bob") and g.alive("C1")  # the protection held...
    assert g.alive("Don")  # ...the dead bouncer's club did not strike
    assert any(e.kind == "action_failed" and e.audience.players == [g.id("Don")]
               for e in events)
    night = next(e for e in events if e.kind == "night_explained")
    steps = [s["step"] for s in night.data["steps"]]
    assert "club_dead" in steps and "club" not in steps
    assert "killed earlier this night, but the protection holds" in desk_text(
        night, _names(g), "en")


def test_a_living_bouncers_club_strikes_the_first_attacker() -> None:
    """The same night with Don before Kate: the bouncer is alive when Don attacks."""
    g, _ = _club_night("Don", "Kate")
    assert not g.alive("Bob") and g.alive("C1")
    assert not g.alive("Don") and g.p("Don").death.cause == "spiked"  # type: ignore[union-attr]


# --- N19 / S32: the acting mafioso removed or helpless during his night --------------------
CLAN3 = {**BASE, "Mike": "mafioso:1"}


def test_the_clans_move_passes_when_the_acting_mafioso_is_removed_in_his_night() -> None:
    """"Мафиози пронумерованы внутри клана и ночные ходы выполняют в порядке нумерации за
    вычетом погибших." The acting mafioso removed during his night is no longer in the
    count: the next number moves that night, the clan is told, and the rotation goes on
    from him ("если к моменту третьей ночи мафиози №3 уже выбудет из игры, то настанет ход
    мафиози №1")."""
    g = Game(CLAN3)
    g.to_night(0)
    g.night("Don", "C1")  # his order goes with him
    events = g.do(c.Kick(by=MASTER, at=g.tick(), target=g.id("Don")))
    assert g.state.clans[0].acting == g.id("Vito")
    told, = [e for e in events if e.kind == "clan_turn"]
    assert told.audience.kind == "team" and str(told.audience.team) == "clan:1"
    assert told.data == {"actor": g.id("Vito"), "night": 0, "passed": g.id("Don")}
    assert describe(told, _names(g), "en") == (
        "Don is out of the game: the clan's move in night 0 passes to Vito.")
    g.night("Vito", "C2")
    g.advance()
    assert not g.alive("C2") and g.alive("C1")
    g.advance()  # day 1 to night 1: the number after Vito, Mike
    assert g.state.clans[0].acting == g.id("Mike")


def test_a_helpless_acting_mafioso_keeps_the_turn_and_the_clan_has_no_kill() -> None:
    """"Беспомощность – ... мешает ролевикам использовать свои дополнительные возможности
    следующей ночью": the helpless mafioso is alive, so «за вычетом погибших» does not skip
    him; the move does not pass (the spell is bought to stop that very move) and the
    others are still told it is his turn."""
    g = Game(CLAN3, SHOP)
    g.fund(150)
    g.to_night(0)
    _cast(g, "Kate", "helplessness", "Don")
    with pytest.raises(RuleError) as err:
        g.night("Don", "C1")
    assert err.value.code == "helpless_night"
    with pytest.raises(RuleError) as err:
        g.night("Vito", "C1")
    assert err.value.code == "not_your_turn" and err.value.params["acting"] == g.id("Don")
    g.advance()
    assert all(g.alive(n) for n in ("C1", "C2", "C3"))


# --- V7: a leader removed mid-day, told at the master's desk -------------------------------
def test_the_desk_says_how_the_day_stands_when_the_master_removes_its_leader() -> None:
    """"Набравший по итогам дня больше всех голосов игрок будет выведен из игры. При
    равенстве количества голосов вешают того, кто набрал свои голоса первым." The leader
    removed mid-day leaves five players at one vote each: the first one voted for would be
    hanged on one vote. The master is told so on his desk when he removes him."""
    g = Game({**BASE, "C4": "citizen"})
    g.to_night(0)
    quiet_night(g)
    for voter in ("Don", "Vito", "Ivan"):
        g.vote(voter, "Kate")  # the leader: 3 votes
    for voter, target in (("C1", "C2"), ("C2", "C3"), ("C3", "C4"), ("C4", "Bob"),
                          ("Bob", "Ivan")):
        g.vote(voter, target)  # five players at one vote each, C2 first
    events = g.do(c.Kick(by=MASTER, at=g.tick(), target=g.id("Kate")))
    note, = [e for e in events if e.kind == "desk_day_kick"]
    assert note.audience.kind == "master" and not any(
        e.kind == "desk_day_kick" for e in events if e.audience.kind != "master")
    five = [g.id(n) for n in ("C2", "C3", "C4", "Bob", "Ivan")]
    assert note.data["tied"] == five and note.data["leader"] == g.id("C2")
    text = desk_text(note, _names(g), "en")
    assert "The votes cast by Kate and the votes against Kate no longer count" in text
    assert "if the day ended now, C2 would be hanged" in text
    assert "hanged on a single vote" in text
    assert "повесят того, против кого проголосовали первым, — за один голос" in desk_text(
        note, _names(g), "ru")
    g.advance()
    assert not g.alive("C2") and g.state.days[-1].tally[g.id("C2")] == 2


def test_no_desk_note_for_a_removal_outside_a_voting_day() -> None:
    g = Game(BASE)
    g.to_night(0)
    events = g.do(c.Kick(by=MASTER, at=g.tick(), target=g.id("C1")))
    assert not any(e.kind == "desk_day_kick" for e in events)


# --- E7: the operative and the mafia shoot the same citizen --------------------------------
@pytest.mark.parametrize("operative_first", [True, False])
def test_an_operative_sharing_a_citizens_death_is_benched_in_either_dice_order(
        operative_first: bool) -> None:
    """"При убийстве честного жителя или положительного героя теряет право стрелять на
    следующую ночь (только одну)." Two unblocked shots at one citizen are both his killing
    (he dies once, both are credited: RULES.md §4), so the operative is benched whichever
    of the two the dice put first: a penalty decided by the dice would be a lottery."""
    g = Game({**BASE, "C4": "citizen", "Otto": "operative"}, Options(extra_roles=True))
    g.to_night(0)
    quiet_night(g)
    g.advance()  # day 1: nobody hanged
    mafioso = acting(g)
    g.night("Otto", "C1")
    g.night(mafioso, "C1")
    first, then = ("Otto", mafioso) if operative_first else (mafioso, "Otto")
    events = dice_order(g, first, then)
    assert not g.alive("C1")
    assert sorted(g.p("C1").death.by) == sorted([g.id("Otto"), g.id(mafioso)])  # type: ignore[union-attr]
    assert g.state.operative_bad_kills == {g.id("Otto"): 1}
    benched, = [e for e in events if e.kind == "operative_benched"]
    assert benched.audience.players == [g.id("Otto")] and benched.data == {"night": 2}
    g.advance()  # night 2: no shot for him
    with pytest.raises(RuleError) as err:
        g.night("Otto", "C2")
    assert err.value.code == "no_move_tonight"
