"""The shared request budget (cogs/delivery/sharedbudget.py) measured: K bot "processes" (each a
discord.py HTTP client, its own RateBudget and its own PostgreSQL connection) flood one
fake Discord whose global limit (50/s) runs in real time.

Reported: the requests per second the K together got out (against 50), the busiest
1 s window seen at the fake, its 429s, how long a lease renewal takes (p50/p99) and how
many the database serves per second; and, for the choice in docs/rate-limits.md, what
the other way of sharing through PostgreSQL would cost: one round trip per request (a
token taken under the same advisory lock), p50/p99 added to every request.

`python -m bench.sharedbudget --postgres URL [--processes K] [--seconds S]` prints JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from typing import Any

import discord.http
from discord.http import Route

from cogs.delivery.budget import GLOBAL_LIMIT, RateBudget
from cogs.delivery.sharedbudget import (
    LOCK_NAMESPACE,
    PostgresShares,
    SharedBudget,
    connect,
    lock_key,
    token_key,
    watch_http,
)

ROUTE = "GET /channels/{channel_id}"
TOKEN = "bench.fake.token"


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def busiest_second(times: list[float]) -> int:
    ordered, best, j = sorted(times), 0, 0
    for i, t in enumerate(ordered):
        while ordered[j] <= t - 1.0:
            j += 1
        best = max(best, i - j + 1)
    return best


async def measure(postgres: str, processes: int = 2, seconds: float = 10.0,
                  claims: int = 300) -> dict[str, Any]:
    from tests.harness.transport import FakeSession, arrivals_fake

    fake, arrivals = arrivals_fake(ROUTE)
    key = token_key(TOKEN)
    sides: list[tuple[discord.http.HTTPClient, RateBudget, SharedBudget]] = []
    conns = []
    for n in range(processes):
        http = discord.http.HTTPClient(asyncio.get_running_loop())
        http._HTTPClient__session = FakeSession(fake)  # type: ignore[attr-defined]
        http._global_over = asyncio.Event()
        http._global_over.set()
        http.token = TOKEN
        budget = RateBudget()
        conn = await connect(postgres)
        conns.append(conn)
        shared = SharedBudget(budget, PostgresShares(conn, key), f"bench-{n}")
        watch_http(http, shared.watch)
        sides.append((http, budget, shared))
    for _, _, shared in sides:
        await shared.start()
    stop = time.monotonic() + seconds
    sent = [0] * processes

    async def worker(n: int, http: discord.http.HTTPClient, budget: RateBudget,
                     first: int) -> None:
        i = 0
        while time.monotonic() < stop:
            i += 1
            release = await budget.acquire()
            try:
                await http.request(Route("GET", "/channels/{channel_id}",
                                         channel_id=first + i))
                sent[n] += 1
            finally:
                release()

    started = time.monotonic()
    # 60 senders per process: each wants more than the whole limit
    await asyncio.gather(*(worker(n, http, budget, 10_000_000 * (n + 1) + 100_000 * w)
                           for n, (http, budget, _) in enumerate(sides) for w in range(60)))
    took = time.monotonic() - started
    renew = [s for _, _, shared in sides for s in shared.renew_s]
    renewals = sum(shared.renewals for _, _, shared in sides)
    for _, _, shared in sides:
        await shared.stop()

    # the other way: a token taken in the database for every request
    conn = conns[0]
    await conn.execute("CREATE TEMP TABLE IF NOT EXISTS bench_tokens "
                       "(token text PRIMARY KEY, second bigint, used integer)")
    claim_s: list[float] = []
    for _ in range(claims):
        t0 = time.perf_counter()
        async with conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock($1, $2)", LOCK_NAMESPACE,
                               lock_key(key, 99))
            await conn.fetchval(
                "INSERT INTO bench_tokens AS b VALUES ($1, extract(epoch FROM now())::bigint,"
                " 1) ON CONFLICT (token) DO UPDATE SET used = b.used + 1 RETURNING used", key)
        claim_s.append(time.perf_counter() - t0)
    for c in conns:
        await c.close()
    total = sum(sent)
    return {
        "processes": processes, "seconds": took, "requests": total,
        "per_s": total / took, "limit_per_s": GLOBAL_LIMIT,
        "share_of_limit": total / took / GLOBAL_LIMIT,
        "per_process": sent, "busiest_second": busiest_second(arrivals),
        "limited": fake.limits.limited,
        "renewals_per_s": renewals / took,
        "renew_p50_ms": _pct(renew, 0.5) * 1000, "renew_p99_ms": _pct(renew, 0.99) * 1000,
        "renew_mean_ms": statistics.fmean(renew) * 1000 if renew else float("nan"),
        "per_request_claim_p50_ms": _pct(claim_s, 0.5) * 1000,
        "per_request_claim_p99_ms": _pct(claim_s, 0.99) * 1000,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.sharedbudget",
                                     description=__doc__)
    parser.add_argument("--postgres", required=True)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args(argv)
    out = asyncio.run(measure(args.postgres, args.processes, args.seconds))
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
