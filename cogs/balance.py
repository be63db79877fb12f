"""The balance estimate at /game setup and /game options, off the event loop, within a
bounded share of the machine; and what /game start asks of it.

The master's reply says "estimating…" (or "queued", or why no estimate is made) at
once; the simulated games (core/play/balance.py, pure and CPU-bound) run in worker
processes, chunk after chunk, until the time budget or the game cap is reached; then
the same reply is edited to show the figures, this setup's history in the server, and
the warning when one side wins more than 70%. The estimate reveals nothing secret (it
knows only the setup), but it is the master's: it goes to his ephemeral reply alone.

The share (issue 41, item 6): one estimate at a time per worker process, one worker
per core left to the bot (all but one, at least one; BALANCE_WORKERS sets it), the
workers at a lower CPU priority; a newer estimate of a game replaces its older one;
the others wait their turn, and beyond a short queue or a member's or a server's
allowance (core/play/allowance.py) the reply says no estimate is made and when to
ask again. The bot's event loop only awaits the workers' answers, so players'
commands and deliveries never wait on an estimate.

No process outlives the bot (issue 41, item 3): closing the estimator ends its
workers and the forkserver; a worker whose bot died without closing it (a SIGKILL, a
crash) sees its parent's sentinel close and exits at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass, field
from multiprocessing.connection import wait as wait_ready
from typing import Any, Literal

import discord

from core.game.errors import RuleError
from core.play.allowance import Allowance, Spent
from core.play.balance import Estimate, Job, Tally, estimate, report, run_chunk, start_refusal
from core.play.setups import History, history_line, key_of_setup
from core.storage.setups import setup_histories
from core.text.i18n import t

from .ui.limits import clip
from .utils.bot import MafiaBot

log = logging.getLogger("mafia.balance")

MESSAGE_LIMIT = 2000
NICE = 10  # how much lower the workers' CPU priority is than the bot's


def default_workers() -> int:
    """One estimate at a time per core the bot leaves to them: every core but the one
    its event loop needs, at least one."""
    return max(1, (os.cpu_count() or 1) - 1)


# --- the worker processes -------------------------------------------------------------
def _worker_start(nice: int) -> None:
    """A worker's first act: a lower CPU priority than the bot's (players come first),
    and a watchdog that ends it as soon as the bot is gone, however it went."""
    if nice:
        with contextlib.suppress(OSError):
            os.nice(nice)
    parent = multiprocessing.parent_process()
    if parent is not None:
        threading.Thread(target=_exit_with_parent, args=(parent.sentinel,), daemon=True,
                         name="balance-watchdog").start()


def _exit_with_parent(sentinel: int) -> None:
    """The parent's sentinel is a pipe end only the bot holds open: it reads as closed
    when the bot process ends (a SIGKILL included), and the worker goes with it."""
    wait_ready([sentinel])
    os._exit(0)


def _end_workers(processes: list[Any]) -> None:
    """Stop a closed pool's workers now (a chunk in flight is not waited for)."""
    for p in processes:
        with contextlib.suppress(Exception):
            p.terminate()
    for p in processes:
        with contextlib.suppress(Exception):
            p.join(2.0)
            if p.is_alive():
                p.kill()
                p.join(2.0)


def _stop_forkserver() -> None:
    """The forkserver goes with the pool (left alone it would live as long as this
    process, and a bot closed and made again in one process would add one each time)."""
    from multiprocessing import forkserver

    server: Any = getattr(forkserver, "_forkserver", None)
    pid = getattr(server, "_forkserver_pid", None)
    if server is None or pid is None:
        return
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGTERM)
    with contextlib.suppress(OSError):
        server._stop()


