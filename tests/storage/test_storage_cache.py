"""The bounded state cache: evicted games are read again from the database and play on
exactly; a restart re-arms deadlines and reminders from columns, parsing no state."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path

import pytest
from tortoise.connection import get_connection
from tortoise.exceptions import OperationalError
from tortoise.migrations.executor import MigrationExecutor, MigrationTarget

from core.game import commands as c
from core.game.rules.owing import reminder_at
from core.game.state import GameState
from core.settings import database_config
from core.storage.db import close_db, init_db
from core.storage.models import Game
from core.storage.service import GameService

from .helpers import on_virtual_time, settled
from .test_storage_scheduler import MASTER, T0, started_game


async def test_evicted_games_reload_and_play_on(storage_db: str) -> None:
    svc = GameService(cache_size=2, compact_size=0)
    games = [await started_game(svc, channel=10 + i) for i in range(4)]
    assert len(svc.cache) == 2  # only the two games touched last keep their state
    cached = [g for g in games if svc.cache.slots.get(g) is not None
              and svc.cache.slots[g].state is not None]
    assert cached == games[2:]
    assert games[0] not in svc.cache.slots  # an evicted game's slot goes too (its lock was free)
    for round_ in range(2):  # every command meets an evicted game: read, apply, evict
        for i, gid in enumerate(games):
            await svc.apply(gid, c.CheckIn(by=100 + round_ * 3 + i % 3, at=T0))
            assert len(svc.cache) <= 2
    for gid in games:
        state = await svc.state(gid)  # read back from the database when evicted
        assert state == await svc.verify(gid)  # the stored state is the replay's, exactly
        assert state.seq == (await svc.info(gid)).seq
    other = GameService()  # a fresh process sees the same games
    assert [await other.state(g) for g in games] == [await svc.state(g) for g in games]
    await svc.close()


async def test_compacted_games_play_on_without_reading_the_database(
        storage_db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the parsed tier a state is kept as its JSON text (a seventh of the memory,
    nothing for the garbage collector): its next command parses it, reads no row."""
    svc = GameService(cache_size=2, compact_size=2)
    games = [await started_game(svc, channel=10 + i) for i in range(6)]
    parsed = [g for g in games if g in svc.cache.slots and svc.cache.slots[g].state is not None]
    compact = [g for g in games if g in svc.cache.slots and svc.cache.slots[g].compacted]
    assert parsed == games[4:] and compact == games[2:4]
    assert games[0] not in svc.cache.slots and games[1] not in svc.cache.slots  # past both tiers
    assert (len(svc.cache), svc.cache.compacted) == (2, 2)
    expected = {g: (await GameService().state(g)) for g in compact}  # another reader's
    with monkeypatch.context() as mp:
        def no_read(*args: object, **kwargs: object) -> None:
            raise AssertionError("a compacted game read its row")

        mp.setattr(Game, "filter", no_read)
        for gid in compact:
            assert (await svc.info(gid)).id == gid  # the row's columns are cached too
            assert await svc.state(gid) == expected[gid]  # parsed back: equal
            await svc.apply(gid, c.CheckIn(by=100, at=T0))
    assert svc.cache.compacted == 2 and len(svc.cache) == 2
    for gid in games:  # whatever tier it was in, every game plays on exactly
        await svc.apply(gid, c.CheckIn(by=101, at=T0))
        assert await svc.state(gid) == await svc.verify(gid)
        assert (await svc.state(gid)).seq == (await svc.info(gid)).seq
    await svc.close()


def test_a_locked_game_keeps_its_slot_when_evicted(tmp_path: Path) -> None:
    """On SQLite: the virtual clock sees its worker thread, not a PostgreSQL socket
    (the lock is the process's own on either backend)."""
    async def body(svc: GameService) -> None:
        first = await started_game(svc, channel=10)
        lock = svc.cache.slots[first].lock
        async with lock:  # a command of `first` in flight
            await started_game(svc, channel=11)  # evicts first's state, not its slot
            assert svc.cache.slots[first].lock is lock and svc.cache.slots[first].state is None
            blocked = asyncio.ensure_future(svc.apply(first, c.CheckIn(by=100, at=T0)))
            await settled()  # everything that could run has run
            assert not blocked.done()  # still serialized behind the lock
        await blocked
        await svc.verify(first)

    on_virtual_time(f"sqlite://{tmp_path / 'v.db'}", body, cache_size=1, compact_size=0)


async def test_restart_rearms_from_columns(storage_db: str) -> None:
    svc = GameService()
    gids = [await started_game(svc, channel=10 + i) for i in range(3)]
    states = [await svc.state(g) for g in gids]
    await svc.close()
    fresh = GameService()
    with pytest.MonkeyPatch.context() as mp:
        def refuse(*args: object, **kwargs: object) -> GameState:
            raise AssertionError("a state was parsed")

        mp.setattr(GameState, "model_validate_json", refuse)
        deadlines = await fresh.pending_deadlines()
        reminders = await fresh.pending_reminders()
        infos = await fresh.active_games()
    assert deadlines == {g: s.deadline for g, s in zip(gids, states, strict=True)}
    assert reminders == {g: reminder_at(s) for g, s in zip(gids, states, strict=True)}
    assert all(r is not None for r in reminders.values())
    assert [i.id for i in infos] == gids and len(fresh.cache) == 0


async def test_a_database_from_before_the_reminder_column(storage_url: str) -> None:
    """Migration 0003 fills the due reminders of running games from their states."""
    await init_db(storage_url)
    svc = GameService()
    gid = await started_game(svc)
    await svc.apply(gid, c.Extend(by=MASTER, at=T0, minutes=30))
    due = reminder_at(await svc.state(gid))
    assert due is not None
    await svc.close()
    apps = database_config(storage_url)["apps"]
    await MigrationExecutor(get_connection("default"), apps).migrate(
        [MigrationTarget("models", "0002_live_messages")])  # back to the old schema
    await close_db()
    await init_db(storage_url)  # as a new release starts on the old database
    try:
        assert await Game.filter(id=gid).values_list("reminder_at", flat=True) == [due]
        assert await GameService().pending_reminders() == {gid: due}
        assert due == (await GameService().state(gid)).deadline - timedelta(minutes=60)
    finally:
        await close_db()


async def test_a_database_with_the_unused_guild_settings_table(storage_url: str) -> None:
    """Migration 0004 drops guild_settings (nothing read it): an old database with a row
    there opens, loses only that table, and its games play on."""
    await init_db(storage_url)
    svc = GameService()
    gid = await started_game(svc)
    state = await svc.state(gid)
    await svc.close()
    conn = get_connection("default")
    apps = database_config(storage_url)["apps"]
    await MigrationExecutor(conn, apps).migrate([MigrationTarget("models", "0003_reminder_at")])
    await conn.execute_query(
        'INSERT INTO "guild_settings" ("guild_id", "language", "created_at", "updated_at") '
        "VALUES (1, 'en', '2026-01-01 00:00:00+00:00', '2026-01-01 00:00:00+00:00')")
    await close_db()
    await init_db(storage_url)  # as a new release starts on the old database
    try:
        with pytest.raises(OperationalError):
            await get_connection("default").execute_query('SELECT 1 FROM "guild_settings"')
        assert await GameService().state(gid) == state
        await GameService().apply(gid, c.CheckIn(by=100, at=T0))
    finally:
        await close_db()
