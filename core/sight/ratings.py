"""Per-server ratings (issue 46.5; RULES.md §16, an addition, not a rule): an OpenSkill
Plackett-Luce model over the game's teams, updated once a game has a result.

Pure: the stored ratings in, the new ratings out; storage keeps the rows
(core/storage/ratings.py). A team is who wins together: the winners (a clan, or the
positives or the neutral with the citizens) are one team ranked first, every other team
(a clan, the positives, the neutral, the citizens) shares the next rank, a draw ranks
every team alike. A player the master removed or who was removed for
inactivity is rated apart, as a team of his own ranked with the losers (in a draw, below
the tied teams): leaving a game never keeps a rating safe, and never drags the team he
left. A cancelled game has no
result and is not rated.
"""

from __future__ import annotations

from dataclasses import dataclass

from openskill.models import PlackettLuce

from core.game.state import GameState, PhaseKind, Player

REMOVED = ("kicked", "inactive")
BASE, SCALE = 1000, 40  # shown = 1000 + 40 (mu - 3 sigma): 1000 for a newcomer
_MODEL = PlackettLuce()


@dataclass(frozen=True, slots=True)
class Skill:
    """One member's rating in one server: OpenSkill's mean and uncertainty."""

    mu: float = _MODEL.mu
    sigma: float = _MODEL.sigma

    @property
    def shown(self) -> int:
        """What the leaderboard shows and sorts by: the conservative estimate
        (mu - 3 sigma), so a newcomer's lucky first win does not top the table, on a
        scale forum players know from Elo (a newcomer at 1000, whole points)."""
        return round(BASE + SCALE * (self.mu - 3 * self.sigma))


def removed(p: Player) -> bool:
    return p.death is not None and p.death.cause in REMOVED


def _groups(state: GameState) -> tuple[list[list[int]], list[int]]:
    """The rated teams (player ids) and their ranks (0 first)."""
    teams: dict[str, list[int]] = {}
    outs: list[int] = []
    for p in state.players:
        if p.team is None:
            continue
        if removed(p):
            outs.append(p.uid)
        else:
            teams.setdefault(str(p.team), []).append(p.uid)
    won = sorted(n for n in teams if n in state.winners and not state.draw)
    lost = sorted(n for n in teams if n not in won)
    # Teams that win together (the citizens with the positives) are one side: ranked as
    # two tied teams, the larger would lose skill by "only" tying the smaller.
    groups = ([[uid for n in won for uid in teams[n]]] if won else []) + [teams[n] for n in lost]
    ranks = ([0] if won else []) + [1 if won else 0] * len(lost)
    last = 1  # with the losers (ranked below them, he would lift every loser he "beat")
    groups += [[uid] for uid in sorted(outs)]
    ranks += [last] * len(outs)
    return groups, ranks


def rated(state: GameState) -> bool:
    """Whether the game changes ratings: it ended with a result, between two teams at
    least."""
    return state.phase is PhaseKind.ENDED and len(_groups(state)[0]) >= 2


def update(state: GameState, before: dict[int, Skill]) -> dict[int, Skill]:
    """The new rating of everybody seated at the end (a member never rated before
    starts from the model's default); empty when the game is not rated."""
    if not rated(state):
        return {}
    groups, ranks = _groups(state)
    teams = [[_MODEL.rating(mu=before.get(uid, Skill()).mu,
                            sigma=before.get(uid, Skill()).sigma) for uid in group]
             for group in groups]
    after = _MODEL.rate(teams, ranks=[float(r) for r in ranks])
    return {uid: Skill(mu=r.mu, sigma=r.sigma)
            for group, team in zip(groups, after, strict=True)
            for uid, r in zip(group, team, strict=True)}
