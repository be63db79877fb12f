"""The saturated command stream with K bot processes (shards) on ONE SQLite file.

One bot process runs on one event loop (one core at most, less while it waits for its
commits), so on a machine with several cores the single-process closed loop
(bench/e2e.py) leaves cores idle. The bot scales out
the Discord way (README, "Scale-out"): K processes, process i holding shard i of K,
each serving only the guilds with (guild_id >> 22) % K == i, all on one database.

Each child (`python -m bench.processes child ...`) builds its own harness and a
MafiaBot constructed as shard i of K, grows its own live games in guilds shard i owns,
then reports "ready" and waits for the parent's "go" so that the measured phases
overlap. Each child then runs e2e's `closed_loop` over its own games and reports its
figures and raw latencies. The parent counts every command over the common wall window
(the start of the first child's loop to the end of the last one's).

Snowflakes: every id a child's fake Discord makes has a timestamp part congruent to i
mod K (so each guild lands on shard i, as Discord would route it) and i + 1 in the 12
low "worker/process" bits, so no guild, channel, user or message id of one child can
equal one of another's.

`python -m bench.processes [--processes K] [--games N] [--samples S] [--workers W]
[--compare]` runs this section alone and prints JSON; --compare also runs the
single-process closed loop over K*N games and the bare commit floor, for the ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sys
import time
from pathlib import Path
from typing import IO, Any

from .e2e import KINDS, summary

PROTOCOL = "@bench "  # prefix of the lines a child and the parent exchange on stdout
ROOT = Path(__file__).resolve().parent.parent
WORKER_BITS = 12  # Discord's worker/process part of a snowflake


def cpus() -> int:
    return len(os.sched_getaffinity(0))


# --- a child's snowflakes -------------------------------------------------------------
class ShardSnowflakes:
    """Monotonic snowflakes that Discord would route to `shard` of `count`, tagged with
    `shard + 1` in the worker bits: two children on one database never share an id."""

    def __init__(self, start: int, shard: int, count: int) -> None:
        if not 0 <= shard < count or count >= (1 << WORKER_BITS) - 1:
            raise ValueError(f"shard {shard} of {count} does not fit the worker bits")
        self.shard, self.count = shard, count
        self._next = start >> WORKER_BITS << WORKER_BITS

    def __call__(self) -> int:
        n = self._next + (1 << WORKER_BITS)
        stamp = n >> 22
        if stamp % self.count != self.shard:  # skip to the next millisecond of this shard
            stamp += (self.shard - stamp) % self.count
            n = stamp << 22
        self._next = n
        return n | (self.shard + 1)


# --- the child ------------------------------------------------------------------------
def _say(kind: str, data: dict[str, Any]) -> None:
    sys.stdout.write(f"{PROTOCOL}{kind} {json.dumps(data)}\n")
    sys.stdout.flush()


async def child(db: Path, state_dir: Path, shard: int, count: int, games: int,
                samples: int, workers: int) -> None:
    """Shard `shard` of `count`: set up `games` live games, say "ready", wait for "go" on
    stdin, run the closed loop, say "result"."""
    from bot import MafiaBot, tune_runtime
    from core.storage.sharding import shard_of
    from tests.harness import Harness

    from .e2e import Bench, LatencyProbe, bench_settings, closed_loop

    settings = bench_settings(f"sqlite://{db}")
    tune_runtime()  # as `mafia-bot run` does
    bot = MafiaBot(settings, state_dir=state_dir, shard_count=count, shard_ids=[shard])
    h = Harness(bot, timeout=60.0)
    world = h.world
    world.next_id = ShardSnowflakes(world.next_id(), shard, count)  # type: ignore[assignment]
    async with h:
        probe = LatencyProbe(h)
        with probe.installed():
            bench = Bench(h, bot, probe)
            await bench.grow(games)
            owns = bot.service.owns
            foreign = [g.guild_id for g in bench.games if shard_of(g.guild_id, count) != shard
                       or (owns is not None and not owns(g.guild_id))]
            if foreign:
                raise RuntimeError(f"shard {shard} made guilds it does not own: {foreign[:3]}")
            await bench.quiesce()
            _say("ready", {"shard": shard, "games": len(bench.games),
                           "setup_s": bench.setup_seconds})
            loop = asyncio.get_running_loop()
            go = await loop.run_in_executor(None, sys.stdin.readline)
            if go.strip() != "go":
                raise RuntimeError(f"shard {shard}: expected 'go', got {go!r}")
            cpu = time.process_time()
            res = await closed_loop(bench, bench.games, samples, workers, seed=7 + shard)
            end = time.perf_counter()  # CLOCK_MONOTONIC: comparable across processes
            cpu = time.process_time() - cpu
            every = [v for k in KINDS for v in probe.samples.get(k, [])]
            durable = sum(len(probe.samples.get(k, [])) - probe.refused[k]
                          for k in ("vote", "night"))
            # cpu_s / seconds near 1: the process was CPU-bound; well below: it waited
            # (for SQLite's write lock held by another process, the disk, other load)
            res.update(shard=shard, durable=durable, start=end - res["seconds"], end=end,
                       cpu_s=cpu, cpu_share=cpu / res["seconds"],
                       setup_s=bench.setup_seconds, latencies=every)
            await bench.quiesce()  # the outbox delivers what the loop caused before exit
    _say("result", res)


# --- the parent -----------------------------------------------------------------------
async def _line(proc: asyncio.subprocess.Process, kind: str) -> dict[str, Any]:
    """The next protocol line of `kind` from a child (other stdout lines are skipped)."""
    assert proc.stdout is not None
    while True:
        raw = await proc.stdout.readline()
        if not raw:
            raise RuntimeError(f"a child exited before '{kind}' (status {await proc.wait()})")
        text = raw.decode().rstrip("\n")
        if text.startswith(PROTOCOL):
            got, _, body = text[len(PROTOCOL):].partition(" ")
            if got != kind:
                raise RuntimeError(f"a child said {got!r}, expected {kind!r}")
            return dict(json.loads(body))


async def _init_db(db: Path) -> None:
    """Create the schema once, before the children race to open the file."""
    from core.storage.db import close_db, init_db

    await init_db(f"sqlite://{db}")
    await close_db()


def _layout(workdir: Path, processes: int) -> tuple[list[Path], list[Path]]:
    """Each child's state folder (its command-sync marker) and its stderr log."""
    dirs = [workdir / f"shard-{shard}" for shard in range(processes)]
    for d in dirs:
        d.mkdir(parents=True, exist_ok=True)
    return dirs, [workdir / f"shard-{shard}.log" for shard in range(processes)]


