"""Simulated games played THROUGH GameService: the simulator doubles as a soak test
(`mafia-bot simulate --db`, the storage tests, the benchmarks).

A leaf of the storage package: no other storage module imports it (the storage layer
does not depend on the simulator; tests/test_wheel.py holds that), and it ships in the
wheel because the console script needs it (docs/layout.md).

The random agents of core.play.sim are reused verbatim: each game's agent loop runs in
a worker thread and its `Table.send` hands every command to `GameService.apply`
on the event loop, so all games run concurrently against the real storage path
(locks, transactions, outbox, replay check) exactly as the bot would drive it.
"""

from __future__ import annotations

import asyncio
import random
import secrets
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime

from core.game import commands as c
from core.game.commands import COMMAND_ADAPTER
from core.game.events import Event
from core.game.state import Options, PhaseKind
from core.game.team import TeamKind
from core.play.sim import EPOCH, MASTER, Played, Table, random_phase
from core.storage.db import close_db, init_db
from core.storage.models import EventLog
from core.storage.outbox import OutboxEntry, OutboxWorker
from core.storage.service import Applied, GameService

SIM_GUILD = 0  # simulated games live in guild 0 so they never mix with a real guild's


class SoakReport(list[Played]):
    """The played games (like a list of core.play.sim results) plus the soak figures."""

    def __init__(self, games: int) -> None:
        super().__init__()
        self.games = games
        self.finished = 0
        self.commands = 0
        self.rejected = 0
        self.verified = 0  # games whose stored state equals the replay of their log
        self.delivered = 0  # outbox entries delivered
        self.out_of_order = 0  # outbox deliveries that broke per-game order (must be 0)
        self.seconds = 0.0
        self.winners: Counter[str] = Counter()

    @property
    def ok(self) -> bool:
        return self.verified == self.games and self.out_of_order == 0

    def summary(self) -> str:
        rate = self.commands / self.seconds if self.seconds else 0.0
        wins = ", ".join(f"{k}: {v}" for k, v in sorted(self.winners.items())) or "-"
        return (
            f"{self.games} games ({self.finished} finished), {self.commands} commands "
            f"({self.rejected} rejected) in {self.seconds:.1f}s = {rate:.0f} commands/s; "
            f"replay verified {self.verified}/{self.games}; outbox delivered {self.delivered}, "
            f"out of order {self.out_of_order}; wins {wins}"
        )


class StoredTable(Table):
    """A core.play.sim Table whose `send` goes through the service (call only from a thread)."""

    def __init__(self, service: GameService, game_id: int, loop: asyncio.AbstractEventLoop,
                 played: Played, rng: random.Random, clock: datetime,
                 on_applied: Callable[[Applied], None] | None = None) -> None:
        # Table.__init__ is not called: it would seat players locally, not via the service.
        self.service, self.game_id, self.loop = service, game_id, loop
        self.rng, self.clock, self.played = rng, clock, played
        self.on_applied = on_applied

    def send(self, cmd: c.Command) -> list[Event]:
        future = asyncio.run_coroutine_threadsafe(self.service.apply(self.game_id, cmd),
                                                  self.loop)
        applied = future.result()  # RuleError propagates to the agent, as in core.play.sim
        self.played.state = applied.state
        self.played.commands.append(cmd)
        self.played.events += applied.events
        if self.on_applied is not None:
            self.on_applied(applied)
        return applied.events


def _drive(table: StoredTable, players: int, max_phases: int) -> Played:
    """core.play.sim.play, but able to pick up a game where a crash left it."""
    if table.state.phase is PhaseKind.SIGNUP:
        for i in range(players):
            if table.state.player(100 + i) is None:
                table.send(c.Join(by=100 + i, at=table.clock, name=f"Player{i + 1}"))
        table.send(c.Start(by=MASTER, at=table.clock))
    for _ in range(max_phases):
        if table.state.over:
            break
        random_phase(table)
    return table.played


async def play_stored(service: GameService, game_id: int, *, players: int, seed: int,
                      on_applied: Callable[[Applied], None] | None = None,
                      max_phases: int = 400, executor: ThreadPoolExecutor | None = None) -> Played:
    """Play (or resume) one game to its end through `service`."""
    state = await service.state(game_id)
    last = await EventLog.filter(game_id=game_id).order_by("-seq").first()
    clock = COMMAND_ADAPTER.validate_json(last.command).at if last else EPOCH
    table = StoredTable(service, game_id, asyncio.get_running_loop(), Played(state),
                        random.Random(f"{seed}:{game_id}:{state.seq}"), clock, on_applied)
    return await asyncio.get_running_loop().run_in_executor(
        executor, _drive, table, players, max_phases)


async def create_sim_game(service: GameService, seed: int, channel_id: int,
                          options: Options | None = None) -> int:
    return await service.create(SIM_GUILD, channel_id, MASTER, f"Game {seed}", seed=seed,
                                options=options)


async def simulate_stored(url: str, games: int, players: int | Sequence[int], seed: int = 0,
                          *, options: Options | None = None,
                          deliver_outbox: bool = True) -> SoakReport:
    """Play `games` games (sizes cycle through `players`) at once through a GameService on
    `url`, deliver their outbox and verify every replay (ReplayMismatch if one differs).

    Returns the played games in order, like core.play.sim.games, with the soak figures."""
    sizes = [players] if isinstance(players, int) else list(players)
    report = SoakReport(games)
    last_ordinal: dict[int, int] = {}

    async def deliver(entry: OutboxEntry) -> None:
        if entry.ordinal != last_ordinal.get(entry.game_id, 0) + 1:
            report.out_of_order += 1
        last_ordinal[entry.game_id] = entry.ordinal

    started = time.perf_counter()
    await init_db(url)
    try:
        service = GameService()
        worker = OutboxWorker(deliver, service=service, poll_interval=1.0)
        if deliver_outbox:
            await worker.start()
        base = secrets.randbits(40) << 8  # fresh channels: never collide with a previous run
        ids = [await create_sim_game(service, seed + i, base + i, options) for i in range(games)]
        with ThreadPoolExecutor(max_workers=max(1, min(games, 32))) as pool:
            # Wait for every game even if one fails: leaving the `with` joins the agent
            # threads, which block on this very loop (a hang, not an error, otherwise).
            outcomes = await asyncio.gather(*(
                play_stored(service, gid, players=sizes[i % len(sizes)], seed=seed + i,
                            executor=pool)
                for i, gid in enumerate(ids)), return_exceptions=True)
        failed = [o for o in outcomes if isinstance(o, BaseException)]
        if failed:
            raise failed[0]
        results = [o for o in outcomes if not isinstance(o, BaseException)]
        report.extend(results)
        for gid, played in zip(ids, results, strict=True):
            report.commands += len(played.commands)
            report.rejected += played.rejected
            report.finished += played.state.over
            report.winners.update("negative" if w.kind is TeamKind.CLAN else w
                                  for w in played.state.winners)
            report.winners["draw"] += played.state.draw
            await service.verify(gid)
            report.verified += 1
        if deliver_outbox:
            await worker.idle(within=60.0)
            await worker.stop()
            report.delivered = worker.delivered
    finally:
        await close_db()
    report.seconds = time.perf_counter() - started
    return report
