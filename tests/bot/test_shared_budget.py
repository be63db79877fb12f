"""One request budget per bot token across processes (cogs/delivery/sharedbudget.py): two
"processes" (two discord.py HTTP clients, two RateBudgets, each with its own connection
to the same PostgreSQL schema) flood one fake Discord whose global limit runs in real
time; together they never exceed it. Without the shared budget the same flood collects
global 429s (the test has teeth). Also: identify concurrency coordinated through the
same database, and the invalid-request count."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import discord
import discord.http
from discord.http import Route

from bot import MafiaBot
from cogs.delivery import sharedbudget
from cogs.delivery.budget import RateBudget
from cogs.delivery.sharedbudget import (
    IdentifyCoordinator,
    PostgresShares,
    RequestWatch,
    SharedBudget,
    connect,
    token_key,
)
from core.settings import Settings
from tests.harness.gateway import IdentifyGate
from tests.harness.ratelimits import RateLimits, VirtualClock
from tests.harness.transport import Captured, FakeDiscord, FakeSession, arrivals_fake
from tests.storage.helpers import until

ROUTE = "GET /channels/{channel_id}"
TOKEN = "harness.fake.token"


def _fake() -> tuple[FakeDiscord, list[float]]:
    return arrivals_fake(ROUTE)


def _http(fake: FakeDiscord) -> discord.http.HTTPClient:
    http = discord.http.HTTPClient(asyncio.get_running_loop())
    http._HTTPClient__session = FakeSession(fake)  # type: ignore[attr-defined]
    http._global_over = asyncio.Event()
    http._global_over.set()
    http.token = TOKEN
    return http


async def _flood(http: discord.http.HTTPClient, budget: RateBudget, first: int,
                 count: int) -> None:
    """`count` requests at once, each to its own channel (no per-route limit holds
    them): only the global limit matters."""

    async def one(i: int) -> None:
        release = await budget.acquire()
        try:
            await http.request(Route("GET", "/channels/{channel_id}", channel_id=first + i))
        finally:
            release()

    await asyncio.gather(*(one(i) for i in range(count)))


def _busiest_second(arrivals: list[float]) -> int:
    times = sorted(arrivals)
    best, j = 0, 0
    for i, t in enumerate(times):
        while times[j] <= t - 1.0:
            j += 1
        best = max(best, i - j + 1)
    return best


async def test_two_processes_never_exceed_the_global_limit_together(postgres_url: str
                                                                     ) -> None:
    fake, arrivals = _fake()
    key = token_key(TOKEN)
    sides = []
    for name in ("shard-0", "shard-1"):
        budget = RateBudget()
        conn = await connect(postgres_url)  # each process its own connection
        shared = SharedBudget(budget, PostgresShares(conn, key), name, period=0.1)
        http = _http(fake)
        sharedbudget.watch_http(http, shared.watch)
        sides.append((http, budget, shared, conn))
    try:
        for _, _, shared, _ in sides:
            await shared.start()
        started = time.monotonic()
        per_process = 120  # 240 requests: at least 4.8 s at 50/s
        await asyncio.gather(*(_flood(http, budget, 1000 * (n + 1), per_process)
                               for n, (http, budget, _, _) in enumerate(sides)))
        took = time.monotonic() - started
    finally:
        for _, _, shared, conn in sides:
            await shared.stop()
            await conn.close()
    assert len(arrivals) == 2 * per_process
    assert fake.limits.limited == 0, fake.limits.hits[:3]
    assert _busiest_second(arrivals) <= 50
    assert all(s.watch.recent_invalid() == 0 for _, _, s, _ in sides)
    # both got their turn, and the pair used a fair part of the limit (not 2 x 1/s)
    assert took < 2 * per_process / 20, took
    assert all(s.renewals >= 2 for _, _, s, _ in sides)


async def test_without_the_shared_budget_two_processes_collect_global_429s() -> None:
    fake, _ = _fake()
    pairs = [(_http(fake), RateBudget()) for _ in range(2)]
    await asyncio.gather(*(_flood(http, budget, 1000 * (n + 1), 60)
                           for n, (http, budget) in enumerate(pairs)))
    assert any(h.is_global for h in fake.limits.hits)


async def test_a_process_that_cannot_renew_its_lease_stops_sending(postgres_url: str
                                                                   ) -> None:
    budget = RateBudget()
    conn = await connect(postgres_url)
    shared = SharedBudget(budget, PostgresShares(conn, token_key(TOKEN)), "p", period=0.05,
                          lease=0.0)
    try:
        await shared.start()
        assert budget.global_limit == 50  # alone: the whole limit
        await conn.close()  # the database is gone
        await until(lambda: budget.global_limit == 0)  # its lease ran out: it stops
    finally:
        await shared.stop()


def test_invalid_requests_are_counted_as_discord_counts_them() -> None:
    now = [1000.0]
    watch = RequestWatch(clock=lambda: now[0])
    watch.seen(403, {})
    watch.seen(401, {})
    watch.seen(429, {"X-RateLimit-Scope": "user"})
    watch.seen(429, {"X-RateLimit-Scope": "shared"})  # Discord does not count these
    watch.seen(404, {})
    watch.seen(200, {})
    assert watch.recent_invalid() == 3
    watch.seen(429, {"X-RateLimit-Global": "true", "X-RateLimit-Scope": "global"},
               {"retry_after": 2.5})
    assert watch.paused_until == 1002.5
    now[0] += 601
    assert watch.recent_invalid() == 0


async def test_past_half_the_ban_every_process_slows_to_a_trickle(postgres_url: str
                                                                  ) -> None:
    budget = RateBudget()
    conn = await connect(postgres_url)
    shared = SharedBudget(budget, PostgresShares(conn, token_key(TOKEN)), "p")
    try:
        shared.watch.unreported = sharedbudget.STOP_INVALID
        await shared.renew()
        assert budget.global_limit == sharedbudget.TRICKLE
    finally:
        await shared.stop()
        await conn.close()


async def test_sharded_processes_identify_within_max_concurrency(postgres_url: str,
                                                                 tmp_path: Any) -> None:
    """Four shards in two processes (two bots, each its own connection), max_concurrency
    2: every IDENTIFY is accepted, and the buckets took their turns. In real time, with
    Discord's 5 s window shrunk to 0.5 s (a virtual clock that jumps while one process
    sleeps would move the other's IDENTIFY away from the moment it recorded)."""
    clock = time.monotonic
    window = 0.5
    gate = IdentifyGate(max_concurrency=2, clock=clock, window=window)
    bots = []
    conns = []
    for i in range(2):
        settings = Settings(discord_token="x", database_url=postgres_url)
        bot = MafiaBot(settings, state_dir=tmp_path / str(i))
        conn = await connect(postgres_url)
        conns.append(conn)
        bot.coordination = sharedbudget.Coordination(
            None, IdentifyCoordinator(conn, token_key(TOKEN), 2, clock=clock,
                                      window=window, margin=0.2), RequestWatch())
        bots.append(bot)
    try:
        async def start(bot: MafiaBot, shards: list[int]) -> list[bool]:
            return [await gate.connect(bot, s, 4) for s in shards]

        results = await asyncio.gather(start(bots[0], [0, 1]), start(bots[1], [2, 3]))
    finally:
        for conn in conns:
            await conn.close()
    assert results == [[True, True], [True, True]]
    assert gate.refused == []
    by_bucket: dict[int, list[float]] = {}
    for i in gate.accepted:
        by_bucket.setdefault(i.bucket, []).append(i.at)
    for times in by_bucket.values():
        assert times[1] - times[0] >= window


