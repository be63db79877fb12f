"""Health and metrics over HTTP (cogs/metrics.py, issue 44 item 2): a running bot behind
the fake Discord, METRICS_PORT set, scraped on 127.0.0.1 at the port the system chose."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import pytest_asyncio

from bot import MafiaBot
from cogs import metrics
from cogs.metrics import Meters, Metrics, route_of
from core.settings import Settings
from core.storage.outbox import LaneHealth
from tests.bot.helpers import EVERYTHING, TIMEOUT, new_bot, open_table, started
from tests.harness import Harness


def metered_bot(tmp_path: Path, **settings: Any) -> MafiaBot:
    """new_bot's bot (the same migrated database) with METRICS_PORT=0: any free port."""
    plain = new_bot(tmp_path)
    return MafiaBot(Settings(discord_token="x", database_url=plain.settings.database_url,
                             metrics_port=0, **settings), state_dir=tmp_path)


@pytest_asyncio.fixture
async def mh(tmp_path: Path) -> AsyncIterator[Harness]:
    bot = metered_bot(tmp_path)
    h = await started(bot, Harness(bot, timeout=TIMEOUT))
    try:
        h.add_guild("Mafia Club", locale="ru")
        h.set_bot_permissions(EVERYTHING)
        yield h
    finally:
        await h.close()


def _cog(h: Harness) -> Any:
    """The running Metrics cog (an instance of the extension's own module: discord.py
    loads extensions afresh, so not of the class this test imported)."""
    cog = h.bot.get_cog("Metrics")
    assert type(cog).__name__ == Metrics.__name__
    return cog


def _metered(bot: MafiaBot) -> bool:
    session = bot.http._HTTPClient__session  # type: ignore[attr-defined]
    return type(session).__name__ == metrics.MeteredSession.__name__


async def _get(h: Harness, path: str) -> tuple[int, str]:
    cog = _cog(h)
    assert cog.host == "127.0.0.1" and cog.port > 0
    async with aiohttp.ClientSession() as session, \
            session.get(f"http://127.0.0.1:{cog.port}{path}") as response:
        return response.status, await response.text()


def _value(text: str, name: str, **labels: str) -> float:
    """A sample's value in Prometheus' text format (labels in any order)."""
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        match = re.match(r"^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$", line)
        if match is None or match.group(1) != name:
            continue
        found = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', match.group(2) or ""))
        if all(found.get(k) == v for k, v in labels.items()):
            return float(match.group(3))
    raise AssertionError(f"no sample {name} {labels} in:\n{text}")


async def test_metrics_of_a_running_bot(mh: Harness) -> None:
    # a 429 on the signup board's post, which discord.py waits out and retries
    mh.fake.fail("POST /channels/{channel_id}/messages", status=429,
                 body={"message": "You are being rate limited.", "retry_after": 0.01,
                       "global": False},
                 headers={"X-RateLimit-Scope": "user", "Retry-After": "0.01",
                          "Via": "1.1 google"})
    table = await open_table(mh, 3)
    refused = await table.do(table.master, "game start")  # 3 players: too few
    assert refused.ephemeral
    status, text = await _get(mh, "/metrics")
    assert status == 200
    assert _value(text, "mafia_commands_total", command="game create", outcome="ok") == 1
    assert _value(text, "mafia_commands_total", command="game join", outcome="ok") == 3
    assert _value(text, "mafia_commands_total", command="game start",
                  outcome="refused") == 1
    assert _value(text, "mafia_command_seconds_count", command="game join") == 3
    assert _value(text, "mafia_command_seconds_bucket", command="game join", le="+Inf") == 3
    route = "POST /channels/{channel_id}/messages"
    assert _value(text, "mafia_rest_responses_total", route=route, status="429") == 1
    assert _value(text, "mafia_rest_responses_total", route=route, status="200") >= 1
    assert _value(text, "mafia_rest_429_total", scope="user") == 1
    # the interaction answers, which do not pass discord.py's http.request
    assert _value(text, "mafia_rest_responses_total",
                  route="POST /interactions/{id}/{token}/callback", status="200") >= 5
    assert _value(text, "mafia_budget_limit") == 50
    assert _value(text, "mafia_budget_granted_total", priority="0") >= 1
    assert _value(text, "mafia_budget_used") >= 0
    assert _value(text, "mafia_budget_waiting") == 0
    for lane in ("announce", "places", "channels", "cosmetic", "roles", "desk"):
        assert _value(text, "mafia_outbox_pending", lane=lane) == 0
        assert _value(text, "mafia_outbox_oldest_seconds", lane=lane) == 0
    assert _value(text, "mafia_outbox_parked") == 0
    assert _value(text, "mafia_live_games") == 1
    assert _value(text, "mafia_gateway_latency_seconds") == 0.0  # the fake's heartbeat
    assert _value(text, "mafia_healthy") == 1


