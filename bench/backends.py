"""The same command stream through the GameService on SQLite and on PostgreSQL.

Whole simulated games (every module on) played concurrently through the service,
each command durably committed with its events and outbox rows; the soak verifies
every replay. PostgreSQL is measured when a server answers (`--postgres URL`, or
MAFIA_TEST_POSTGRES as CI sets it); otherwise the column says why it is missing.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from bench.soak import simulate_stored
from core.state import Options

ALL = Options(extra_roles=True, currency=True, shop=True, crypto=True)
SCHEMA = "mafia_bench"


async def _reset_schema(url: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(url.replace("postgres://", "postgresql://", 1), timeout=5)
    try:
        await conn.execute(f"DROP SCHEMA IF EXISTS {SCHEMA} CASCADE")
    finally:
        await conn.close()


async def _one(url: str, games: int, players: int) -> dict[str, Any]:
    report = await simulate_stored(url, games, players, 11, options=ALL, deliver_outbox=False)
    return {"games": games, "players": players, "commands": report.commands,
            "seconds": report.seconds, "verified": report.verified,
            "commands_per_s": report.commands / report.seconds if report.seconds else 0.0}


async def compare(workdir: Path, games: int, players: int, postgres: str | None
                  ) -> dict[str, Any]:
    out: dict[str, Any] = {"sqlite": await _one(f"sqlite://{workdir / 'backends.db'}",
                                                games, players)}
    url = postgres or os.environ.get("MAFIA_TEST_POSTGRES")
    if not url:
        out["postgres"] = {"missing": "no server given (--postgres URL)"}
        return out
    try:
        await _reset_schema(url)
        sep = "&" if "?" in url else "?"
        out["postgres"] = await _one(f"{url}{sep}schema={SCHEMA}", games, players)
        await _reset_schema(url)
    except (OSError, ImportError) as exc:
        out["postgres"] = {"missing": f"server did not answer: {type(exc).__name__}"}
    return out
