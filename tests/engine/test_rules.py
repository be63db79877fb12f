"""Hand-checked expectations for each base rule (RULES.md sections in the names)."""

from __future__ import annotations

import pytest

from core.game import commands as c
from core.game.errors import RuleError
from core.game.state import Options, PhaseKind
from tests.engine.scenario import MASTER, Game

BASE = {
    "Don": "mafioso:1", "Vito": "mafioso:1", "Ivan": "investigator", "Serg": "sergeant",
    "Bob": "bouncer", "Kate": "killer", "C1": "citizen", "C2": "citizen", "C3": "citizen",
}


def everyone_votes(g: Game, target: str, except_: tuple[str, ...] = ()) -> None:
    for n in g.names:
        if g.alive(n) and n not in except_ and n != target:
            g.vote(n, target)


def blocked_night(g: Game) -> None:
    """Night 0 where every move is spent and blocked: nobody dies, nobody idles."""
    g.night("Bob", "C1")
    g.night("Don", "C1")
    g.night("Kate", "C1")
    g.advance()


def scattered_votes(g: Game) -> None:
    for voter, target in (("Serg", "Bob"), ("Bob", "Kate"), ("Kate", "Serg"),
                          ("Vito", "C1"), ("Don", "C2")):
        g.vote(voter, target)


def test_tie_goes_to_who_reached_the_count_first() -> None:
    g = Game(BASE)
    g.to_night(0)
    blocked_night(g)
    assert g.state.phase is PhaseKind.DAY and g.state.number == 1
    scattered_votes(g)
    g.vote("C1", "Don")
    g.vote("C2", "Vito")
    g.vote("C3", "Vito")  # Vito reaches 2 here
    g.vote("Ivan", "Don")  # Don reaches 2 later
    g.advance()
    assert not g.alive("Vito") and g.alive("Don")
    assert g.state.days[-1].tied == [g.id("Vito"), g.id("Don")]
    assert g.state.days[-1].decider == g.id("C3")


def test_withdrawn_and_recast_vote_moves_the_moment() -> None:
    g = Game(BASE)
    g.to_night(0)
    blocked_night(g)
    scattered_votes(g)
    g.vote("C1", "Don")
    g.vote("C2", "Vito")
    g.vote("C3", "Vito")
    g.vote("Ivan", "Don")
    g.unvote("C3")
    g.vote("C3", "Vito")  # Vito now reaches 2 after Don did
    g.advance()
    assert not g.alive("Don") and g.alive("Vito")


def test_votes_final_option_forbids_changes() -> None:
    g = Game(BASE, Options(votes_final=True))
    g.to_night(0)
    g.advance()
    g.vote("C1", "Don")
    before = g.state
    with pytest.raises(RuleError) as err:
        g.vote("C1", "Vito")
    assert err.value.code == "votes_final"
    assert g.state == before


def test_mafia_rotation_skips_the_dead() -> None:
    g = Game({**BASE, "Vito": "mafioso:1", "C3": "mafioso:1"} | {"C4": "citizen"})
    order = [g.id("Don"), g.id("Vito"), g.id("C3")]
    assert [g.p(n).rank for n in ("Don", "Vito", "C3")] == [1, 2, 3]
    g.to_night(0)
    assert g.state.clans[0].acting == order[0]  # night 0: #1
    g.advance()
    for n in g.names:  # keep everybody active on day 1, hang #3 (C3)
        if n != "C3":
            g.vote(n, "C3")
    g.vote("C3", "Don")
    g.advance()
    assert not g.alive("C3")
    assert g.state.clans[0].acting == order[1]  # night 1: #2
    g.night("Vito", "C1")
    g.advance()
    everyone_votes(g, "C2")
    g.advance()
    assert g.state.clans[0].acting == order[0]  # night 2: #3 is out, #1 acts again


def test_only_the_acting_mafioso_orders_and_never_at_his_clan() -> None:
    g = Game(BASE)
    g.to_night(0)
    before = g.state
    with pytest.raises(RuleError) as err:
        g.night("Vito", "C1")
    assert err.value.code == "not_your_turn"
    with pytest.raises(RuleError) as err:
        g.night("Don", "Vito")
    assert err.value.code == "own_clan_target"
    assert g.state == before


def test_investigator_waits_for_night_one() -> None:
    g = Game(BASE)
    g.to_night(0)
    with pytest.raises(RuleError) as err:
        g.night("Ivan", "Don")
    assert err.value.code == "no_move_tonight"
    g.advance()
    everyone_votes(g, "C1")
    g.advance()
    g.night("Ivan", "Don")
    g.advance()
    assert any(n.kind == "check" and n.data["role"] == "mafioso" for n in g.p("Ivan").notices)


