"""Copy a whole database to another one (`mafia-bot migrate-db`): SQLite -> PostgreSQL.

Both sides are brought to the current schema by the same migrations the bot runs
at start, then every table is copied row for row in dependency order, ids
included, inside ONE transaction on the target: a failed copy leaves the target
as empty as it was. PostgreSQL sequences are then moved past the copied ids, so
the next game gets the next number. The target must be empty (no rows in any of
the bot's tables); the bot should be stopped while it copies.

The check at the end compares row counts table by table and, on the target,
every wallet's balance with the sum of its ledger (the currency module's
invariant), so a host can see the copy is whole before pointing DATABASE_URL
at the new database.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tortoise.backends.base.client import BaseDBAsyncClient
from tortoise.backends.base.executor import EXECUTOR_CACHE
from tortoise.context import TortoiseContext
from tortoise.fields.relational import ForeignKeyFieldInstance
from tortoise.models import Model
from tortoise.transactions import in_transaction

from core.settings import database_config
from core.storage.db import migrate_connection
from core.storage.models import (
    Achievement,
    EventLog,
    Game,
    GamePlayer,
    Ledger,
    Outbox,
    Rating,
    Reader,
    UserStats,
    Wallet,
)

# Parents before children (game_player, event_log, outbox, game_reader and ledger point
# at game).
MODELS: tuple[type[Model], ...] = (
    Game, GamePlayer, EventLog, Outbox, Wallet, Ledger, UserStats, Reader, Rating, Achievement)
BATCH = 2000
SOURCE = "source"
TARGET = "default"


class CopyRefused(Exception):
    """The copy cannot start; `code` names the reason (cli.migrate.<code>), `params` fill it."""

    def __init__(self, code: str, **params: Any) -> None:
        super().__init__(f"{code}: {params}")
        self.code = code
        self.params = params


@dataclass
class TableCount:
    table: str
    source: int
    target: int

    @property
    def ok(self) -> bool:
        return self.source == self.target


@dataclass
class CopyReport:
    tables: list[TableCount] = field(default_factory=list)
    wallets: int = 0  # wallets on the target
    wallets_matching: int = 0  # whose balance equals the sum of their ledger rows
    mismatches: list[tuple[int, int, int, int]] = field(default_factory=list)
    # (guild, user, balance, ledger sum) of the first few wallets that disagree
    sequences_reset: bool = False

    @property
    def rows(self) -> int:
        return sum(t.target for t in self.tables)

    @property
    def ok(self) -> bool:
        return all(t.ok for t in self.tables) and self.wallets_matching == self.wallets


def _is_file(path: str) -> bool:
    return Path(path).is_file()


def _engine(config: dict[str, Any]) -> str:
    return str(config["connections"]["default"]["engine"])


def _table(model: type[Model]) -> str:
    return str(model._meta.db_table)


def _columns(model: type[Model]) -> list[tuple[str, str]]:
    """(attribute, column) of every stored field, foreign keys as their `<name>_id`."""
    return [(name, column) for name, column in model._meta.fields_db_projection.items()
            if not isinstance(model._meta.fields_map[name], ForeignKeyFieldInstance)]


async def _count(conn: BaseDBAsyncClient, model: type[Model]) -> int:
    rows = await conn.execute_query_dict(f'SELECT COUNT(*) AS n FROM "{_table(model)}"')
    return int(rows[0]["n"])


async def _copy_table(src: BaseDBAsyncClient, dst: BaseDBAsyncClient, model: type[Model],
                      src_postgres: bool, dst_postgres: bool) -> int:
    """Copy one table in id order, BATCH rows at a time.

    Plain SQL in each side's own dialect: Tortoise builds a query in the dialect of
    the model's default connection even when it runs on another one. Values go
    through the fields' own conversions (to_python_value from the source's storage,
    to_db_value for the target's), so SQLite's text dates become timestamps and back.
    """
    columns = _columns(model)
    fields = model._meta.fields_map
    names = ", ".join(f'"{column}"' for _, column in columns)
    table = _table(model)
    marks = ", ".join(f"${i}" if dst_postgres else "?" for i in range(1, len(columns) + 1))
    insert = f'INSERT INTO "{table}" ({names}) VALUES ({marks})'
    after = "$1" if src_postgres else "?"
    select = f'SELECT {names} FROM "{table}" WHERE "id" > {after} ORDER BY "id" LIMIT {BATCH}'
    copied, last = 0, -1
    while True:
        rows = await src.execute_query_dict(select, [last])
        if not rows:
            return copied
        values = []
        for row in rows:
            python = {name: fields[name].to_python_value(row[column]) for name, column in columns}
            # to_db_value with the CLASS (not a row): auto_now fields keep their stored time
            values.append([fields[name].to_db_value(python[name], model) for name, _ in columns])
        await dst.execute_many(insert, values)
        copied += len(rows)
        last = int(rows[-1]["id"])


async def _reset_sequences(dst: BaseDBAsyncClient) -> None:
    for model in MODELS:
        table = _table(model)
        await dst.execute_query(
            f"SELECT setval(pg_get_serial_sequence('\"{table}\"', 'id'), "
            f'COALESCE((SELECT MAX(id) FROM "{table}"), 0) + 1, false)')


async def check_wallets(conn: BaseDBAsyncClient, report: CopyReport, show: int = 10) -> None:
    """Every wallet's balance against the sum of its ledger rows."""
    rows = await conn.execute_query_dict(
        'SELECT w.guild_id AS guild_id, w.user_id AS user_id, w.balance AS balance, '
        'COALESCE(SUM(l.amount), 0) AS total FROM "wallet" w LEFT JOIN "ledger" l '
        'ON l.guild_id = w.guild_id AND l.user_id = w.user_id '
        'GROUP BY w.id, w.guild_id, w.user_id, w.balance ORDER BY w.id')
    report.wallets = len(rows)
    for row in rows:
        balance, total = int(row["balance"]), int(row["total"])
        if balance == total:
            report.wallets_matching += 1
        elif len(report.mismatches) < show:
            report.mismatches.append((int(row["guild_id"]), int(row["user_id"]), balance, total))


