"""Group commit: concurrent commands of different games share a transaction, and a
piece that fails is rolled back alone, exactly as if it had been committed alone."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

import pytest
from tortoise.backends.base.client import BaseDBAsyncClient
from tortoise.connection import get_connections
from tortoise.exceptions import IntegrityError

from core.game import commands as c
from core.game.errors import RuleError
from core.game.state import PhaseKind
from core.play.sim import MASTER
from core.storage import statements
from core.storage.groupcommit import GroupCommitter
from core.storage.models import EventLog, Game, Outbox, UserStats
from core.storage.service import Commit, GameService
from core.storage.statements import Script

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def insert(guild: int, *, fail: bool = False):
    async def work(conn: BaseDBAsyncClient) -> int:
        await UserStats.create(using_db=conn, guild_id=guild, user_id=1)
        if fail:
            raise RuleError("not_master")
        return guild

    return work


async def test_concurrent_pieces_share_one_transaction(storage_db: str) -> None:
    group = GroupCommitter()
    results = await asyncio.gather(*(group.run(insert(g)) for g in range(1, 11)))
    assert results == list(range(1, 11))
    assert await UserStats.all().count() == 10
    # all ten were queued before the first transaction began: one transaction
    assert group.pieces == 10 and group.transactions == 1


async def test_a_failing_piece_fails_alone(storage_db: str) -> None:
    group = GroupCommitter()
    outcomes = await asyncio.gather(
        group.run(insert(1)), group.run(insert(2)), group.run(insert(3, fail=True)),
        group.run(insert(4)), return_exceptions=True)
    assert outcomes[:2] == [1, 2] and outcomes[3] == 4
    assert isinstance(outcomes[2], RuleError) and outcomes[2].code == "not_master"
    assert sorted(await UserStats.all().values_list("guild_id", flat=True)) == [1, 2, 4]


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
    assert (svc.committer.pieces, svc.committer.transactions) == (10, 11)
    svc.commit_hooks.remove(hook)
    await asyncio.gather(*(svc.apply(g, c.Join(by=501, at=T0, name="Q")) for g in games))
    assert svc.committer.pieces == 20 and svc.committer.transactions < 20  # grouped this time
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
        if await UserStats.all().count() == n:
            break
        await asyncio.sleep(0.01)
    assert await UserStats.all().count() == n


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
    group.stop()
    outcomes = await asyncio.wait_for(
        asyncio.gather(first, *later, return_exceptions=True), timeout=5)
    assert all(isinstance(o, RuntimeError) for o in outcomes), outcomes
    assert await UserStats.all().count() == 0


# --- scripts: writes decided before the transaction ---------------------------------------
def outbox_row(game_id: int, ordinal: int) -> Script:
    """A script inserting the game's outbox entry number `ordinal`."""
    statement = statements.outbox_insert(statements.default_dialect(), game_id, ordinal - 1,
                                         [("k", "{}")], T0)
    assert statement is not None
    return Script(None, (statement,))


async def ordinals(game_id: int) -> list[int]:
    return sorted(await Outbox.filter(game_id=game_id).values_list("ordinal", flat=True))


async def test_scripts_share_one_transaction_and_a_failing_one_fails_alone(
        game_service: GameService) -> None:
    svc = game_service
    gid = await svc.create(1, 100, 1, "G", seed=1)
    group = GroupCommitter()
    assert await group.run(outbox_row(gid, 10)) is True
    # 11, 12 and 13 together with a second 10 (unique per game: the database refuses it)
    outcomes = await asyncio.gather(
        *(group.run(outbox_row(gid, n)) for n in (11, 12)), group.run(outbox_row(gid, 10)),
        group.run(outbox_row(gid, 13)), return_exceptions=True)
    assert outcomes[:2] == [True, True] and outcomes[3] is True
    assert isinstance(outcomes[2], IntegrityError)
    assert await ordinals(gid) == [10, 11, 12, 13]  # nothing of the failed one; no other lost
    # the group of four was tried once, rolled back whole, then each piece alone
    assert (group.pieces, group.transactions) == (5, 1 + 1 + 4)
    # without a failure, four scripts are one transaction
    await asyncio.gather(*(group.run(outbox_row(gid, n)) for n in (14, 15, 16, 17)))
    assert (group.pieces, group.transactions) == (9, 7)
    assert await ordinals(gid) == list(range(10, 18))


async def test_a_script_whose_guard_fails_writes_nothing(game_service: GameService) -> None:
    svc = game_service
    gid = await svc.create(1, 100, 1, "G", seed=1)
    dialect = statements.default_dialect()
    seq = (await Game.get(id=gid)).seq
    then = (statements.outbox_insert(dialect, gid, 0, [("k", "{}")], T0),)
    moved = Script(statements.game_update(dialect, gid, {"title": "moved"}, seq=seq + 1),
                   then)  # type: ignore[arg-type]
    held = Script(statements.game_update(dialect, gid, {"title": "held"}, seq=seq),
                  then)  # type: ignore[arg-type]
    group = GroupCommitter()
    assert await asyncio.gather(group.run(moved), group.run(held)) == [False, True]
    assert (await Game.get(id=gid)).title == "held"
    assert await Outbox.filter(game_id=gid, kind="k").count() == 1  # the held one's only


async def test_a_vote_commits_in_one_call_to_the_database_thread(
        storage_url: str, game_service: GameService, monkeypatch: pytest.MonkeyPatch) -> None:
    """On SQLite a vote's commit is one round trip through the event loop (BEGIN, the
    game row, the log and outbox rows, COMMIT), where each call waits its turn in a
    busy loop; a command that seats a player still takes the general path."""
    if not storage_url.startswith("sqlite"):
        pytest.skip("SQLite's connection thread only")
    svc = game_service
    gid = await svc.create(1, 10, MASTER, "Test", seed=1)
    for i in range(7):
        await svc.apply(gid, c.Join(by=100 + i, at=T0, name=f"P{i}"))
    await svc.apply(gid, c.Start(by=MASTER, at=T0))
    state = await svc.state(gid)
    while state.phase is not PhaseKind.DAY or state.number == 0:  # day 1 votes
        state = (await svc.apply(gid, c.Advance(by=MASTER, at=T0))).state
    voter, target = state.living()[:2]
    connection = get_connections().get("default")._connection
    calls: list[Any] = []
    real = connection._execute

    async def counted(fn: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(fn)
        return await real(fn, *args, **kwargs)

    monkeypatch.setattr(connection, "_execute", counted)
    seq = state.seq
    applied = await svc.apply(gid, c.Vote(by=voter.uid, at=T0, target=target.uid))
    assert applied.seq == seq + 1
    assert len(calls) == 1
    assert await EventLog.filter(game_id=gid, seq=seq + 1).count() == 1
    calls.clear()
    await svc.apply(gid, c.Unvote(by=voter.uid, at=T0))
    assert len(calls) == 1
    monkeypatch.undo()
    await svc.verify(gid)
