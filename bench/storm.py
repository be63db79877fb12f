"""The deadline storm: N live games whose deadlines fall in the same second.

Standalone since issue 30: it fires the cheapest phase change there is (a day with no
votes and no deaths). `python -m bench.run` measures the storm of bench/targets.py
instead (half night ends with deaths, half lynch day ends); `storm_bot` serves both.

Masters set deadlines at round hours, so hundreds of games change phase at once and every
game's announcement, its private posts and the cosmetic edits fall due together.  The fake
Discord enforces Discord's rate limits in real time here (tests/harness/ratelimits.py:
50 requests/s globally, 5 messages per 5 s per channel ...; discord.py's waits are real,
retry_sleep_scale=1), and the bot plans its requests with its own budget
(cogs/delivery/ratelimits.py, cogs/delivery/budget.py) and the outbox's priority lanes.

Set-up (games created through the GameService, played to day 1 with every module on) runs
with the limits off: it is not what is measured.  Then, at one moment, every game's
deadline fires (the scheduler's `Advance(by=0, deadline=True)`, applied for all games at
once), while players keep sending commands; measured from that moment:

  announced  until every game's phase announcement is in its channel
  pushed     until every private post (team channels, private places) is delivered
  429s       answers "Too Many Requests" the fake sent (target 0)
  p99        interaction latency of the commands sent during the storm (target <= 50 ms)
  ratio      announced / ((announcement requests - 50) / 50 per s): how close to the
             strict bound the global limit implies (the first 50 go at once)
  per 5 s    the busiest channel's peak messages within any 5 s (Discord allows 5)
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bot import MafiaBot, tune_runtime
from cogs.delivery.budget import GLOBAL_LIMIT, RateBudget
from core.game import commands as c
from core.storage.db import background, reader
from core.storage.models import PENDING, Outbox
from tests.harness import Harness
from tests.harness.ratelimits import VirtualClock

from .e2e import Bench, LatencyProbe, bench_settings, no_windows, summary, windows
from .rest import ChannelPosts

POST = "POST /channels/{channel_id}/messages"
EDIT = "PATCH /channels/{channel_id}/messages/{message_id}"
P99_TARGET_MS = 50.0
BOUND_RATIO_TARGET = 1.2


@contextlib.asynccontextmanager
async def storm_bot(workdir: Path) -> AsyncIterator[Bench]:
    """A MafiaBot inside a harness whose waits are real (retry_sleep_scale=1)."""
    settings = bench_settings(f"sqlite://{workdir / 'bench.db'}")
    tune_runtime()
    bot = MafiaBot(settings, state_dir=workdir)
    async with Harness(bot, timeout=300.0, retry_sleep_scale=1.0) as h:
        probe = LatencyProbe(h)
        with probe.installed():
            yield Bench(h, bot, probe)


async def deadline_storm(workdir: Path, games: int, *, rate: float = 20.0, seed: int = 3,
                         log: Callable[[str], None] = print) -> dict[str, Any]:
    """The storm over `games` live games in `workdir` (the folder must exist)."""
    async with storm_bot(workdir) as bench:
        h, bot = bench.h, bench.bot
        # set-up, not measured: no limits, and the bot's budget on a clock that skips
        setup_clock = VirtualClock()
        h.world.ratelimits.enabled = False
        bot.budget.clock, bot.budget.skip = setup_clock, setup_clock.at_least
        saved = no_windows(bot)
        log(f"  storm: setting up {games} live games (limits off) ...")
        await bench.grow(games)
        await bench.quiesce()
        windows(bot, saved)
        log(f"  storm: set up in {bench.setup_seconds:.1f} s; the deadlines fire")
        setup_s = bench.setup_seconds
        # the storm: Discord's limits in real time, a fresh budget on the real clock
        budget = RateBudget()
        bot.budget = bot.budgeted.budget = budget
        h.world.ratelimits.reset()
        h.world.ratelimits.enabled = True
        channels = {g.channel_id for g in bench.games}
        first_post: dict[int, float] = {}
        announce_posts = [0]
        private_done: list[float] = []
        edits: list[float] = []
        handle = h.fake.handle
        start = 0.0

        async def timed(method: str, url: str, kwargs: Any) -> Any:
            response = await handle(method, url, kwargs)
            last = h.fake.requests[-1] if h.fake.requests else None
            if last is not None and last.status < 300 and last.kind == "rest":
                now = time.perf_counter() - start
                cid = int(last.params.get("channel_id", 0) or 0)
                if last.route == POST and cid in channels:
                    first_post.setdefault(cid, now)
                    announce_posts[0] += 1
                elif last.route == POST and cid in bot.private_index:
                    private_done.append(now)
                elif last.route == EDIT:
                    edits.append(now)
            return response

        h.fake.handle = timed  # type: ignore[method-assign]
        posts = ChannelPosts(h)
        with posts.installed():
            rng = random.Random(seed)
            bench.probe.reset()
            counted_before = h.world.ratelimits.counted
            # each game's deadline moment, as the scheduler passes it when the deadline fires
            now = datetime.now(UTC)
            deadlines = {g.id: max(now, (await bot.service.state(g.id)).deadline or now)
                         for g in bench.games}
            start = time.perf_counter()
            await asyncio.gather(*(bot.service.apply(g.id, c.Advance(by=0, at=deadlines[g.id],
                                                                     deadline=True))
                                   for g in bench.games))
            fired_s = time.perf_counter() - start
            storm_ids = set(await Outbox.filter(status=PENDING).values_list("id", flat=True))
            # players keep playing while the storm is delivered (Poisson, `rate` commands/s)
            loop = asyncio.get_running_loop()
            tasks: list[asyncio.Task[None]] = []
            due = loop.time()
            delivering = asyncio.create_task(_delivered(storm_ids))
            while not delivering.done():
                game = rng.choice(bench.games)
                kind = rng.choice(("night", "role"))
                tasks.append(asyncio.create_task(bench.fire(game, kind, rng)))
                due += rng.expovariate(rate)
                delay = due - loop.time()
                if delay > 0:
                    await asyncio.wait([delivering], timeout=delay)
            total_s = await delivering - start
            await asyncio.gather(*tasks, return_exceptions=True)
            await bot.outbox.idle(within=600)
        h.fake.handle = handle  # type: ignore[method-assign]
        every = [v for k in ("night", "role") for v in bench.probe.samples.get(k, [])]
        announced_s = max(first_post.values()) if len(first_post) == len(channels) \
            else float("nan")
        requests = h.world.ratelimits.counted - counted_before
        announce_requests = announce_posts[0]
        bound_s = max(0.0, (announce_requests - GLOBAL_LIMIT) / GLOBAL_LIMIT)
        return {
            "games": games, "setup_s": setup_s, "fired_s": fired_s,
            "announced_games": len(first_post), "announced_s": announced_s,
            "pushes": len([x for x in private_done if x <= total_s]),
            "pushed_s": max((x for x in private_done if x <= total_s), default=0.0),
            "edits": len(edits), "all_delivered_s": total_s,
            "requests": requests, "limited": h.world.ratelimits.limited,
            "announce_requests": announce_requests, "announce_bound_s": bound_s,
            "bound_ratio": announced_s / bound_s if bound_s else float("nan"),
            "all_bound_s": max(0.0, (requests - GLOBAL_LIMIT) / GLOBAL_LIMIT),
            "interactions": summary(every),
            "interactions_by_kind": {k: summary(bench.probe.samples.get(k, []))
                                     for k in ("night", "role")},
            "coalesced_edits": bot.budgeted.coalesced,
            "granted": dict(budget.granted),
            "channel_peak": posts.peak(),
        }


async def _delivered(ids: set[int]) -> float:
    """When every one of these outbox entries was delivered (perf_counter). The bench's
    own polling must not delay the commands it measures: it reads as the outbox does
    (its read connection, as background work) and asks only for a count: every entry
    pending when the storm began is in `ids`, and entries written later have larger ids."""
    last = max(ids, default=0)
    connection = reader()
    with background():
        while True:
            query = Outbox.filter(status=PENDING, id__lte=last)
            if connection is not None:
                query = query.using_db(connection)
            if not await query.count():
                return time.perf_counter()
            await asyncio.sleep(0.02)


def storm_targets(storm: dict[str, Any]) -> dict[str, Any]:
    p99 = storm["interactions"]["p99_ms"]
    return {
        "storm_429s": {"value": storm["limited"], "target": "0", "met": storm["limited"] == 0},
        "storm_p99_ms": {"value": p99, "target": f"<= {P99_TARGET_MS:g}",
                         "met": p99 <= P99_TARGET_MS},
        "storm_announce_bound": {"value": storm["bound_ratio"],
                                 "target": f"<= {BOUND_RATIO_TARGET:g}",
                                 "met": storm["bound_ratio"] <= BOUND_RATIO_TARGET},
    }
