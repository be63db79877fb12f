"""Health and metrics over HTTP for whoever keeps the bot running (issue 44, item 2):
`/healthz` (200, or 503 with the reasons) and `/metrics` (Prometheus' text format).

Off unless METRICS_PORT is set; bound to METRICS_HOST (127.0.0.1 by default: nothing
is exposed to the network unless asked). The server runs on the bot's own loop and
stops with it (Bot.close unloads this extension). Each bot has its own registry, so
several bots in one process (tests) never share or clash over a metric.

Counted as it happens: slash commands by name and outcome (bot.py's tree tells it,
cogs/utils/observed.py), their latency, Discord's REST answers by route and status and
its 429s by scope (a wrapper on discord.py's HTTP session, the one place that sees the
429s discord.py retries by itself; the route comes from a wrapper on `http.request`).
Read at each scrape: the request budget (its limit, use, waiters, grants), the outbox's
lanes (pending, oldest age), parked entries, live games and the gateway's latency.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import re
import time
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import discord
from aiohttp import web
from discord.ext import commands
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from prometheus_client.core import CounterMetricFamily, Metric
from prometheus_client.registry import Collector

from core.storage import probe

from .delivery.budget import GLOBAL, Key
from .utils.bot import MafiaBot
from .utils.observed import OK, STARTED

log = logging.getLogger(__name__)

#: the REST route (method and path template) of the request being sent in this task
ROUTE: ContextVar[str | None] = ContextVar("metrics_route", default=None)
#: seconds a probe of the database or the outbox may take before /healthz gives up
PROBE_TIMEOUT = 5.0
LATENCY_BUCKETS = (0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


class Meters:
    """The bot's metrics, in a registry of its own."""

    def __init__(self, bot: MafiaBot) -> None:
        self.registry = r = CollectorRegistry()
        self.commands = Counter("mafia_commands", "Slash commands by name and outcome "
                                "(ok, refused, error)", ["command", "outcome"], registry=r)
        self.latency = Histogram("mafia_command_seconds", "Slash command latency: taken "
                                 "to finished", ["command"], buckets=LATENCY_BUCKETS,
                                 registry=r)
        self.rest = Counter("mafia_rest_responses", "Discord REST answers by route and "
                            "status", ["route", "status"], registry=r)
        self.limited = Counter("mafia_rest_429", "Discord's 429 answers by scope",
                               ["scope"], registry=r)
        self.budget_limit = Gauge("mafia_budget_limit", "The request budget's global limit "
                                  "a second now (a sharded process: its share)", registry=r)
        self.budget_used = Gauge("mafia_budget_used", "Requests sent within the last "
                                 "second or in flight", registry=r)
        self.budget_waiting = Gauge("mafia_budget_waiting", "Requests waiting for the "
                                    "budget", registry=r)
        self.pending = Gauge("mafia_outbox_pending", "Outbox entries pending, by lane",
                             ["lane"], registry=r)
        self.oldest = Gauge("mafia_outbox_oldest_seconds", "Age of the oldest pending "
                            "outbox entry, by lane (0: none)", ["lane"], registry=r)
        self.parked = Gauge("mafia_outbox_parked", "Outbox entries parked for the master "
                            "(the database's count)", registry=r)
        self.games = Gauge("mafia_live_games", "Running games of this process's guilds",
                           registry=r)
        self.gateway = Gauge("mafia_gateway_latency_seconds", "Gateway heartbeat latency "
                             "(NaN: not connected)", registry=r)
        self.healthy = Gauge("mafia_healthy", "1 when /healthz answers 200", registry=r)
        r.register(_Granted(bot))

    def answered(self, method: str, url: str, status: int, headers: Any) -> None:
        """One answer of Discord's REST API (a 429 retried by discord.py included)."""
        route = ROUTE.get() or route_of(method, url)
        self.rest.labels(route, str(status)).inc()
        if status == 429:
            scope = str(headers.get("X-RateLimit-Scope", "")) if headers is not None else ""
            if not scope:
                global_ = headers is not None and headers.get("X-RateLimit-Global")
                scope = "global" if global_ else "unknown"
            self.limited.labels(scope).inc()


