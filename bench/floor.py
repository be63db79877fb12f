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
