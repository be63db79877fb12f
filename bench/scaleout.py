"""Scale-out: K shard processes on one PostgreSQL, one Discord global limit between them.

Issue 30's `scaleout_games` and `scaleout_429`. What runs:

- a scratch PostgreSQL database (created here, dropped after), its schema made once;
- K children (`python -m bench.scaleout child ...`), child i a MafiaBot built as shard i
  of K inside its own harness, on that database, every snowflake of its fake Discord
  routed to shard i (bench/processes.py's ShardSnowflakes);
- ONE global limit for all of them: every child's fake Discord counts its requests in
  one shared window (50 per second, a file all children map, taken under flock), so K
  processes together meet the limit Discord keeps per token. Per-route limits stay in
  each child's fake: every route a shard uses is keyed by a channel or guild that only
  this shard serves, so they are not shared in Discord either;
- the bot's request budget shared the way a deployment shares it (cogs/delivery/sharedbudget.py:
  each process leases its share of 50/s from PostgreSQL), started after the set-up.

What this is not: the children do not share one fake *world* (gateway, guilds, members):
each holds its own shard's guilds, as Discord shows a shard only its own. The limit that
spans processes in Discord (the token's global one) is shared; nothing else would be.

Set-up (not measured; limits off, each bot's budget on a clock that skips): each child
builds `templates` games through the service in one guild and copies that guild until it
holds `games` live games (bench/scale.py), then loads every state. Then, in real time,
each child's players send /vote and /night (Poisson, `rate`/K commands/s) for `seconds`,
while the outbox delivers. Reported: live games, commands, REST requests and 429s (the
shared window's and every child's own), durable p99, outbox lag (commit -> delivered,
rows written in the window), REST per second against the limit.

`python -m bench.scaleout --postgres URL [--processes K] [--games N] [--seconds S]
[--rate R]` runs this section alone and prints JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import fcntl
import json
import mmap
import os
import random
import struct
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from tests.harness.ratelimits import RateLimits, _major, bucket_hash

from .e2e import no_windows, summary, windows
from .processes import ROOT, ShardSnowflakes, _line, _say, failed, go_and_collect, stop
from .targets import _poisson

#: shared window: start (monotonic s), count in it, counted in all, global 429s in all
_LAYOUT = struct.Struct("dqqq")
FORUM_PACE = 0.02  # commands/s per game at forum pace (issue 22)
TARGET_GAMES = 20_000


# --- one global limit over processes ------------------------------------------------
def make_window(path: Path) -> None:
    path.write_bytes(_LAYOUT.pack(0.0, 0, 0, 0))


def read_window(path: Path) -> dict[str, float]:
    _, _, counted, limited = _LAYOUT.unpack(path.read_bytes()[:_LAYOUT.size])
    return {"counted": counted, "global_429": limited}


@dataclass
class SharedRateLimits(RateLimits):
    """The fake's limits with the global window kept in a file every child maps: K
    processes' requests count against one 50/s, as one token's do at Discord. Windows are
    on CLOCK_MONOTONIC, which every process on the machine shares."""

    path: Path | None = None
    _file: Any = field(default=None, repr=False)
    _map: Any = field(default=None, repr=False)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[list[Any]]:
        if self._map is None:
            assert self.path is not None
            self._file = open(self.path, "r+b")  # noqa: SIM115 (kept for the process)
            self._map = mmap.mmap(self._file.fileno(), _LAYOUT.size)
        fcntl.flock(self._file.fileno(), fcntl.LOCK_EX)
        try:
            values = list(_LAYOUT.unpack(self._map[:_LAYOUT.size]))
            yield values
            self._map[:_LAYOUT.size] = _LAYOUT.pack(*values)
        finally:
            fcntl.flock(self._file.fileno(), fcntl.LOCK_UN)

    def check(self, method: str, route: str | None, params: dict[str, int | str],
              body: object, *, counts_globally: bool
              ) -> tuple[tuple[dict[str, object], dict[str, str]] | None, dict[str, str]]:
        if not (self.enabled and route is not None and counts_globally
                and self.path is not None):
            return super().check(method, route, params, body,
                                 counts_globally=counts_globally)
        with self._locked() as w:
            now = time.monotonic()
            if now >= w[0] + 1.0:  # a fixed window, opened by its first request
                w[0], w[1] = now, 0
            if w[1] >= self.global_limit:
                w[3] += 1
                name, limit = self.routes.get(route, (route, self.default))
                answer = self._limited(route, bucket_hash(name), "global",
                                       max(0.001, w[0] + 1.0 - now), self.clock(), limit,
                                       (name, _major(params)))
                return answer, {}
            answer2, headers = super().check(method, route, params, body,
                                             counts_globally=False)
            if answer2 is None:
                w[1] += 1
                w[2] += 1
                self.counted += 1
            return answer2, headers


# --- a child --------------------------------------------------------------------------
async def child(url: str, window: Path, state_dir: Path, shard: int, count: int,
                games: int, templates: int, seconds: float, rate: float) -> None:
    """Shard `shard` of `count`: set up, say "ready", wait for "go", play, say "result"."""
    from bot import MafiaBot, tune_runtime
    from cogs.delivery import sharedbudget
    from cogs.delivery.budget import RateBudget
    from core.storage.models import Outbox
    from tests.harness import Harness
    from tests.harness.ratelimits import VirtualClock

    from . import scale
    from .e2e import Bench, LatencyProbe, bench_settings

    settings = bench_settings(url)
    tune_runtime()
    bot = MafiaBot(settings, state_dir=state_dir, shard_count=count, shard_ids=[shard])
    # the budget is shared from the measured phase on (below), not during the set-up
    bot.coordination = sharedbudget.Coordination(
        None, sharedbudget.IdentifyCoordinator(None, "bench", 1), sharedbudget.RequestWatch())
    h = Harness(bot, timeout=300.0, retry_sleep_scale=1.0)
    limits = SharedRateLimits(path=window)
    h.world.ratelimits = h.fake.limits = limits
    h.world.next_id = ShardSnowflakes(h.world.next_id(), shard, count)  # type: ignore[assignment]
    async with h:
        probe = LatencyProbe(h)
        with probe.installed():
            bench = Bench(h, bot, probe)
            setup_clock = VirtualClock()
            limits.enabled = False
            bot.budget.clock, bot.budget.skip = setup_clock, setup_clock.at_least
            saved = no_windows(bot)  # set-up: lines and edits as they come
            t0 = time.perf_counter()
            await bench.grow(min(games, templates))
            await bench.quiesce()
            built_s = time.perf_counter() - t0
            if len(bench.games) < games:
                await scale._copy(bench, list(bench.games), games, lambda _: None)
            copied_s = time.perf_counter() - t0 - built_s
            for game in bench.games:  # a bot that has run a while holds what it serves
                await bench.service.state(game.id)
            await bench.quiesce()
            setup_s = time.perf_counter() - t0
            # real time from here: Discord's limits, the budget leased from PostgreSQL
            budget = RateBudget()
            bot.budget = bot.budgeted.budget = budget
            bot.coordination = await sharedbudget.coordinate(
                bot.http, budget, "bench.scaleout.token", url, count, [shard])
            limits.reset()
            limits.enabled = True
            windows(bot, saved)  # measured: the bot's own windows
            _say("ready", {"shard": shard, "games": len(bench.games), "setup_s": setup_s,
                           "built_s": built_s, "copied_s": copied_s})
            loop = asyncio.get_running_loop()
            go = await loop.run_in_executor(None, sys.stdin.readline)
            if go.strip() != "go":
                raise RuntimeError(f"shard {shard}: expected 'go', got {go!r}")
            probe.reset()
            rng = random.Random(41 + shard)
            wall0 = datetime.now(UTC)
            start = time.perf_counter()
            sent = await _play(bench, rate, rng, start + seconds)
            played_s = time.perf_counter() - start
            await bot.outbox.idle(within=600)
            drained_s = time.perf_counter() - start
            durable = [v for k in ("vote", "night") for v in probe.samples.get(k, [])]
            ids = {g.id for g in bench.games}
            rows = await Outbox.filter(created_at__gte=wall0).values_list(
                "game_id", "created_at", "delivered_at")
            lags = [(d - c).total_seconds() for gid, c, d in rows
                    if gid in ids and d is not None]
            undelivered = sum(1 for gid, _, d in rows if gid in ids and d is None)
            shared = bot.coordination.shared
            res = {
                "shard": shard, "games": len(bench.games), "setup_s": setup_s,
                "built_s": built_s, "copied_s": copied_s,
                "commands": sent, "seconds": played_s, "drained_s": drained_s,
                "durable": len(durable), "reads": len(probe.samples.get("role", [])),
                "refused": sum(probe.refused[k] for k in ("vote", "night")),
                "rest": limits.counted, "limited": limits.limited,
                "limited_scopes": sorted({hit.scope for hit in limits.hits}),
                "outbox_rows": len(lags), "undelivered": undelivered,
                "lags": lags, "latencies": durable, "start": start,
                "renewals": shared.renewals if shared is not None else 0,
            }
            await sharedbudget.close(bot.coordination)
            bot.coordination = None
    _say("result", res)


async def _play(bench: Any, rate: float, rng: random.Random, stop: float) -> int:
    """/vote and /night in turn at `rate`/s (Poisson) over the bench's games until `stop`
    (bench.targets' Poisson sender)."""
    turns = iter(range(1, 1 << 62))
    kinds = ("vote", "night")
    return await _poisson(bench, bench.games, lambda _game: kinds[next(turns) % 2], rate,
                          rng, lambda _sent: time.perf_counter() >= stop)


# --- the parent -----------------------------------------------------------------------
def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, int(-(-len(ordered) * q // 100)) - 1))]


async def _scratch_db(postgres: str, name: str, *, drop: bool = False) -> str:
    """Create (or drop) database `name` on the server of `postgres`; its URL."""
    import asyncpg

    conn = await asyncpg.connect(postgres)
    try:
        await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        if not drop:
            await conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        await conn.close()
    base, _, _ = postgres.rpartition("/")
    return f"{base}/{name}"


async def _init_schema(url: str) -> None:
    from core.storage.db import close_db, init_db

    await init_db(url)
    await close_db()


async def measure(postgres: str, workdir: Path, *, processes: int = 4, games: int = 5000,
                  templates: int = 50, seconds: float = 600.0, rate: float = 30.0,
                  log: Callable[[str], None] = print, limit_s: float = 3600.0
                  ) -> dict[str, Any]:
    """K children, `games` live games each, `rate` commands/s in all for `seconds`."""
    await asyncio.to_thread(workdir.mkdir, parents=True, exist_ok=True)
    name = f"mafia_bench_scaleout_{os.getpid()}"
    url = await _scratch_db(postgres, name)
    window = workdir / "global-window"
    make_window(window)
    procs: list[asyncio.subprocess.Process] = []
    files: list[IO[bytes]] = []
    logs = [workdir / f"scaleout-{i}.log" for i in range(processes)]
    try:
        await _init_schema(url)
        for shard in range(processes):
            state_dir = workdir / f"shard-{shard}"
            state_dir.mkdir(exist_ok=True)
            files.append(logs[shard].open("wb"))
            procs.append(await asyncio.create_subprocess_exec(
                sys.executable, "-m", "bench.scaleout", "child", url, str(window),
                str(state_dir), "--shard", str(shard), "--processes", str(processes),
                "--games", str(games), "--templates", str(templates),
                "--seconds", str(seconds), "--rate", str(rate / processes), cwd=ROOT,
                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=files[-1], limit=1 << 28))
        log(f"  scaleout: {processes} processes setting up {games} games each ...")
        ready = await asyncio.wait_for(
            asyncio.gather(*(_line(p, "ready") for p in procs)), limit_s)
        log(f"  scaleout: set up in {max(r['setup_s'] for r in ready):.0f} s (built "
            f"{max(r['built_s'] for r in ready):.0f} s, copied "
            f"{max(r['copied_s'] for r in ready):.0f} s); "
            f"{rate:.1f} commands/s for {seconds:g} s ...")
        results = await go_and_collect(procs, limit_s, exit_s=300)
    except Exception as err:
        raise failed("bench.scaleout", err, logs) from err
    finally:
        await stop(procs, files)
        with contextlib.suppress(Exception):
            await _scratch_db(postgres, name, drop=True)
    return combine(results, read_window(window), rate=rate, seconds=seconds)


def combine(results: list[dict[str, Any]], window: dict[str, float], *, rate: float,
            seconds: float) -> dict[str, Any]:
    lags = [v for r in results for v in r.pop("lags")]
    lat = [v for r in results for v in r.pop("latencies")]
    first = min(r.pop("start") for r in results)
    del first
    commands = sum(r["commands"] for r in results)
    rest = sum(r["rest"] for r in results)
    played = max(r["seconds"] for r in results)
    drained = max(r["drained_s"] for r in results)
    games = sum(r["games"] for r in results)
    return {
        "processes": len(results), "games": games, "rate": rate, "seconds": played,
        "drained_s": drained, "commands": commands,
        "durable": sum(r["durable"] for r in results),
        "reads": sum(r["reads"] for r in results),
        "refused": sum(r["refused"] for r in results),
        "rest": rest, "rest_per_s": rest / drained if drained else float("nan"),
        "rest_per_command": rest / max(1, commands),
        "limited": sum(r["limited"] for r in results),
        "global_429": window["global_429"], "window_counted": window["counted"],
        "durable_latency": summary(lat),
        "outbox_rows": len(lags), "undelivered": sum(r["undelivered"] for r in results),
        "outbox_lag_p50_s": _pct(lags, 50), "outbox_lag_p99_s": _pct(lags, 99),
        "forum_games_carried": rate / FORUM_PACE,
        "setup_s": max(r["setup_s"] for r in results),
        "per_process": results, "target_seconds": seconds,
    }


def scaleout_targets(out: dict[str, Any]) -> dict[str, Any]:
    """scaleout_games: live games the K processes held while their players played at a
    rate whose REST fits the limit, counted only if nothing was answered 429."""
    ok = out["limited"] == 0 and out["undelivered"] == 0
    return {
        "scaleout_games": {"value": out["games"], "target": f">= {TARGET_GAMES}",
                           "met": out["games"] >= TARGET_GAMES and ok,
                           "processes": out["processes"], "rate": out["rate"],
                           "durable_p99_ms": out["durable_latency"]["p99_ms"],
                           "outbox_lag_p99_s": out["outbox_lag_p99_s"]},
        "scaleout_429": {"value": out["limited"], "target": "0", "met": out["limited"] == 0},
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.scaleout",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("role", nargs="?", choices=["child"], help=argparse.SUPPRESS)
    parser.add_argument("paths", nargs="*", help=argparse.SUPPRESS)
    parser.add_argument("--postgres", default="postgres://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--shard", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--games", type=int, default=5000, help="live games per process")
    parser.add_argument("--templates", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=600.0)
    parser.add_argument("--rate", type=float, default=30.0, help="commands/s in all")
    parser.add_argument("--workdir", type=Path)
    args = parser.parse_args(argv)
    import logging

    logging.basicConfig(level=logging.WARNING)
    if args.role == "child":
        url, window, state_dir = args.paths
        asyncio.run(child(url, Path(window), Path(state_dir), args.shard, args.processes,
                          args.games, args.templates, args.seconds, args.rate))
        return
    import shutil
    import tempfile

    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="mafia-bench-scaleout-"))
    try:
        out = asyncio.run(measure(args.postgres, workdir, processes=args.processes,
                                  games=args.games, templates=args.templates,
                                  seconds=args.seconds, rate=args.rate))
    finally:
        if args.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)
    print(json.dumps(out, indent=1, default=str))


if __name__ == "__main__":
    main()
