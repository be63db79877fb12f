"""Run every benchmark once and print one table: `python -m bench.run [--smoke] [--json F]`.

Sections (README, "Performance"):
  engine    whole simulated games per second; night resolution cost vs player count
  floor     bare single-row aiosqlite commits (the physical floor of a durable command)
  backends  the same command stream through the GameService on SQLite and PostgreSQL;
            one process's durable stream through the GameService alone over the floor
  discord   /vote, /night, /role through the real bot and the harness on SQLite on disk:
            p50/p95/p99 with 1, 100 and 500 games played at once; saturated throughput
  processes the saturated stream again with K bot processes (shard i of K each) on one
            SQLite file (K = --processes, default the CPU count)
  rest      Discord REST calls per complete 12-player game against a lower bound
  scale     5,000 live games in one process (the first guild's built, the rest copied):
            p99 under 0.02 commands/s per game, memory per game, restart (bench/scale.py)
  memory    memory per live game at 1,000 live games
  restart   time for a new bot to resume 1,000 live games
  archive   the archive and vote pictures of a 30-player 15-day game, and the event
            loop's lateness while they are built (bench/archive.py)

  targets   issue 30's rows, Discord's limits in real time, no virtual clock where a
            REST figure is taken (bench/targets.py): REST per command and per phase
            change, a storm of night ends with deaths and lynch day ends, durable p99,
            outbox lag, memory per game at day 3; its storm (500 games, half night ends
            with deaths, half lynch day ends) replaced the old storm of empty day ends
  scaleout  4 shard processes on a scratch PostgreSQL database, one Discord global limit
            shared between them, the request budget leased from PostgreSQL, 10 minutes
            of play at a rate whose REST fits 50/s (bench/scaleout.py)

--smoke runs tiny sizes (what CI runs through tests/test_bench_smoke.py): it checks
that everything still works; its figures mean nothing. --quick (or MAFIA_BENCH_QUICK=1)
runs every section small enough to finish in minutes on a shared machine: its figures
are quick-mode figures (docs/performance.md, "Method"), not the targets' full sizes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import math
import os
import platform
import shutil
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from cogs.delivery.budget import GLOBAL_LIMIT

from . import archive as archive_bench
from . import backends, floor, resume
from . import balance as balance_bench
from . import engine as engine_bench
from . import estimates as estimates_bench
from . import scale as scale_bench
from . import scaleout as scaleout_bench
from . import targets as targets_bench
from .e2e import Bench, measure
from .processes import measure as measure_processes
from .rest import CHANNEL_LIMIT, rest_per_game

P99_TARGET_MS = 50.0
FLOOR_RATIO_TARGET = 0.5
REST_RATIO_TARGET = 1.5


@dataclass
class Sizes:
    engine_players: list[int] = field(default_factory=lambda: [10, 20, 30])
    engine_min_games: int = 5
    engine_budget_s: float = 3.0
    night_players: list[int] = field(default_factory=lambda: list(range(6, 31, 3)))
    night_seeds: int = 5
    night_repeat: int = 7
    floor_commits: int = 2000
    e2e_games: list[int] = field(default_factory=lambda: [1, 100, 500])
    e2e_samples: dict[int, int] = field(default_factory=lambda: {1: 300, 100: 600, 500: 1500})
    per_game_rate: float = 0.2  # commands per second per game (see README)
    saturated_samples: int = 1500
    saturated_workers: int = 32
    processes: int = field(default_factory=lambda: _cpus())  # bot processes (shards)
    process_games: int = 250  # live games per process
    process_samples: int = 1500  # commands per process
    process_workers: int = 32  # clients per process
    rotate: int = 30  # the one-game run moves to a fresh game after this many commands
    live_games: int = 1000
    backend_games: int = 20
    backend_players: int = 12
    stream_games: int = 64  # the service's own durable stream (bench/backends.py)
    stream_workers: int = 32
    stream_samples: int = 3000
    scaleout_processes: int = 4
    scaleout_games: int = 5000  # live games per process
    scaleout_templates: int = 10  # of them built through the service; the rest copied
    scaleout_seconds: float = 600.0
    #: commands/s in all; None: the least of 80 % of what fits 50 REST/s at the measured
    #: rest_per_command and what this machine carries (`scaleout_per_core` a core)
    scaleout_rate: float | None = None
    #: durable commands/s one core carries for 4 shard processes and their PostgreSQL:
    #: 40/s on this 2-core machine held p99 196 ms with nothing left behind, 160/s fell
    #: 30 minutes behind (docs/performance.md, round 3)
    scaleout_per_core: float = 20.0
    scale_games: int = 5000  # live games in one process (issue 22: ten times the games)
    scale_templates: int = 50  # of them built through the service; the rest copied
    scale_samples: int = 3000  # commands measured (30 s at 100 commands/s)
    scale_rate: float = scale_bench.RATE_PER_GAME  # commands/s per game
    postgres: str | None = None
    archive_players: int = 30
    archive_days: int = 15
    # command latency while `estimates_count` balance estimates are asked at once
    estimates_games: int = 20
    estimates_samples: int = 300
    estimates_rate: float = 10.0
    estimates_count: int = 30
    targets: targets_bench.TargetSizes = field(default_factory=targets_bench.TargetSizes)
    mode: str = "full"


SMOKE = Sizes(
    engine_players=[10, 20, 30], engine_min_games=1, engine_budget_s=0.0,
    night_players=[6, 12], night_seeds=1, night_repeat=1, floor_commits=50,
    e2e_games=[1, 3], e2e_samples={1: 6, 3: 6}, per_game_rate=5.0, saturated_samples=9,
    saturated_workers=3, processes=2, process_games=2, process_samples=6, process_workers=2,
    rotate=3, live_games=4, backend_games=2, backend_players=6, stream_games=3,
    stream_workers=2, stream_samples=6, archive_players=8,
    archive_days=2, scaleout_processes=2, scaleout_games=2, scaleout_templates=2,
    scaleout_seconds=2.0, scaleout_rate=2.0, scale_games=6, scale_templates=2,
    scale_samples=6, scale_rate=1.0, estimates_games=2, estimates_samples=6,
    estimates_rate=5.0, estimates_count=3, targets=targets_bench.SMOKE, mode="smoke",
)

QUICK = Sizes(
    engine_players=[10, 20, 30], engine_min_games=2, engine_budget_s=1.0,
    night_players=[6, 12, 18, 24, 30], night_seeds=2, night_repeat=3, floor_commits=500,
    e2e_games=[1, 50], e2e_samples={1: 90, 50: 300}, per_game_rate=0.2,
    saturated_samples=300, saturated_workers=16, processes=2, process_games=20,
    process_samples=200, process_workers=8, rotate=30, live_games=100, backend_games=4,
    backend_players=12, stream_games=16, stream_workers=16, stream_samples=800,
    scaleout_processes=4, scaleout_games=250, scaleout_templates=10,
    scaleout_seconds=60.0, scale_games=300, scale_templates=10,
    scale_samples=300, scale_rate=1.0, archive_players=30, archive_days=15,
    estimates_games=10, estimates_samples=100, targets=targets_bench.QUICK, mode="quick",
)


async def run(sizes: Sizes, workdir: Path, say: Any = print, *,
              issue30_only: bool = False, older_only: bool = False) -> dict[str, Any]:
    """Every section, issue 30's first (each prints its lines as soon as measured, so a
    run cut short keeps them); `issue30_only`: those alone; `older_only`: the others."""
    out: dict[str, Any] = {"sizes": asdict(sizes), "machine": {
        "python": platform.python_version(), "cpus": _cpus(), "platform": platform.platform(),
        "load_before": os.getloadavg()[0]}}
    started = time.perf_counter()
    marks: list[tuple[str, float]] = []

    def log(line: str) -> None:  # a line that does not start indented opens a section
        if not line.startswith(" "):
            marks.append((line.split(":", 1)[0], time.perf_counter()))
        say(line)

    if not older_only:
        # --- issue 30's rows first: the real-time section, the scale-out (its rate
        # follows the rest_per_command measured before it), the same-work floor
        log("targets: issue 30's rows, Discord's limits in real time ...")
        out["targets_run"] = await targets_bench.measure(workdir / "targets", sizes.targets,
                                                         log=log)

        say(targets_table(out))
        rpc = out["targets_run"]["steady"]["rest_per_command"]
        fits = min(200.0, 0.8 * GLOBAL_LIMIT / max(rpc, 0.05))
        machine = sizes.scaleout_per_core * (os.cpu_count() or 1)
        rate = sizes.scaleout_rate or min(fits, machine)
        log(f"scaleout: {sizes.scaleout_processes} shard processes on PostgreSQL, one global "
            f"limit, {rate:.1f} commands/s (fits 50 REST/s: {fits:.1f}/s; this machine: "
            f"{machine:.1f}/s) ...")
        out["scaleout"] = await _scaleout(sizes, workdir / "scaleout", rate, log)
        out["scaleout"].update(rate_fits=fits, rate_machine=machine)

        say(scaleout_line(out["scaleout"]))
        log("stream: one process's durable commands through the GameService alone ...")
        out["stream"] = await backends.stream(
            workdir, games=sizes.stream_games, workers=sizes.stream_workers,
            samples=sizes.stream_samples, floor_commits=sizes.floor_commits)

        say(stream_line(out))
    if issue30_only:
        return _finish(out, marks, started)

    log("engine: whole games per second ...")
    out["engine_games"] = [
        engine_bench.games_per_second(n, min_games=sizes.engine_min_games,
                                      budget=sizes.engine_budget_s)
        for n in sizes.engine_players]
    log("balance: the estimate at /game setup, 30 players ...")
    # its own event loop (it starts the estimator's process pool), so off this one
    out["balance"] = await asyncio.to_thread(balance_bench.balance_estimate,
                                             smoke=sizes is SMOKE)
    log(f"estimates: command latency while {sizes.estimates_count} balance estimates are "
        "asked at once ...")
    out["estimates"] = await estimates_bench.measure(
        workdir / "estimates", games=sizes.estimates_games,
        samples=sizes.estimates_samples, rate=sizes.estimates_rate,
        estimates=sizes.estimates_count)
    log("engine: night resolution vs players ...")
    out["engine_night"] = engine_bench.night_scaling(
        sizes.night_players, seeds=sizes.night_seeds, repeat=sizes.night_repeat)

    log("floor: bare aiosqlite commits ...")
    out["floor"] = await floor.bare_commits(workdir / "floor.db", sizes.floor_commits)

    log("backends: the service on SQLite and PostgreSQL ...")
    out["backends"] = await backends.compare(workdir, sizes.backend_games,
                                             sizes.backend_players, sizes.postgres)
    if "stream" not in out:
        log("stream: one process's durable commands through the GameService alone ...")
        out["stream"] = await backends.stream(
            workdir, games=sizes.stream_games, workers=sizes.stream_workers,
            samples=sizes.stream_samples, floor_commits=sizes.floor_commits)

    async def grow_to_live(bench: Bench) -> dict[str, Any]:
        log(f"  growing to {sizes.live_games} live games for memory and restart ...")
        await bench.grow(max(sizes.live_games, len(bench.games)))
        return {"live_games": len(bench.games)}

    log("discord: the real bot through the harness ...")
    out["discord"] = await measure(
        workdir, sizes=sizes.e2e_games, samples=sizes.e2e_samples,
        per_game_rate=sizes.per_game_rate, burst_samples=sizes.saturated_samples,
        workers=sizes.saturated_workers, rotate=sizes.rotate, log=log, extra=grow_to_live)
    sat = out["discord"]["saturated"]
    out["floor_ratio"] = {
        "stream_per_s": sat["throughput_per_s"], "durable_per_s": sat["durable_per_s"],
        "floor_per_s": out["floor"]["commits_per_s"],
        "ratio": sat["throughput_per_s"] / out["floor"]["commits_per_s"],
        "durable_ratio": sat["durable_per_s"] / out["floor"]["commits_per_s"],
    }

    log(f"processes: the saturated stream with {sizes.processes} bot processes (shards) "
        "on one SQLite file ...")
    out["processes"] = many = await measure_processes(
        workdir / "shards", processes=sizes.processes, games=sizes.process_games,
        samples=sizes.process_samples, workers=sizes.process_workers)
    log(f"  {many['processes']} processes over {many['games']} games: "
        f"{many['throughput_per_s']:.0f} commands/s")
    out["floor_ratio"].update(
        processes_per_s=many["throughput_per_s"],
        processes_durable_per_s=many["durable_per_s"],
        processes_ratio=many["throughput_per_s"] / out["floor"]["commits_per_s"],
        processes_durable_ratio=many["durable_per_s"] / out["floor"]["commits_per_s"])

    log("restart and memory: fresh processes on the same database ...")
    db, state_dir = workdir / "e2e" / "bench.db", workdir / "e2e"
    empty = workdir / "empty.db"
    await _empty_db(empty)
    full = resume.run_child(db, state_dir)
    base = resume.run_child(empty, state_dir)
    full_t = resume.run_child(db, state_dir, traced=True)
    base_t = resume.run_child(empty, state_dir, traced=True)
    rss, traced = resume.compare(full, base), resume.compare(full_t, base_t)
    out["memory"] = {"games": rss["games"], "rss_bytes_per_game": rss["bytes_per_game"],
                     "traced_bytes_per_game": traced["bytes_per_game"]}
    out["restart"] = rss

    log("rest: REST calls of a whole 12-player game ...")
    out["rest"] = await rest_per_game(workdir)

    log("archive: the archive and the vote pictures of a long game ...")
    out["archive"] = await archive_bench.measure_async(sizes.archive_players,
                                                       sizes.archive_days)

    log(f"scale: {sizes.scale_games} live games in one process ...")
    out["scale"] = await scale_bench.measure(
        workdir / "scale", sizes.scale_games, samples=sizes.scale_samples,
        rate_per_game=sizes.scale_rate, templates=sizes.scale_templates, log=log)

    return _finish(out, marks, started)


def _finish(out: dict[str, Any], marks: list[tuple[str, float]], started: float
            ) -> dict[str, Any]:
    out["machine"]["load_after"] = os.getloadavg()[0]
    out["targets"] = targets(out)
    out["seconds"] = time.perf_counter() - started
    ends = [t for _, t in marks[1:]] + [started + out["seconds"]]
    out["section_s"] = {}
    for (name, t0), t1 in zip(marks, ends, strict=True):
        out["section_s"][name] = out["section_s"].get(name, 0.0) + t1 - t0
    return out


DEFAULT_POSTGRES = "postgres://postgres@127.0.0.1:5432/postgres"


async def _scaleout(sizes: Sizes, workdir: Path, rate: float, log: Any) -> dict[str, Any]:
    """The scale-out section, or why it could not run (no PostgreSQL server)."""
    import asyncpg

    server = sizes.postgres or os.environ.get("MAFIA_BENCH_POSTGRES") or DEFAULT_POSTGRES
    try:
        conn = await asyncpg.connect(server, timeout=5)
        await conn.close()
    except (OSError, asyncpg.PostgresError) as err:
        return {"missing": f"no PostgreSQL at {server}: {err}"}
    try:
        return await scaleout_bench.measure(
            server, workdir, processes=sizes.scaleout_processes, games=sizes.scaleout_games,
            templates=sizes.scaleout_templates, seconds=sizes.scaleout_seconds, rate=rate,
            log=log)
    except RuntimeError as err:  # e.g. a shard's outbox not drained: the machine's ceiling
        # reported as not measured, like a missing server: the run goes on to its TARGETS
        return {"missing": f"the scale-out did not finish at {rate:.1f} commands/s: {err}"}


async def _empty_db(path: Path) -> None:
    from core.storage.db import close_db, init_db

    await init_db(f"sqlite://{path}")
    await close_db()


def _cpus() -> int:
    return len(os.sched_getaffinity(0))


def issue30_targets(out: dict[str, Any]) -> dict[str, Any]:
    """Issue 30's rows: the real-time section, the same-work floor, the scale-out."""
    peak = out["targets_run"]["storm"]["channel_peak"]["peak"]
    return {
        **targets_bench.targets(out["targets_run"]),
        # the stream against a floor doing the same writes in the same grouping (the
        # single-row floor above is the disk's)
        "stream_over_same_work_floor": {
            "value": out["stream"]["same_work_ratio"], "target": ">= 0.4",
            "met": out["stream"]["same_work_ratio"] >= 0.4},
        **_scaleout_rows(out["scaleout"]),
        # Discord's per-channel limit (5 messages per 5 s), in the storm (and the REST game)
        "busiest_channel_per_5s": {
            "value": max(peak, out["rest"]["channel_peak"]["peak"]) if "rest" in out
            else peak, "target": f"<= {CHANNEL_LIMIT}",
            "met": max(peak, out["rest"]["channel_peak"]["peak"] if "rest" in out else 0)
            <= CHANNEL_LIMIT},
    }


