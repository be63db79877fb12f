"""Who owes his turn, reminders (scheduled and /master prod), the call to action in
phase announcements, the live tally view and the optional early end of the night."""

from __future__ import annotations

from datetime import timedelta

import pytest

from core.game import commands as c
from core.game.errors import RuleError
from core.game.events import Event
from core.game.rules.owing import all_moves_in, owing, reminder_at
from core.game.state import Options, PhaseKind
from core.sight.narrate import describe
from core.sight.visibility import closed_tally, live_tally
from core.text.i18n import t

from .scenario import MASTER, Game

ROLES = {
    "Mafia": "mafioso:1", "Inv": "investigator", "Bouncer": "bouncer", "Killer": "killer",
    "Cit1": "citizen", "Cit2": "citizen", "Cit3": "citizen",
}


def game(**options: object) -> Game:
    return Game(ROLES, Options.model_validate(options))


def ids(g: Game, *names: str) -> list[int]:
    return [g.id(n) for n in names]


def remind(g: Game, *, scheduled: bool, at: object = None) -> list[Event]:
    return g.do(c.Remind(by=0 if scheduled else MASTER, at=at or g.tick(), scheduled=scheduled))


# --- who owes ------------------------------------------------------------------------
def test_day_zero_owes_the_check_in() -> None:
    g = game()
    assert owing(g.state) == ids(g, *g.names)
    g.do(c.CheckIn(by=g.id("Cit1"), at=g.tick()))
    assert g.id("Cit1") not in owing(g.state)
    assert len(owing(g.state)) == len(g.names) - 1


def test_voting_day_owes_a_standing_vote_and_the_dead_owe_nothing() -> None:
    g = game()
    g.to_night(0)
    g.advance()  # day 1
    assert owing(g.state) == ids(g, *g.names)
    g.vote("Cit1", "Cit2")
    g.vote("Cit2", "Cit1")
    g.unvote("Cit2")  # a withdrawn vote is no vote
    assert g.id("Cit1") not in owing(g.state)
    assert g.id("Cit2") in owing(g.state)
    g.do(c.Kick(by=MASTER, at=g.tick(), target=g.id("Cit3")))  # removed: owes nothing
    assert g.id("Cit3") not in owing(g.state)


def test_night_owes_only_players_with_a_move() -> None:
    g = game()
    g.to_night(0)
    # Night 0: the investigator has no move yet, citizens never have one.
    assert owing(g.state) == ids(g, "Mafia", "Bouncer", "Killer")
    g.night("Mafia", "Cit1")
    assert owing(g.state) == ids(g, "Bouncer", "Killer")
    assert not all_moves_in(g.state)


def test_an_order_given_by_day_counts_for_the_coming_night() -> None:
    g = game()
    g.checkin_all()
    g.night("Killer", "Cit1")  # day 0, for night 0
    g.advance()
    assert g.state.phase is PhaseKind.NIGHT
    assert g.id("Killer") not in owing(g.state)


def test_signup_and_ended_games_owe_nothing() -> None:
    g = game()
    g.do(c.Cancel(by=MASTER, at=g.tick()))
    assert owing(g.state) == []


# --- reminders ---------------------------------------------------------------------
def test_scheduled_reminder_is_due_lead_minutes_before_the_deadline_once() -> None:
    g = game(reminder_minutes=30)
    deadline = g.state.deadline
    assert deadline is not None
    due = reminder_at(g.state)
    assert due == deadline - timedelta(minutes=30)
    with pytest.raises(RuleError) as err:
        remind(g, scheduled=True, at=due - timedelta(seconds=1))
    assert err.value.code == "reminder_not_due"
    g.do(c.CheckIn(by=g.id("Cit1"), at=g.tick()))
    events = remind(g, scheduled=True, at=due)
    private = [e for e in events if e.kind == "reminder"]
    assert [e.audience.kind for e in private] == ["players"] * (len(g.names) - 1)
    assert sorted(u for e in private for u in e.audience.players) == sorted(
        uid for uid in g.ids.values() if uid != g.id("Cit1"))
    assert all(e.data["what"] == "checkin" for e in private)
    public = [e for e in events if e.public]
    assert [e.kind for e in public] == ["reminder_public"]
    assert g.id("Cit1") not in public[0].data["owing"]
    assert reminder_at(g.state) is None  # sent: not again for this deadline
    with pytest.raises(RuleError):
        remind(g, scheduled=True, at=due + timedelta(minutes=1))
    g.do(c.Extend(by=MASTER, at=g.tick(), minutes=60))  # a new deadline, a new reminder
    assert reminder_at(g.state) == deadline + timedelta(minutes=30)