class _Granted(Collector):
    """The budget's grants so far by priority (a counter read at the scrape)."""

    def __init__(self, bot: MafiaBot) -> None:
        self.bot = bot

    def collect(self) -> Iterator[Metric]:
        family = CounterMetricFamily("mafia_budget_granted", "Requests the budget let "
                                     "out, by priority (0: an interaction waits)",
                                     labels=["priority"])
        for priority, count in sorted(self.bot.budget.granted.items()):
            family.add_metric([str(priority)], count)
        yield family


_SNOWFLAKE = re.compile(r"^\d{6,}$")


def route_of(method: str, url: str) -> str:
    """A request's route from its URL, ids and tokens left out (interaction answers
    and their webhooks, which do not pass `http.request`)."""
    path = url.split("?", 1)[0]
    path = re.sub(r"^.*?/api/v\d+", "", path) if "/api/" in path else path
    parts: list[str] = []
    for part in path.strip("/").split("/"):
        if parts and parts[-1] == "{id}" and len(parts) >= 2 and \
                parts[-2] in ("interactions", "webhooks"):
            parts.append("{token}")
        elif _SNOWFLAKE.match(part):
            parts.append("{id}")
        else:
            parts.append(part)
    return f"{method} /" + "/".join(parts)


# --- the wrappers on discord.py's HTTP client ---------------------------------------------
class _Answered:
    """aiohttp's request context manager, telling the meters each answer."""

    def __init__(self, inner: Any, meters: Meters, method: str, url: str) -> None:
        self._inner, self._meters, self._method, self._url = inner, meters, method, url

    async def __aenter__(self) -> Any:
        response = await self._inner.__aenter__()
        self._meters.answered(self._method, self._url, int(response.status),
                              response.headers)
        return response

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._inner.__aexit__(*exc)


class MeteredSession:
    """The HTTP session discord.py sends through (REST and interaction answers alike),
    every answer counted."""

    def __init__(self, session: Any, meters: Meters) -> None:
        self.session, self._meters = session, meters

    def request(self, method: str, url: Any, **kwargs: Any) -> _Answered:
        return _Answered(self.session.request(method, url, **kwargs), self._meters,
                         method, str(url))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.session, name)


SESSION = "_HTTPClient__session"


@dataclass
class Wired:
    """What `wire` replaced on the HTTP client, put back by `unwire`."""

    http: Any
    request: Any
    session: Any = None
    done: list[str] = field(default_factory=list)


def wire(http: Any, meters: Meters) -> Wired:
    """Count every answer, each under its route (after login: the session exists)."""
    inner = http.request
    wired = Wired(http, inner, getattr(http, SESSION, None))

    async def request(route: Any, **kwargs: Any) -> Any:
        token = ROUTE.set(f"{route.method} {route.path}")
        try:
            return await inner(route, **kwargs)
        finally:
            ROUTE.reset(token)

    http.request = request
    if wired.session is not None:
        setattr(http, SESSION, MeteredSession(wired.session, meters))
    return wired


def unwire(wired: Wired) -> None:
    wired.http.request = wired.request
    if wired.session is not None and isinstance(getattr(wired.http, SESSION, None),
                                                MeteredSession):
        setattr(wired.http, SESSION, wired.session)


# --- health -------------------------------------------------------------------------------
def gateway_problem(bot: discord.Client) -> str | None:
    """Why the bot is not connected to Discord's gateway (None: it is)."""
    if bot.is_closed():
        return "gateway: closed"
    if not bot.is_ready():
        return "gateway: not ready yet"
    if isinstance(bot, discord.AutoShardedClient):
        down = sorted(i for i, shard in bot.shards.items() if shard.is_closed())
        return f"gateway: shards {down} disconnected" if down else None
    ws = bot.ws
    if ws is None or not getattr(ws, "open", False):
        return "gateway: disconnected"
    return None


@dataclass
class Snapshot:
    """What one scrape read: the problems /healthz reports, and the values it read."""

    problems: list[str] = field(default_factory=list)
    lanes: list[Any] = field(default_factory=list)  # core.storage.outbox.LaneHealth
    parked: int | None = None
    games: int | None = None

    @property
    def healthy(self) -> bool:
        return not self.problems


