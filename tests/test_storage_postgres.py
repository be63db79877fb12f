"""The same storage on PostgreSQL (skipped when no server answers).

Server: MAFIA_TEST_POSTGRES (default postgres://postgres@127.0.0.1:5432/postgres); the
test creates and drops its own database there.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import AsyncIterator
from urllib.parse import urlsplit, urlunsplit

import pytest
import pytest_asyncio

from core.storage.soak import simulate_stored

ADMIN_URL = os.environ.get("MAFIA_TEST_POSTGRES", "postgres://postgres@127.0.0.1:5432/postgres")


@pytest_asyncio.fixture
async def pg_url() -> AsyncIterator[str]:
    asyncpg = pytest.importorskip("asyncpg")
    dsn = ADMIN_URL.replace("postgres://", "postgresql://", 1)
    try:
        admin = await asyncpg.connect(dsn, timeout=2)
    except (OSError, asyncpg.PostgresError) as exc:
        pytest.skip(f"no PostgreSQL at {ADMIN_URL}: {exc}")
    name = f"mafia_test_{secrets.token_hex(4)}"
    await admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield urlunsplit(urlsplit(ADMIN_URL)._replace(path=f"/{name}"))
    finally:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()


async def test_simulated_games_on_postgres(pg_url: str) -> None:
    report = await simulate_stored(pg_url, 6, [6, 9, 14], seed=5)
    assert report.ok and report.finished == 6, report.summary()
    assert report.delivered > 0
