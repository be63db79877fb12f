"""End to end through the Discord layer: the real MafiaBot, real interaction payloads.

The bot runs inside the test harness (tests/harness): every measured command is an
INTERACTION_CREATE payload fed to discord.py's own parser, handled by the real command
tree and cogs, committed by the GameService to SQLite on disk, and answered through
discord.py's HTTP client into the harness's in-process fake Discord.

Latency of one command = from the moment discord.py is handed the interaction
(`parse_interaction_create`) to the moment the bot's HTTP request answering it (the
interaction callback) reaches the fake transport. Nothing is subtracted: the fake
Discord runs in the same process and its work (building payloads, storing messages,
echoing gateway events) competes with the bot for the CPU.

Games under load are set up through the GameService directly (create, joins, start,
two advances to day 1); the outbox delivers their set-up (private channels,
announcements) to the fake Discord before anything is measured.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections import Counter, defaultdict
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import discord

from bot import MafiaBot, tune_runtime
from core.game import commands as c
from core.game.engine import legal_targets, night_move
from core.game.rules.voting import current_votes
from core.game.state import GameState, Options
from core.settings import Settings
from tests.harness import Harness

EVERYTHING = discord.Permissions(
    view_channel=True, send_messages=True, embed_links=True, read_message_history=True,
    manage_channels=True, manage_roles=True, create_private_threads=True,
    send_messages_in_threads=True, manage_threads=True)
ALL_MODULES = Options(extra_roles=True, currency=True, shop=True, crypto=True)
PLAYERS = 12
GAMES_PER_GUILD = 50
KINDS = ("vote", "night", "role")


def percentile(sorted_values: list[float], q: float) -> float:
    """Nearest-rank percentile of an already sorted list (q in 0..100)."""
    if not sorted_values:
        return float("nan")
    rank = max(1, -(-len(sorted_values) * q // 100))
    return sorted_values[int(rank) - 1]


def summary(values: list[float]) -> dict[str, Any]:
    ms = sorted(v * 1e3 for v in values)
    return {"n": len(ms), "p50_ms": percentile(ms, 50), "p95_ms": percentile(ms, 95),
            "p99_ms": percentile(ms, 99), "max_ms": ms[-1] if ms else float("nan")}


# --- measuring ------------------------------------------------------------------------
class LatencyProbe:
    """Times each interaction from discord.py's parser to the bot's answering request."""

    def __init__(self, h: Harness) -> None:
        self.h = h
        self.started: dict[str, tuple[float, str]] = {}
        self.samples: dict[str, list[float]] = defaultdict(list)
        self.refused: Counter[str] = Counter()
        self._refused_ids: set[str] = set()

    def reset(self) -> None:
        self.samples.clear()
        self.refused.clear()

    @contextlib.contextmanager
    def installed(self) -> Iterator[LatencyProbe]:
        import bot
        import cogs.ui.components
        from cogs.utils.errors import send_error

        # the modules whose refusals go through send_error (commands' errors, buttons)
        callers: list[Any] = [bot, cogs.ui.components]
        state = self.h.bot._connection
        parse = state.parse_interaction_create
        handle = self.h.fake.handle

        def timed_parse(data: Any) -> None:
            name = str(data.get("data", {}).get("name", "?"))
            self.started[str(data["id"])] = (time.perf_counter(), name)
            parse(data)

        async def timed_handle(method: str, url: str, kwargs: Any) -> Any:
            if "/interactions/" in url and url.endswith("/callback"):
                iid = url.split("/interactions/", 1)[1].split("/", 1)[0]
                begun = self.started.pop(iid, None)
                if begun is not None:
                    self.samples[begun[1]].append(time.perf_counter() - begun[0])
                    if iid in self._refused_ids:
                        self._refused_ids.discard(iid)
                        self.refused[begun[1]] += 1
            return await handle(method, url, kwargs)

        async def counted_error(interaction: discord.Interaction[Any], err: Any) -> None:
            self._refused_ids.add(str(interaction.id))
            await send_error(interaction, err)

        state.parse_interaction_create = timed_parse  # type: ignore[method-assign]
        self.h.fake.handle = timed_handle  # type: ignore[method-assign]
        for module in callers:
            module.send_error = counted_error
        try:
            yield self
        finally:
            state.parse_interaction_create = parse  # type: ignore[method-assign]
            self.h.fake.handle = handle  # type: ignore[method-assign]
            for module in callers:
                module.send_error = send_error


# --- the world ----------------------------------------------------------------------
@dataclass
class LiveGame:
    id: int
    guild_id: int
    channel_id: int
    master: int
    players: list[int]
    busy: bool = False


@dataclass
class Bench:
    h: Harness
    bot: MafiaBot
    probe: LatencyProbe
    games: list[LiveGame] = field(default_factory=list)
    guilds: list[Any] = field(default_factory=list)
    setup_seconds: float = 0.0

    @property
    def service(self) -> Any:
        return self.bot.service

    async def grow(self, total: int, *, batch: int = 8) -> None:
        """Add live games (12 players, every module, day 1) until there are `total`."""
        start = time.perf_counter()
        while len(self.games) < total:
            n = min(batch, total - len(self.games))
            specs = [self._seat(len(self.games) + i) for i in range(n)]
            ids = await asyncio.gather(*(self._create(*s) for s in specs))
            for gid, (guild_id, channel_id, master, players) in zip(ids, specs, strict=True):
                self.games.append(LiveGame(gid, guild_id, channel_id, master, players))
            # the outbox opens each game's private channels and posts its announcements
            await self.bot.outbox.idle(within=120)
        await self.h.settle()
        self.setup_seconds += time.perf_counter() - start

    def _seat(self, index: int) -> tuple[int, int, int, list[int]]:
        if index % GAMES_PER_GUILD == 0:
            guild = self.h.add_guild(f"Club {len(self.guilds) + 1}", locale="en-US")
            self.h.set_bot_permissions(EVERYTHING, guild)
            self.guilds.append(guild)
        guild = self.guilds[-1]
        channel = self.h.add_text_channel(f"game-{index + 1}", guild)
        master = self.h.add_member(f"M{index + 1}", guild)
        players = [self.h.add_member(f"G{index + 1}P{i + 1}", guild) for i in range(PLAYERS)]
        return guild.id, channel.id, master.id, [p.id for p in players]

    async def _create(self, guild_id: int, channel_id: int, master: int,
                      players: list[int]) -> int:
        svc, now = self.service, datetime.now(UTC)
        gid: int = await svc.create(guild_id, channel_id, master, f"Game {channel_id}",
                                    options=ALL_MODULES, seed=channel_id % 2**31,
                                    language="en")
        for i, uid in enumerate(players):
            await svc.apply(gid, c.Join(by=uid, at=now, name=f"P{i + 1}"))
        await svc.apply(gid, c.Start(by=master, at=now))
        for uid in players:  # nobody is removed for missing day 0
            await svc.apply(gid, c.CheckIn(by=uid, at=now))
        for _ in range(2):  # day 0 -> night 0 -> day 1: votes and night orders are open
            await svc.apply(gid, c.Advance(by=master, at=now))
        return gid

    async def quiesce(self) -> None:
        """Between runs, with nothing in flight: let the outbox finish, then drop what the
        fake Discord recorded so far (every request it captured, and the harness's
        per-interaction bookkeeping, which it scans after each interaction). The fake's
        records grow without bound and are not the bot's: left alone they would make
        later runs pay for earlier ones (longer scans). No gc.collect() here: a window
        that starts right after a forced collection seldom holds one of its own, and
        its p99 flatters the bot (issue 30)."""
        await self.bot.outbox.idle(within=120)
        await self.h.settle()
        self.h.fake.requests.clear()
        self.h._spans.clear()

    # --- one command ------------------------------------------------------------------
    def choose(self, state: GameState, game: LiveGame, kind: str, rng: random.Random
               ) -> tuple[int, str, dict[str, Any]]:
        """A legal /vote, /night or /role for this game (falls back to /role)."""
        living = [p.uid for p in state.living()]
        if kind == "vote" and len(living) > 1:
            voter = rng.choice(living)
            standing = current_votes(state).get(voter)
            targets = [u for u in living if u != voter
                       and (standing is None or u != standing.target)]
            if targets:
                return voter, "vote", {"player": str(rng.choice(targets))}
        if kind == "night":  # the client's own work: targets only of the actor chosen
            actors = [u for u in living if night_move(state, u) is not None]
            rng.shuffle(actors)
            for actor in actors:
                targets = legal_targets(state, actor, "night")
                if targets:
                    return actor, "night", {"target": str(rng.choice(targets))}
        return rng.choice(game.players), "role", {}

    async def fire(self, game: LiveGame, kind: str, rng: random.Random) -> None:
        state = await self.service.state(game.id)
        user, command, options = self.choose(state, game, kind, rng)
        await self.h.slash(user, command, channel=game.channel_id, **options)


def bench_settings(database_url: str) -> Settings:
    """The bot's settings for a bench: a guild holds GAMES_PER_GUILD open games (the
    default cap of open games per guild is lower)."""
    return Settings(discord_token="bench", database_url=database_url,
                    max_games_per_guild=GAMES_PER_GUILD)


def no_windows(bot: MafiaBot) -> tuple[float, float, float]:
    """Each command's desk and team lines and live-count edits as they come; returns
    the windows it replaced (for `windows`). Sections that wait for the outbox after
    each step would only sit the windows out (real time, up to a minute each); what the
    windows save in requests is measured in real time by bench/targets.py."""
    gathering, tallies = bot.delivery.gathering, bot.delivery.tallies
    old = (gathering.desk_window, gathering.team_window, tallies.interval)
    windows(bot, (0.0, 0.0, 0.0))
    return old


def windows(bot: MafiaBot, values: tuple[float, float, float]) -> None:
    gathering, tallies = bot.delivery.gathering, bot.delivery.tallies
    gathering.desk_window, gathering.team_window, tallies.interval = values


@contextlib.asynccontextmanager
async def running_bot(workdir: Path) -> AsyncIterator[Bench]:
    """A MafiaBot on `workdir`/bench.db (the folder must exist) inside the harness."""
    settings = bench_settings(f"sqlite://{workdir / 'bench.db'}")
    tune_runtime()  # as `mafia-bot run` does
    bot = MafiaBot(settings, state_dir=workdir)
    async with Harness(bot, timeout=60.0) as h:
        no_windows(bot)
        probe = LatencyProbe(h)
        with probe.installed():
            yield Bench(h, bot, probe)


# --- load -----------------------------------------------------------------------------
async def sequential(bench: Bench, games: list[LiveGame], samples: int, rotate: int,
                     seed: int) -> dict[str, Any]:
    """One game played at a time: commands back to back, a fresh game every `rotate`."""
    rng = random.Random(seed)
    bench.probe.reset()
    start = time.perf_counter()
    for i in range(samples):
        game = games[(i // rotate) % len(games)]
        await bench.fire(game, KINDS[i % len(KINDS)], rng)
    return _result(bench, time.perf_counter() - start, games=1, rate=None)


async def open_loop(bench: Bench, games: list[LiveGame], samples: int, rate: float,
                    seed: int) -> dict[str, Any]:
    """Poisson arrivals at `rate` commands/s spread over `games` (any game, any kind)."""
    rng = random.Random(seed)
    bench.probe.reset()
    loop = asyncio.get_running_loop()
    # Only the commands in flight are kept: thousands of finished tasks (each with its
    # coroutine and context) held to the end are the bench's garbage, not the bot's, yet
    # the garbage collector would scan them at every pass.
    tasks: set[asyncio.Task[None]] = set()
    errors: list[BaseException] = []

    def finished(task: asyncio.Task[None]) -> None:
        tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            errors.append(task.exception())  # type: ignore[arg-type]

    start = loop.time()
    due = start
    for i in range(samples):
        due += rng.expovariate(rate)
        delay = due - loop.time()
        if delay > 0:
            await asyncio.sleep(delay)
        game = rng.choice(games)
        task = asyncio.create_task(bench.fire(game, KINDS[i % len(KINDS)], rng))
        tasks.add(task)
        task.add_done_callback(finished)
    await _all(list(tasks))
    if errors:
        raise RuntimeError(f"{len(errors)} of {samples} commands failed: {errors[0]!r}") \
            from errors[0]
    return _result(bench, loop.time() - start, games=len(games), rate=rate)


async def closed_loop(bench: Bench, games: list[LiveGame], samples: int, workers: int,
                      seed: int) -> dict[str, Any]:
    """Saturation: `workers` clients each sending their next command as soon as the last
    is answered, to games nobody else is waiting on. Gives the stream's throughput."""
    rng = random.Random(seed)
    bench.probe.reset()
    issued = 0

    async def worker() -> None:
        nonlocal issued
        while issued < samples:
            kind = KINDS[issued % len(KINDS)]
            issued += 1
            game = rng.choice(games)
            while game.busy:
                game = rng.choice(games)
            game.busy = True
            try:
                await bench.fire(game, kind, rng)
            finally:
                game.busy = False

    start = time.perf_counter()
    await _all([asyncio.create_task(worker()) for _ in range(workers)])
    return _result(bench, time.perf_counter() - start, games=len(games), rate=None,
                   workers=workers)