async def measure(workdir: Path, *, processes: int, games: int, samples: int, workers: int,
                  limit_s: float = 3600.0) -> dict[str, Any]:
    """K children (shards 0..K-1 of K) on `workdir`/bench.db, `games` live games and
    `samples` commands from `workers` clients each; their loops start together."""
    if workers > games:
        raise ValueError("closed_loop needs at least as many games as workers")
    dirs, logs = _layout(workdir, processes)
    db = workdir / "bench.db"
    await _init_db(db)
    procs: list[asyncio.subprocess.Process] = []
    files: list[IO[bytes]] = []
    try:
        for shard, (state_dir, log) in enumerate(zip(dirs, logs, strict=True)):
            files.append(log.open("wb"))
            procs.append(await asyncio.create_subprocess_exec(
                sys.executable, "-m", "bench.processes", "child", str(db), str(state_dir),
                "--shard", str(shard), "--processes", str(processes), "--games", str(games),
                "--samples", str(samples), "--workers", str(workers), cwd=ROOT,
                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=files[-1], limit=1 << 26))  # the result line carries every latency
        ready = await asyncio.wait_for(
            asyncio.gather(*(_line(p, "ready") for p in procs)), limit_s)
        results = await go_and_collect(procs, limit_s, exit_s=120)
    except Exception as err:
        raise failed("bench.processes", err, logs) from err
    finally:
        await stop(procs, files)
    return combine(results, ready)


async def go_and_collect(procs: list[asyncio.subprocess.Process], limit_s: float, *,
                         exit_s: float) -> list[dict[str, Any]]:
    """Everyone is set up: start the children's measured phases together, then read each
    one's result line and wait for it to exit (a child failing after it reported is a
    failed run)."""
    for p in procs:
        assert p.stdin is not None
        p.stdin.write(b"go\n")
    for p in procs:
        assert p.stdin is not None
        await p.stdin.drain()
    results = await asyncio.wait_for(
        asyncio.gather(*(_line(p, "result") for p in procs)), limit_s)
    codes = await asyncio.wait_for(asyncio.gather(*(p.wait() for p in procs)), exit_s)
    if any(codes):
        raise RuntimeError(f"a child failed after reporting: exit statuses {codes}")
    return list(results)