def test_night_reminder_is_private_and_names_nobody_in_public() -> None:
    g = game()
    g.to_night(0)
    g.night("Mafia", "Cit1")
    events = remind(g, scheduled=False)
    assert not [e for e in events if e.public]
    private = [e for e in events if e.kind == "reminder"]
    assert [e.audience.players for e in private] == [[g.id("Bouncer")], [g.id("Killer")]]
    master = [e for e in events if e.audience.kind == "master"]
    assert master[0].data["owing"] == ids(g, "Bouncer", "Killer")


def test_reminders_off_and_lead_longer_than_the_phase() -> None:
    assert reminder_at(game(reminder_minutes=0).state) is None
    g = game(reminder_minutes=24 * 60)  # the whole day: the announcement says it all
    assert reminder_at(g.state) is None


def test_prod_is_the_masters_and_needs_a_running_phase() -> None:
    g = game()
    with pytest.raises(RuleError) as err:
        g.do(c.Remind(by=g.id("Cit1"), at=g.tick()))
    assert err.value.code == "not_master"
    before = g.state.reminded
    remind(g, scheduled=False)
    assert g.state.reminded == before  # a prod does not replace the scheduled reminder
    signup = Game.__new__(Game)
    from core.game.engine import create_game

    signup.state = create_game(seed=1, master=MASTER, title="t")
    with pytest.raises(RuleError) as err:
        c_ = c.Remind(by=MASTER, at=g.tick())
        from core.game.engine import apply

        apply(signup.state, c_)
    assert err.value.code == "not_started"


def test_reminder_minutes_may_change_during_the_game_other_options_not() -> None:
    g = game()
    g.do(c.SetOptions(by=MASTER, at=g.tick(), changes={"reminder_minutes": 15}))
    assert g.state.options.reminder_minutes == 15
    with pytest.raises(RuleError) as err:
        g.do(c.SetOptions(by=MASTER, at=g.tick(), changes={"early_night": True}))
    assert err.value.code == "signup_closed"
    with pytest.raises(RuleError):
        g.do(c.SetOptions(by=MASTER, at=g.tick(), changes={"reminder_minutes": -1}))


# --- call to action ----------------------------------------------------------------
def _announcement(g: Game, lang: str) -> str:
    event = next(e for e in reversed(g.events) if e.kind == "phase_started")
    return describe(event, str, lang, lambda iso: f"<t:{iso}>")


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_every_phase_announcement_says_what_to_do_and_by_when(lang: str) -> None:
    g = game()
    deadline = g.state.deadline.isoformat()  # type: ignore[union-attr]
    checkin, vote, night_ = (f"/{t(f'cmd.{n}.name', lang)}" for n in ("checkin", "vote", "night"))
    text = _announcement(g, lang)
    assert checkin in text and text.count(f"<t:{deadline}>") == 2
    g.to_night(0)
    night = _announcement(g, lang)
    assert night_ in night and vote not in night and checkin not in night
    g.advance()
    day = _announcement(g, lang)
    assert vote in day and f"<t:{g.state.deadline.isoformat()}>" in day  # type: ignore[union-attr]


def test_night_call_to_action_is_one_public_text_for_everybody() -> None:
    g = game()
    g.to_night(0)
    started = [e for e in g.events if e.kind == "phase_started"]
    assert all(e.public for e in started)
    assert not [e for e in g.events if e.kind == "reminder"]


