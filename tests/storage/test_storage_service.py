"""GameService: one transaction per command, nothing written on refusal, exact replay."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from typing import Any

import pytest
from tortoise.backends.base.client import BaseDBAsyncClient
from tortoise.connection import get_connection
from tortoise.migrations.autodetector import MigrationAutodetector

from bench.soak import simulate_stored
from core.game import commands as c
from core.game.errors import RuleError
from core.game.state import Options
from core.play.sim import MASTER
from core.settings import database_config
from core.storage import statements
from core.storage.db import close_db, init_db
from core.storage.models import EventLog, Game, GamePlayer, Ledger, Outbox, UserStats
from core.storage.service import (
    Commit,
    DiscordPatch,
    GameNotFound,
    GameService,
    OutboxItem,
)

T0 = datetime(2026, 1, 1, tzinfo=UTC)
TABLES = ("game", "game_player", "event_log", "outbox", "wallet", "ledger", "user_stats",
          "tortoise_migrations")


async def dump_tables() -> dict[str, list[dict[str, Any]]]:
    """Every row of every table, as the database returns it."""
    conn = get_connection("default")
    return {t: await conn.execute_query_dict(f'SELECT * FROM "{t}" ORDER BY id')
            for t in TABLES}


async def lobby(svc: GameService, players: int = 7, channel: int = 10, guild: int = 1,
                seed: int = 1) -> int:
    gid = await svc.create(guild, channel, MASTER, "Test", seed=seed)
    for i in range(players):
        await svc.apply(gid, c.Join(by=100 + i, at=T0, name=f"P{i}"))
    return gid


async def test_create_join_and_lookups(game_service: GameService) -> None:
    svc = game_service
    gid = await lobby(svc, players=7)
    other = await lobby(svc, players=6, channel=11, guild=2, seed=2)
    state = await svc.state(gid)
    assert [p.uid for p in state.players] == list(range(100, 107))
    assert await GamePlayer.filter(game_id=gid).count() == 7
    info = await svc.game_in_channel(10)
    assert info is not None and info.id == gid and info.phase == "signup" and info.seq == 7
    assert await svc.game_in_channel(99) is None
    assert [g.id for g in await svc.games_of_user(1, 100)] == [gid]
    assert [g.id for g in await svc.games_of_user(None, 100)] == [gid, other]
    assert await svc.games_of_user(1, 106) != [] and await svc.games_of_user(2, 106) == []
    assert [g.id for g in await svc.active_games()] == [gid, other]
    await svc.apply(gid, c.Leave(by=103, at=T0))
    seats = await GamePlayer.filter(game_id=gid).order_by("seat").values_list("user_id", "seat")
    assert seats == [(100, 0), (101, 1), (102, 2), (104, 3), (105, 4), (106, 5)]
    assert await svc.games_of_user(1, 103) == []


async def test_one_running_game_per_channel(game_service: GameService) -> None:
    svc = game_service
    gid = await svc.create(1, 10, MASTER, "First")
    with pytest.raises(RuleError) as err:
        await svc.create(1, 10, MASTER, "Second")
    assert err.value.code == "channel_has_game"
    await svc.apply(gid, c.Cancel(by=MASTER, at=T0))
    assert await svc.game_in_channel(10) is None
    assert await svc.active_games() == []
    again = await svc.create(1, 10, MASTER, "Second")
    assert again != gid and (await svc.game_in_channel(10)).id == again  # type: ignore[union-attr]


async def test_rejected_command_leaves_every_table_unchanged(game_service: GameService) -> None:
    svc = game_service
    gid = await lobby(svc, players=7)
    before = await dump_tables()
    bad: list[c.Command] = [
        c.Join(by=MASTER, at=T0, name="Master"),  # master_cannot_play
        c.Join(by=100, at=T0, name="Again"),  # already_joined
        c.Start(by=100, at=T0),  # not_master
        c.Vote(by=100, at=T0, target=101),  # not_started
        c.Advance(by=0, at=T0, deadline=True),  # not_started
    ]
    for cmd in bad:
        with pytest.raises(RuleError):
            await svc.apply(gid, cmd)
    with pytest.raises(GameNotFound):
        await svc.apply(gid + 100, c.Join(by=5, at=T0, name="x"))
    assert await dump_tables() == before
    applied = await svc.apply(gid, c.Join(by=200, at=T0, name="Late"))  # cache still good
    assert applied.seq == 8
    await svc.verify(gid)


async def test_failed_commit_writes_nothing_and_drops_the_cache(
        game_service: GameService, monkeypatch: pytest.MonkeyPatch) -> None:
    svc = game_service
    gid = await lobby(svc, players=6)
    before = await dump_tables()
    real = statements.run_script

    async def broken(*args: Any, **kwargs: Any) -> bool:
        await real(*args, **kwargs)  # the game row and the log row written, then:
        raise OSError("disk on fire")

    monkeypatch.setattr(statements, "run_script", broken)
    with pytest.raises(OSError):
        await svc.apply(gid, c.Join(by=300, at=T0, name="X"))
    assert await dump_tables() == before
    assert svc.cache.slots[gid].state is None  # the next command re-reads the database
    monkeypatch.setattr(statements, "run_script", real)
    applied = await svc.apply(gid, c.Join(by=300, at=T0, name="X"))
    assert applied.seq == 7 and (await svc.state(gid)).player(300) is not None
    await svc.verify(gid)


async def test_cancelled_callers_never_leave_half_a_command(game_service: GameService) -> None:
    svc = game_service
    gid = await lobby(svc, players=7)
    await svc.apply(gid, c.Start(by=MASTER, at=T0))
    outcomes = set()
    for k in range(40):  # cancel at every point of the apply/commit path in turn
        task = asyncio.create_task(svc.apply(gid, c.Extend(by=MASTER, at=T0, minutes=1)))
        await asyncio.sleep(k * 0.0005)
        task.cancel()
        try:
            await task
            outcomes.add("finished")
        except asyncio.CancelledError:
            outcomes.add("cancelled")
    assert outcomes == {"finished", "cancelled"}
    applied = await asyncio.wait_for(  # no lock was left taken
        svc.apply(gid, c.Extend(by=MASTER, at=T0, minutes=1)), timeout=2)
    cached = (await svc.state(gid)).model_dump_json()
    svc.forget(gid)
    assert (await svc.state(gid)).model_dump_json() == cached == (await Game.get(id=gid)).state
    assert await EventLog.filter(game_id=gid).count() == applied.seq
    await svc.verify(gid)


async def test_a_second_writer_is_detected_not_overwritten(game_service: GameService) -> None:
    first = game_service
    gid = await lobby(first, players=6)
    second = GameService()  # another process on the same database, say the CLI
    await second.apply(gid, c.Join(by=500, at=T0, name="Second"))
    await second.set_discord(gid, DiscordPatch(), extra_outbox=[OutboxItem(kind="x", payload={})])
    applied = await first.apply(gid, c.Join(by=501, at=T0, name="First"))  # stale cache
    assert applied.seq == 8
    assert [p.uid for p in applied.state.players][-2:] == [500, 501]
    await first.set_discord(gid, DiscordPatch(), extra_outbox=[OutboxItem(kind="y", payload={})])
    ordinals = await Outbox.filter(game_id=gid).order_by("ordinal").values_list("ordinal",
                                                                               flat=True)
    assert ordinals == list(range(1, len(ordinals) + 1))
    await first.verify(gid)


async def test_commit_hooks_share_the_transaction(game_service: GameService) -> None:
    svc = game_service
    gid = await lobby(svc, players=6)
    seen: list[Commit] = []

    async def pay(conn: BaseDBAsyncClient, commit: Commit) -> None:
        seen.append(commit)
        await Ledger.create(using_db=conn, guild_id=commit.guild_id, user_id=commit.command.by,
                            game_id=commit.game_id, amount=5, reason="joined")
        if commit.command.by == 666:
            raise RuleError("not_enough_lira")

    svc.commit_hooks.append(pay)
    applied = await svc.apply(gid, c.Join(by=600, at=T0, name="Payer"))
    assert seen[-1].new is applied.state and seen[-1].old.seq == applied.seq - 1
    assert await Ledger.filter(user_id=600, game_id=gid).count() == 1
    before = await dump_tables()
    with pytest.raises(RuleError, match="not_enough_lira"):
        await svc.apply(gid, c.Join(by=666, at=T0, name="Broke"))
    assert await dump_tables() == before  # the hook's refusal undid the whole command
    assert (await svc.state(gid)).player(666) is None
    await svc.verify(gid)


async def test_outbox_routing_and_extra_entries_share_the_transaction(
        game_service: GameService) -> None:
    svc = game_service
    gid = await lobby(svc, players=7)
    applied = await svc.apply(gid, c.Start(by=MASTER, at=T0),
                              extra_outbox=[OutboxItem(kind="signup_edit", payload={"closed": 1})],
                              discord=DiscordPatch(signup_message_id=555))
    routed = [e for e in applied.events if e.audience.kind in ("public", "team")]
    private = [e for e in applied.events if e.audience.kind in ("players", "master")]
    assert routed and private  # a start deals roles privately and announces publicly
    rows = await Outbox.filter(game_id=gid).order_by("ordinal")
    assert [r.ordinal for r in rows] == list(range(1, len(rows) + 1))
    start_rows = [r for r in rows if r.kind == "signup_edit" or
                  json.loads(r.payload).get("seq") == applied.seq]
    assert [json.loads(r.payload).get("event", {}).get("kind") for r in start_rows[:-1]] == \
        [e.kind for e in routed]
    assert start_rows[-1].kind == "signup_edit" and json.loads(start_rows[-1].payload) == {
        "closed": 1}
    game = await Game.get(id=gid)
    assert game.signup_message_id == 555 and game.outbox_seq == len(rows)
    log = await EventLog.get(game_id=gid, seq=applied.seq)
    assert len(json.loads(log.events)) == len(applied.events)  # the log keeps private ones


async def test_set_discord_fields(game_service: GameService) -> None:
    svc = game_service
    gid = await lobby(svc, players=6)
    await svc.set_discord(gid, DiscordPatch(category_id=9, private_channels={"clan:1": 77}),
                          extra_outbox=[OutboxItem(kind="hello", payload={})])
    info = await svc.info(gid)
    assert info.category_id == 9 and info.private_channels == {"clan:1": 77}
    assert info.signup_message_id is None
    await svc.set_discord(gid, DiscordPatch(signup_message_id=None, language="en"))
    info = await svc.info(gid)
    assert info.category_id == 9 and info.language == "en"
    last = await Outbox.filter(game_id=gid).order_by("-ordinal").first()
    assert last is not None and last.kind == "hello"
    await svc.apply(gid, c.Join(by=400, at=T0, name="After"))  # ordinals still line up
    ordinals = await Outbox.filter(game_id=gid).order_by("ordinal").values_list("ordinal",
                                                                               flat=True)
    assert ordinals == list(range(1, len(ordinals) + 1))


async def test_replay_equals_stored_state_over_many_games(storage_url: str) -> None:
    plain = await simulate_stored(storage_url, 20, [6, 7, 8, 10, 12, 15, 20, 30], seed=100,
                                  deliver_outbox=False)
    modules = Options(extra_roles=True, currency=True, shop=True, crypto=True)
    extra = await simulate_stored(storage_url, 10, [7, 11, 16, 24], seed=300, options=modules,
                                  deliver_outbox=False)
    for report in (plain, extra):
        assert report.ok and report.finished == report.games == len(report), report.summary()
    await init_db(storage_url)
    try:
        svc = GameService()  # fresh: nothing cached
        games = await Game.all().order_by("id")
        assert len(games) == 30
        for game, played in zip(games, [*plain, *extra], strict=True):
            replayed = await svc.verify(game.id)
            assert replayed.model_dump_json() == played.state.model_dump_json() == game.state
            assert replayed.over and game.seq == await EventLog.filter(game_id=game.id).count()
        stats = await UserStats.get(guild_id=0, user_id=100)  # uid 100 sits in every game
        assert stats.games == 30 and 0 <= stats.wins <= 30
        assert sum(json.loads(stats.wins_by_side).values()) == stats.wins
    finally:
        await close_db()


async def test_schema_is_migrated_once_and_models_match_migrations(storage_url: str) -> None:
    await init_db(storage_url)
    await GameService().create(1, 10, MASTER, "Kept")
    await close_db()
    ctx = await init_db(storage_url)  # second start: nothing to apply, data still there
    try:
        conn = get_connection("default")
        applied = await conn.execute_query_dict('SELECT name FROM "tortoise_migrations"')
        from pathlib import Path

        import core.storage.migrations as migrations

        files = sorted(p.stem for p in Path(migrations.__file__).parent.glob("0*.py"))
        assert [r["name"] for r in applied] == files
        assert files[:2] == ["0001_initial", "0002_live_messages"]
        assert await Game.all().count() == 1
        assert ctx.apps is not None
        apps = database_config(storage_url)["apps"]
        changes = await MigrationAutodetector(ctx.apps, apps).changes()
        assert changes == [], "models changed without a migration: run makemigrations"
    finally:
        await close_db()
