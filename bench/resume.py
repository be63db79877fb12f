"""Restart and memory: a new MafiaBot on the database of a bot that had N live games.

Run in a fresh process (`python -m bench.resume DB STATE_DIR [--tracemalloc]`), it
constructs a MafiaBot inside the harness (setup_hook: open the database, load the cogs,
register the persistent components, index the private channels, re-arm every
deadline), then loads the state of every live game into the service's cache, as a bot
serving those games holds them. It prints one JSON line: the times, and the process's
resident memory (or traced Python memory) before the bot and after the states.

Per-game memory is the difference between a run on N live games and a run on an empty
database, divided by N, so the fixed cost of the bot and the harness cancels out.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _memory(traced: bool) -> int:
    gc.collect()
    return tracemalloc.get_traced_memory()[0] if traced else rss_bytes()


async def resume(db: Path, state_dir: Path, traced: bool) -> dict[str, Any]:
    from bot import MafiaBot
    from core.settings import Settings
    from tests.harness import Harness

    if traced:
        tracemalloc.start()
    before = _memory(traced)
    start = time.perf_counter()
    bot = MafiaBot(Settings(discord_token="bench", database_url=f"sqlite://{db}"),
                   state_dir=state_dir)
    async with Harness(bot, timeout=120.0):
        ready = time.perf_counter() - start
        live = await bot.service.active_games()
        for info in live:
            await bot.service.state(info.id)
        loaded = time.perf_counter() - start
        after = _memory(traced)
        armed = len(bot.scheduler.deadlines)
        indexed = len(bot.private_index)
    return {"games": len(live), "ready_s": ready, "loaded_s": loaded, "deadlines": armed,
            "private_channels": indexed, "memory_before": before, "memory_after": after,
            "memory_kind": "tracemalloc" if traced else "rss"}


def run_child(db: Path, state_dir: Path, *, traced: bool = False) -> dict[str, Any]:
    """Run `resume` in a fresh interpreter and return its JSON line."""
    cmd = [sys.executable, "-m", "bench.resume", str(db), str(state_dir)]
    if traced:
        cmd.append("--tracemalloc")
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run(cmd, cwd=root, capture_output=True, text=True, timeout=900,
                          check=False)
    if done.returncode != 0:
        raise RuntimeError(f"bench.resume failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def compare(full: dict[str, Any], empty: dict[str, Any]) -> dict[str, Any]:
    """Per-game figures: (run on N games - run on no game) / N."""
    n = max(1, full["games"])
    grown = (full["memory_after"] - full["memory_before"]) \
        - (empty["memory_after"] - empty["memory_before"])
    return {"games": full["games"], "bytes_per_game": grown / n,
            "ready_s": full["ready_s"], "loaded_s": full["loaded_s"],
            "ready_s_empty": empty["ready_s"], "loaded_s_empty": empty["loaded_s"],
            "ms_per_game": (full["loaded_s"] - empty["loaded_s"]) / n * 1e3,
            "deadlines": full["deadlines"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("db", type=Path)
    parser.add_argument("state_dir", type=Path)
    parser.add_argument("--tracemalloc", action="store_true")
    args = parser.parse_args()
    import logging

    logging.basicConfig(level=logging.WARNING)
    result = asyncio.run(resume(args.db, args.state_dir, args.tracemalloc))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
