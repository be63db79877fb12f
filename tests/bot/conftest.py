"""A real MafiaBot on a temp SQLite file, driven through the Discord harness."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio

from cogs import balance
from tests.bot.helpers import EVERYTHING, Lives, first_life
from tests.harness import Harness

__all__ = ["EVERYTHING"]  # tests import it from here too


@pytest.fixture(autouse=True)
def small_estimates() -> Iterator[balance.Estimator]:
    """Every /game setup starts a balance estimate: in tests a small one, in a thread
    (tests/bot/test_balance.py sizes its own). It does not guard /game start here: the
    games' seeds are random, so ten simulated games would refuse some starts by chance
    in tests about other things; tests/bot/test_start_estimate.py turns it on."""
    saved = balance.ESTIMATOR
    balance.ESTIMATOR = balance.Estimator(max_games=10, chunk=5, workers=1, processes=False,
                                          guards_start=False)
    try:
        yield balance.ESTIMATOR
    finally:
        balance.ESTIMATOR.close()
        balance.ESTIMATOR = saved


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