async def copy_database(source_url: str, target_url: str) -> CopyReport:
    """Copy every row of the bot's tables from `source_url` to the empty `target_url`.

    Raises CopyRefused (nothing written) if the target is not empty or both are one."""
    if source_url.strip() == target_url.strip():
        raise CopyRefused("same_database")
    config = database_config(target_url)
    source = database_config(source_url, create_dirs=False)
    path = source["connections"]["default"]["credentials"].get("file_path")
    if path is not None and (path == ":memory:" or not _is_file(path)):
        raise CopyRefused("source_missing", path=path)
    config["connections"][SOURCE] = source["connections"]["default"]
    postgres = _engine(config) == "tortoise.backends.asyncpg"
    src_postgres = config["connections"][SOURCE]["engine"] == "tortoise.backends.asyncpg"
    report = CopyReport()
    EXECUTOR_CACHE.clear()  # cached SQL is per connection name, not per dialect
    ctx = TortoiseContext()
    with ctx:
        await ctx.init(config=config)
        try:
            src, dst = ctx.db(SOURCE), ctx.db(TARGET)
            for conn, name in ((src, SOURCE), (dst, TARGET)):  # as the bot would at start
                await migrate_connection(conn, config["connections"][name], config["apps"])
            busy = [f"{_table(m)} ({n})" for m in MODELS if (n := await _count(dst, m))]
            if busy:
                raise CopyRefused("target_not_empty", tables=", ".join(busy))
            async with in_transaction(TARGET) as conn:
                for model in MODELS:
                    await _copy_table(src, conn, model, src_postgres, postgres)
                if postgres:
                    await _reset_sequences(conn)
            report.sequences_reset = postgres
            for model in MODELS:
                report.tables.append(
                    TableCount(_table(model), await _count(src, model), await _count(dst, model)))
            await check_wallets(dst, report)
        finally:
            await ctx.close_connections()
            EXECUTOR_CACHE.clear()
    return report