def test_bouncer_blocks_every_action_and_cannot_cover_twice() -> None:
    g = Game(BASE)
    g.to_night(0)
    g.night("Bob", "C1")
    g.night("Don", "C1")
    g.night("Kate", "C1")
    g.advance()
    assert g.alive("C1")
    assert any(n.kind == "action_failed" for n in g.p("Don").notices)
    assert any(n.kind == "action_failed" for n in g.p("Kate").notices)
    assert g.state.covered[g.id("Bob")] == [g.id("C1")]
    assert g.state.saves.count((g.id("Bob"), g.id("C1"))) == 2
    everyone_votes(g, "C2")
    g.advance()
    with pytest.raises(RuleError) as err:
        g.night("Bob", "C1")
    assert err.value.code == "already_covered"


def test_protection_that_blocked_nothing_may_be_repeated() -> None:
    g = Game(BASE)
    g.to_night(0)
    g.night("Bob", "C1")
    g.advance()
    everyone_votes(g, "C2")
    g.advance()
    g.night("Bob", "C1")  # accepted: nothing was blocked the first time


def test_bouncer_blocks_checks_too() -> None:
    g = Game(BASE)
    g.to_night(0)
    g.advance()
    everyone_votes(g, "C1")
    g.advance()
    g.night("Bob", "Don")
    g.night("Ivan", "Don")
    g.advance()
    assert not any(n.kind == "check" for n in g.p("Ivan").notices)
    assert any(n.kind == "action_failed" for n in g.p("Ivan").notices)


def test_fallback_used_when_target_is_hanged() -> None:
    g = Game(BASE)
    g.to_night(0)
    g.advance()
    g.night("Kate", "C1", fallback="C2")  # during day 1, for night 1
    everyone_votes(g, "C1")
    g.advance()
    g.advance()
    assert not g.alive("C1") and g.p("C1").death.cause == "hanged"  # type: ignore[union-attr]
    assert not g.alive("C2") and g.p("C2").death.by == [g.id("Kate")]  # type: ignore[union-attr]


def test_sergeant_becomes_investigator_and_gets_shared_log() -> None:
    g = Game(BASE)
    g.to_night(0)
    g.advance()
    everyone_votes(g, "C1")
    g.advance()
    g.night("Ivan", "Vito")
    g.advance()
    g.do(c.Share(by=g.id("Ivan"), at=g.tick()))
    assert any(n.kind == "shared_check" and n.data["role"] == "mafioso"
               for n in g.p("Serg").notices)
    everyone_votes(g, "Ivan")
    events = g.advance()
    assert g.p("Serg").role.value == "investigator"  # type: ignore[union-attr]
    assert "promoted" in g.kinds(events)
    police = [e for e in events if e.kind == "team_changed" and e.data["team"] == "police"]
    assert police[-1].data["writers"] == [g.id("Serg")]
    assert set(police[-1].data["members"]) == {g.id("Ivan"), g.id("Serg")}
    g.night("Serg", "Don")  # acts as investigator the same night


def test_mafia_wins_when_only_its_clan_lives() -> None:
    g = Game({"Don": "mafioso:1", "Vito": "mafioso:1", "A": "citizen", "B": "citizen",
              "C": "citizen", "D": "citizen"})
    for victim in ("A", "B", "C", "D"):
        g.do(c.Kick(by=MASTER, at=g.tick(), target=g.id(victim)))
    assert g.state.phase is PhaseKind.ENDED
    assert g.state.winners == ["clan:1"]


def test_positives_win_with_citizens() -> None:
    g = Game({"Don": "mafioso:1", "Ivan": "investigator", "Bob": "bouncer", "A": "citizen",
              "B": "citizen", "C": "citizen"})
    g.do(c.Kick(by=MASTER, at=g.tick(), target=g.id("Don")))
    assert not g.state.over
    g.do(c.Kick(by=MASTER, at=g.tick(), target=g.id("Bob")))
    assert g.state.winners == ["positive", "citizens"]


def test_neutrals_win_with_citizens() -> None:
    g = Game({"Don": "mafioso:1", "Ivan": "investigator", "Kate": "killer", "A": "citizen",
              "B": "citizen", "C": "citizen"})
    g.do(c.Kick(by=MASTER, at=g.tick(), target=g.id("Don")))
    g.do(c.Kick(by=MASTER, at=g.tick(), target=g.id("Ivan")))
    assert g.state.winners == ["neutral", "citizens"]


def test_two_clans_each_need_the_other_gone() -> None:
    g = Game({"A1": "mafioso:1", "B1": "mafioso:2", "X": "citizen", "Y": "citizen",
              "Z": "citizen", "W": "citizen", "V": "citizen"})
    for n in ("X", "Y", "Z", "W", "V"):
        g.do(c.Kick(by=MASTER, at=g.tick(), target=g.id(n)))
    assert not g.state.over
    g.do(c.Kick(by=MASTER, at=g.tick(), target=g.id("B1")))
    assert g.state.winners == ["clan:1"]


