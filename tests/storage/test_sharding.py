"""Sharding: each bot process serves only its own shards' guilds, on one shared database.

Discord sends a guild's events to shard (guild_id >> 22) % shard_count; a process
running some shards must likewise be the only one to fire its guilds' deadlines
and deliver their outbox. Checked three ways: the filter itself and the CLI/bot
wiring; two services with complementary filters in one process; and two real
processes (this file, run as a script, is the worker) on one SQLite file and on
one PostgreSQL schema, each playing its own guilds' games while the other does.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from bench.soak import play_stored
from core.game import commands as c
from core.game.state import Options, PhaseKind
from core.play.sim import MASTER
from core.storage.db import close_db, init_db
from core.storage.models import DELIVERED, EventLog, Game, Ledger, Outbox, UserStats, Wallet
from core.storage.outbox import OutboxEntry, OutboxWorker
from core.storage.scheduler import DeadlineScheduler
from core.storage.service import Commit, GameService, OutboxItem
from core.storage.sharding import ShardFilter, guild_filter, shard_of
from tests.storage.helpers import looked_again, until

T_OLD = datetime(2025, 6, 1, tzinfo=UTC)  # pre-made games started then: overdue
CLOCK = datetime(2025, 7, 1, tzinfo=UTC)  # the schedulers' frozen "now" (< core.play.sim.EPOCH)
SHARDS = 2
ROOT = Path(__file__).resolve().parents[2]  # on the workers' PYTHONPATH


def guild(shard: int, k: int = 0) -> int:
    """A guild id that Discord puts on `shard` (of SHARDS)."""
    return ((k * SHARDS + shard) << 22) | 4242


async def started_game(svc: GameService, guild_id: int, channel: int) -> int:
    """A game started at T_OLD (day 0): its deadline is long past at CLOCK."""
    gid = await svc.create(guild_id, channel, MASTER, f"Old {channel}", seed=channel)
    for i in range(7):
        await svc.apply(gid, c.Join(by=100 + i, at=T_OLD, name=f"P{i}"))
    await svc.apply(gid, c.Start(by=MASTER, at=T_OLD))
    deadline = (await svc.state(gid)).deadline
    assert deadline is not None and deadline < CLOCK
    return gid


async def backlog_game(svc: GameService, guild_id: int, channel: int, entries: int = 4) -> int:
    """A game with undelivered outbox entries."""
    items = [OutboxItem(kind="note", payload={"i": i}) for i in range(1, entries + 1)]
    return await svc.create(guild_id, channel, MASTER, f"Backlog {channel}", seed=channel,
                            extra_outbox=items)


# --- the rule and the wiring ----------------------------------------------------------
def test_the_filter_follows_discords_shard_rule() -> None:
    assert shard_of(guild(0), SHARDS) == 0 and shard_of(guild(1, 5), SHARDS) == 1
    assert shard_of(81384788765712384, 4) == (81384788765712384 >> 22) % 4
    owns = guild_filter(4, [1, 3])
    assert isinstance(owns, ShardFilter)
    ids = [g << 22 for g in range(16)]
    assert [g for g in ids if owns(g)] == [g for g in ids if (g >> 22) % 4 in (1, 3)]
    # Every guild has exactly one owner among processes that split the shards.
    split = [guild_filter(4, [0]), guild_filter(4, [1, 2]), guild_filter(4, [3])]
    for g in range(0, 10**6, 7919):
        assert sum(bool(f and f(g << 7)) for f in split) == 1
    assert guild_filter(None, None) is None  # not sharded
    assert guild_filter(3, None) is None and guild_filter(2, [1, 0]) is None  # all shards here
    for bad in ((None, [0]), (2, [2]), (0, None), (2, [])):
        with pytest.raises(ValueError):
            guild_filter(*bad)


@pytest.mark.parametrize(("argv", "says"), [
    (["run", "--shard-ids", "1"], "--shard-count"),
    (["run", "--shard-count", "2", "--shard-ids", "0,2"], "0 to 1"),
    (["run", "--shard-count", "0"], "at least 1"),
    (["run", "--auto-shard", "--shard-count", "2"], "--auto-shard"),
    (["run", "--shard-count", "2", "--shard-ids", "x"], "whole numbers"),
])
def test_bad_shard_options_are_refused_plainly(argv: list[str], says: str,
                                               capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    import cli

    monkeypatch.setenv("LANG", "en_US.UTF-8")
    assert cli.main(argv) == 2
    assert says in capsys.readouterr().err


async def test_the_sharded_bot_serves_only_its_shards() -> None:
    import discord

    from bot import MafiaBot, ShardedMafiaBot, make_bot
    from core.settings import Settings

    settings = Settings(discord_token="x", database_url="sqlite://:memory:")
    bot = make_bot(settings, 4, [1, 3])
    assert isinstance(bot, ShardedMafiaBot) and isinstance(bot, discord.AutoShardedClient)
    assert bot.shard_count == 4 and bot.shard_ids == [1, 3]
    owns = bot.service.owns
    assert owns is not None and owns(1 << 22) and owns(3 << 22) and not owns(2 << 22)
    from cogs.delivery.outbox import wire

    wire(bot)  # what loading the cogs.delivery.outbox extension does first
    assert bot.outbox.owns is owns  # the worker follows the service
    # One process with every shard (explicit, or counted by Discord) serves every guild.
    for every in (make_bot(settings, 2), make_bot(settings, auto_shard=True)):
        assert isinstance(every, ShardedMafiaBot) and every.service.owns is None
    plain = make_bot(settings)
    assert type(plain) is MafiaBot and plain.service.owns is None


# --- two services, complementary shards, one process ----------------------------------
async def test_each_service_fires_and_delivers_only_its_own_guilds(storage_db: str) -> None:
    neutral = GameService()
    old = {s: [await started_game(neutral, guild(s, k), 100 + 10 * s + k) for k in range(2)]
           for s in range(SHARDS)}
    backlog = {s: await backlog_game(neutral, guild(s, 3), 200 + s) for s in range(SHARDS)}
    owners = [GameService(owns=guild_filter(SHARDS, [s])) for s in range(SHARDS)]
    mine = {s: {*old[s], backlog[s]} for s in range(SHARDS)}

    for s, svc in enumerate(owners):
        assert {g.id for g in await svc.active_games()} == mine[s]
        assert set(await svc.pending_deadlines()) == set(old[s])

    delivered: dict[int, list[tuple[int, int]]] = {0: [], 1: []}

    def deliverer(s: int) -> Callable[[OutboxEntry], Any]:
        async def deliver(entry: OutboxEntry) -> None:
            delivered[s].append(entry.key)
        return deliver

    sched0 = DeadlineScheduler(owners[0], now=lambda: CLOCK)
    worker0 = OutboxWorker(deliverer(0), service=owners[0], poll_interval=0.05)
    await sched0.start()
    await worker0.start()
    try:
        await until(lambda: sched0.fired == len(old[0]), within=10.0, step=0.01)
        await worker0.idle()
        # A command shard 0 applies to shard 1's game (a DM reaches shard 0 only) does not
        # make shard 0 schedule that game's deadline.
        await owners[0].apply(old[1][0], c.Extend(by=MASTER, at=T_OLD, minutes=5))
        await looked_again(sched0)  # it went over its clock since: still not scheduled
        await worker0.idle()
        assert old[1][0] not in sched0.deadlines
        assert sched0.fired == len(old[0])
    finally:
        await sched0.stop()
        await worker0.stop()
    assert {g for g, _ in delivered[0]} == mine[0]
    for s in range(SHARDS):
        for gid in old[s]:
            state = await neutral.replay(gid)
            assert (state.phase is PhaseKind.DAY and state.number == 0) == (s == 1), gid
    pending = await Outbox.exclude(status=DELIVERED).values_list("game_id", flat=True)
    assert set(pending) == mine[1]  # shard 1's entries wait for shard 1

    sched1 = DeadlineScheduler(owners[1], now=lambda: CLOCK)
    worker1 = OutboxWorker(deliverer(1), service=owners[1], poll_interval=0.05)
    await sched1.start()
    await worker1.start()
    try:
        await until(lambda: sched1.fired == len(old[1]), within=10.0, step=0.01)
        await worker1.idle()
    finally:
        await sched1.stop()
        await worker1.stop()
    assert {g for g, _ in delivered[1]} == mine[1]
    assert not await Outbox.exclude(status=DELIVERED).exists()
    everything = delivered[0] + delivered[1]
    assert len(everything) == len(set(everything)) == await Outbox.all().count()
    for gid in [*old[0], *old[1]]:
        await neutral.verify(gid)


# --- two processes --------------------------------------------------------------------
SIM_PLAYERS = (7, 8, 9)
GUILDS_PER_SHARD = 2
GAMES_PER_GUILD = 2


async def worker(url: str, shard: int) -> None:
    """One shard's process: its scheduler, its outbox worker and simulated traffic on its
    own guilds, all at once; prints READY, waits for GO, prints RESULT {json}."""
    await init_db(url)  # both workers migrate the same fresh database at once
    print("READY", flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    fired: list[int] = []
    delivered: list[tuple[int, int]] = []
    last: dict[int, int] = {}
    out_of_order = 0

    async def record(_conn: Any, commit: Commit) -> None:
        if isinstance(commit.command, c.Advance) and commit.command.at == CLOCK:
            fired.append(commit.game_id)  # only the scheduler uses CLOCK

    async def deliver(entry: OutboxEntry) -> None:
        nonlocal out_of_order
        if entry.ordinal != last.get(entry.game_id, 0) + 1:
            out_of_order += 1
        last[entry.game_id] = entry.ordinal
        delivered.append(entry.key)

    try:
        svc = GameService(owns=guild_filter(SHARDS, [shard]))
        svc.commit_hooks.append(record)
        sched = DeadlineScheduler(svc, now=lambda: CLOCK)
        outbox = OutboxWorker(deliver, service=svc, poll_interval=0.2)
        await sched.start()
        await outbox.start()
        options = Options(currency=True, shop=True)
        games = []
        for k in range(GUILDS_PER_SHARD):
            g = guild(shard, k)
            for i in range(GAMES_PER_GUILD):
                games.append(await svc.create(g, g * 10 + i, MASTER, f"Sim {k}.{i}",
                                              seed=1000 * shard + 10 * k + i, options=options))
        with ThreadPoolExecutor(max_workers=len(games)) as pool:
            played = await asyncio.gather(*(
                play_stored(svc, gid, players=SIM_PLAYERS[n % len(SIM_PLAYERS)], seed=n,
                            executor=pool)
                for n, gid in enumerate(games)), return_exceptions=True)
        errors = [repr(p) for p in played if isinstance(p, BaseException)]
        await until(lambda: all(d > CLOCK for d in sched.deadlines.values()),
                    within=30, step=0.01)
        await outbox.idle(within=30)
        await sched.stop()
        await outbox.stop()
        print("RESULT " + json.dumps({
            "created": games, "fired": fired, "delivered": delivered,
            "out_of_order": out_of_order, "errors": errors}), flush=True)
    finally:
        await close_db()


async def spawn(url: str, shard: int) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable, __file__, url, str(shard), stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)})


async def expect(proc: asyncio.subprocess.Process, word: str) -> str:
    assert proc.stdout is not None and proc.stderr is not None
    while line := (await proc.stdout.readline()).decode():
        if line.startswith(word):
            return line[len(word):].strip()
    raise AssertionError((await proc.stderr.read()).decode() or f"worker ended before {word}")


async def test_two_shard_processes_share_one_database(storage_url: str) -> None:
    procs = [await spawn(storage_url, s) for s in range(SHARDS)]
    try:
        async with asyncio.timeout(120):
            for p in procs:
                await expect(p, "READY")
            # While both wait: overdue deadlines and an outbox backlog in both shards.
            await init_db(storage_url)
            try:
                neutral = GameService()
                old = {s: [await started_game(neutral, guild(s, k), 500 + 10 * s + k)
                           for k in range(2)] for s in range(SHARDS)}
                backlog = {s: await backlog_game(neutral, guild(s, 1), 600 + s)
                           for s in range(SHARDS)}
            finally:
                await close_db()
            for p in procs:
                assert p.stdin is not None
                p.stdin.write(b"GO\n")
                await p.stdin.drain()
            results = [json.loads(await expect(p, "RESULT")) for p in procs]
            for p in procs:
                assert await p.wait() == 0
    finally:
        for p in procs:
            if p.returncode is None:
                p.kill()
                await p.wait()

    await init_db(storage_url)
    try:
        neutral = GameService()
        guild_of = dict(await Game.all().values_list("id", "guild_id"))
        with_entries = set(await Outbox.all().values_list("game_id", flat=True))
        fired_everywhere: Counter[int] = Counter()
        delivered_everywhere: Counter[tuple[int, int]] = Counter()
        for shard, res in enumerate(results):
            assert res["errors"] == [] and res["out_of_order"] == 0, res
            # Each process fired only its own deadlines and delivered only its own entries.
            assert {shard_of(guild_of[g], SHARDS) for g in res["fired"]} <= {shard}
            assert sorted(res["fired"]) == sorted(old[shard])
            assert {shard_of(guild_of[g], SHARDS) for g, _ in res["delivered"]} == {shard}
            owned = {g for g, gid in guild_of.items() if shard_of(gid, SHARDS) == shard}
            assert {g for g, _ in res["delivered"]} == owned & with_entries
            assert backlog[shard] in {g for g, _ in res["delivered"]}
            fired_everywhere.update(res["fired"])
            delivered_everywhere.update(tuple(k) for k in res["delivered"])
        assert set(fired_everywhere.values()) == {1}  # every overdue deadline fired once
        assert set(delivered_everywhere.values()) == {1}  # every entry delivered once
        assert len(delivered_everywhere) == await Outbox.all().count()
        assert not await Outbox.exclude(status=DELIVERED).exists()
        # Every game's stored state is the replay of its log; the simulated games ended.
        for gid in guild_of:
            await neutral.verify(gid)
        created = [g for res in results for g in res["created"]]
        assert all(not g.active for g in await Game.filter(id__in=created))
        for gid in [*old[0], *old[1]]:
            logged = await neutral.log(gid)
            assert sum(isinstance(cmd, c.Advance) and cmd.at == CLOCK
                       for _, cmd, _ in logged) == 1
        # The books: balances equal their ledgers; one stats row per player per guild
        # counts every finished game it sat in.
        for w in await Wallet.all():
            total = sum(await Ledger.filter(guild_id=w.guild_id, user_id=w.user_id)
                        .values_list("amount", flat=True))
            assert w.balance == total >= 0
        assert await Wallet.all().count() > 0
        ended = await Game.filter(id__in=created, phase=PhaseKind.ENDED.value)
        seats: Counter[tuple[int, int]] = Counter()
        for g in ended:
            state = await neutral.state(g.id)
            seats.update((g.guild_id, p.uid) for p in state.players)
        stats = {(s.guild_id, s.user_id): s.games for s in await UserStats.all()}
        assert stats == dict(seats)
        assert await EventLog.all().count() == sum(g.seq for g in await Game.all())
    finally:
        await close_db()


if __name__ == "__main__":
    asyncio.run(worker(sys.argv[1], int(sys.argv[2])))
