"""Day votes: weights in half-votes, the tally and the tie-break.

Weights are integers counted in halves so ghost votes (0.5) and Shout stay
exact. The tie-break replays the day's vote log: among the tied, the one who
reached the final count first is hanged (RULES.md, 'Votes').
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from core.game.rules.shop import day_effects, voided_marks
from core.game.rules.weights import base_weight as base_weight
from core.game.rules.weights import ghosts_allowed as ghosts_allowed
from core.game.state import DayRecord, GameState, VoteMark


def mark_weight(state: GameState, mark: VoteMark, void: frozenset[int] = frozenset()) -> int:
    """A vote's weight in halves; a vote for a player removed during the day (kicked)
    drops out: the day is decided among the others."""
    if mark.target is None or mark.void or mark.seq in void:
        return 0
    target = state.player(mark.target)
    if target is None or not target.alive:
        return 0
    return base_weight(state, mark.voter) * (1 + mark.shouts)


def voided(state: GameState) -> frozenset[int]:
    """Vote marks cancelled by spells (module "Inventory and spells")."""
    if not state.options.shop:
        return frozenset()

    return frozenset(voided_marks(state))


def current_votes(state: GameState) -> dict[int, VoteMark]:
    """The standing vote of each voter (withdrawn votes removed)."""
    standing: dict[int, VoteMark] = {}
    for mark in state.vote_log:
        if mark.target is None:
            standing.pop(mark.voter, None)
        else:
            standing[mark.voter] = mark
    return standing


@dataclass
class Tally:
    totals: dict[int, int] = field(default_factory=dict)  # target -> halves
    reached: dict[int, int] = field(default_factory=dict)  # target -> seq it reached total
    reached_by: dict[int, int] = field(default_factory=dict)  # target -> voter of that mark
    order: list[int] = field(default_factory=list)  # targets, most votes first, tie-break applied

    @property
    def leader(self) -> int | None:
        return self.order[0] if self.order else None

    def tied_with_leader(self) -> list[int]:
        if not self.order:
            return []
        top = self.totals[self.order[0]]
        return [t for t in self.order if self.totals[t] == top]


def _weigher(state: GameState, void: frozenset[int]) -> Callable[[VoteMark], int]:
    """`mark_weight` for one state, remembering each voter's weight and each target's
    life: a tally weighs every mark of the day twice, and the engine tallies after
    every vote (a replay of a long game spent most of its time here)."""
    voters: dict[int, int] = {}
    alive: dict[int, bool] = {}

    def weigh(mark: VoteMark) -> int:
        if mark.target is None or mark.void or mark.seq in void:
            return 0
        living = alive.get(mark.target)
        if living is None:
            target = state.player(mark.target)
            living = alive[mark.target] = target is not None and target.alive
        if not living:
            return 0
        base = voters.get(mark.voter)
        if base is None:
            base = voters[mark.voter] = base_weight(state, mark.voter)
        return base * (1 + mark.shouts)

    return weigh


def totals(state: GameState, *, spells: bool = True) -> dict[int, int]:
    """target -> the weight of the standing votes on him (the tally's counts alone).
    `spells=False`: as the town counts while the day runs, Sleep and Silence not yet
    applied (they show at the day's result, RULES.md "When a spell shows")."""
    return _totals(state, _weigher(state, voided(state) if spells else frozenset()))


def _totals(state: GameState, weigh: Callable[[VoteMark], int]) -> dict[int, int]:
    totals: dict[int, int] = {}
    for mark in current_votes(state).values():
        w = weigh(mark)
        if w and mark.target is not None:
            totals[mark.target] = totals.get(mark.target, 0) + w
    return totals


def tally(state: GameState, *, spells: bool = True) -> Tally:
    """The day's count; `spells=False` leaves Sleep and Silence out (the public count
    while the day runs)."""
    weigh = _weigher(state, voided(state) if spells else frozenset())
    totals = _totals(state, weigh)
    result = Tally(totals=totals)
    running: dict[int, int] = {}
    live: dict[int, tuple[int, int]] = {}  # voter -> (target, weight) of the standing vote
    for mark in state.vote_log:
        # A mark moves at most two counts (the voter's old target and the new one):
        # only those can reach their final count with it.
        before: dict[int, int] = {}
        old = live.pop(mark.voter, None)
        if old is not None:
            target, weight = old
            before.setdefault(target, running.get(target, 0))
            running[target] = running.get(target, 0) - weight
        if mark.target is not None:
            weight = weigh(mark)
            live[mark.voter] = (mark.target, weight)
            before.setdefault(mark.target, running.get(mark.target, 0))
            running[mark.target] = running.get(mark.target, 0) + weight
        for target, count in before.items():
            final = totals.get(target)
            if final is not None and count < final <= running.get(target, 0):
                result.reached[target] = mark.seq
                result.reached_by[target] = mark.voter
    result.order = sorted(totals, key=lambda t: (-totals[t], result.reached.get(t, 0)))
    return result


def _removed(state: GameState, uid: int) -> bool:
    """Kicked or removed for inactivity: out of the day's votes both ways."""
    p = state.player(uid)
    return p is not None and p.death is not None and p.death.cause in ("kicked", "inactive")


def close_day(state: GameState) -> DayRecord:
    """Freeze the day's votes into a record; who hangs is `record.hanged`."""
    result = tally(state)
    standing = current_votes(state)
    void = voided(state)
    # The votes of a player kicked today, and the votes for him, drop out of the record.
    standing = {v: m for v, m in standing.items() if not _removed(state, v)
                and m.target is not None and not _removed(state, m.target)}
    record = DayRecord(
        number=state.number,
        votes={v: m.target for v, m in standing.items() if m.target is not None},
        weights={v: mark_weight(state, m, void) for v, m in standing.items()},
        tally=dict(result.totals),
    )
    if result.leader is not None and result.totals[result.leader] > 0:
        record.hanged = result.leader
        tied = result.tied_with_leader()
        if len(tied) > 1:
            record.tied = tied
            record.decider = result.reached_by.get(result.leader)
    return record


def zero_reasons(state: GameState) -> dict[int, str]:
    """Why each of today's standing votes that counts 0 does (the master's desk says it
    in a word): "silenced" (Silence), "asleep" (Sleep), "excluded" (a ghost the occultist
    excluded), "removed" (a ghost removed by the master or for missed turns, who has no
    vote), "no_ghosts" (a ghost while no occultist lives), "cancelled" otherwise."""
    void = voided(state)
    silenced = day_effects(state).silenced
    out: dict[int, str] = {}
    for voter, mark in current_votes(state).items():
        if mark_weight(state, mark, void):
            continue
        p = state.player(voter)
        if mark.seq in void:
            out[voter] = "silenced" if voter in silenced else "asleep"
        elif p is not None and not p.alive and p.death is not None \
                and p.death.cause in ("kicked", "inactive"):
            out[voter] = "removed"
        elif p is not None and not p.alive and voter in state.occult_excluded:
            out[voter] = "excluded"
        elif p is not None and not p.alive and not ghosts_allowed(state):
            out[voter] = "no_ghosts"
        else:
            out[voter] = "cancelled"
    return out


def standing_after_kick(state: GameState) -> dict[str, Any]:
    """The day's count once a removed player's votes, and the votes for him, have dropped
    out (RULES.md §4): for the master's desk, which says how the day now stands. A tie
    goes to the one who reached his count first, whatever the count: with five players at
    one vote each, the first one voted for is hanged on one vote (issue 33, V7)."""
    result = tally(state)
    tied = result.tied_with_leader()
    return {"tally": [[u, result.totals[u]] for u in result.order],
            "leader": result.leader, "tied": tied if len(tied) > 1 else []}


def hammered(state: GameState, target: int) -> bool:
    """RULES.md §4, "The hammer": the living voters' standing votes against `target`, as
    the town counts them (Shout included, spells not yet applied), are more than half of
    the living players' whole weight. Ghost votes count in the tally, not here."""
    weigh = _weigher(state, frozenset())
    living = {p.uid for p in state.living()}
    against = sum(weigh(m) for v, m in current_votes(state).items()
                  if v in living and m.target == target)
    return 2 * against > sum(base_weight(state, uid) for uid in living)