def test_draw_when_nobody_lives() -> None:
    g = Game({"Don": "mafioso:1", "Kate": "killer", "A": "citizen", "B": "citizen",
              "C": "citizen", "D": "citizen"})
    for n in ("A", "B", "C", "D"):
        g.do(c.Kick(by=MASTER, at=g.tick(), target=g.id(n)))
    g.to_night(0)
    g.night("Don", "Kate")
    g.night("Kate", "Don")
    g.advance()
    # whoever acts first by the dice kills the other; the second loses his move
    assert g.state.over and sum(g.alive(n) for n in ("Don", "Kate")) == 1


# Inactivity (turn = a day and its night): tests/engine/test_fidelity.py


def test_rejected_commands_leave_state_unchanged() -> None:
    g = Game(BASE)
    g.to_night(0)
    g.advance()
    everyone_votes(g, "C1")
    g.advance()
    g.night("Vito", "C2")
    g.advance()
    before = g.state.model_copy(deep=True)
    bad = [
        c.Vote(by=g.id("C2"), at=g.tick(), target=g.id("Don")),  # dead voter
        c.Vote(by=g.id("Don"), at=g.tick(), target=g.id("C1")),  # dead target
        c.Vote(by=999, at=g.tick(), target=g.id("Don")),  # not a player
        c.CheckIn(by=g.id("Don"), at=g.tick()),  # wrong phase
        c.NightOrder(by=g.id("C3"), at=g.tick(), target=g.id("Don")),  # no role
        c.Share(by=g.id("Don"), at=g.tick()),  # wrong role
        c.Advance(by=g.id("Don"), at=g.tick()),  # not master
        c.Advance(by=0, at=g.tick(), deadline=True),  # deadline not reached
        c.Join(by=5000, at=g.tick(), name="late"),  # signup closed
    ]
    for cmd in bad:
        with pytest.raises(RuleError):
            g.do(cmd)
        assert g.state == before


def test_killed_actor_loses_his_move_if_killed_earlier_in_dice_order() -> None:
    g = Game(BASE)
    g.to_night(0)
    g.night("Don", "Kate")
    g.night("Kate", "Don")
    g.advance()
    dead = [n for n in ("Don", "Kate") if not g.alive(n)]
    assert len(dead) == 1  # exactly one of them acted first


def test_two_killers_one_target_share_the_credit() -> None:
    g = Game(BASE)
    g.to_night(0)
    g.night("Don", "C1")
    g.night("Kate", "C1")
    g.advance()
    assert sorted(g.p("C1").death.by) == sorted([g.id("Don"), g.id("Kate")])  # type: ignore[union-attr]
    morning = next(e for e in g.events if e.kind == "morning")
    assert [v["uid"] for v in morning.data["victims"]] == [g.id("C1")]


def test_role_reveal_option_hides_roles() -> None:
    g = Game(BASE, Options(reveal_roles=False))
    g.to_night(0)
    g.night("Don", "C1")
    events = g.advance()
    morning = next(e for e in events if e.kind == "morning")
    assert morning.data["victims"] == [{"uid": g.id("C1"), "role": None}]


def test_a_kill_story_is_published_unsigned_in_the_morning() -> None:
    g = Game(BASE)
    g.to_night(0)
    g.do(c.NightOrder(by=g.id("Kate"), at=g.tick(), target=g.id("C1"),
                      story="A shot rang out over the harbour."))
    events = g.advance()
    morning = next(e for e in events if e.kind == "morning")
    assert morning.data["stories"] == ["A shot rang out over the harbour."]
    assert str(g.id("Kate")) not in str(morning.data)


def test_a_command_sent_in_a_phase_that_ended_is_refused() -> None:
    """RULES.md 11 (races): the sender's phase travels with the command; the engine
    refuses a phase-bound command whose phase is over, and nothing changes."""
    g = Game(BASE)
    g.to_night(0)
    night0 = (g.state.serial, g.state.number)
    g.night("Don", "C1")  # the order itself, given while night 0 is open, is fine
    # an order sent during night 0 that arrives after it resolved
    g.advance()
    day1 = (g.state.serial, g.state.number)
    before = g.state.model_copy(deep=True)
    late = [
        c.NightOrder(by=g.id("Vito"), at=g.tick(), target=g.id("C2"), seen=night0),
        c.Vote(by=g.id("C2"), at=g.tick(), target=g.id("Don"), seen=night0),
        c.Advance(by=MASTER, at=g.tick(), seen=night0),  # a second "end the phase"
    ]
    for cmd in late:
        with pytest.raises(RuleError) as refused:
            g.do(cmd)
        assert refused.value.code == "phase_ended"
        assert g.state == before
    # sent in the phase it arrives in: accepted; day 1 orders count for night 1
    g.do(c.Vote(by=g.id("C2"), at=g.tick(), target=g.id("Don"), seen=day1))
    g.advance()
    assert g.state.phase is PhaseKind.NIGHT and g.state.number == 1
    actor = next(n for n in ("Bob", "Ivan", "Kate") if g.alive(n))
    g.do(c.NightOrder(by=g.id(actor), at=g.tick(), target=g.id("C3"), seen=day1))
    assert g.state.seq == before.seq + 3
