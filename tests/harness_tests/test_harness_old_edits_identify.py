"""Two limits of Discord the fake enforces: edits of messages older than an hour (about
3 per 6 s per channel, answered 429 with error code 30046) and identify concurrency
(one IDENTIFY per max_concurrency bucket per 5 s, across every process of a bot)."""

from __future__ import annotations

import json

import discord

from tests.harness import Harness
from tests.harness.gateway import IdentifyGate
from tests.harness.ratelimits import (
    DISCORD_EPOCH_MS,
    OLD_EDIT_CODE,
    OLD_EDIT_MESSAGE,
    RateLimits,
    VirtualClock,
)
from tests.harness.transport import FakeDiscord

EDIT = "PATCH /channels/{channel_id}/messages/{message_id}"


def _snowflake(at: float) -> int:
    return (int(at * 1000) - DISCORD_EPOCH_MS) << 22


def _fake(at: float = 1_800_000_000.0) -> tuple[FakeDiscord, RateLimits]:
    clock = VirtualClock(lambda: 50.0)
    limits = RateLimits(clock=clock)
    limits.wall = lambda: at + clock.offset  # type: ignore[method-assign]
    fake = FakeDiscord(strict=False, limits=limits)
    fake.add_handler(EDIT, lambda c: {"id": str(c.params["message_id"])})
    return fake, limits


async def _edit(fake: FakeDiscord, channel: int, message: int) -> tuple[int, dict[str, object]]:
    url = f"https://discord.com/api/v10/channels/{channel}/messages/{message}"
    answer = await fake.handle("PATCH", url, {"json": {"content": "x"}})
    return answer.status, json.loads(await answer.read() or b"{}")


async def test_old_message_edits_are_held_to_3_per_6s_per_channel_with_30046() -> None:
    now = 1_800_000_000.0
    fake, limits = _fake(now)
    old, fresh = _snowflake(now - 3601), _snowflake(now - 60)
    statuses = [(await _edit(fake, 1, old))[0] for _ in range(3)]
    assert statuses == [200, 200, 200]
    status, body = await _edit(fake, 1, old)
    assert status == 429
    assert body["code"] == OLD_EDIT_CODE and body["message"] == OLD_EDIT_MESSAGE
    assert 0 < float(str(body["retry_after"])) <= 6.0
    # another channel has its own 3; a fresh message in the same channel its 5 per 5 s
    assert (await _edit(fake, 2, old))[0] == 200
    assert [(await _edit(fake, 1, fresh))[0] for _ in range(2)] == [200, 200]
    # after 6 s the old message may be edited again
    limits.clock.at_least(limits.clock() + 6.0)
    assert (await _edit(fake, 1, old))[0] == 200
    assert [h.route for h in limits.hits] == [EDIT]


async def test_a_message_ages_with_the_fake_clock() -> None:
    now = 1_800_000_000.0
    fake, limits = _fake(now)
    message = _snowflake(now - 10)
    assert [(await _edit(fake, 3, message))[0] for _ in range(5)] == [200] * 5  # 5 per 5 s
    limits.clock.at_least(limits.clock() + 3600.0)
    assert [(await _edit(fake, 3, message))[0] for _ in range(4)] == [200, 200, 200, 429]


async def test_gateway_bot_tells_max_concurrency() -> None:
    async with Harness(discord.Client(intents=discord.Intents.default())) as h:
        h.api.max_concurrency, h.api.shards = 4, 8
        shards, _, limits = await h.bot.http.get_bot_gateway()
        assert shards == 8 and limits["max_concurrency"] == 4


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


async def test_identify_gate_refuses_a_second_identify_in_a_bucket_within_5s() -> None:
    clock = _Clock()
    gate = IdentifyGate(max_concurrency=2, clock=clock)
    assert gate.identify(0, 4) and gate.identify(1, 4)  # buckets 0 and 1 at once
    assert not gate.identify(2, 4)  # bucket 0 again, at once
    clock.now = 5.0
    assert gate.identify(2, 4) and gate.identify(3, 4)
    assert [(i.shard_id, i.bucket) for i in gate.refused] == [(2, 0)]


async def test_discord_py_default_hook_breaks_the_limit_when_processes_start_together() -> None:
    """discord.py's hook only sleeps 5 s before a re-identify: two processes starting
    their first shard of the same bucket at once are refused."""
    clock = _Clock()
    gate = IdentifyGate(max_concurrency=1, clock=clock)
    a = discord.Client(intents=discord.Intents.none())
    b = discord.Client(intents=discord.Intents.none())
    assert await gate.connect(a, 0, 2)
    assert not await gate.connect(b, 1, 2)
