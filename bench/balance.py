"""The balance estimate's time (issue 34): what the master waits at /game setup for a
30-player setup, with the bot's own estimator (worker processes, its time budget and
game cap), and the games simulated per second behind it.

Target: the figures within 10 s of the setup (the estimator stops starting chunks at
its budget, so the row shows how far past it the chunks in flight carried it)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from cogs.balance import Estimator
from core.game.state import Options
from core.play.balance import Job, seats

TARGET_S = 10.0


def balance_estimate(players: int = 30, *, smoke: bool = False) -> dict[str, Any]:
    """One estimate of the preset for `players` seats, as /game setup makes it."""
    options = Options()
    job = Job(None, seats(None, players, options), options, seed=1)
    estimator = Estimator(max_games=10, chunk=2) if smoke else Estimator()
    try:
        asyncio.run(_warm(estimator, job))  # the pool starts once per bot process
        started = time.perf_counter()
        tally = asyncio.run(estimator.run(job))
        elapsed = time.perf_counter() - started
    finally:
        estimator.close()
    return {"players": players, "seconds": elapsed, "games": tally.games,
            "games_per_s": tally.games / elapsed if elapsed else 0.0,
            "budget_s": estimator.budget_s, "max_games": estimator.max_games,
            "workers": estimator.workers, "target_s": TARGET_S, "ok": elapsed < TARGET_S}


async def _warm(estimator: Estimator, job: Job) -> None:
    loop = asyncio.get_running_loop()
    from core.play.balance import run_chunk

    await loop.run_in_executor(estimator.pool(), run_chunk, job, 0, 1)


def table(out: dict[str, Any]) -> str:
    return (f"BALANCE ESTIMATE\n  {out['players']} players: {out['seconds']:.1f} s for "
            f"{out['games']} games ({out['games_per_s']:.1f} games/s, {out['workers']} "
            f"worker processes, budget {out['budget_s']:g} s, cap {out['max_games']})")
