"""One Discord request budget per bot token, shared by every process of a sharded
deployment through the PostgreSQL they already share (docs/rate-limits.md says why this
and not a REST proxy, with the measurements).

Discord allows a bot token 50 requests per second in all (interaction responses and
their webhooks aside; more where Discord granted it: GLOBAL_RATE_LIMIT), however many
processes send them. Each process keeps its own
client-side budget (cogs/delivery/budget.py's RateBudget: a sliding window counting the
requests in flight); here its global limit becomes a *share* leased from PostgreSQL, and
the shares of the live processes never add up to more than the token's limit:

- every `period` a process, under an advisory lock per token, reports what it may have
  out now (`claim`: its current limit, or more if that many are still sent-or-in-flight
  within the window) and how much it wants (`demand`: waiting plus recently sent), and
  takes `share = min(fair share by demand, limit - what the others may have out)`;
- a process only ever grants a request while its sent-or-in-flight count is under its
  share, so what another process has out never grows past what it last claimed: the sum
  over processes of max(share, claim) bounds every 1 s window Discord counts in;
- a process that cannot renew its lease within `lease` seconds sends nothing until it
  can; a row not renewed for `expire` seconds (> lease) is forgotten (a crashed process).

Discord's answers are watched too (RequestWatch): 401, 403 and 429 (a "shared" 429
aside) are invalid requests, 10,000 of which in 10 minutes get the IP banned; the count
is summed over processes and, past STOP_INVALID, every process slows to a trickle
(1 request per second) until the 10 minutes roll over. A global 429 pauses every process
for its retry_after. Identify concurrency (Discord's max_concurrency buckets) is
coordinated in the same database: IdentifyCoordinator, called from the bot's
before_identify_hook.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
import zlib
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .budget import GLOBAL, GLOBAL_LIMIT, Key, RateBudget

if TYPE_CHECKING:
    import asyncpg

log = logging.getLogger("mafia.budget")

LOCK_NAMESPACE = 0x6D61  # pg_advisory_xact_lock(namespace, key): "ma"
INVALID_WINDOW = 600.0  # Discord: 10,000 invalid requests per 10 minutes bans the IP
INVALID_BAN = 10_000
WARN_INVALID = 1_000
STOP_INVALID = 5_000  # half the ban: every process slows to TRICKLE
TRICKLE = 1
#: what an idle process keeps, so its next request (an interaction may wait on it) need
#: not wait for a renewal
FLOOR = 2
IDENTIFY_WINDOW = 5.0  # Discord: one IDENTIFY per max_concurrency bucket per 5 s
IDENTIFY_MARGIN = 0.25

SCHEMA = """
CREATE UNLOGGED TABLE IF NOT EXISTS discord_budget_shares (
    token text NOT NULL, process text NOT NULL, share integer NOT NULL,
    claim integer NOT NULL, demand real NOT NULL, seen double precision NOT NULL,
    PRIMARY KEY (token, process));
CREATE UNLOGGED TABLE IF NOT EXISTS discord_budget_token (
    token text PRIMARY KEY, paused_until double precision NOT NULL DEFAULT 0);
CREATE UNLOGGED TABLE IF NOT EXISTS discord_invalid_requests (
    token text NOT NULL, minute bigint NOT NULL, count integer NOT NULL,
    PRIMARY KEY (token, minute));
CREATE TABLE IF NOT EXISTS discord_identify (
    token text NOT NULL, bucket integer NOT NULL, last_at double precision NOT NULL,
    PRIMARY KEY (token, bucket));