@dataclass
class Estimator:
    """Plays a job's games in an executor: chunks of `chunk` games, two in flight, until
    `budget_s` has passed or `max_games` are played. Only whole chunks from the first on
    count, so the figures are those of games 0 .. n-1 of the job (the same for the same
    n, whatever the machine's speed). At most `workers` jobs run at once (one per worker
    process); the others wait, up to `queue_limit` a worker."""

    budget_s: float = 7.0
    max_games: int = 1000
    chunk: int = 5
    workers: int = field(default_factory=default_workers)
    processes: bool = True
    nice: int = NICE
    queue_limit: int = 4  # estimates waiting, per worker, before new ones are refused
    #: how long /game start waits for the setup's estimate (RULES.md); `guards_start`
    #: False: it does not (the bot tests whose start is not about the estimate: their
    #: games have random seeds and ten-game estimates)
    start_wait_s: float = 5.0
    guards_start: bool = True
    running: int = 0
    waiting: int = 0
    _pool: Executor | None = None
    _slots: asyncio.Semaphore | None = None

    def pool(self) -> Executor:
        if self._pool is None:
            if self.processes:
                self._pool = ProcessPoolExecutor(
                    self.workers, mp_context=multiprocessing.get_context("forkserver"),
                    initializer=_worker_start, initargs=(self.nice,))
            else:
                self._pool = ThreadPoolExecutor(self.workers, thread_name_prefix="balance")
        return self._pool

    def slots(self) -> asyncio.Semaphore:
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.workers)
        return self._slots

    def ahead(self, busy: int) -> int | None:
        """How many estimates a new one would wait behind when `busy` are under way
        (running or waiting); 0: it starts at once; None: the queue is full."""
        if busy < self.workers:
            return 0
        queued = busy - self.workers
        if queued >= self.queue_limit * self.workers:
            return None
        return queued + 1

    def free_in(self, busy: int) -> float:
        """About when the queue has room again (seconds): the estimates under way, a
        budget each, over the workers."""
        return self.budget_s * max(1, busy // max(1, self.workers))

    async def run(self, job: Job, budget_s: float | None = None) -> Tally:
        slots = self.slots()
        self.waiting += 1
        try:
            await slots.acquire()
        finally:
            self.waiting -= 1
        self.running += 1
        try:
            return await self._play(job, self.budget_s if budget_s is None else budget_s)
        finally:
            self.running -= 1
            slots.release()

    async def _play(self, job: Job, budget_s: float) -> Tally:
        loop = asyncio.get_running_loop()
        pool = self.pool()
        ends = time.monotonic() + budget_s
        starts = list(range(0, self.max_games, self.chunk))
        running: list[asyncio.Future[Tally]] = []
        done = Tally()
        try:
            for start in starts:
                if running and len(running) >= 2:
                    done = done.merge(await running.pop(0))
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
        """End the pool now: its workers, and the forkserver that made them."""
        pool, self._pool, self._slots = self._pool, None, None
        if pool is None:
            return
        processes = list((getattr(pool, "_processes", None) or {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        if isinstance(pool, ProcessPoolExecutor):
            _end_workers(processes)
            _stop_forkserver()


ESTIMATOR = Estimator()  # one pool for the process; tests put a small one in its place


# --- the estimates a bot is making ----------------------------------------------------
@dataclass(frozen=True)
class Asked:
    """What became of a request: made at once, queued behind `ahead`, or refused (the
    queue is full, or an allowance is spent) until `retry_at` (unix seconds)."""

    kind: Literal["now", "queued", "busy", "member", "guild"]
    ahead: int = 0
    limit: int = 0
    retry_at: int = 0

    @property
    def made(self) -> bool:
        return self.kind in ("now", "queued")

    def line(self, lang: str) -> str:
        """The reply's line about the estimate, in the master's words."""
        if self.kind == "now":
            return t("balance.estimating", lang)
        if self.kind == "queued":
            return t("balance.queued", lang, count=self.ahead)
        return t(f"balance.refused.{self.kind}", lang, count=self.limit,
                 when=f"<t:{self.retry_at}:R>")


@dataclass
class _Under:
    job: Job
    task: asyncio.Task[Estimate | None]


class Estimates:
    """The estimates a bot is making, one per game at most: a newer request for the
    same game (the setup or options changed again) replaces the older. The last
    finished estimate of each game is kept for /game start (one small record a game
    in signup; dropped when the game starts)."""

    def __init__(self, per_member: int = 6, per_guild: int = 30,
                 clock: Callable[[], float] = time.time) -> None:
        self.under: dict[int, _Under] = {}
        self.done: dict[int, tuple[Job, Estimate]] = {}
        self.failed: dict[int, Job] = {}  # an estimate that could not be made
        self.allowance = Allowance(per_member=per_member, per_guild=per_guild)
        self.clock = clock

    @property
    def tasks(self) -> dict[int, asyncio.Task[Estimate | None]]:
        return {game: u.task for game, u in self.under.items()}

    def ask(self, game_id: int, member: int, guild: int | None) -> Asked:
        """May this member have an estimate of this game now? Counted if so."""
        now = self.clock()
        self.allowance.forget(now)
        # every estimate not finished counts, started or not (asked in the same
        # instant, none has reached the queue yet); the one it replaces does not
        ahead = ESTIMATOR.ahead(len(self.under) - (game_id in self.under))
        if ahead is None:
            return Asked("busy",
                         retry_at=int(now + ESTIMATOR.free_in(len(self.under))) + 1)
        spent: Spent | None = self.allowance.take(member, guild, now)
        if spent is not None:
            return Asked(spent.scope, limit=spent.limit, retry_at=int(spent.retry_at) + 1)
        return Asked("now") if ahead == 0 else Asked("queued", ahead=ahead)

    def start(self, interaction: discord.Interaction[MafiaBot] | None, game_id: int,
              guild_id: int | None, job: Job, head: list[str], lang: str,
              budget_s: float | None = None) -> asyncio.Task[Estimate | None]:
        """Make the estimate in the background; the reply already sent (if any) is
        edited when it is ready."""
        self.drop(game_id)
        task = asyncio.create_task(self._make(interaction, game_id, guild_id, job, head,
                                              lang, budget_s))
        self.under[game_id] = _Under(job, task)
        task.add_done_callback(lambda done: self._done(game_id, done))
        return task

    def drop(self, game_id: int) -> None:
        """Forget a game's estimates (cancel the one under way)."""
        old = self.under.pop(game_id, None)
        if old is not None:
            old.task.cancel()
        self.done.pop(game_id, None)
        self.failed.pop(game_id, None)

    def _done(self, game_id: int, task: asyncio.Task[Estimate | None]) -> None:
        under = self.under.get(game_id)
        if under is not None and under.task is task:
            del self.under[game_id]

    async def _make(self, interaction: discord.Interaction[MafiaBot] | None, game_id: int,
                    guild_id: int | None, job: Job, head: list[str], lang: str,
                    budget_s: float | None) -> Estimate | None:
        est: Estimate | None = None
        try:
            tally = await ESTIMATOR.run(job, budget_s)
            est = estimate(tally, job.players)
            self.done[game_id] = (job, est)
            if interaction is None:
                return est
            lines = report(est, lang)
            history = await _history(guild_id, job)
            if history is not None:
                lines.insert(-1, history_line(history, lang))
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("balance estimate failed")
            self.failed[game_id] = job
            lines = [t("balance.unavailable", lang)]
        if interaction is not None:
            text = clip("\n".join([*head, *lines]), MESSAGE_LIMIT)
            try:
                await interaction.edit_original_response(
                    content=text, allowed_mentions=discord.AllowedMentions.none())
            except discord.HTTPException:
                log.warning("could not show the balance estimate (the reply is gone)")
        return est

    def could_not(self, game_id: int, job: Job) -> bool:
        """Whether this job's estimate failed (the start does not wait on a guide that
        cannot be had; the failure is logged)."""
        return self.failed.get(game_id) == job

    async def for_start(self, game_id: int, guild_id: int | None, job: Job,
                        wait_s: float, budget_s: float) -> Estimate | None:
        """The estimate of exactly this job, waited for at most `wait_s` seconds: the
        one finished, or the one under way, or one made now (a setup whose estimate was
        refused, or whose seats changed since); None if it is not ready in time (it
        goes on, and the next start finds it) or it failed (`could_not`)."""
        done = self.done.get(game_id)
        if done is not None and done[0] == job:
            return done[1]
        if self.could_not(game_id, job):
            return None
        under = self.under.get(game_id)
        task = under.task if under is not None and under.job == job else None
        if task is None:
            task = self.start(None, game_id, guild_id, job, [], "en", budget_s=budget_s)
        if wait_s > 0:
            await asyncio.wait({task}, timeout=wait_s)
        done = self.done.get(game_id)
        return done[1] if done is not None and done[0] == job else None

    @staticmethod
    def start_refusal(est: Estimate | None, lang: str) -> RuleError | None:
        """Why /game start without confirm may not go ahead, given the estimate
        (core.play.balance.start_refusal decides)."""
        return start_refusal(est, False, lang)

    async def idle(self) -> None:
        """Wait for every estimate under way (tests)."""
        while self.under:
            await asyncio.gather(*(u.task for u in self.under.values()),
                                 return_exceptions=True)

    def cancel_all(self) -> None:
        for under in self.under.values():
            under.task.cancel()
        self.under.clear()
        self.done.clear()
        self.failed.clear()


async def _history(guild_id: int | None, job: Job) -> History | None:
    """This setup's record in this server, if it has been played here."""
    if guild_id is None:
        return None
    return (await setup_histories(guild_id)).get(
        key_of_setup(job.roles, job.players, job.options))
