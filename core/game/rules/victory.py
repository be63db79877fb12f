"""Win conditions (rules, 'Задача ...'), checked after every death.

A side can only win if it had members in the game. All conditions that hold
at once win together; nobody alive is a draw. Honest citizens win whenever
the positives or the neutrals win.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from core.game.roles import Side
from core.game.state import GameState
from core.game.team import Team, TeamKind

POSITIVE = Team.of(TeamKind.POSITIVE)
NEUTRAL = Team.of(TeamKind.NEUTRAL)
CITIZENS = Team.of(TeamKind.CITIZENS)


@dataclass
class Verdict:
    winners: list[Team] = field(default_factory=list)  # clans, positives, neutrals, citizens
    draw: bool = False

    @property
    def decided(self) -> bool:
        return self.draw or bool(self.winners)


def verdict(state: GameState) -> Verdict:
    players = [p for p in state.players if p.role is not None]
    alive = [p for p in players if p.alive]
    if not alive:
        return Verdict(draw=True)
    sides_present = {p.side for p in players}
    alive_sides = {p.side for p in alive}
    winners: list[Team] = []
    alive_teams = {p.team for p in alive}
    for clan in state.clans:
        team = Team.clan(clan.number)
        if alive_teams == {team}:
            winners.append(team)
    if (
        Side.POSITIVE in sides_present
        and Side.NEGATIVE not in alive_sides
        and Side.NEUTRAL not in alive_sides
    ):
        winners.append(POSITIVE)
    if (
        Side.NEUTRAL in sides_present
        and Side.NEGATIVE not in alive_sides
        and Side.POSITIVE not in alive_sides
    ):
        winners.append(NEUTRAL)
    if (POSITIVE in winners or NEUTRAL in winners) and (
        Side.CITIZENS in sides_present
    ):
        winners.append(CITIZENS)
    if not winners and Side.NEGATIVE not in alive_sides and alive_sides == {Side.CITIZENS}:
        # Only citizens left and neither positives nor neutrals were ever dealt.
        winners.append(CITIZENS)
    return Verdict(winners=winners)

