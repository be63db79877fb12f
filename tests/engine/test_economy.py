"""Module 'Currency': each payout rule with a hand-computed expectation."""

from __future__ import annotations

import pytest

from core.game import commands as c
from core.game.errors import RuleError
from core.game.roles import Role
from core.game.rules.economy import (
    friendly,
    ledger_entries,
    payouts,
    prize_shares,
    spending_cap,
)
from core.game.state import DayRecord, Death, GameState, Options, PhaseKind, Player

MASTER = 1


def make(roles: list[str], dead: dict[int, tuple[str, int, list[int]]] | None = None,
         number: int = 3, winners: list[str] | None = None) -> GameState:
    """Seats 0..n-1 get uid 100+i; `dead` maps seat -> (cause, number, killers by seat)."""
    players = []
    for i, spec in enumerate(roles):
        role, _, clan = spec.partition(":")
        p = Player(uid=100 + i, name=f"P{i}", role=Role(role), clan=int(clan) if clan else None)
        if dead and i in dead:
            cause, n, by = dead[i]
            p.alive = False
            p.death = Death(cause=cause, phase=PhaseKind.NIGHT, number=n,  # type: ignore[arg-type]
                            by=[100 + b for b in by])
        players.append(p)
    return GameState(seed=1, title="t", master=MASTER, players=players, number=number,
                     phase=PhaseKind.ENDED, winners=winners or [],
                     options=Options(currency=True))


def by_reason(state: GameState, reason: str) -> dict[int, int]:
    return {p.uid - 100: p.amount for p in payouts(state) if p.reason == reason}


SIX = ["mafioso:1", "investigator", "bouncer", "citizen", "citizen", "citizen"]


def test_days_lived_include_day_zero() -> None:
    # seat 3 hanged on day 1, seat 4 killed on night 2; the game ended on day 3
    s = make(SIX, {3: ("hanged", 1, []), 4: ("killed", 2, [0])}, number=3)
    days = by_reason(s, "days")
    assert days == {0: 4, 1: 4, 2: 4, 3: 2, 4: 3, 5: 4}


def test_votes_against_another_side_with_the_special_cases() -> None:
    roles = ["mafioso:1", "investigator", "bouncer", "citizen", "citizen", "citizen"]
    s = make(roles, {3: ("hanged", 1, [])}, number=2)
    s.days = [
        DayRecord(number=1, hanged=103,
                  votes={100: 103, 101: 100, 102: 101, 103: 102, 104: 105, 105: 100},
                  weights=dict.fromkeys(range(100, 106), 2)),
        DayRecord(number=2, hanged=None,
                  votes={100: 104, 101: 102, 102: 100, 104: 101},
                  weights=dict.fromkeys(range(100, 106), 2)),
    ]
    votes = by_reason(s, "votes")
    # mafioso: day 1 vs hanged citizen +1; day 2 vs citizen not hanged 0
    # investigator: vs mafioso +1, vs bouncer (neutral) +1
    # bouncer: vs investigator +1, vs mafioso +1
    # citizen 3: vs bouncer (role player, neutral and positive alive) +1
    # citizen 4: vs citizen 0; day 2 vs investigator +1
    # citizen 5: vs mafioso +1
    assert votes == {0: 1, 1: 2, 2: 2, 3: 1, 4: 1, 5: 1}


def test_citizens_vote_only_against_negatives_once_positives_are_out() -> None:
    roles = ["mafioso:1", "investigator", "bouncer", "citizen", "citizen", "citizen"]
    s = make(roles, {1: ("killed", 1, [0])}, number=2)
    s.days = [DayRecord(number=2, votes={103: 102, 104: 100}, weights={103: 2, 104: 2})]
    assert by_reason(s, "votes") == {4: 1}


def test_voided_votes_earn_nothing() -> None:
    s = make(SIX, number=1)
    s.days = [DayRecord(number=1, votes={101: 100}, weights={101: 0})]
    assert by_reason(s, "votes") == {}


def test_kills_of_non_friendly_role_players() -> None:
    roles = ["mafioso:1", "mafioso:2", "investigator", "killer", "citizen", "citizen"]
    # clan 1 kills clan 2 (+3), killer kills the investigator (+3), clan 2 kills a citizen (0)
    s = make(roles, {1: ("killed", 0, [0]), 2: ("killed", 1, [3]),
                     4: ("killed", 0, [1])})
    assert by_reason(s, "kills") == {0: 3, 3: 3}


def test_saves_by_the_bouncer_and_by_the_deciding_vote() -> None:
    s = make(SIX)
    s.saves = [(102, 103), (102, 103), (102, 100)]  # citizen twice (+6), mafioso (hostile)
    s.days = [DayRecord(number=1, hanged=104, tied=[104, 105, 100], decider=101,
                        votes={}, weights={})]
    saves = by_reason(s, "saves")
    # the investigator's deciding vote spared citizen 5 (+3) and the mafioso (hostile, 0)
    assert saves == {2: 6, 1: 3}


