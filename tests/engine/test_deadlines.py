"""Deadlines at the game's own second of the minute (issue 30; RULES.md section 4,
"Deadlines"): in [0, 60), the same for every phase of a game and on a replay, spread
evenly over many games, never a shorter phase; older games keep their exact deadlines."""

from __future__ import annotations

import random
from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.game import commands as c
from core.game.engine import apply, create_game
from core.game.errors import RuleError
from core.game.rules import deadlines
from core.game.rules.owing import reminder_at
from core.game.state import GameState, Options

MASTER = 1
T0 = datetime(2026, 1, 1, 20, 0, tzinfo=UTC)
seeds = st.integers(min_value=0, max_value=2**63 - 1)


def started(seed: int, at: datetime = T0, options: Options | None = None, *,
            stored: bool = False) -> GameState:
    state = create_game(seed=seed, master=MASTER, title="t", options=options, stored=stored)
    for i in range(6):
        state = apply(state, c.Join(by=100 + i, at=at, name=f"P{i}")).state
    return apply(state, c.Start(by=MASTER, at=at)).state


def fired(state: GameState, late: timedelta) -> GameState:
    """The scheduler's Advance, `late` after the deadline."""
    assert state.deadline is not None
    return apply(state, c.Advance(by=0, at=state.deadline + late, deadline=True)).state


@given(seed=seeds, at=st.datetimes(min_value=datetime(2020, 1, 1), max_value=datetime(2040, 1, 1),
                                   timezones=st.just(UTC)),
       day=st.integers(1, 3000), night=st.integers(1, 3000),
       lates=st.lists(st.floats(0, 59.999), min_size=3, max_size=3))
def test_every_phase_ends_at_the_games_second(seed: int, at: datetime, day: int, night: int,
                                              lates: list[float]) -> None:
    second = deadlines.offset(seed)
    assert 0 <= second < 60 and deadlines.offset(seed) == second  # stable: the seed alone
    state = started(seed, at, Options(day_minutes=day, night_minutes=night))
    assert state.options.spread_deadlines and state.deadline is not None
    nominal = at + timedelta(minutes=day)
    # never shorter than the phase (but for the fraction of a second <t:…> leaves out),
    # less than a minute longer
    assert nominal.replace(microsecond=0) <= state.deadline < nominal + timedelta(seconds=60)
    for late in lates:  # however late the scheduler fires within the minute: no drift
        before, minutes = state.deadline, state.options.night_minutes if \
            state.phase == "day" else state.options.day_minutes
        state = fired(state, timedelta(seconds=late))
        if state.over:
            break
        assert state.deadline == before + timedelta(minutes=minutes)
        assert (state.deadline.second, state.deadline.microsecond) == (second, 0)


@given(base=st.integers(min_value=0, max_value=2**62))
def test_consecutive_seeds_spread_over_the_minute(base: int) -> None:
    counts = Counter(deadlines.offset(s) // 10 for s in range(base, base + 600))
    assert all(50 <= counts[band] <= 150 for band in range(6)), counts  # 100 each expected


def test_a_storm_of_games_due_in_one_minute_is_a_slope() -> None:
    """6,000 games (seeds as the service draws them) due at 20:00: about 100 a second,
    no second holding more than half as many again (chi-square of a uniform draw, 59
    degrees of freedom: below 98 but once in a thousand)."""
    rng = random.Random(30)
    per_second = Counter(deadlines.offset(rng.getrandbits(63)) for _ in range(6000))
    assert set(per_second) == set(range(60))
    assert max(per_second.values()) <= 150
    chi2 = sum((n - 100) ** 2 / 100 for n in per_second.values())
    assert chi2 < 98, chi2


def test_a_phase_opened_long_after_its_deadline_runs_its_full_length() -> None:
    """The bot was down for three hours: the next phase counts from when it fired."""
    state = started(5)
    assert state.deadline is not None
    down = state.deadline + timedelta(hours=3, seconds=12.5)
    state = apply(state, c.Advance(by=0, at=down, deadline=True)).state
    nominal = down + timedelta(minutes=state.options.night_minutes)
    assert nominal.replace(microsecond=0) <= state.deadline < nominal + timedelta(seconds=60)
    assert state.deadline.second == deadlines.offset(5)


def test_an_older_game_keeps_its_exact_deadlines() -> None:
    """Options stored before the rule (no `spread_deadlines`) replay as they were played:
    an Advance logged a moment after the old deadline is still accepted."""
    at = T0 + timedelta(seconds=0.25)
    old = started(5, at, Options.model_validate_json('{"day_minutes": 60}'), stored=True)
    assert not old.options.spread_deadlines
    assert old.deadline == at + timedelta(minutes=60)
    later = fired(old, timedelta(milliseconds=3))
    assert later.deadline == old.deadline + timedelta(milliseconds=3, minutes=720)


def test_a_replay_from_the_stored_options_gives_the_same_deadlines() -> None:
    new = started(11, T0 + timedelta(seconds=3.5))
    again = started(11, T0 + timedelta(seconds=3.5), Options.model_validate_json(
        new.options.model_dump_json()), stored=True)
    assert again.deadline == new.deadline and again.options == new.options
    assert fired(again, timedelta(seconds=2)).deadline == \
        fired(new, timedelta(seconds=2)).deadline


def test_the_master_cannot_switch_the_spread() -> None:
    state = create_game(seed=3, master=MASTER, title="t")
    with pytest.raises(RuleError) as err:
        apply(state, c.SetOptions(by=MASTER, at=T0, changes={"spread_deadlines": False}))
    assert err.value.code == "unknown_option"


def test_an_extension_keeps_the_games_second() -> None:
    state = started(21)
    assert state.deadline is not None
    second = deadlines.offset(21)
    longer = apply(state, c.Extend(by=MASTER, at=T0, minutes=30)).state
    assert longer.deadline == state.deadline + timedelta(minutes=30)
    # extended after the deadline passed (the scheduler not yet there): from now, spread
    late = state.deadline + timedelta(seconds=40.5)
    longer = apply(state, c.Extend(by=MASTER, at=late, minutes=30)).state
    assert longer.deadline is not None and longer.deadline.second == second
    assert late + timedelta(minutes=30, seconds=-1) <= longer.deadline \
        < late + timedelta(minutes=31)


def test_the_reminder_keeps_the_games_second() -> None:
    state = started(9)
    assert state.deadline is not None
    assert reminder_at(state) == state.deadline - timedelta(minutes=60)