def targets(out: dict[str, Any]) -> dict[str, Any]:
    if "discord" not in out:
        return issue30_targets(out)
    scenarios = out["discord"]["scenarios"]
    biggest = max(scenarios, key=lambda s: s["games"])
    night = out["engine_night"]
    return {
        "p99_ms_at_max_games": {"games": biggest["games"], "value": biggest["all"]["p99_ms"],
                                "target": f"< {P99_TARGET_MS:g}",
                                "met": biggest["all"]["p99_ms"] < P99_TARGET_MS},
        # The bot as deployed on this machine: one shard process per core (README,
        # "Scale-out"); the one-process figure is printed beside it.
        "throughput_over_floor": {"value": out["floor_ratio"]["processes_ratio"],
                                  "processes": out["processes"]["processes"],
                                  "target": f">= {FLOOR_RATIO_TARGET:g}",
                                  "met": out["floor_ratio"]["processes_ratio"]
                                  >= FLOOR_RATIO_TARGET},
        # The GameService's own stream (no Discord) over the disk's single-row floor
        # measured beside it: not the same work (the stream batches many commands a
        # transaction); stream_over_same_work_floor below is the fair comparison.
        "service_stream_over_floor": {"value": out["stream"]["ratio"],
                                      "floor": "the disk's single-row commits",
                                      "target": f">= {FLOOR_RATIO_TARGET:g}",
                                      "met": out["stream"]["ratio"] >= FLOOR_RATIO_TARGET},
        "rest_over_bound": {"value": out["rest"]["ratio"], "target": f"<= {REST_RATIO_TARGET:g}",
                            "met": out["rest"]["ratio"] <= REST_RATIO_TARGET
                            and not out["rest"]["storm"]},
        "night_growth_linear": {"value": night["apply"]["slope"], "target": "slope <= 1.15",
                                "met": bool(night["apply"]["linear_or_better"])},
        "balance_estimate_s": {"value": out["balance"]["seconds"],
                               "games_per_s": out["balance"]["games_per_s"],
                               "target": f"< {balance_bench.TARGET_S:g}",
                               "met": bool(out["balance"]["ok"])},
        "estimate_command_p99_ms": estimates_bench.target(out["estimates"]),
        "archive_build_s": {"value": out["archive"]["total_s"],
                            "target": f"< {archive_bench.TARGET_S:g}",
                            "met": bool(out["archive"]["ok"])},
        **scale_bench.scale_targets(out["scale"]),
        **(issue30_targets(out) if "targets_run" in out else {}),
    }