async def test_healthz_says_healthy_or_why_not(mh: Harness,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    assert await _get(mh, "/healthz") == (200, json.dumps({"healthy": True,
                                                           "problems": []}))
    mh.bot.ws.open = False  # type: ignore[union-attr]  # the gateway connection dropped
    status, text = await _get(mh, "/healthz")
    assert (status, json.loads(text)["problems"]) == (503, ["gateway: disconnected"])
    mh.bot.ws.open = True  # type: ignore[union-attr]

    async def stuck() -> list[LaneHealth]:
        return [LaneHealth("announce", 0, None), LaneHealth("places", 4, 1000.0)]

    monkeypatch.setattr(mh.bot.outbox, "health", stuck)
    status, text = await _get(mh, "/healthz")
    assert status == 503
    assert json.loads(text)["problems"] == [
        "outbox: lane places stuck, 4 pending, oldest 1000 s (over 900 s)"]
    _, text = await _get(mh, "/metrics")
    assert _value(text, "mafia_outbox_oldest_seconds", lane="places") == 1000
    assert _value(text, "mafia_healthy") == 0

    async def unreachable() -> int:
        raise ConnectionRefusedError("connection refused")

    monkeypatch.setattr(metrics.probe, "parked", unreachable)
    status, text = await _get(mh, "/healthz")
    assert (status, json.loads(text)["problems"]) == (
        503, ["database: ConnectionRefusedError: connection refused"])


async def test_the_server_stops_with_the_bot(tmp_path: Path) -> None:
    bot = metered_bot(tmp_path)
    async with Harness(bot, timeout=TIMEOUT) as h:
        port = _cog(h).port
        assert (await _get(h, "/healthz"))[0] == 200
    async with aiohttp.ClientSession() as session:
        with pytest.raises(aiohttp.ClientConnectorError):
            await session.get(f"http://127.0.0.1:{port}/healthz")
    assert not _metered(bot)


async def test_off_by_default(h: Harness) -> None:
    assert h.bot.settings.metrics_port is None
    assert h.bot.get_cog("Metrics") is None
    assert not _metered(h.bot)  # type: ignore[arg-type]


def test_each_bot_has_its_own_registry(tmp_path: Path) -> None:
    """Two bots in one process (as in the tests) never clash over a metric's name."""
    first, second = Meters(new_bot(tmp_path)), Meters(new_bot(tmp_path))
    first.commands.labels("vote", "ok").inc()
    assert first.registry is not second.registry
    assert second.registry.get_sample_value(
        "mafia_commands_total", {"command": "vote", "outcome": "ok"}) is None


def test_routes_of_urls_leave_ids_and_tokens_out() -> None:
    base = "https://discord.com/api/v10"
    assert route_of("POST", f"{base}/interactions/1234567890123/aW50ZXJh/callback") == (
        "POST /interactions/{id}/{token}/callback")
    assert route_of("PATCH", f"{base}/webhooks/1234567890123/aW50ZXJh/messages/@original"
                    ) == "PATCH /webhooks/{id}/{token}/messages/@original"
    assert route_of("GET", f"{base}/channels/98765432101234?limit=5") == (
        "GET /channels/{id}")


def test_a_bad_metrics_port_is_refused() -> None:
    import pydantic

    with pytest.raises(pydantic.ValidationError):
        Settings(metrics_port=70000)