"""


def token_key(token: str) -> str:
    """What the tables know a token by (never the token itself)."""
    return f"{zlib.crc32(token.encode()):08x}{len(token):04x}"


def lock_key(token: str, part: int = 0) -> int:
    """A 32-bit advisory-lock key for a token (and a bucket)."""
    return (zlib.crc32(f"{token}:{part}".encode()) & 0x7FFFFFFF)


# --- Discord's answers --------------------------------------------------------------
@dataclass
class RequestWatch:
    """Counts what Discord answered: invalid requests (401, 403, non-shared 429) per
    minute over the last 10 minutes, and the end of a global 429's pause."""

    clock: Callable[[], float] = time.time
    invalid: deque[float] = field(default_factory=deque)
    unreported: int = 0
    paused_until: float = 0.0
    answers: int = 0
    global_429: int = 0

    def seen(self, status: int, headers: Any, body: Any = None) -> None:
        self.answers += 1
        scope = str(headers.get("X-RateLimit-Scope", "")) if headers is not None else ""
        if status in (401, 403) or (status == 429 and scope != "shared"):
            self.invalid.append(self.clock())
            self.unreported += 1
        if status == 429 and headers is not None and headers.get("X-RateLimit-Global"):
            self.global_429 += 1
            retry = _retry_after(headers, body)
            self.paused_until = max(self.paused_until, self.clock() + retry)

    def recent_invalid(self) -> int:
        cut = self.clock() - INVALID_WINDOW
        while self.invalid and self.invalid[0] < cut:
            self.invalid.popleft()
        return len(self.invalid)


def _retry_after(headers: Any, body: Any) -> float:
    if isinstance(body, dict) and isinstance(body.get("retry_after"), int | float):
        return float(body["retry_after"])
    try:
        return float(headers.get("Retry-After", 1))
    except (TypeError, ValueError):
        return 1.0


class _Watched:
    """aiohttp's request context manager, telling the watch each answer's status."""

    def __init__(self, inner: Any, watch: RequestWatch) -> None:
        self._inner, self._watch = inner, watch

    async def __aenter__(self) -> Any:
        response = await self._inner.__aenter__()
        body = None
        if getattr(response, "status", 200) == 429:
            with contextlib.suppress(Exception):
                body = await response.json()
        self._watch.seen(int(response.status), response.headers, body)
        return response

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._inner.__aexit__(*exc)


class WatchedSession:
    """The HTTP session discord.py sends through, every answer shown to a RequestWatch
    (the only place that sees the 429s discord.py retries by itself)."""

    def __init__(self, session: Any, watch: RequestWatch) -> None:
        self._session, self.watch = session, watch

    def request(self, method: str, url: str, **kwargs: Any) -> _Watched:
        return _Watched(self._session.request(method, url, **kwargs), self.watch)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session, name)


def watch_http(http: Any, watch: RequestWatch) -> None:
    """Put the watch between discord.py's HTTPClient and its session (after login)."""
    attr = "_HTTPClient__session"
    session = getattr(http, attr, None)
    if session is not None and not isinstance(session, WatchedSession):
        setattr(http, attr, WatchedSession(session, watch))


# --- the shares in PostgreSQL -------------------------------------------------------
@dataclass(frozen=True)
class Lease:
    share: int
    paused_until: float
    invalid: int
    processes: int


async def connect(url: str) -> asyncpg.Connection:
    """An asyncpg connection of its own (not the game storage's pool) to DATABASE_URL."""
    import asyncpg

    from core.settings import database_config

    config = database_config(url, create_dirs=False)
    creds = dict(config["connections"]["default"]["credentials"])
    schema = creds.pop("schema", None)
    settings = {"search_path": str(schema)} if schema else {}
    keep = {k: creds[k] for k in ("host", "port", "user", "password", "database")
            if creds.get(k) is not None}
    conn = await asyncpg.connect(**keep, server_settings=settings)
    await conn.execute(f"SELECT pg_advisory_lock({LOCK_NAMESPACE})")  # one DDL at a time
    try:
        await conn.execute(SCHEMA)
    finally:
        await conn.execute(f"SELECT pg_advisory_unlock({LOCK_NAMESPACE})")
    return conn