def _scaleout_rows(so: dict[str, Any]) -> dict[str, Any]:
    if "missing" in so:
        return {"scaleout_games": {"value": None, "target": f">= {scaleout_bench.TARGET_GAMES}",
                                   "met": False, "measured": False},
                "scaleout_429": {"value": None, "target": "0", "met": False,
                                 "measured": False}}
    return scaleout_bench.scaleout_targets(so)


# --- the table -----------------------------------------------------------------------
def _f(x: float, digits: int = 1) -> str:
    return "nan" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:,.{digits}f}"


def _peak(p: dict[str, Any]) -> str:
    return (f"busiest channel: {p['peak']} messages within {_f(p['window_s'], 0)} s "
            f"(Discord allows {p['limit']}; {p['messages']} messages in {p['channels']} "
            "channels)")


def table(out: dict[str, Any]) -> str:
    lines: list[str] = []
    add = lines.append
    m = out["machine"]
    if "discord" not in out:  # issue 30's sections alone
        add(f"Mafia bot benchmark, issue 30's sections alone ({m['cpus']} CPUs), "
            f"{_f(out['seconds'], 0)} s in all; load average {_f(m['load_before'], 2)} "
            f"before, {_f(m['load_after'], 2)} after (other processes share the CPUs)")
        add("")
        for part in (targets_table(out), scaleout_line(out["scaleout"]), stream_line(out),
                     "", targets_rows(out)):
            add(part)
        return "\n".join(lines)
    add(f"Mafia bot benchmark ({m['cpus']} CPUs, Python {m['python']}), "
        f"{_f(out['seconds'], 0)} s in all; load average {_f(m['load_before'], 2)} before, "
        f"{_f(m['load_after'], 2)} after (other processes share the CPUs)")
    add("")
    b = out["backends"]
    add(f"STORAGE  the service, {b['sqlite']['games']} games of {b['sqlite']['players']} "
        "played at once (every module on), commands/s durably committed")
    for name in ("sqlite", "postgres"):
        col = b[name]
        add(f"  {name:<9} " + (col["missing"] if "missing" in col else
                               f"{_f(col['commands_per_s'], 0):>6} commands/s "
                               f"({col['commands']} commands, replays verified "
                               f"{col['verified']}/{col['games']})"))
    if "commands_per_s" in b["postgres"]:
        ratio = b["postgres"]["commands_per_s"] / b["sqlite"]["commands_per_s"]
        add(f"  postgres / sqlite = {_f(ratio, 2)}")
    st = out["stream"]
    add(f"  one process's durable stream, the service alone ({st['workers']} clients over "
        f"{st['games']} live games, votes and night orders, group commit, no Discord): "
        f"{_f(st['commands_per_s'], 0)} commands/s, {_f(st['cpu_ms_per_command'], 3)} ms CPU "
        f"each, {_f(st['commands_per_transaction'], 1)} a transaction")
    add(f"    the disk's single-row floor beside it {_f(st['floor_per_s'], 0)} commits/s "
        f"(before {_f(st['floor_before_per_s'], 0)}, after {_f(st['floor_after_per_s'], 0)}"
        f"); stream/single-row floor = {_f(st['ratio'], 3)} (not the same work: the "
        f"stream batches; against the same writes in the same grouping "
        f"{_f(st['same_work_ratio'], 3)})")
    add("ENGINE  whole simulated games (core.play.sim.play, every module on)")
    for g in out["engine_games"]:
        add(f"  {g['players']:>2} players   {_f(g['games_per_s'], 2):>8} games/s"
            f"   ({_f(g['commands_per_game'], 0)} commands a game, "
            f"{_f(g['commands_per_s'], 0)} commands/s)")
    night = out["engine_night"]
    add("ENGINE  one night resolution (engine.apply of the closing Advance)")
    add("  players  apply us  us/player  resolve-only us")
    for r in night["sizes"]:
        add(f"  {r['players']:>7}  {_f(r['apply_us'], 0):>8}  {_f(r['apply_us_per_player'], 1):>9}"
            f"  {_f(r['resolve_us'], 0):>15}")
    a = night["apply"]
    add(f"  growth: log-log slope {_f(a['slope'], 2)} (1 = linear), per-player cost at "
        f"{night['sizes'][-1]['players']} vs {night['sizes'][0]['players']} players x"
        f"{_f(a['per_player_ratio'], 2)} -> "
        f"{'no worse than linear' if a['linear_or_better'] else 'WORSE THAN LINEAR'}")
    add("")
    d = out["discord"]
    add(f"DISCORD  interaction received -> response sent (ms), real bot + harness, SQLite on "
        f"disk; {_f(d['per_game_rate'], 2)} commands/s per game")
    add("  games     command     n     p50     p95     p99   refused")
    for s in d["scenarios"]:
        label = "1 (seq)" if s.get("rate") is None else str(s["games"])
        for kind in ("vote", "night", "role", "all"):
            r = s[kind]
            add(f"  {label:>7}  {kind:>7} {r['n']:>6} {_f(r['p50_ms']):>7} {_f(r['p95_ms']):>7}"
                f" {_f(r['p99_ms']):>7}   {r.get('refused', s['refused'] if kind == 'all' else 0)}")
    sat = d["saturated"]
    add(f"  saturated ({sat['workers']} clients over {sat['games']} games): "
        f"{_f(sat['throughput_per_s'], 0)} commands/s "
        f"({_f(sat['durable_per_s'], 0)} durable/s), p99 {_f(sat['all']['p99_ms'])} ms")
    fr = out["floor_ratio"]
    add(f"  floor: {_f(fr['floor_per_s'], 0)} bare aiosqlite commits/s "
        f"({_f(out['floor']['ms_per_commit'], 3)} ms each); the bot's stream through the "
        f"fake Discord (in this process, its CPU counted) / floor = {_f(fr['ratio'], 3)}"
        f" (durable commands only: {_f(fr['durable_ratio'], 3)})")
    add(f"  set-up: {d['setup']['games']} live games via the service, "
        f"{_f(d['setup']['ms_per_game'], 0)} ms a game")
    many = out["processes"]
    add(f"  saturated, {many['processes']} processes (shards) on one SQLite file "
        f"({many['workers']} clients over {many['games']} games): "
        f"{_f(many['throughput_per_s'], 0)} commands/s ({_f(many['durable_per_s'], 0)} "
        f"durable/s), p99 {_f(many['all']['p99_ms'])} ms; "
        f"stream/floor = {_f(fr['processes_ratio'], 3)} "
        f"(durable: {_f(fr['processes_durable_ratio'], 3)})")
    add("    per process: " + ", ".join(
        f"shard {p['shard']} {_f(p['throughput_per_s'], 0)}/s over {_f(p['seconds'], 1)} s"
        for p in many["per_process"])
        + f"; all {_f(many['seconds'], 1)} s, overlapping {_f(many['overlap_s'], 1)} s, "
        f"{_f(many['cores_busy'], 2)} cores busy")
    add("")
    r = out["rest"]
    add(f"REST  one complete {r['players']}-player game: {r['rest_calls']} calls "
        f"({r['responses']} interaction responses) for {r['interactions']} interactions, "
        f"{r['phases']} phases, {r['teams']} private channels")
    add(f"  lower bound {r['lower_bound']} = {r['interactions']} responses + "
        f"1 signup board + {r['public_actions']} public action posts + "
        f"{r['phases'] + 1} phase announcements + {r['teams'] + 1} channel set-up + "
        f"{r['places_bound']} private places and ping role "
        f"({r['places_calls']} calls made for them); ratio {_f(r['ratio'], 2)}")
    worst = r["max_rest_for_one_command"]
    add(f"  most calls caused by one command: {worst['calls']} ({worst['command']}); "
        f"DM channels opened: {r['dm_channels_opened']}; "
        f"{'STORM' if r['storm'] else 'no per-player storm'}")
    add("  " + _peak(r["channel_peak"]))
    add("")
    mem, rs = out["memory"], out["restart"]
    add(f"MEMORY  {mem['games']} live games: {_f(mem['rss_bytes_per_game'] / 1024)} KiB RSS "
        f"per game, {_f(mem['traced_bytes_per_game'] / 1024)} KiB traced (tracemalloc)")
    add(f"RESTART {rs['games']} live games: bot ready in {_f(rs['ready_s'], 2)} s "
        f"({rs['deadlines']} deadlines re-armed), every state loaded at "
        f"{_f(rs['loaded_s'], 2)} s (empty database: {_f(rs['loaded_s_empty'], 2)} s)")
    sc = out["scale"]
    lat, sr, hl = sc["latency"], sc["restart"], sc["health"]
    add(f"SCALE  {sc['games']:,} live games in one process ({sc['templates']} built through "
        f"the service in {_f(sc['built_s'], 0)} s, the rest copies of their guild, made in "
        f"{_f(sc['copied_s'], 0)} s; every state loaded in {_f(sc['warm_s'], 1)} s)")
    add(f"  {lat['commands']} commands at {_f(sc['rate_per_game'], 2)}/s per game "
        f"({_f(lat['rate'], 0)}/s): p50 {_f(lat['all']['p50_ms'])} ms, "
        f"p95 {_f(lat['all']['p95_ms'])} ms, p99 {_f(lat['all']['p99_ms'])} ms; "
        f"refused {lat['refused']}, REST failures {hl['failed']}, parked {hl['parked']}")
    add(f"  memory {_f(sc['memory_kib_per_game'])} KiB RSS per live game (fresh process, "
        f"every state loaded); restart: ready in {_f(sr['ready_s'], 2)} s "
        f"({sr['deadlines']:,} deadlines re-armed), every state loaded lazily by "
        f"{_f(sr['loaded_s'], 2)} s; database {_f(sc['db_bytes'] / 2**20, 0)} MiB")
    add("")
    add(archive_bench.table(out["archive"]))
    add("")
    add(balance_bench.table(out["balance"]))
    add(estimates_bench.table(out["estimates"]))
    add("")
    if "targets_run" in out:
        add(targets_table(out))
        add(scaleout_line(out["scaleout"]))
        add(stream_line(out))
        add("")
    add(targets_rows(out))
    k = out["processes"]["processes"]
    add(f"  (throughput_over_floor: {k} shard processes, one per CPU, on one SQLite file; "
        f"one bot process alone through the fake Discord: {_f(out['floor_ratio']['ratio'], 3)}"
        f"; service_stream_over_floor: the GameService alone, one process, over the disk's "
        "single-row floor, not the same work: stream_over_same_work_floor is the fair one)")
    return "\n".join(lines)