def test_prize_split_halves_when_fewer_winners_live_than_died() -> None:
    roles = ["mafioso:1", "mafioso:1", "citizen", "citizen", "citizen", "citizen", "citizen"]
    s = make(roles, {1: ("hanged", 1, []), 2: ("killed", 0, [0]), 3: ("killed", 1, [0])},
             winners=["clan:1"])
    # 7 players: prize 35; 1 living winner < 1 dead? no: living 1, dead 1 -> equal split
    assert prize_shares(s) == {100: 18, 101: 17}


def test_prize_split_when_dead_winners_outnumber_living() -> None:
    roles = ["investigator", "sergeant", "citizen", "citizen", "citizen", "mafioso:1"]
    s = make(roles, {1: ("killed", 0, [5]), 2: ("killed", 1, [5]), 3: ("killed", 2, [5]),
                     5: ("hanged", 3, [])}, winners=["positive", "citizens"])
    # 6 players: prize 30. Living winners: seats 0, 4 (2); dead winners: 1, 2, 3 (3)
    shares = prize_shares(s)
    assert shares == {100: 8, 104: 7, 101: 5, 102: 5, 103: 5}
    assert sum(shares.values()) == 30


def test_citizens_alone_share_when_positives_and_neutrals_are_dead() -> None:
    roles = ["investigator", "bouncer", "citizen", "citizen", "citizen", "mafioso:1"]
    s = make(roles, {0: ("killed", 0, [5]), 1: ("killed", 1, [5]), 5: ("hanged", 2, [])},
             winners=["positive", "neutral", "citizens"])
    assert prize_shares(s) == {102: 10, 103: 10, 104: 10}


def test_neutrals_alone_share_without_a_living_citizen() -> None:
    roles = ["killer", "bouncer", "citizen", "citizen", "investigator", "mafioso:1"]
    s = make(roles, {2: ("killed", 0, [0]), 3: ("killed", 1, [0]), 4: ("killed", 1, [5]),
                     5: ("killed", 2, [0])}, winners=["neutral", "citizens"])
    assert prize_shares(s) == {100: 15, 101: 15}


def test_master_fee_and_bonuses() -> None:
    s = make(SIX)
    s.bonuses = [c_bonus(103, 4)]
    lines = payouts(s)
    assert [(p.uid, p.amount) for p in lines if p.reason == "master"] == [(MASTER, 30)]
    assert [(p.uid, p.amount) for p in lines if p.reason == "bonus"] == [(103, 4)]


def c_bonus(uid: int, amount: int):
    from core.game.state import Bonus

    return Bonus(uid=uid, amount=amount, reason="style", secret=True)


def test_friendliness() -> None:
    cit = Player(uid=1, name="c", role=Role.CITIZEN)
    pos = Player(uid=2, name="i", role=Role.INVESTIGATOR)
    neu = Player(uid=3, name="k", role=Role.KILLER)
    maf = Player(uid=4, name="m", role=Role.MAFIOSO, clan=1)
    assert friendly(cit, pos) and friendly(cit, neu) and not friendly(pos, neu)
    assert not friendly(maf, cit)


def test_cap_and_ledger_entries() -> None:
    s = make(SIX)
    assert spending_cap(s) == 90
    assert ledger_entries("thanked", {"uid": 5, "premium": 3}, master=1) == [
        (1, 1, "thanks"), (5, -3, "premium.paid"), (1, 3, "premium.received")]


def test_thank_once_after_the_game_within_funds() -> None:
    from core.play.sim import play

    played = play(2, 8, Options(currency=True))
    s = played.state
    uid = s.players[0].uid
    from core.game.engine import apply

    at = played.commands[-1].at
    out = apply(s, c.Thank(by=uid, at=at, premium=5, funds={uid: 10}))
    assert out.events[0].kind == "thanked"
    with pytest.raises(RuleError) as err:
        apply(out.state, c.Thank(by=uid, at=played.commands[-1].at, funds={uid: 10}))
    assert err.value.code == "already_thanked"
    with pytest.raises(RuleError) as err:
        apply(s, c.Thank(by=uid, at=played.commands[-1].at, premium=11, funds={uid: 10}))
    assert err.value.code == "not_enough_lira"


def test_payouts_are_part_of_the_final_state() -> None:
    from core.play.sim import play

    played = play(4, 10, Options(currency=True))
    event = next(e for e in played.events if e.kind == "payouts")
    assert event.public
    assert played.state.payouts and sum(p.amount for p in played.state.payouts) == sum(
        line["amount"] for line in event.data["lines"])
    prize = sum(p.amount for p in played.state.payouts if p.reason == "prize")
    assert prize in (0, 50)
