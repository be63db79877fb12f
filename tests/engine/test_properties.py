"""Random legal games (hypothesis): they end, the winner fits who lives, replay is exact."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.game.commands import CheckIn, NightOrder, Share
from core.game.engine import apply, create_game
from core.game.errors import RuleError
from core.game.roles import Role, Side
from core.game.rules.channels import known_by, known_to
from core.game.rules.victory import verdict
from core.game.state import GameState, Options
from core.play.sim import MASTER, Played, play
from tests.conftest import slow_property

options_st = st.builds(
    Options,
    extra_roles=st.booleans(),
    reveal_roles=st.booleans(),
    votes_final=st.booleans(),
    bouncer_self=st.booleans(),
)

games_st = st.tuples(st.integers(0, 2**31), st.integers(6, 30), options_st)

SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def check_winner(state: GameState) -> None:
    assert state.over
    alive = state.living()
    if state.draw:
        assert not alive and not state.winners
        return
    assert state.winners and alive
    alive_sides = {p.side for p in alive}
    for team in state.winners:
        if team.startswith("clan:"):
            assert {p.team for p in alive} == {team}
        elif team == "positive":
            assert not alive_sides & {Side.NEGATIVE, Side.NEUTRAL}
        elif team == "neutral":
            assert not alive_sides & {Side.NEGATIVE, Side.POSITIVE}
        else:
            assert team == "citizens"
            assert {"positive", "neutral"} & set(state.winners) or alive_sides == {Side.CITIZENS}
    assert verdict(state).winners == state.winners


def replay(played: Played) -> tuple[GameState, list[object]]:
    s = played.state
    state = create_game(seed=s.seed, master=MASTER, title=s.title, options=s.options)
    events: list[object] = []
    for cmd in played.commands:
        out = apply(state, cmd)
        state = out.state
        events += out.events
    return state, events


@SETTINGS
@given(games_st)
def test_random_games_end_with_a_consistent_winner(game: tuple[int, int, Options]) -> None:
    seed, players, options = game
    played = play(seed, players, options)
    check_winner(played.state)


@SETTINGS
@given(games_st)
def test_replay_reproduces_identical_events(game: tuple[int, int, Options]) -> None:
    seed, players, options = game
    played = play(seed, players, options)
    state, events = replay(played)
    assert state == played.state
    assert events == played.events


@pytest.mark.slow_property
@slow_property
@given(games_st)
def test_dead_players_never_act(game: tuple[int, int, Options]) -> None:
    """Every command from a dead player is refused, except ghost votes while the occultist lives."""
    seed, players, options = game
    played = play(seed, players, options)
    state = create_game(seed=seed, master=MASTER, title=played.state.title, options=options)
    for cmd in played.commands:
        for dead in (p for p in state.players if not p.alive):
            target = state.living()[0].uid
            for attempt in (NightOrder(by=dead.uid, at=cmd.at, target=target),
                            CheckIn(by=dead.uid, at=cmd.at), Share(by=dead.uid, at=cmd.at)):
                with pytest.raises(RuleError):
                    apply(state, attempt)
        actor = state.player(cmd.by)
        if actor is not None and not actor.alive:
            assert cmd.kind in ("vote", "unvote", "occult_exclude")
            assert any(p.alive and p.role is Role.OCCULTIST for p in state.players)
        state = apply(state, cmd).state
        assert all(p.alive for o in state.orders if (p := state.player(o.actor)))


all_modules_st = st.tuples(
    st.integers(0, 2**31), st.integers(6, 30),
    st.builds(Options, extra_roles=st.booleans(), currency=st.just(True), shop=st.booleans(),
              reveal_roles=st.booleans()),
)


@SETTINGS
@given(all_modules_st)
def test_lira_stay_consistent_in_games_with_every_module(
        game: tuple[int, int, Options]) -> None:
    """Wallets equal opening + ledger, never go negative; payouts happen exactly once."""
    from core.game.rules.economy import OPENING_BALANCE, ledger_entries, spending_cap

    seed, players, options = game
    played = play(seed, players, options)
    check_winner(played.state)
    balances: dict[int, int] = {MASTER: 0}
    for cmd, state_events in _commands_with_events(played):
        if cmd.kind == "join":
            balances.setdefault(cmd.by, OPENING_BALANCE)
        for e in state_events:
            for uid, amount, _ in ledger_entries(e.kind, e.data, MASTER):
                balances[uid] = balances.get(uid, 0) + amount
                assert balances[uid] >= 0
    assert [e.kind for e in played.events].count("payouts") == 1
    assert all(v <= spending_cap(played.state) for v in played.state.spent.values())
    paid = sum(p.amount for p in played.state.payouts)
    spent = sum(played.state.spent.values())
    assert sum(balances.values()) == OPENING_BALANCE * players + paid - spent


def _commands_with_events(played: Played):
    s = played.state
    state = create_game(seed=s.seed, master=MASTER, title=s.title, options=s.options)
    for cmd in played.commands:
        out = apply(state, cmd)
        state = out.state
        yield cmd, out.events


@pytest.mark.slow_property
@slow_property
@given(games_st, st.booleans(), st.booleans())
def test_known_by_is_known_to_turned_around(game: tuple[int, int, Options], sergeant: bool,
                                           graveyard: bool) -> None:
    """Whoever learns of a death as a mate (channels.known_by, the channels worked out
    once) is exactly whoever knows the dead by role (channels.known_to, per player), at
    every step of a whole game."""
    seed, players, options = game
    options = options.model_copy(update={"sergeant_in_police": sergeant,
                                     "graveyard": graveyard})
    played = play(seed, players, options)
    state = create_game(seed=seed, master=MASTER, title=played.state.title, options=options)
    for cmd in played.commands:
        state = apply(state, cmd).state
        for p in state.players:
            assert known_by(state, p.uid) == [
                q.uid for q in state.players
                if q.uid != p.uid and p.uid in known_to(state, q.uid)]