async def _all(tasks: list[asyncio.Task[None]]) -> None:
    results = await asyncio.gather(*tasks, return_exceptions=True)
    errors = [r for r in results if isinstance(r, BaseException)]
    if errors:
        raise RuntimeError(f"{len(errors)} of {len(tasks)} commands failed: {errors[0]!r}") \
            from errors[0]


def _result(bench: Bench, seconds: float, **extra: Any) -> dict[str, Any]:
    probe = bench.probe
    every = [v for k in KINDS for v in probe.samples.get(k, [])]
    done = len(every)
    refused = sum(probe.refused[k] for k in KINDS)
    durable = sum(len(probe.samples.get(k, [])) - probe.refused[k] for k in ("vote", "night"))
    return {
        **extra, "seconds": seconds, "commands": done, "refused": refused,
        "throughput_per_s": done / seconds if seconds else float("nan"),
        "durable_per_s": durable / seconds if seconds else float("nan"),
        "all": summary(every),
        **{k: summary(probe.samples.get(k, [])) | {"refused": probe.refused[k]} for k in KINDS},
    }


# --- the whole section ----------------------------------------------------------------
async def measure(workdir: Path, *, sizes: list[int], samples: dict[int, int],
                  per_game_rate: float, burst_samples: int, workers: int, rotate: int,
                  log: Callable[[str], None] = print,
                  extra: Callable[[Bench], Awaitable[dict[str, Any]]] | None = None
                  ) -> dict[str, Any]:
    """Latency at each size in `sizes` (1 = one game at a time, back to back; more =
    Poisson arrivals of `per_game_rate` commands/s per game), then the saturated
    throughput over the largest size."""
    out: dict[str, Any] = {"per_game_rate": per_game_rate, "scenarios": []}
    async with running_bot(workdir / "e2e") as bench:
        biggest = max(sizes)
        spare = max(1, -(-samples.get(1, 0) // rotate)) if 1 in sizes else 0
        await bench.grow(max(biggest, spare))
        out["setup"] = {"games": len(bench.games), "seconds": bench.setup_seconds,
                        "ms_per_game": bench.setup_seconds / len(bench.games) * 1e3}
        log(f"  set up {len(bench.games)} live games in {bench.setup_seconds:.1f}s")
        for size in sizes:
            await bench.quiesce()
            if size == 1:
                res = await sequential(bench, bench.games[:spare], samples[size], rotate,
                                       seed=size)
            else:
                res = await open_loop(bench, bench.games[:size], samples[size],
                                      per_game_rate * size, seed=size)
            out["scenarios"].append(res)
            log(f"  {size} game(s): p50 {res['all']['p50_ms']:.1f} ms, "
                f"p99 {res['all']['p99_ms']:.1f} ms over {res['commands']} commands")
        await bench.quiesce()
        res = await closed_loop(bench, bench.games[:biggest], burst_samples, workers, seed=7)
        out["saturated"] = res
        log(f"  saturated over {biggest} games: {res['throughput_per_s']:.0f} commands/s")
        if extra is not None:
            out.update(await extra(bench))
    return out
