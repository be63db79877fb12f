"""PostgreSQL specifics: concurrent transactions really run side by side there.

On SQLite one connection serializes every transaction of a process; on PostgreSQL
the pool runs them at once, so the shared rows (per-guild wallets and statistics)
meet real races: these tests make them happen. Each test runs on both backends
where both make sense (tests/conftest.py `storage_url`); PostgreSQL-only ones take
`postgres_url`. The server: MAFIA_TEST_POSTGRES (see tests/conftest.py).
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter

from tortoise.connection import get_connection
from tortoise.transactions import in_transaction

from bench.soak import simulate_stored
from core.game.state import Options
from core.play.sim import MASTER, play
from core.storage.commit import count_stats
from core.storage.db import close_db, init_db
from core.storage.models import Game, Ledger, UserStats, Wallet
from core.storage.service import GameService


async def test_simulated_games_on_postgres(postgres_url: str) -> None:
    report = await simulate_stored(postgres_url, 6, [6, 9, 14], seed=5)
    assert report.ok and report.finished == 6, report.summary()
    assert report.delivered > 0


async def test_games_ending_at_once_count_every_game(storage_url: str) -> None:
    """Eight games of the same players end in the same instant: no update is lost, no
    duplicate row is created (get-or-create races, read-modify-write races)."""
    ended = play(7, 9).state
    assert ended.over and ended.winners
    winners = {p.uid for p in ended.players if p.team in ended.winners and p.side}
    await init_db(storage_url)
    try:
        gate = asyncio.Event()

        async def end_one() -> None:
            await gate.wait()
            async with in_transaction() as conn:
                await count_stats(conn, 77, ended)
                await asyncio.sleep(0.01)  # keep the transaction open: they overlap

        tasks = [asyncio.create_task(end_one()) for _ in range(8)]
        await asyncio.sleep(0.01)
        gate.set()
        await asyncio.gather(*tasks)
        rows = await UserStats.filter(guild_id=77)
        assert len(rows) == len(ended.players)
        for row in rows:
            assert row.games == 8, (row.user_id, row.games)
            assert row.wins == (8 if row.user_id in winners else 0)
            assert sum(json.loads(row.wins_by_side).values()) == row.wins
    finally:
        await close_db()


async def test_shared_wallets_stay_equal_to_their_ledgers(storage_url: str) -> None:
    """Eight currency games at once, all with the same members of one guild: every
    opening, purchase and payout hits the same wallets concurrently."""
    options = Options(currency=True, shop=True)
    report = await simulate_stored(storage_url, 8, [7, 9, 12], seed=41, options=options,
                                   deliver_outbox=False)
    assert report.ok and report.finished == 8, report.summary()
    await init_db(storage_url)
    try:
        wallets = await Wallet.all()
        assert wallets and len({(w.guild_id, w.user_id) for w in wallets}) == len(wallets)
        for w in wallets:
            total = sum(await Ledger.filter(guild_id=w.guild_id, user_id=w.user_id)
                        .values_list("amount", flat=True))
            assert w.balance == total >= 0, (w.user_id, w.balance, total)
        openings = Counter(await Ledger.filter(reason="opening").values_list("user_id",
                                                                           flat=True))
        players = {w.user_id for w in wallets} - {MASTER}  # the master is paid, not seated
        assert openings == Counter(players)  # exactly one opening balance per player
    finally:
        await close_db()


async def test_a_schema_named_in_the_url_is_created_and_used(postgres_url: str) -> None:
    from tests.conftest import drop_postgres_schema

    url = postgres_url + "_own"  # ?schema=mafia_test_<random>_own: does not exist yet
    try:
        await init_db(url)
        try:
            conn = get_connection("default")
            rows = await conn.execute_query_dict(
                "SELECT table_schema FROM information_schema.tables WHERE table_name = 'game'"
                " AND table_schema LIKE 'mafia_test_%_own'")
            assert [r["table_schema"] for r in rows] == [url.rsplit("schema=", 1)[1]]
            await GameService().create(1, 10, MASTER, "Here")
        finally:
            await close_db()
        await init_db(url)  # second start: the schema and its rows are found again
        try:
            assert [g.title for g in await Game.all()] == ["Here"]
        finally:
            await close_db()
    finally:
        drop_postgres_schema(url)