class PostgresShares:
    """The lease protocol's one transaction (see the module's docstring)."""

    def __init__(self, conn: asyncpg.Connection, token: str, limit: int = GLOBAL_LIMIT,
                 *, expire: float = 10.0) -> None:
        self.conn, self.token, self.limit, self.expire = conn, token, limit, expire

    async def renew(self, process: str, claim: int, demand: float, invalid_new: int,
                    paused_until: float) -> Lease:
        conn = self.conn
        async with conn.transaction():
            now = await conn.fetchval(
                "SELECT extract(epoch FROM clock_timestamp())::float8, "
                "pg_advisory_xact_lock($1, $2)", LOCK_NAMESPACE, lock_key(self.token))
            await conn.execute(
                "DELETE FROM discord_budget_shares WHERE token = $1 AND seen < $2",
                self.token, now - self.expire)
            rows = await conn.fetch(
                "SELECT share, claim, demand FROM discord_budget_shares "
                "WHERE token = $1 AND process <> $2", self.token, process)
            committed = sum(max(r["share"], r["claim"]) for r in rows)
            wanted = demand + sum(r["demand"] for r in rows)
            fair = self.limit if wanted <= 0 else int(self.limit * demand / wanted)
            share = max(0, min(max(fair, FLOOR), self.limit - committed))
            await conn.execute(
                "INSERT INTO discord_budget_shares AS s VALUES ($1, $2, $3, $4, $5, $6) "
                "ON CONFLICT (token, process) DO UPDATE SET share = $3, claim = $4, "
                "demand = $5, seen = $6", self.token, process, share, claim, demand, now)
            minute = int(now // 60)
            if invalid_new:
                await conn.execute(
                    "INSERT INTO discord_invalid_requests AS i VALUES ($1, $2, $3) "
                    "ON CONFLICT (token, minute) DO UPDATE SET count = i.count + $3",
                    self.token, minute, invalid_new)
            invalid = await conn.fetchval(
                "SELECT coalesce(sum(count), 0) FROM discord_invalid_requests "
                "WHERE token = $1 AND minute > $2", self.token, minute - 10)
            paused = await conn.fetchval(
                "INSERT INTO discord_budget_token AS t VALUES ($1, $2) ON CONFLICT (token) "
                "DO UPDATE SET paused_until = greatest(t.paused_until, $2) "
                "RETURNING paused_until", self.token, paused_until)
        return Lease(share, float(paused), int(invalid), len(rows) + 1)

    async def leave(self, process: str) -> None:
        await self.conn.execute(
            "DELETE FROM discord_budget_shares WHERE token = $1 AND process = $2",
            self.token, process)


# --- the process's side -------------------------------------------------------------
@dataclass
class SharedBudget:
    """Keeps `budget.global_limit` at this process's leased share."""

    budget: RateBudget
    store: PostgresShares
    process: str
    watch: RequestWatch = field(default_factory=RequestWatch)
    period: float = 0.25
    lease: float = 5.0
    renewals: int = 0
    renew_s: list[float] = field(default_factory=list)
    last: Lease | None = None
    _renewed_at: float = 0.0
    _task: asyncio.Task[None] | None = None

    def used(self) -> int:
        """Requests of this process sent within the window or still in flight."""
        w = self.budget.window(Key(GLOBAL, self.budget.global_limit, 1.0))
        w.wait(self.budget.clock())  # drops the sends that left the window
        return len(w.sent) + w.inflight

    def demand(self) -> float:
        return float(self.budget.waiting + self.used())

    async def renew(self) -> Lease:
        claim = max(self.budget.global_limit, self.used())
        new, self.watch.unreported = self.watch.unreported, 0
        started = time.perf_counter()
        try:
            lease = await self.store.renew(self.process, claim, self.demand(), new,
                                           self.watch.paused_until)
        except BaseException:
            self.watch.unreported += new
            raise
        self.renew_s.append(time.perf_counter() - started)
        self.renewals += 1
        self._renewed_at = time.monotonic()
        self.last = lease
        limit = lease.share
        if lease.invalid >= STOP_INVALID:
            limit = min(limit, TRICKLE)
            log.error("%d invalid requests in 10 minutes (ban at %d): slowed to %d/s",
                      lease.invalid, INVALID_BAN, TRICKLE)
        elif lease.invalid >= WARN_INVALID:
            log.warning("%d invalid requests in 10 minutes (ban at %d)", lease.invalid,
                        INVALID_BAN)
        if lease.paused_until > time.time():
            limit = 0
            self.watch.paused_until = max(self.watch.paused_until, lease.paused_until)
        self.budget.set_global_limit(limit)
        return lease

    async def run(self) -> None:
        while True:
            try:
                await self.renew()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("could not renew the shared request budget")
                if time.monotonic() - self._renewed_at > self.lease:
                    self.budget.set_global_limit(0)  # the others may reclaim our share
            await asyncio.sleep(self.period)

    async def start(self) -> None:
        self.budget.set_global_limit(0)  # nothing goes out before the first lease
        await self.renew()
        self._task = asyncio.create_task(self.run(), name="shared-budget")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        with contextlib.suppress(Exception):
            await self.store.leave(self.process)


# --- identify concurrency -----------------------------------------------------------
@dataclass
class IdentifyCoordinator:
    """Discord's identify limit across processes: shards identify in buckets (shard_id %
    max_concurrency), one IDENTIFY per bucket per 5 s. A row per bucket holds the time of
    its last IDENTIFY, read and written under the bucket's advisory lock; a process
    sleeps until the bucket's 5 s are over before discord.py sends its IDENTIFY."""

    conn: asyncpg.Connection | None
    token: str
    max_concurrency: int = 1
    clock: Callable[[], float] = time.time
    sleep: Callable[[float], Any] = asyncio.sleep
    window: float = IDENTIFY_WINDOW
    margin: float = IDENTIFY_MARGIN
    _local: dict[int, float] = field(default_factory=dict)
    _locks: dict[int, asyncio.Lock] = field(default_factory=dict)

    async def before_identify(self, shard_id: int | None) -> None:
        bucket = (shard_id or 0) % max(1, self.max_concurrency)
        lock = self._locks.setdefault(bucket, asyncio.Lock())
        async with lock:
            if self.conn is None:
                await self._wait_until(self._local.get(bucket))
                self._local[bucket] = self.clock()
                return
            async with self.conn.transaction():
                await self.conn.execute("SELECT pg_advisory_xact_lock($1, $2)",
                                        LOCK_NAMESPACE + 1, lock_key(self.token, bucket))
                last = await self.conn.fetchval(
                    "SELECT last_at FROM discord_identify WHERE token = $1 AND bucket = $2",
                    self.token, bucket)
                await self._wait_until(last)
                await self.conn.execute(
                    "INSERT INTO discord_identify VALUES ($1, $2, $3) ON CONFLICT "
                    "(token, bucket) DO UPDATE SET last_at = $3", self.token, bucket,
                    self.clock())

    async def _wait_until(self, last: float | None) -> None:
        if last is None:
            return
        wait = last + self.window + self.margin - self.clock()
        if wait > 0:
            await self.sleep(wait)


# --- wiring into the bot ------------------------------------------------------------
@dataclass
class Coordination:
    """What a bot process shares with the other processes of its token."""

    shared: SharedBudget | None
    identify: IdentifyCoordinator
    watch: RequestWatch
    conn: asyncpg.Connection | None = None


def wanted(database_url: str, shard_count: int | None) -> bool:
    """Shared only where there is something to share it with: a sharded deployment on
    PostgreSQL (docs/rate-limits.md)."""
    return shard_count is not None and database_url.strip().startswith(
        ("postgres://", "postgresql://"))


async def coordinate(http: Any, budget: RateBudget, token: str, database_url: str,
                     shard_count: int | None, shard_ids: Any = None, *,
                     limit: int | None = None) -> Coordination:
    """Start the coordination of a bot process (after login, before the gateway).
    `limit`: the token's global limit the processes share (GLOBAL_RATE_LIMIT; default
    the budget's own before it is leased a share)."""
    process = f"{socket.gethostname()}:{os.getpid()}:{shard_ids}"
    watch = RequestWatch()
    watch_http(http, watch)
    key = token_key(token)
    concurrency = 1
    with contextlib.suppress(Exception):
        _, _, limits = await http.get_bot_gateway()
        concurrency = int(limits.get("max_concurrency", 1))
    if not wanted(database_url, shard_count):
        return Coordination(None, IdentifyCoordinator(None, key, concurrency), watch)
    conn = await connect(database_url)
    total = budget.global_limit if limit is None else limit
    shared = SharedBudget(budget, PostgresShares(conn, key, total), process, watch)
    await shared.start()
    ident = IdentifyCoordinator(await connect(database_url), key, concurrency)
    log.info("request budget shared over PostgreSQL: %d/s for %d processes, share %d",
             budget.global_limit if shared.last is None else shared.store.limit,
             shared.last.processes if shared.last else 1,
             shared.last.share if shared.last else 0)
    return Coordination(shared, ident, watch, conn)


async def close(coordination: Coordination | None) -> None:
    if coordination is None:
        return
    if coordination.shared is not None:
        await coordination.shared.stop()
    for conn in (coordination.conn, coordination.identify.conn):
        if conn is not None:
            with contextlib.suppress(Exception):
                await conn.close()
