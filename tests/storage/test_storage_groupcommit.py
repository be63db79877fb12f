"""Group commit: concurrent commands of different games share a transaction, and a
piece that fails is rolled back alone, exactly as if it had been committed alone."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest
from tortoise.backends.base.client import BaseDBAsyncClient

from core import commands as c
from core.errors import RuleError
from core.storage.groupcommit import GroupCommitter
from core.storage.models import EventLog, GuildSettings
from core.storage.service import Commit, GameService

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def insert(guild: int, *, fail: bool = False):
    async def work(conn: BaseDBAsyncClient) -> int:
        await GuildSettings.create(using_db=conn, guild_id=guild, language="en")
        if fail:
            raise RuleError("not_master")
        return guild

    return work


async def test_concurrent_pieces_share_one_transaction(storage_db: str) -> None:
    group = GroupCommitter()
    results = await asyncio.gather(*(group.run(insert(g)) for g in range(1, 11)))
    assert results == list(range(1, 11))
    assert await GuildSettings.all().count() == 10
    # all ten were queued before the first transaction began: one transaction
    assert group.pieces == 10 and group.transactions == 1


async def test_a_failing_piece_fails_alone(storage_db: str) -> None:
    group = GroupCommitter()
    outcomes = await asyncio.gather(
        group.run(insert(1)), group.run(insert(2)), group.run(insert(3, fail=True)),
        group.run(insert(4)), return_exceptions=True)
    assert outcomes[:2] == [1, 2] and outcomes[3] == 4
    assert isinstance(outcomes[2], RuleError) and outcomes[2].code == "not_master"
    assert sorted(await GuildSettings.all().values_list("guild_id", flat=True)) == [1, 2, 4]


async def test_games_committed_together_each_get_their_own_outcome(
        game_service: GameService) -> None:
    """Through the service: ten games' joins at once, one of them refused by a hook
    inside the shared transaction; the others land, the refused one leaves no row."""
    svc = game_service
    games = [await svc.create(1, 100 + i, 1, f"G{i}", seed=i) for i in range(10)]
    refused = games[3]

    async def hook(conn: BaseDBAsyncClient, commit: Commit) -> None:
        if commit.game_id == refused:
            raise RuleError("not_master")

    svc.commit_hooks.append(hook)
    outcomes = await asyncio.gather(
        *(svc.apply(g, c.Join(by=500, at=T0, name="P")) for g in games),
        return_exceptions=True)
    for gid, outcome in zip(games, outcomes, strict=True):
        if gid == refused:
            assert isinstance(outcome, RuleError)
            assert (await svc.state(gid)).players == []
        else:
            assert not isinstance(outcome, BaseException), outcome
            assert [p.uid for p in (await svc.state(gid)).players] == [500]
    assert await EventLog.filter(game_id=refused).count() == 0
    assert await EventLog.all().count() == 9
    # the group was tried once, rolled back, and each piece run alone
    assert (svc._group.pieces, svc._group.transactions) == (10, 11)
    svc.commit_hooks.remove(hook)
    await asyncio.gather(*(svc.apply(g, c.Join(by=501, at=T0, name="Q")) for g in games))
    assert svc._group.pieces == 20 and svc._group.transactions < 20  # grouped this time
    for gid in games:
        await svc.verify(gid)
    svc.forget()
    assert [p.uid for p in (await svc.state(refused)).players] == [501]


@pytest.mark.parametrize("n", [1, 3])
async def test_cancelled_caller_still_commits(storage_db: str, n: int) -> None:
    group = GroupCommitter()
    tasks = [asyncio.ensure_future(group.run(insert(g))) for g in range(1, n + 1)]
    await asyncio.sleep(0)
    tasks[0].cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    for _ in range(50):
        if await GuildSettings.all().count() == n:
            break
        await asyncio.sleep(0.01)
    assert await GuildSettings.all().count() == n


async def test_a_stopped_committer_fails_every_waiter(storage_db: str) -> None:
    """Cancelled at shutdown mid-transaction: whoever still waits hears of it, nobody hangs."""
    group = GroupCommitter()
    entered = asyncio.Event()

    async def stuck(conn: BaseDBAsyncClient) -> None:
        entered.set()
        await asyncio.sleep(60)

    first = asyncio.ensure_future(group.run(stuck))
    await entered.wait()
    later = [asyncio.ensure_future(group.run(insert(g))) for g in (1, 2)]
    await asyncio.sleep(0)
    assert group._draining is not None
    group._draining.cancel()
    outcomes = await asyncio.wait_for(
        asyncio.gather(first, *later, return_exceptions=True), timeout=5)
    assert all(isinstance(o, RuntimeError) for o in outcomes), outcomes
    assert await GuildSettings.all().count() == 0
