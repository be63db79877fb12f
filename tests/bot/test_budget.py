"""The client-side request budget (cogs/delivery/budget.py) and its HTTP wrapper
(cogs/delivery/ratelimits.py): limits held, priorities kept by weighted turns (issue 27), edits
of one message coalesced."""

from __future__ import annotations

import asyncio
from typing import Any

from discord.http import Route

from cogs.delivery.budget import Key, RateBudget
from cogs.delivery.ratelimits import COSMETIC, BudgetedHTTP
from tests.harness.virtualtime import virtual_time


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def at_least(self, moment: float) -> None:
        self.now = max(self.now, moment)


async def test_no_more_than_the_limit_in_any_window() -> None:
    clock = Clock()
    budget = RateBudget(global_limit=3, clock=clock, skip=clock.at_least)
    sent: list[tuple[float, str]] = []

    async def request(name: str, priority: int) -> None:
        release = await budget.acquire([Key("msg:1", 100, 1.0)], priority)
        sent.append((clock.now, name))
        release()

    await asyncio.gather(*(request(f"low{i}", 2) for i in range(4)),
                         *(request(f"high{i}", 1) for i in range(4)))
    # any window of 1 s (Discord's) holds at most 3
    times = [t for t, _ in sent]
    assert all(sum(1 for u in times if t <= u < t + 1.0) <= 3 for t in times)
    assert budget.granted == {1: 4, 2: 4}


async def test_a_request_in_flight_counts_until_answered() -> None:
    clock = Clock()
    budget = RateBudget(global_limit=1, clock=clock, skip=clock.at_least)
    release = await budget.acquire()
    second = asyncio.ensure_future(budget.acquire())
    clock.now = 5.0  # long past the window, but the first is still in flight
    await asyncio.sleep(0)
    budget.wake()
    await asyncio.sleep(0)
    assert not second.done()
    release()
    await asyncio.sleep(0.01)
    assert second.done()


class _Bot:
    def __init__(self) -> None:
        self.private_index: dict[int, int] = {}

    def get_channel(self, cid: int) -> None:
        return None


def test_waiting_edits_of_one_message_are_sent_once_with_the_newest_content() -> None:
    with virtual_time() as loop:  # "nothing sent yet" once nothing else can move
        loop.run_until_complete(_waiting_edits())


async def _waiting_edits() -> None:
    clock = Clock()
    budget = RateBudget(global_limit=1, clock=clock)  # real waits: the queue holds them
    sends: list[dict[str, Any]] = []

    async def send(route: Route, **kwargs: Any) -> Any:
        sends.append(dict(kwargs["json"]))
        return {"id": "9", **kwargs["json"]}

    http = BudgetedHTTP(_Bot(), budget, send)  # type: ignore[arg-type]
    blocker = await budget.acquire()  # the global window is full for now
    route = Route("PATCH", "/channels/{channel_id}/messages/{message_id}",
                  channel_id=1, message_id=9)
    edits = [asyncio.ensure_future(http.request(route, json={"content": f"v{i}"}))
             for i in range(3)]
    await asyncio.sleep(3600)  # virtual: returns once every task is waiting
    assert sends == []
    blocker()
    clock.now = 2.0
    budget.wake()
    answers = await asyncio.gather(*edits)
    assert sends == [{"content": "v2"}]
    assert all(a["content"] == "v2" for a in answers)
    assert http.coalesced == 2
    assert http.priority(route) == COSMETIC


def test_the_budget_shares_the_global_limit_by_weight() -> None:
    """Priority 1 floods the global limit (5/s here); priorities 2 and 3 still get their
    weighted turns: within a few seconds, not after the flood."""
    async def body() -> dict[str, float]:
        loop: Any = asyncio.get_running_loop()
        budget = RateBudget(global_limit=5, clock=loop.time)
        granted: dict[str, float] = {}

        async def request(name: str, priority: int) -> None:
            release = await budget.acquire([Key(f"msg:{name}", 100, 1.0)], priority)
            granted[name] = loop.elapsed()
            release()

        # queued in this order: 200 announcements, then a push and an edit
        flood = [asyncio.create_task(request(f"a{i}", 1)) for i in range(200)]
        await asyncio.sleep(0)
        late = [asyncio.create_task(request("push", 2)),
                asyncio.create_task(request("edit", 3))]
        await asyncio.gather(*flood, *late)
        return granted

    with virtual_time() as loop:
        granted = loop.run_until_complete(body())
    # 200 announcements take 40 s at 5/s; the push and the edit go in the next second's
    # grants (weights 24:4:2), not after the flood as strict priority had them
    assert granted["push"] <= 1.2 and granted["edit"] <= 1.2, (granted["push"],
                                                                 granted["edit"])
    assert max(granted.values()) >= 39.0


def test_the_global_limit_follows_the_setting() -> None:
    """GLOBAL_RATE_LIMIT: a bot Discord granted more sends more (issue 44, item 5); the
    standard 50 per second without it."""
    from bot import MafiaBot
    from cogs.delivery.budget import GLOBAL, GLOBAL_LIMIT
    from core.settings import Settings

    assert GLOBAL_LIMIT == 50
    assert MafiaBot(Settings(discord_token="x")).budget.global_limit == 50
    budget = MafiaBot(Settings(discord_token="x", global_rate_limit=120)).budget
    assert budget.global_limit == 120
    assert budget.window(Key(GLOBAL, GLOBAL_LIMIT, 1.0)).limit == 120


def test_the_global_limit_setting_is_read_from_the_environment(
        monkeypatch: Any) -> None:
    import pydantic
    import pytest

    from core.settings import Settings

    monkeypatch.setenv("GLOBAL_RATE_LIMIT", "500")
    assert Settings().global_rate_limit == 500
    monkeypatch.setenv("GLOBAL_RATE_LIMIT", "0")
    with pytest.raises(pydantic.ValidationError):
        Settings()


async def test_a_raised_limit_lets_that_many_out_in_a_second() -> None:
    clock = Clock()
    budget = RateBudget(global_limit=120, clock=clock, skip=clock.at_least)
    sent: list[float] = []

    async def request() -> None:
        release = await budget.acquire(priority=1)
        sent.append(clock.now)
        release()

    await asyncio.gather(*(request() for _ in range(240)))
    times = sorted(sent)
    assert sum(1 for t in times if t < 1.0) == 120  # not 50
    assert all(sum(1 for u in times if t <= u < t + 1.0) <= 120 for t in times)