async def snapshot(bot: MafiaBot) -> Snapshot:
    """Gateway, database, outbox (each probe bounded by PROBE_TIMEOUT)."""
    snap = Snapshot()
    problem = gateway_problem(bot)
    if problem is not None:
        snap.problems.append(problem)
    try:
        snap.parked = await asyncio.wait_for(probe.parked(), PROBE_TIMEOUT)
        snap.games = len(await asyncio.wait_for(bot.service.active_games(), PROBE_TIMEOUT))
    except Exception as exc:  # the database does not answer
        snap.problems.append(f"database: {type(exc).__name__}: {exc}".rstrip(": "))
        return snap
    try:
        snap.lanes = await asyncio.wait_for(bot.outbox.health(), PROBE_TIMEOUT)
    except Exception as exc:
        snap.problems.append(f"outbox: unreadable ({type(exc).__name__})")
        return snap
    limit = bot.settings.outbox_stuck_seconds
    for lane in snap.lanes:
        if lane.oldest is not None and lane.oldest > limit:
            snap.problems.append(f"outbox: lane {lane.name} stuck, {lane.pending} pending, "
                                 f"oldest {lane.oldest:.0f} s (over {limit:.0f} s)")
    return snap


# --- the cog ------------------------------------------------------------------------------
class Metrics(commands.Cog):
    """Counts commands; serves /healthz and /metrics while the bot runs."""

    def __init__(self, bot: MafiaBot) -> None:
        self.bot = bot
        self.meters = Meters(bot)
        self.runner: web.AppRunner | None = None
        self.wired: Wired | None = None
        #: the address served (METRICS_PORT 0: the port the system chose)
        self.host, self.port = bot.settings.metrics_host, bot.settings.metrics_port or 0

    async def cog_load(self) -> None:
        self.wired = wire(self.bot.http, self.meters)
        app = web.Application()
        app.router.add_get("/healthz", self.healthz)
        app.router.add_get("/metrics", self.metrics)
        self.runner = web.AppRunner(app, access_log=None, shutdown_timeout=2.0)
        await self.runner.setup()
        await web.TCPSite(self.runner, self.host, self.port).start()
        self.port = int(self.runner.addresses[0][1])
        log.info("health and metrics at http://%s:%d/healthz and /metrics",
                 self.host, self.port)

    async def cog_unload(self) -> None:
        if self.wired is not None:
            unwire(self.wired)
            self.wired = None
        if self.runner is not None:
            runner, self.runner = self.runner, None
            await runner.cleanup()

    @commands.Cog.listener()
    async def on_app_command_completion(self, interaction: discord.Interaction[Any],
                                        command: Any) -> None:
        self.counted(interaction, OK)

    @commands.Cog.listener()
    async def on_mafia_command_failed(self, interaction: discord.Interaction[Any],
                                      outcome: str) -> None:
        self.counted(interaction, outcome)

    def counted(self, interaction: discord.Interaction[Any], outcome: str) -> None:
        command = interaction.command
        name = command.qualified_name if command is not None else "unknown"
        self.meters.commands.labels(name, outcome).inc()
        started = interaction.extras.get(STARTED)
        if isinstance(started, float):
            self.meters.latency.labels(name).observe(time.perf_counter() - started)

    async def healthz(self, request: web.Request) -> web.Response:
        snap = await snapshot(self.bot)
        body = {"healthy": snap.healthy, "problems": snap.problems}
        return web.Response(status=200 if snap.healthy else 503, text=json.dumps(body),
                            content_type="application/json")

    async def metrics(self, request: web.Request) -> web.Response:
        self.read(await snapshot(self.bot))
        return web.Response(body=generate_latest(self.meters.registry),
                            headers={"Content-Type": CONTENT_TYPE_LATEST})

    def read(self, snap: Snapshot) -> None:
        """Set the gauges read at a scrape."""
        m, bot = self.meters, self.bot
        budget = bot.budget
        window = budget.window(Key(GLOBAL, budget.global_limit, 1.0))
        window.wait(budget.clock())  # drops the sends that left the window
        m.budget_limit.set(budget.global_limit)
        m.budget_used.set(len(window.sent) + window.inflight)
        m.budget_waiting.set(budget.waiting)
        for lane in snap.lanes:
            m.pending.labels(lane.name).set(lane.pending)
            m.oldest.labels(lane.name).set(lane.oldest or 0.0)
        if snap.parked is not None:
            m.parked.set(snap.parked)
        if snap.games is not None:
            m.games.set(snap.games)
        latency = bot.latency
        m.gateway.set(latency if math.isfinite(latency) else math.nan)
        m.healthy.set(1 if snap.healthy else 0)


async def setup(bot: MafiaBot) -> None:
    if bot.settings.metrics_port is not None:  # off by default
        await bot.add_cog(Metrics(bot))
