"""A setup's balance estimate: strategic agents (core/play/agents.py) play it many times.

Deterministic from the seed: game i is dealt and played from seed + i, so the same
setup, options, seed and number of games give the same figures, and games can be
played in chunks (several processes) and added up (`Tally.merge`). Each side's win
share comes with a 95% Wilson interval; docs/balance.md says what the figure means
and what it does not.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from core.game.errors import ErrorCode, RuleError
from core.game.roles import Side, info
from core.game.rules.setup import MIN_PLAYERS, composition_for, parse
from core.game.state import GameState, Options
from core.game.team import TeamKind
from core.play.agents import play_strategic
from core.play.sim import MASTER, Table
from core.text.i18n import t

Z95 = 1.959963984540054
LOPSIDED_SHARE = 0.70  # a side winning more often than this gets the warning
DRAW = "draw"  # nobody won: everybody died, or the game ran past MAX_PHASES
MAX_PHASES = 200
SIDE_ORDER = {"town": 0, "mafia": 1, "neutral": 3, DRAW: 4}


@dataclass
class Tally:
    """Raw counts of a number of games; chunks add up."""

    games: int = 0
    wins: dict[str, int] = field(default_factory=dict)  # side key -> games it won
    days: int = 0  # summed over the games: the last day each reached
    keys: list[str] = field(default_factory=list)  # the sides the setup deals

    def merge(self, other: Tally) -> Tally:
        wins = dict(self.wins)
        for k, v in other.wins.items():
            wins[k] = wins.get(k, 0) + v
        return Tally(self.games + other.games, wins, self.days + other.days,
                     self.keys or other.keys)


@dataclass(frozen=True)
class Share:
    side: str  # "town", "mafia", "clan:N" (several clans), "neutral", "draw"
    wins: int
    share: float
    low: float
    high: float


@dataclass(frozen=True)
class Estimate:
    games: int
    players: int
    shares: list[Share]
    mean_days: float

    @property
    def lopsided(self) -> Share | None:
        """The side that wins more than LOPSIDED_SHARE of the games, if any."""
        return next((s for s in self.shares if s.side != DRAW and s.share > LOPSIDED_SHARE),
                    None)


def wilson(wins: int, games: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion (good near 0 and 1, unlike p ± z·se)."""
    if games == 0:
        return 0.0, 1.0
    p = wins / games
    denom = 1 + z * z / games
    centre = (p + z * z / (2 * games)) / denom
    half = z * math.sqrt(p * (1 - p) / games + z * z / (4 * games * games)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def seats(roles: str | None, signed_up: int, options: Options) -> int:
    """How many seats the estimate deals: those signed up, at least the roles written
    and the minimum (the seats left open are honest citizens, as at the start)."""
    size = parse(roles).size if roles else 0
    return max(signed_up, size, MIN_PLAYERS)


def side_keys(roles: str | None, players: int, options: Options) -> list[str]:
    """The sides this setup deals, in the order the estimate lists them."""
    comp = composition_for(roles, players, extra_roles=options.extra_roles)
    clans = comp.clan_numbers()
    keys = ["town"]
    keys += [f"clan:{n}" for n in clans] if len(clans) > 1 else ["mafia"]
    if any(info(r).side is Side.NEUTRAL for r in comp.roles):
        keys.append("neutral")
    return keys


def winners_of(state: GameState, multi_clan: bool) -> list[str]:
    """The side keys that won this game (the citizens win with the town: counted once)."""
    if state.draw or not state.winners:
        return [DRAW]
    out: list[str] = []
    for team in state.winners:
        if team.kind is TeamKind.CLAN:
            out.append(str(team) if multi_clan else "mafia")
        elif team.kind is TeamKind.NEUTRAL:
            out.append("neutral")
        elif team.kind is TeamKind.POSITIVE:
            out.append("town")
    kinds = {t.kind for t in state.winners}
    if TeamKind.CITIZENS in kinds and not kinds & {TeamKind.POSITIVE, TeamKind.NEUTRAL}:
        out.append("town")  # only citizens were dealt on the good side, and they won
    return out


def signup_state(roles: str | None, players: int, options: Options) -> GameState:
    """The signup every simulated game starts from (players joined, roles written)."""
    return Table(0, players, options, roles).state


def simulate(roles: str | None, players: int, options: Options, games: int,
             seed: int = 0) -> Tally:
    """Play `games` games from seed, seed + 1, ...: the raw counts. Pure and CPU-bound:
    the bot runs it in an executor, chunk by chunk."""
    keys = side_keys(roles, players, options)
    multi = any(k.startswith("clan:") for k in keys)
    signup = signup_state(roles, players, options)
    tally = Tally(keys=keys)
    for i in range(games):
        table = Table.seated(signup, seed + i)
        play_strategic(table, max_phases=MAX_PHASES)
        state = table.state
        tally.games += 1
        tally.days += state.number
        for key in winners_of(state, multi):
            tally.wins[key] = tally.wins.get(key, 0) + 1
    return tally


@dataclass(frozen=True)
class Job:
    """What to estimate: exactly this setup on these seats with these options. Plain
    data, so a worker process can take it."""

    roles: str | None
    players: int
    options: Options
    seed: int

    def chunk(self, start: int, games: int) -> Tally:
        """Games start .. start + games - 1 of this job (seeds seed + start, ...)."""
        return simulate(self.roles, self.players, self.options, games, self.seed + start)


def job_for(state: GameState) -> Job:
    """The estimate a game's signup asks for: its roles (or the preset) on the seats it
    would deal now, its options; seeded by the game, so asking again gives the same."""
    players = seats(state.roles_text, len(state.players), state.options)
    return Job(state.roles_text, players, state.options, state.seed)


def run_chunk(job: Job, start: int, games: int) -> Tally:
    """`job.chunk` as a module-level function: what an executor pickles and runs."""
    return job.chunk(start, games)


def estimate(tally: Tally, players: int) -> Estimate:
    """The figures of a tally: every dealt side (and draws, if any) with its interval."""
    keys = list(tally.keys) + sorted(k for k in tally.wins if k not in tally.keys)
    shares = []
    for key in sorted(keys, key=lambda k: (SIDE_ORDER.get(k.split(":")[0], 2), k)):
        wins = tally.wins.get(key, 0)
        if key == DRAW and not wins:
            continue
        low, high = wilson(wins, tally.games)
        shares.append(Share(key, wins, wins / tally.games if tally.games else 0.0, low, high))
    mean = tally.days / tally.games if tally.games else 0.0
    return Estimate(tally.games, players, shares, mean)


def start_refusal(est: Estimate | None, confirm: bool, lang: str) -> RuleError | None:
    """Whether /game start goes ahead given the setup's estimate (RULES.md, "The balance
    estimate at the start"): with `confirm` always; without it, not before the estimate
    is there (`est` None: still running when the start stopped waiting), and not when
    the estimate's own warning fires (one side wins more than LOPSIDED_SHARE)."""
    if confirm:
        return None
    if est is None:
        return RuleError(ErrorCode.BALANCE_RUNNING)
    top = est.lopsided
    if top is not None:
        return RuleError(ErrorCode.BALANCE_LOPSIDED, side=side_name(top.side, lang),
                         share=percent(top.share))
    return None


__all__ = ["MASTER", "Estimate", "Job", "Share", "Tally", "estimate", "job_for", "run_chunk",
           "seats", "simulate", "start_refusal", "wilson"]


# --- words ----------------------------------------------------------------------------
def side_name(key: str, lang: str) -> str:
    if key.startswith("clan:"):
        return t("balance.side.clan", lang, number=int(key.split(":")[1]))
    return t(f"balance.side.{key}", lang)


def percent(x: float) -> int:
    return round(100 * x)


def report(est: Estimate, lang: str) -> list[str]:
    """The estimate in words: the head, a line per side, the note when a game can have
    several winners (the shares then add to more than 100%), the warning if one side
    wins more than 70%, and what the simulated players do (docs/balance.md)."""
    lines = [t("balance.head", lang, count=est.games, players=est.players,
               days=t("balance.mean_days", lang, count=round(est.mean_days, 1)))]
    for s in est.shares:
        lines.append(t("balance.share", lang, side=side_name(s.side, lang),
                       share=percent(s.share), low=percent(s.low), high=percent(s.high)))
    if sum(s.wins for s in est.shares) > est.games:
        lines.append(t("balance.overlap", lang))
    top = est.lopsided
    if top is not None:
        lines.append(t("balance.lopsided", lang, side=side_name(top.side, lang),
                       share=percent(top.share)))
    lines.append(t("balance.footer", lang))
    return lines
