"""The vote timeline's data against the tally rules (core.game.rules.voting), not the picture."""

from __future__ import annotations

import contextlib
from datetime import timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.game.errors import RuleError
from core.game.rules.voting import close_day, tally
from core.game.state import PhaseKind
from core.sight.timeline import day_timeline
from tests.engine.scenario import T0, Game

ROLES = {"Ann": "mafioso:1", "Bob": "citizen", "Cid": "citizen", "Dan": "occultist",
         "Eve": "citizen", "Fay": "bouncer", "Gus": "citizen", "Hal": "investigator"}


def day_one(kill: str | None = "Gus") -> Game:
    """Day 1 open; `kill` died in night 0, so (the occultist alive) he votes as a ghost."""
    g = Game(ROLES)
    g.to_night(0)
    if kill:
        g.night("Ann", kill)
    g.advance()
    assert g.state.phase is PhaseKind.DAY and g.state.number == 1
    return g



def test_steps_hammer_and_tie_break_by_hand() -> None:
    g = day_one()
    g.vote("Bob", "Cid")          # Cid 1
    g.vote("Cid", "Eve")          # Eve 1
    g.vote("Gus", "Eve")          # ghost: Eve 1.5
    g.vote("Eve", "Cid")          # Cid 2 (reaches the final count)
    g.vote("Fay", "Eve")          # Eve 2.5
    g.unvote("Gus")               # Eve 2: equal with Cid, but later
    tl = day_timeline(g.state)
    assert [s.totals for s in tl.steps] == [
        {g.id("Cid"): 2}, {g.id("Cid"): 2, g.id("Eve"): 2}, {g.id("Cid"): 2, g.id("Eve"): 3},
        {g.id("Cid"): 4, g.id("Eve"): 3}, {g.id("Cid"): 4, g.id("Eve"): 5},
        {g.id("Cid"): 4, g.id("Eve"): 4}]
    assert [s.weight for s in tl.steps] == [2, 2, 1, 2, 2, 0]
    assert tl.steps[-1].target is None and tl.steps[-1].previous == g.id("Eve")
    assert tl.candidates == [g.id("Cid"), g.id("Eve")]
    assert tl.hanged == g.id("Cid") and tl.tied == [g.id("Cid"), g.id("Eve")]
    assert tl.hammer_by == g.id("Eve") and tl.hammer_seq == tl.steps[3].seq
    assert tl.series(g.id("Eve")) == [(None, 2), (None, 3), (None, 5), (None, 4)]


def test_hammer_when_the_count_overshoots_then_drops() -> None:
    """Found by hypothesis: a ghost votes, a living vote makes 1.5, the ghost withdraws
    (1): the count reached 1 at the living vote, which is the hammer."""
    g = day_one(kill="Gus")
    g.vote("Gus", "Ann")
    g.vote("Bob", "Ann")
    g.unvote("Gus")
    tl = day_timeline(g.state)
    assert [s.totals for s in tl.steps] == [{g.id("Ann"): 1}, {g.id("Ann"): 3},
                                            {g.id("Ann"): 2}]
    assert tl.hanged == g.id("Ann") and tl.hammer_by == g.id("Bob")
    assert tl.hammer_seq == tl.steps[1].seq


def test_moments_come_from_the_log_times() -> None:
    g = day_one(kill=None)
    g.vote("Bob", "Cid")
    mark = g.state.vote_log[-1]
    at = T0 + timedelta(hours=3)
    tl = day_timeline(g.state, {mark.seq: at}, deadline=at + timedelta(hours=1))
    assert tl.steps[0].at == at and tl.hammer_at == at
    assert tl.deadline == at + timedelta(hours=1)


def test_no_votes_no_hanging() -> None:
    tl = day_timeline(day_one().state)
    assert tl.steps == [] and tl.hanged is None and tl.hammer_seq is None


VOTERS = [n for n in ROLES if n != "Ann"] + ["Ann"]
actions = st.lists(st.tuples(st.sampled_from(VOTERS),
                             st.one_of(st.none(), st.sampled_from(list(ROLES)))),
                   max_size=25)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(actions, st.sampled_from([None, "Gus", "Dan"]))
def test_timeline_agrees_with_the_tally(moves: list[tuple[str, str | None]],
                                        kill: str | None) -> None:
    """Every step is the /votes tally of the log so far; the last is the day's result;
    the hammer is the mark the tie-break credits (voting.tally().reached)."""
    g = day_one(kill)
    for voter, target in moves:
        with contextlib.suppress(RuleError):
            g.unvote(voter) if target is None else g.vote(voter, target)
    state = g.state
    tl = day_timeline(state)
    full = state.vote_log
    assert len(tl.steps) == len(full)
    for i, step in enumerate(tl.steps):
        prefix = state.model_copy(update={"vote_log": full[: i + 1]})
        assert step.totals == tally(prefix).totals
    result = tally(state)
    record = close_day(state)
    assert tl.final == record.tally == result.totals
    assert tl.hanged == record.hanged and tl.tied == record.tied
    if record.hanged is None:
        assert tl.hammer_seq is None
    else:
        assert tl.hammer_seq == result.reached[record.hanged]
        assert tl.hammer_by == result.reached_by[record.hanged]
        if record.tied:
            assert tl.hammer_by == record.decider
        # at the hammer his count rose through the final one (it may overshoot, and a
        # later withdrawal bring it back down)
        i = next(i for i, s in enumerate(tl.steps) if s.seq == tl.hammer_seq)
        before = tl.steps[i - 1].totals.get(record.hanged, 0) if i else 0
        assert before < tl.final[record.hanged] <= tl.steps[i].totals[record.hanged]


def test_voided_and_shouted_marks() -> None:
    """A void mark counts zero; the day's record agrees (shop module spells)."""
    g = day_one(kill=None)
    g.vote("Bob", "Cid")
    g.state.vote_log[-1].void = True
    g.vote("Eve", "Cid")
    tl = day_timeline(g.state)
    assert tl.steps[0].void and tl.steps[0].weight == 0
    assert tl.final == {g.id("Cid"): 2} == close_day(g.state).tally
