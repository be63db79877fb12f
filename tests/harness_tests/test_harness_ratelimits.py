"""The fake Discord enforces Discord's rate limits (tests/harness/ratelimits.py).

Driven through discord.py's real HTTP client: it reads the fake's X-RateLimit-* headers
and waits before a bucket runs dry, and it retries a 429 after ``retry_after``; the
harness skips those waits (retry_sleep_scale=0) while the fake's clock moves on.
"""

from __future__ import annotations

import asyncio

import discord
import pytest
from discord.http import Route

from tests.harness import Harness
from tests.harness.ratelimits import Limit, RateLimits, VirtualClock, bucket_hash
from tests.harness.transport import FakeDiscord

POST = "POST /channels/{channel_id}/messages"


def _client() -> discord.Client:
    return discord.Client(intents=discord.Intents.default())


async def _channel(h: Harness) -> discord.TextChannel:
    h.add_guild()
    channel = h.guild().get_channel(h.default_guild.general_id)
    assert isinstance(channel, discord.TextChannel)
    return channel


async def test_success_carries_bucket_headers_and_the_channel_limit_holds() -> None:
    async with Harness(_client()) as h:
        channel = await _channel(h)
        start = h.world.clock()
        for i in range(12):
            await channel.send(f"m{i}")
        posts = h.fake.find(POST)
        assert [p.status for p in posts] == [200] * 12  # discord.py waited: no 429
        assert h.world.ratelimits.limited == 0
        # 12 messages at 5 per 5 s took two whole windows of the fake's time
        assert h.world.clock() - start >= 10.0
        # the waits discord.py made were the buckets' Reset-After
        assert any(4.0 < s <= 5.0 for s in h.fake.sleeps)


async def test_headers_as_discord_sends_them() -> None:
    limits = RateLimits(clock=VirtualClock(lambda: 100.0))
    fake = FakeDiscord(strict=False, limits=limits)
    fake.add_handler(POST, lambda c: {"id": "1"})
    url = "https://discord.com/api/v10/channels/7/messages"
    answers = [await fake.handle("POST", url, {}) for _ in range(6)]
    first = answers[0].headers
    assert first["X-RateLimit-Limit"] == "5" and first["X-RateLimit-Remaining"] == "4"
    assert float(first["X-RateLimit-Reset-After"]) == 5.0
    assert first["X-RateLimit-Bucket"] == bucket_hash("messages")
    assert answers[4].headers["X-RateLimit-Remaining"] == "0"
    over = answers[5]
    assert over.status == 429
    assert await over.json() == {"message": "You are being rate limited.",
                                 "retry_after": 5.0, "global": False}
    assert over.headers["Retry-After"] == "5" and over.headers["Via"]
    assert over.headers["X-RateLimit-Scope"] == "user"
    assert limits.limited == 1 and limits.hits[0].route == POST
    # another channel is another bucket (channel_id is a major parameter)
    other = await fake.handle("POST", "https://discord.com/api/v10/channels/8/messages", {})
    assert other.status == 200


async def test_global_limit_429_then_discord_py_retries() -> None:
    async with Harness(_client()) as h:
        await _channel(h)
        h.world.ratelimits.reset()
        ids = [h.add_text_channel(f"c{i}").id for i in range(60)]

        async def get(cid: int) -> None:
            await h.bot.http.request(Route("GET", "/channels/{channel_id}", channel_id=cid))

        await asyncio.gather(*(get(cid) for cid in ids))
        hits = h.world.ratelimits.hits
        assert hits and all(x.is_global and x.scope == "global" for x in hits)
        limited = [c for c in h.fake.find("GET /channels/{channel_id}") if c.status == 429]
        assert limited and limited[0].response["global"] is True
        # each was retried after the wait and answered
        assert {c.params["channel_id"] for c in h.fake.find("GET /channels/{channel_id}")
                if c.status == 200} == set(ids)


async def test_interactions_are_not_counted_globally() -> None:
    client = _client()
    tree = discord.app_commands.CommandTree(client)

    @tree.command(name="ping", description="ping")
    async def ping(interaction: discord.Interaction) -> None:
        await interaction.response.send_message("pong")
        await interaction.followup.send("again")

    async with Harness(client) as h:
        await _channel(h)
        await tree.sync()
        alice = h.add_member("Alice")
        before = h.world.ratelimits.counted
        await h.slash(alice, "ping")
        assert h.world.ratelimits.counted == before


async def test_channel_rename_sub_limit() -> None:
    async with Harness(_client()) as h:
        channel = await _channel(h)
        h.world.ratelimits.reset()
        for name in ("a", "b", "c"):
            await channel.edit(name=name)
        hits = h.world.ratelimits.hits
        assert len(hits) == 1 and hits[0].scope == "shared"
        assert 590 < hits[0].retry_after <= 600
        assert h.world.channel(channel.id)["name"] == "c"  # after the 10 minutes
        # overwrites alone are not a rename
        h.world.ratelimits.reset()
        for _ in range(3):
            await channel.edit(overwrites={})
        assert h.world.ratelimits.limited == 0


async def test_disabled_limits_send_no_headers() -> None:
    async with Harness(_client()) as h:
        channel = await _channel(h)
        h.world.ratelimits.enabled = False
        for i in range(8):
            await channel.send(f"m{i}")
        assert h.world.ratelimits.limited == 0
        last = h.fake.find(POST)[-1]
        assert last.status == 200
        assert not any(4.0 < s <= 5.0 for s in h.fake.sleeps)


@pytest.mark.parametrize("route,limit", [
    ("POST /guilds/{guild_id}/roles", Limit(1, 60.0)),
])
async def test_limits_are_configurable(route: str, limit: Limit) -> None:
    async with Harness(_client()) as h:
        await _channel(h)
        h.world.ratelimits.routes[route] = ("roles", limit)
        h.set_bot_permissions(discord.Permissions.all())
        guild = h.guild()
        await guild.create_role(name="a")
        await guild.create_role(name="b")
        assert h.world.ratelimits.limited == 0  # discord.py waited on the headers
        assert any(55 < s <= 60 for s in h.fake.sleeps)
