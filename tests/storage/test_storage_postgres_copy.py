"""`mafia-bot migrate-db`: an SQLite database copied into PostgreSQL, row for row.

The source is filled the way the bot fills it (simulated games through the
service, currency and shop on, guild settings, an undelivered outbox backlog);
the copy must hold the same rows with the same ids, replay every game to its
stored state, keep every wallet equal to its ledger, hand out fresh ids after the
copied ones, and refuse to copy into a database that already has rows.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

import cli
from bench.soak import simulate_stored
from core.game import commands as c
from core.game.state import Options
from core.play.sim import MASTER
from core.storage.copy import MODELS
from core.storage.db import close_db, init_db
from core.storage.models import Game, Ledger, UserStats, Wallet
from core.storage.service import GameService, OutboxItem
from tests.conftest import run_sync

T0 = datetime(2026, 3, 1, tzinfo=UTC)


async def fill(url: str) -> None:
    options = Options(currency=True, shop=True, extra_roles=True)
    report = await simulate_stored(url, 5, [7, 10, 13], seed=21, options=options)
    assert report.ok and report.finished == 5, report.summary()
    await init_db(url)
    try:
        svc = GameService()
        await UserStats.create(guild_id=9, user_id=1)
        gid = await svc.create(9, 90, MASTER, "Running", seed=3, options=options,
                               extra_outbox=[OutboxItem(kind="note", payload={"n": 1})])
        for i in range(6):
            await svc.apply(gid, c.Join(by=300 + i, at=T0, name=f"R{i}"))
    finally:
        await close_db()


async def dump(url: str) -> dict[str, list[dict[str, Any]]]:
    """Every row of every table, as the models read it (dialect-neutral values)."""
    await init_db(url)
    try:
        return {m._meta.db_table: await m.all().order_by("id").values() for m in MODELS}
    finally:
        await close_db()


def test_migrate_db_copies_sqlite_into_postgres(tmp_path: Path, postgres_url: str,
                                                capsys: pytest.CaptureFixture[str],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LANG", "en_US.UTF-8")
    source = f"sqlite://{tmp_path / 'old' / 'mafia.db'}"
    run_sync(fill(source))
    before = run_sync(dump(source))
    assert all(before[t] for t in ("game", "event_log", "outbox", "wallet", "ledger",
                                   "user_stats", "game_player"))

    assert cli.main(["migrate-db", "--from", source, "--to", postgres_url]) == 0
    out = capsys.readouterr().out
    for table, rows in before.items():  # the printed counts: source, target, equal
        assert f"  {table:<16} {len(rows):>9} {len(rows):>9}  =" in out
    wallets = len(before["wallet"])
    assert f"Wallets: {wallets}; balance equal to the ledger sum: {wallets}." in out
    assert "Copy verified" in out

    assert run_sync(dump(postgres_url)) == before  # same rows, same ids, same times

    async def check_target() -> None:
        await init_db(postgres_url)
        try:
            svc = GameService()
            for game in await Game.all():
                await svc.verify(game.id)  # stored state == replay of the copied log
            for w in await Wallet.all():
                total = sum(await Ledger.filter(guild_id=w.guild_id, user_id=w.user_id)
                            .values_list("amount", flat=True))
                assert w.balance == total
            # Sequences moved past the copied ids: new rows neither collide nor reuse.
            last = max(r["id"] for r in before["game"])
            gid = await svc.create(9, 91, MASTER, "After the move", options=Options(
                currency=True))
            assert gid == last + 1
            applied = await svc.apply(gid, c.Join(by=300, at=T0, name="Again"))
            assert applied.seq == 1
            running = await svc.game_in_channel(90)
            assert running is not None and len((await svc.state(running.id)).players) == 6
            assert await UserStats.filter(guild_id=9, user_id=1).exists()
        finally:
            await close_db()

    run_sync(check_target())

    # A second copy into the (now non-empty) target is refused and writes nothing.
    assert cli.main(["migrate-db", "--from", source, "--to", postgres_url]) == 2
    err = capsys.readouterr().err
    assert "not empty" in err and "game (" in err
    assert len(run_sync(dump(postgres_url))["game"]) == len(before["game"]) + 1

    # And back (PostgreSQL -> SQLite), e.g. to take a database home: the same rows again.
    back = f"sqlite://{tmp_path / 'back' / 'mafia.db'}"
    assert cli.main(["migrate-db", "--from", postgres_url, "--to", back]) == 0
    assert "Copy verified" in capsys.readouterr().out
    assert run_sync(dump(back)) == run_sync(dump(postgres_url))

    missing = f"sqlite://{tmp_path / 'nope.db'}"
    assert cli.main(["migrate-db", "--from", missing, "--to", postgres_url]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert not (tmp_path / "nope.db").exists()
