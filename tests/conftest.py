"""Shared fixtures. Each section belongs to the part of the project that needs it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import pytest_asyncio

if TYPE_CHECKING:
    from core.storage.service import GameService

# --- storage (core/storage) ---------------------------------------------------------
# One temp-file SQLite database per test; init_db/close_db bracket the test inside its
# own event loop, so no Tortoise context leaks from one test into the next.


@pytest.fixture
def storage_url(tmp_path: Path) -> str:
    return f"sqlite://{tmp_path / 'storage' / 'mafia.db'}"


@pytest_asyncio.fixture
async def storage_db(storage_url: str) -> AsyncIterator[str]:
    from core.storage.db import close_db, init_db

    await init_db(storage_url)
    try:
        yield storage_url
    finally:
        await close_db()


@pytest_asyncio.fixture
async def game_service(storage_db: str) -> GameService:
    from core.storage.service import GameService

    return GameService()
