"""Engine figures: whole simulated games per second, and night resolution vs players.

Pure core: core.play.sim's random legal agents through core.game.engine, no storage.
"""

from __future__ import annotations

import math
import statistics
import time
from typing import Any

from core.game import commands as c
from core.game import engine
from core.game.rules import night as night_rules
from core.game.rules.context import Ctx
from core.game.state import GameState, Options, PhaseKind
from core.play.sim import MASTER, Table, play, random_phase

ALL_MODULES = Options(extra_roles=True, currency=True, shop=True, crypto=True)


def games_per_second(players: int, *, min_games: int, budget: float, seed: int = 1
                     ) -> dict[str, Any]:
    """Play whole games with every module on until `budget` seconds and `min_games` pass."""
    played, commands, phases = 0, 0, 0
    start = time.perf_counter()
    while played < min_games or time.perf_counter() - start < budget:
        result = play(seed + played, players, ALL_MODULES)
        assert result.state.over, f"game {seed + played} with {players} players did not end"
        played += 1
        commands += len(result.commands)
        phases += result.state.serial
    seconds = time.perf_counter() - start
    return {"players": players, "games": played, "seconds": seconds,
            "games_per_s": played / seconds, "commands_per_game": commands / played,
            "commands_per_s": commands / seconds}


class _NightCatcher(Table):
    """A sim table that remembers the state and command closing its first night."""

    caught: tuple[GameState, c.Advance] | None = None

    def send(self, cmd: c.Command) -> Any:
        if (self.caught is None and isinstance(cmd, c.Advance)
                and self.state.phase is PhaseKind.NIGHT):
            self.caught = (self.state, cmd)
        return super().send(cmd)


def night_states(players: int, seeds: int) -> list[tuple[GameState, c.Advance]]:
    """The first night of `seeds` games with every order the agents gave, ready to close."""
    out = []
    for seed in range(seeds):
        table = _NightCatcher(1000 + seed, players, ALL_MODULES)
        table.send(c.Start(by=MASTER, at=table.clock))
        while table.caught is None and not table.state.over:
            random_phase(table)
        if table.caught is not None:
            out.append(table.caught)
    return out


def _median_time(fn: Any, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def night_scaling(sizes: list[int], *, seeds: int, repeat: int) -> dict[str, Any]:
    """Cost of closing one night (engine.apply of the deadline Advance) per player count.

    Also the rules' resolution alone (night.resolve on an already copied state).
    Growth: the least-squares slope of log(cost) over log(players); 1.0 is linear.
    """
    rows = []
    for n in sizes:
        cases = night_states(n, seeds)
        apply_t = statistics.median(
            _median_time(lambda s=s, a=a: engine.apply(s, a), repeat) for s, a in cases)

        def resolve_only(state: GameState) -> float:
            times = []
            for _ in range(repeat):
                ctx = Ctx(GameState.model_validate_json(state.model_dump_json()))
                start = time.perf_counter()
                night_rules.resolve(ctx)
                times.append(time.perf_counter() - start)
            return statistics.median(times)

        resolve_t = statistics.median(resolve_only(s) for s, _ in cases)
        orders = statistics.median(
            len([o for o in s.orders if o.night == s.number]) for s, _ in cases)
        rows.append({"players": n, "apply_us": apply_t * 1e6, "resolve_us": resolve_t * 1e6,
                     "apply_us_per_player": apply_t * 1e6 / n,
                     "resolve_us_per_player": resolve_t * 1e6 / n, "orders": orders})
    out: dict[str, Any] = {"sizes": rows}
    for key in ("apply_us", "resolve_us"):
        slope = _loglog_slope([r["players"] for r in rows], [r[key] for r in rows])
        first, last = rows[0], rows[-1]
        per_player_ratio = ((last[key] / last["players"]) / (first[key] / first["players"])
                            if first[key] else math.nan)
        out[key.replace("_us", "")] = {
            "slope": slope,
            # per-player cost at the largest size over the smallest: <= 1 means the total
            # grows no faster than the player count
            "per_player_ratio": per_player_ratio,
            "linear_or_better": slope <= 1.15,
        }
    return out


def _loglog_slope(xs: list[int], ys: list[float]) -> float:
    if len(xs) < 2:
        return math.nan
    lx = [math.log(x) for x in xs]
    ly = [math.log(max(y, 1e-9)) for y in ys]
    mx, my = statistics.fmean(lx), statistics.fmean(ly)
    den = sum((x - mx) ** 2 for x in lx)
    return sum((x - mx) * (y - my) for x, y in zip(lx, ly, strict=True)) / den if den else math.nan