def targets_rows(out: dict[str, Any]) -> str:
    """The TARGETS rows (name, value, target, verdict) as lines."""
    lines: list[str] = []
    add = lines.append
    add(f"TARGETS ({out['sizes']['mode']} mode"
        + ("" if out["sizes"]["mode"] == "full" else ": figures at reduced sizes, "
           "see docs/performance.md") + ")")
    for name, t in out["targets"].items():
        verdict = "not measured" if t.get("measured") is False else \
            "reported" if t["met"] is None else "met" if t["met"] else "MISSED"
        beside = f"  (strict bound {_f(t['bound_s'], 2)} s)" if "bound_s" in t else ""
        add(f"  {name:<28} {_f(t['value'], 3):>8}  target {t['target']:<13} "
            f"{verdict}{beside}")
    return "\n".join(lines)


def targets_table(out: dict[str, Any]) -> str:
    """The real-time section (bench/targets.py) as lines."""
    tr = out["targets_run"]
    st, sm, mem = tr["steady"], tr["storm"], tr["memory"]
    lines = [
        f"REAL TIME  Discord's limits enforced in real time, the bot's budget on the real "
        f"clock; games in guilds of at most {sm['per_guild']}",
        f"  steady: {st['commands']} commands ({st['durable']} /vote and /night, "
        f"{st['reads']} fell back to /role) at {_f(st['rate'], 1)}/s over "
        f"{st['games']} games in {_f(st['seconds'], 1)} s: {st['rest']} REST requests "
        f"({_f(st['rest_per_command'], 3)} a command, {_f(st['rest_per_s'], 1)}/s), "
        f"{st['limited']} 429s",
        f"    durable p50 {_f(st['durable_latency']['p50_ms'])} ms, p99 "
        f"{_f(st['durable_latency']['p99_ms'])} ms; outbox lag over {st['outbox_rows']} "
        f"rows p50 {_f(st['outbox_lag_p50_s'], 2)} s, p99 {_f(st['outbox_lag_p99_s'], 2)} s "
        f"({_f(st.get('outbox_lag_p99_s_unwindowed', math.nan), 2)} s without the rows "
        f"held on purpose: the desk's lines, up to DESK_WINDOW_SECONDS, and the live "
        f"count's edits, up to TALLY_INTERVAL); p99 by where (rows, s): "
        + ", ".join(f"{k} {n} {_f(v, 2)}" for k, (n, v) in
                    st.get("outbox_lag_p99_s_by_where", {}).items()),
        f"  storm: {sm['games']} deadlines in one second (half night ends, "
        f"{_f(sm['deaths_per_night_end'], 2)} deaths each; half lynch day ends, "
        f"{_f(sm['lynched_per_day_end'], 2)} hanged each), {sm['commands']} commands sent "
        f"from that second",
        f"    every announcement {_f(sm['announce_s'], 2)} s ({sm['announce_requests']} "
        f"messages to the games' channels, strict bound {_f(sm['announce_bound_s'], 2)} s); "
        "everything "
        f"{_f(sm['all_s'], 2)} s ({sm['requests']} requests, strict bound (R-50)/50 = "
        f"{_f(sm['all_bound_s'], 2)} s); 429s {sm['limited']}",
        f"    REST per game (quiet guilds: {sm['quiet_games']}): night end "
        f"{_f(sm['rest_per_game_night_end'], 2)}, lynch "
        f"{_f(sm['rest_per_game_lynch'], 2)} ({sm['rest_without_guild']} requests without "
        f"a guild, {sm['rest_steady_guilds']} to the steady games' guilds); interactions "
        f"p50 {_f(sm['interactions']['p50_ms'])} ms, p99 "
        f"{_f(sm['interactions']['p99_ms'])} ms (/vote and /night only: p99 "
        f"{_f(sm['durable_latency']['p99_ms'])} ms over {sm['durable_latency']['n']})",
        *(f"    {dict(night='night end', lynch='lynch')[k]}: requests a game by where they went: "
          + ", ".join(f"{d} {_f(n, 2)}" for d, n in sm.get("where_per_game", {}).get(k, {})
                      .items()) for k in ("night", "lynch")),
        f"  memory: {_f(mem['kib_per_game'])} KiB per game: a fresh bot process holding "
        f"every live state ({mem['fresh_games']} games; storm games at "
        f"{mem['storm_games_by_day']}) {_f(mem['state_kib_per_game'])} KiB RSS a game + "
        f"discord.py's cache of the games' guilds {_f(mem['guild_cache_kib_per_game'])} "
        f"KiB a game (upper bound, the bench process with the fake's world: "
        f"{_f(mem['upper_bound_kib_per_game'])} KiB)",
    ]
    return "\n".join(lines)


