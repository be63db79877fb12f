"""The balance estimate at /game setup and /game options, off the event loop.

The master's reply says "estimating…" at once; the simulated games (core/play/balance.py,
pure and CPU-bound) run in worker processes, chunk after chunk, until the time budget
or the game cap is reached; then the same reply is edited to show the figures, this
setup's history in the server, and the warning when one side wins more than 70%. The
estimate reveals nothing secret (it knows only the setup), but it is the master's:
it goes to his ephemeral reply alone.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import time
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass

import discord

from core.play.balance import Job, Tally, estimate, report, run_chunk
from core.play.setups import History, history_line, key_of_setup
from core.storage.setups import setup_histories
from core.text.i18n import t

from .ui.limits import clip
from .utils.bot import MafiaBot

log = logging.getLogger("mafia.balance")

MESSAGE_LIMIT = 2000


@dataclass
class Estimator:
    """Plays a job's games in an executor: chunks of `chunk` games, `workers` at once,
    until `budget_s` has passed or `max_games` are played. Only whole chunks from the
    first on count, so the figures are those of games 0 .. n-1 of the job (the same
    for the same n, whatever the machine's speed)."""

    budget_s: float = 7.0
    max_games: int = 1000
    chunk: int = 5
    workers: int = 2
    processes: bool = True
    _pool: Executor | None = None

    def pool(self) -> Executor:
        if self._pool is None:
            if self.processes:
                self._pool = ProcessPoolExecutor(
                    self.workers, mp_context=multiprocessing.get_context("forkserver"))
            else:
                self._pool = ThreadPoolExecutor(self.workers, thread_name_prefix="balance")
        return self._pool

    async def run(self, job: Job) -> Tally:
        loop = asyncio.get_running_loop()
        pool = self.pool()
        ends = time.monotonic() + self.budget_s
        starts = list(range(0, self.max_games, self.chunk))
        running: list[asyncio.Future[Tally]] = []
        done = Tally()
        try:
            for start in starts:
                if running and (len(running) >= self.workers):
                    tally = await running.pop(0)
                    done = done.merge(tally)
                if time.monotonic() >= ends and (running or done.games):
                    break
                size = min(self.chunk, self.max_games - start)
                running.append(loop.run_in_executor(pool, run_chunk, job, start, size))
            for fut in running:
                done = done.merge(await fut)
        finally:
            for fut in running:
                fut.cancel()
        return done

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None


ESTIMATOR = Estimator()  # one pool for the process; tests put a small one in its place


class Estimates:
    """The estimates a bot is making, one per game at most: a newer request for the
    same game (the setup or options changed again) replaces the older."""

    def __init__(self) -> None:
        self.tasks: dict[int, asyncio.Task[None]] = {}

    def start(self, interaction: discord.Interaction[MafiaBot], game_id: int,
              guild_id: int | None, job: Job, head: list[str], lang: str) -> None:
        """Make the estimate in the background; the reply already sent is edited when
        it is ready."""
        old = self.tasks.pop(game_id, None)
        if old is not None:
            old.cancel()
        task = asyncio.create_task(_follow(interaction, guild_id, job, head, lang))
        self.tasks[game_id] = task
        task.add_done_callback(lambda done: self._done(game_id, done))

    def _done(self, game_id: int, task: asyncio.Task[None]) -> None:
        if self.tasks.get(game_id) is task:
            del self.tasks[game_id]

    async def idle(self) -> None:
        """Wait for every estimate under way (tests)."""
        while self.tasks:
            await asyncio.gather(*self.tasks.values(), return_exceptions=True)

    def cancel_all(self) -> None:
        for task in self.tasks.values():
            task.cancel()
        self.tasks.clear()


async def _follow(interaction: discord.Interaction[MafiaBot], guild_id: int | None, job: Job,
                  head: list[str], lang: str) -> None:
    try:
        tally = await ESTIMATOR.run(job)
        lines = report(estimate(tally, job.players), lang)
        history = await _history(guild_id, job)
        if history is not None:
            lines.insert(-1, history_line(history, lang))
    except asyncio.CancelledError:
        raise
    except Exception:
        log.exception("balance estimate failed")
        lines = [t("balance.unavailable", lang)]
    text = clip("\n".join([*head, *lines]), MESSAGE_LIMIT)
    try:
        await interaction.edit_original_response(
            content=text, allowed_mentions=discord.AllowedMentions.none())
    except discord.HTTPException:
        log.warning("could not show the balance estimate (the reply is gone)")


async def _history(guild_id: int | None, job: Job) -> History | None:
    """This setup's record in this server, if it has been played here."""
    if guild_id is None:
        return None
    return (await setup_histories(guild_id)).get(
        key_of_setup(job.roles, job.players, job.options))