async def test_the_shared_budget_follows_a_raised_global_limit(postgres_url: str) -> None:
    """GLOBAL_RATE_100IT=100 (Discord granted more): two processes coordinated as the
    bot does (`coordinate`) share 100 a second, not 50, and never exceed it together."""
    limits = RateLimits(clock=VirtualClock(), global_limit=100)
    fake = FakeDiscord(strict=False, limits=limits)
    arrivals: list[float] = []

    def answer(c: Captured) -> dict[str, Any]:
        arrivals.append(limits.clock())
        return {"id": str(c.params["channel_id"])}

    fake.add_handler(ROUTE, answer)
    sides = []
    try:
        for shard in range(2):  # two processes: one shard each (their rows' names)
            http, budget = _http(fake), RateBudget(global_limit=100)
            coordination = await sharedbudget.coordinate(
                http, budget, TOKEN, postgres_url, 2, [shard], limit=100)
            assert coordination.shared is not None
            assert coordination.shared.store.limit == 100
            coordination.shared.period = 0.1
            sides.append((http, budget, coordination))
        started = time.monotonic()
        per_process = 150  # 300 requests: at least 6 s at 50/s, 3 s at 100/s
        await asyncio.gather(*(_flood(http, budget, 1000 * (n + 1), per_process)
                               for n, (http, budget, _) in enumerate(sides)))
        took = time.monotonic() - started
    finally:
        for _, _, coordination in sides:
            await sharedbudget.close(coordination)
    assert len(arrivals) == 2 * per_process
    assert limits.limited == 0, limits.hits[:3]
    assert 50 < _busiest_second(arrivals) <= 100
    assert took < 2 * per_process / 50, took  # faster than the standard limit allows


async def test_the_bot_coordinates_with_its_configured_limit(
        tmp_path: Any, monkeypatch: Any) -> None:
    """cogs/delivery/outbox.py hands GLOBAL_RATE_100IT to the shared budget, not a constant."""
    from cogs.delivery import outbox

    seen: dict[str, Any] = {}

    async def fake_coordinate(*args: Any, **kwargs: Any) -> None:
        seen.update(kwargs)

    monkeypatch.setattr(sharedbudget, "coordinate", fake_coordinate)
    settings = Settings(discord_token="x", database_url="postgres://u@h/db",
                        global_rate_limit=250)
    bot = MafiaBot(settings, state_dir=tmp_path, shard_count=2)
    bot.http.token = TOKEN
    await outbox.Background(bot).after_login()
    assert seen["limit"] == 250