# --- live tally ----------------------------------------------------------------------
def test_live_tally_follows_votes_and_closes_with_the_result() -> None:
    g = game()
    g.to_night(0)
    assert live_tally(g.state) is None
    g.advance()
    tally = live_tally(g.state)
    assert tally is not None and tally.rows == [] and len(tally.not_voted) == len(g.names)
    g.vote("Cit1", "Cit2")
    g.vote("Cit3", "Cit2")
    g.vote("Cit2", "Cit1")
    tally = live_tally(g.state)
    assert tally is not None
    assert [(r.target, r.halves) for r in tally.rows] == [(g.id("Cit2"), 4), (g.id("Cit1"), 2)]
    assert g.id("Cit1") not in tally.not_voted
    before = g.state
    g.advance()
    final = closed_tally(before, g.state)
    assert final is not None and final.closed and final.hanged == g.id("Cit2")
    assert final.not_voted == []


def test_early_end_off_by_default() -> None:
    g = game()
    g.to_night(0)
    for actor, target in (("Mafia", "Cit1"), ("Bouncer", "Cit2"), ("Killer", "Cit3")):
        g.night(actor, target)
    assert all_moves_in(g.state)
    assert g.state.phase is PhaseKind.NIGHT


def test_early_end_resolves_the_night_when_the_last_order_is_in() -> None:
    g = game(early_night=True)
    g.to_night(0)
    g.night("Mafia", "Cit1")
    g.night("Bouncer", "Cit2")
    assert g.state.phase is PhaseKind.NIGHT
    events = g.night("Killer", "Cit3")
    kinds = g.kinds(events)
    assert kinds.index("orders_all_in") < kinds.index("morning") < kinds.index("phase_started")
    assert g.state.phase is PhaseKind.DAY and g.state.number == 1
    assert not g.alive("Cit1") and not g.alive("Cit3")
    end = next(e for e in events if e.kind == "orders_all_in")
    assert end.public and end.data == {"number": 0}


def test_early_end_never_fires_by_day() -> None:
    g = game(early_night=True)
    g.checkin_all()
    for actor, target in (("Mafia", "Cit1"), ("Bouncer", "Cit2"), ("Killer", "Cit3")):
        g.night(actor, target)
    assert g.state.phase is PhaseKind.DAY


def test_tally_updates_open_edit_close_and_nothing_else() -> None:
    from core.sight.visibility import tally_updates

    g = game()
    g.to_night(0)
    before = g.state
    g.advance()  # day 1 opens
    assert [op for op, _ in tally_updates(before, g.state)] == ["open"]
    before = g.state
    g.vote("Cit1", "Cit2")
    assert [op for op, _ in tally_updates(before, g.state)] == ["edit"]
    before = g.state
    g.do(c.SetOptions(by=MASTER, at=g.tick(), changes={"reminder_minutes": 5}))
    assert tally_updates(before, g.state) == []  # the count did not change
    before = g.state
    g.advance()
    ops = tally_updates(before, g.state)
    assert [op for op, _ in ops] == ["close"] and ops[0][1].hanged == g.id("Cit2")
    assert tally_updates(g.state, g.state) == []  # after the day: nothing to count


def test_a_covered_absence_is_neither_reminded_nor_listed() -> None:
    """Issue 42.3: a player who warned with /away for this turn gets no reminder and is
    not named in the public list of who has not voted; the master's list names him as
    excused, in both languages."""
    g = game(reminder_minutes=60)
    g.to_night(0)
    g.advance()  # day 1
    g.do(c.Away(by=g.id("Cit1"), at=g.tick(), reason=None))
    events = remind(g, scheduled=False)
    private = [u for e in events if e.kind == "reminder" for u in e.audience.players]
    public = next(e for e in events if e.kind == "reminder_public")
    told = next(e for e in events if e.kind == "reminded")
    assert g.id("Cit1") not in private and g.id("Cit1") not in public.data["owing"]
    assert g.id("Cit2") in private and g.id("Cit2") in public.data["owing"]
    assert told.audience.kind == "master" and told.data["away"] == [g.id("Cit1")]
    for lang in ("en", "ru"):
        text = describe(told, lambda u: f"@{u}", lang)
        assert f"@{g.id('Cit1')}" in text and t("event.reminded_away", lang, names="")[:12] \
            in text
