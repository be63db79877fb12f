"""The physical floor of a durable command: bare single-row aiosqlite commits.

Same file system and the same SQLite pragmas as the bot (core.settings), one
INSERT and one COMMIT per row, one after another: no ORM, no state, no Discord.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import aiosqlite

from core.settings import database_config


def bot_pragmas(path: Path) -> dict[str, Any]:
    """The pragmas the bot opens its SQLite file with (file_path dropped)."""
    creds = dict(database_config(f"sqlite://{path}")["connections"]["default"]["credentials"])
    creds.pop("file_path", None)
    return creds


async def bare_commits(path: Path, n: int, payload: int = 100) -> dict[str, float]:
    """Commit `n` single-row INSERTs one by one; returns commits/s and ms per commit."""
    async with aiosqlite.connect(path, isolation_level=None) as db:
        for name, value in bot_pragmas(path).items():
            await db.execute(f"PRAGMA {name}={value}")
        await db.execute("CREATE TABLE IF NOT EXISTS floor (id INTEGER PRIMARY KEY, v TEXT)")
        row = "x" * payload
        for _ in range(min(20, n)):  # warm the file and the WAL
            await db.execute("INSERT INTO floor (v) VALUES (?)", (row,))
        start = time.perf_counter()
        for _ in range(n):
            await db.execute("BEGIN")
            await db.execute("INSERT INTO floor (v) VALUES (?)", (row,))
            await db.execute("COMMIT")
        seconds = time.perf_counter() - start
    return {"commits": n, "seconds": seconds, "commits_per_s": n / seconds,
            "ms_per_commit": seconds / n * 1e3}


async def same_work(path: Path, *, transactions: int, commands_per_transaction: float,
                    rows_per_command: dict[str, float], row_bytes: dict[str, float],
                    state_bytes: float, snapshot_every: int = 16) -> dict[str, float]:
    """The floor of the service's stream doing the same writes in the same grouping:
    `transactions` commits, each of `commands_per_transaction` commands, each command
    inserting `rows_per_command[table]` rows of `row_bytes[table]` bytes (its log row,
    its outbox rows), updating its game's row, and every `snapshot_every`-th command
    writing the game's whole state (`state_bytes`). Bare aiosqlite, the bot's pragmas, no
    ORM and no rules: what the disk and SQLite need for the stream's writes."""
    async with aiosqlite.connect(path, isolation_level=None) as db:
        for name, value in bot_pragmas(path).items():
            await db.execute(f"PRAGMA {name}={value}")
        await db.execute("CREATE TABLE IF NOT EXISTS game (id INTEGER PRIMARY KEY, "
                         "seq INTEGER, state TEXT)")
        tables = sorted(rows_per_command)
        for table in tables:
            await db.execute(f"CREATE TABLE IF NOT EXISTS {table} (id INTEGER PRIMARY KEY, "
                             "game_id INTEGER, v TEXT)")
        games = 64
        state = "s" * int(state_bytes)
        await db.executemany("INSERT OR REPLACE INTO game VALUES (?, 0, ?)",
                             [(g, state) for g in range(games)])
        owed = dict.fromkeys(tables, 0.0)
        command = 0
        carry = 0.0
        start = time.perf_counter()
        for _ in range(transactions):
            carry += commands_per_transaction
            k, carry = int(carry), carry - int(carry)
            await db.execute("BEGIN")
            for _ in range(k):
                command += 1
                game = command % games
                for table in tables:
                    owed[table] += rows_per_command[table]
                    while owed[table] >= 1:
                        owed[table] -= 1
                        await db.execute(f"INSERT INTO {table} (game_id, v) VALUES (?, ?)",
                                         (game, "x" * int(row_bytes.get(table, 100))))
                if command % snapshot_every == 0:
                    await db.execute("UPDATE game SET seq = seq + 1, state = ? WHERE id = ?",
                                     (state, game))
                else:
                    await db.execute("UPDATE game SET seq = seq + 1 WHERE id = ?", (game,))
            await db.execute("COMMIT")
        seconds = time.perf_counter() - start
    return {"transactions": transactions, "commands": command, "seconds": seconds,
            "commands_per_s": command / seconds if seconds else float("nan")}