def stream_line(out: dict[str, Any]) -> str:
    """The stream against the same-work floor (bench/floor.py) as a line."""
    lines: list[str] = []
    st2 = out["stream"]
    sw = st2["same_work"]
    lines.append(
        f"  stream over the same-work floor: {_f(st2['same_work_ratio'], 3)} (floor "
        f"{_f(st2['same_work_floor_per_s'], 0)} commands/s: "
        f"{_f(st2['commands_per_transaction'], 1)} commands a transaction, "
        + ", ".join(f"{_f(v, 2)} {k} rows of {_f(sw['row_bytes'][k], 0)} B"
                    for k, v in sw["rows_per_command"].items())
        + f" a command, a {_f(sw['state_bytes'], 0)} B state every 16th); the single-row "
        f"floor (the disk's) {_f(st2['floor_per_s'], 0)} commits/s")
    return "\n".join(lines)


def scaleout_line(so: dict[str, Any]) -> str:
    """The scale-out section (bench/scaleout.py) as lines."""
    if "missing" in so:
        return f"  scale-out: not measured ({so['missing']})"
    lat = so["durable_latency"]
    chosen = ""
    if "rate_fits" in so:
        chosen = (f" (the least of what fits 50 REST/s, {_f(so['rate_fits'], 1)}/s, and what "
                  f"this machine carries, {_f(so['rate_machine'], 1)}/s)")
    return "\n".join([
        f"  scale-out: {so['processes']} shard processes on PostgreSQL, one global limit "
        f"(a window shared by every process's fake Discord) and the budget leased from "
        f"PostgreSQL; {so['games']:,} live games (set-up {_f(so['setup_s'], 0)} s, not "
        "measured)",
        f"    {so['commands']:,} commands at {_f(so['rate'], 1)}/s{chosen} for "
        f"{_f(so['seconds'], 0)} s (forum pace {scaleout_bench.FORUM_PACE:g}/s a game: "
        f"{_f(so['forum_games_carried'], 0)} games' worth): {so['rest']:,} REST requests "
        f"({_f(so['rest_per_s'], 1)}/s, "
        f"{_f(so['rest_per_command'], 3)} a command), 429s {so['limited']} "
        f"(global {so['global_429']}); refused {so['refused']}",
        f"    durable p50 {_f(lat['p50_ms'])} ms, p99 {_f(lat['p99_ms'])} ms; outbox lag over "
        f"{so['outbox_rows']:,} rows p50 {_f(so['outbox_lag_p50_s'], 2)} s, p99 "
        f"{_f(so['outbox_lag_p99_s'], 2)} s; {so['undelivered']} undelivered"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.run", description=__doc__)
    parser.add_argument("--smoke", action="store_true", help="tiny sizes: does it still work")
    parser.add_argument("--quick", action="store_true",
                        help="every section at reduced sizes, minutes on a shared machine "
                             "(also MAFIA_BENCH_QUICK=1)")
    parser.add_argument("--json", type=Path, help="also write every figure to this file")
    parser.add_argument("--issue30", action="store_true",
                        help="only issue 30's sections (real-time targets, scale-out, the "
                             "same-work floor): its TARGETS rows in one run")
    parser.add_argument("--scaleout-games", type=int,
                        help="live games per shard process in the scale-out (default 5,000)")
    parser.add_argument("--scaleout-seconds", type=float,
                        help="seconds of play in the scale-out (default 600)")
    parser.add_argument("--older", action="store_true",
                        help="only the sections before issue 30 (the smoke test runs the "
                             "two halves apart)")
    parser.add_argument("--workdir", type=Path, help="keep the databases here (default: temp)")
    parser.add_argument("--rate", type=float, help="commands/s per game under load")
    parser.add_argument("--postgres", help="a PostgreSQL URL for the backends column")
    parser.add_argument("--processes", type=int,
                        help="bot processes (shards) for the multi-process saturated run "
                             "(default: the CPU count; 2 with --smoke)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    quick = args.quick or os.environ.get("MAFIA_BENCH_QUICK", "") not in ("", "0")
    sizes = SMOKE if args.smoke else QUICK if quick else Sizes()
    if args.rate:
        sizes.per_game_rate = args.rate
    sizes.postgres = args.postgres
    if args.processes:
        sizes.processes = args.processes
    if args.scaleout_games:
        sizes.scaleout_games = args.scaleout_games
    if args.scaleout_seconds:
        sizes.scaleout_seconds = args.scaleout_seconds
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="mafia-bench-"))
    for sub in ("e2e", "rest", "scale", "targets", "scaleout"):
        (workdir / sub).mkdir(parents=True, exist_ok=True)
    try:
        out = asyncio.run(run(sizes, workdir, issue30_only=args.issue30,
                              older_only=args.older))
    finally:
        if args.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)
    out["smoke"] = args.smoke
    print()
    print(table(out))
    print()
    print(f"Wall time of this {sizes.mode} run: {out['seconds'] / 60:.1f} min ("
          + ", ".join(f"{k} {v:.0f} s" for k, v in out["section_s"].items()) + ")")
    if args.json:
        args.json.write_text(json.dumps(out, indent=1, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