def failed(name: str, err: Exception, logs: list[Path]) -> RuntimeError:
    """The run's failure with the end of every child's log."""
    tails = "\n".join(f"--- shard {i} ---\n{_tail(path)}" for i, path in enumerate(logs))
    return RuntimeError(f"{name} failed: {err!r}\n{tails}")


async def stop(procs: list[asyncio.subprocess.Process], files: list[IO[bytes]]) -> None:
    """Kill what still runs (only on failure is any) and close the children's logs."""
    for p in procs:
        if p.returncode is None:
            p.kill()
            await p.wait()
    for f in files:
        f.close()


def _tail(path: Path, chars: int = 3000) -> str:
    with contextlib.suppress(OSError):
        return path.read_text(errors="replace")[-chars:]
    return ""


def combine(results: list[dict[str, Any]], ready: list[dict[str, Any]]) -> dict[str, Any]:
    """Every child's commands over the common wall window: the start of the first loop
    to the end of the last one."""
    first, last = min(r["start"] for r in results), max(r["end"] for r in results)
    window = last - first
    overlap = min(r["end"] for r in results) - max(r["start"] for r in results)
    commands = sum(r["commands"] for r in results)
    durable = sum(r["durable"] for r in results)
    every = [v for r in results for v in r.pop("latencies")]
    per = []
    for r in results:
        r["start_offset_s"], r["end_offset_s"] = r.pop("start") - first, r.pop("end") - first
        per.append(r)
    return {
        "processes": len(results), "games": sum(r["games"] for r in results),
        "workers": sum(r["workers"] for r in results), "seconds": window,
        "overlap_s": overlap, "commands": commands, "durable": durable,
        "cpu_s": sum(r["cpu_s"] for r in results),
        "cores_busy": sum(r["cpu_s"] for r in results) / window if window else float("nan"),
        "refused": sum(r["refused"] for r in results),
        "throughput_per_s": commands / window if window else float("nan"),
        "durable_per_s": durable / window if window else float("nan"),
        "setup_s": max(r["setup_s"] for r in ready),
        "all": summary(every), "per_process": per,
    }


# --- alone: `python -m bench.processes` -----------------------------------------------
async def _alone(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    out: dict[str, Any] = {"cpus": cpus(), "load_before": os.getloadavg()[0]}
    if args.compare:
        from . import floor
        from .e2e import closed_loop, running_bot

        out["floor"] = await floor.bare_commits(workdir / "floor.db", 2000)
        async with running_bot(workdir / "single") as bench:
            await bench.grow(args.games * args.processes)
            await bench.quiesce()
            cpu = time.process_time()
            single = await closed_loop(bench, bench.games, args.samples, args.workers, seed=7)
            cpu = time.process_time() - cpu
        out["single"] = {k: v for k, v in single.items() if k not in KINDS}
        out["single"].update(setup_s=bench.setup_seconds, cpu_s=cpu,
                             cores_busy=cpu / single["seconds"])
    out["processes"] = await measure(workdir / "shards", processes=args.processes,
                                     games=args.games, samples=args.samples,
                                     workers=args.workers)
    if args.compare:
        f = out["floor"]["commits_per_s"]
        out["ratios"] = {"single": out["single"]["throughput_per_s"] / f,
                         "processes": out["processes"]["throughput_per_s"] / f}
    out["load_after"] = os.getloadavg()[0]
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.processes",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("role", nargs="?", choices=["child"], help=argparse.SUPPRESS)
    parser.add_argument("paths", nargs="*", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--processes", type=int, default=cpus(), help="K (default: CPUs)")
    parser.add_argument("--shard", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--games", type=int, default=250, help="live games per process")
    parser.add_argument("--samples", type=int, default=1500, help="commands per process")
    parser.add_argument("--workers", type=int, default=32, help="clients per process")
    parser.add_argument("--compare", action="store_true",
                        help="also the single-process loop over K*games games, and the floor")
    parser.add_argument("--workdir", type=Path, help="keep the databases here (default: temp)")
    args = parser.parse_args(argv)
    import logging

    logging.basicConfig(level=logging.WARNING)
    if args.role == "child":
        db, state_dir = args.paths
        asyncio.run(child(db, state_dir, args.shard, args.processes, args.games,
                          args.samples, args.workers))
        return
    import shutil
    import tempfile

    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="mafia-bench-processes-"))
    (workdir / "single").mkdir(parents=True, exist_ok=True)
    try:
        out = asyncio.run(_alone(args, workdir))
    finally:
        if args.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)
    print(json.dumps(out, indent=1, default=str))


if __name__ == "__main__":
    main()
