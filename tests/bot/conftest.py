"""A real MafiaBot on a temp SQLite file, driven through the Discord harness."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio

from tests.bot.helpers import EVERYTHING, Lives, first_life
from tests.harness import Harness

__all__ = ["EVERYTHING"]  # tests import it from here too


@pytest_asyncio.fixture
async def h(tmp_path: Path) -> AsyncIterator[Harness]:
    harness = await first_life(tmp_path)
    try:
        yield harness
    finally:
        await harness.close()


@pytest_asyncio.fixture
async def lives(tmp_path: Path) -> AsyncIterator[Lives]:
    """A bot in its first life; `await lives.restart()` starts the next one."""
    life = Lives(tmp_path, await first_life(tmp_path))
    try:
        yield life
    finally:
        await life.h.close()
