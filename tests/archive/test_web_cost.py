"""Issue 41, point 2: what one request of `mafia-bot web` reads, at two sizes of the
archive. An unknown or wrong address reads nothing (the token -> guild map is in
memory; a miss reads the guilds' ids again at most every REFRESH seconds, one row per
guild); a guild's index reads its own games' rows alone, without their state; a game's
page reads that game and its log. Counted in rows the database returns, not in time."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from aiohttp.test_utils import TestClient, TestServer
from tortoise.backends.sqlite.client import SqliteClient

import archive.web as site
from archive.web import guild_path, make_app, token_for
from bench.soak import SIM_GUILD
from core.storage.db import close_db, init_db
from core.storage.models import Game
from core.storage.service import GameService
from tests.archive.test_web_cli import SECRET, make_games

FILLER_GUILDS = (9001, 9002, 9003)
BIG_STATE = "x" * 20_000  # a finished game's state: never read by the site


@dataclass
class Reads:
    """Rows the database returned, and the statements, since the last `reset`."""

    rows: int = 0
    statements: list[str] = field(default_factory=list)

    def reset(self) -> None:
        self.rows, self.statements = 0, []


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> Iterator[Reads]:
    seen = Reads()
    query, query_dict = SqliteClient.execute_query, SqliteClient.execute_query_dict

    async def counted(self: Any, sql: str, values: list[Any] | None = None) -> Any:
        result = await query(self, sql, values)
        seen.rows += len(result[1])
        seen.statements.append(sql)
        return result

    async def counted_dict(self: Any, sql: str, values: list[Any] | None = None) -> Any:
        result = await query_dict(self, sql, values)
        seen.rows += len(result)
        seen.statements.append(sql)
        return result

    monkeypatch.setattr(SqliteClient, "execute_query", counted)
    monkeypatch.setattr(SqliteClient, "execute_query_dict", counted_dict)
    yield seen


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    """One database with the site's real finished game (and a running one), made once."""
    folder = tmp_path_factory.mktemp("web-cost")
    done, _ = asyncio.run(make_games(f"sqlite://{folder / 'mafia.db'}"))
    return folder / "mafia.db", done


async def fill(count: int) -> None:
    """`count` more finished games, in three other guilds, each with a large state."""
    await Game.bulk_create([
        Game(guild_id=FILLER_GUILDS[i % 3], channel_id=50_000 + i, master_id=7,
             title=f"Filler {i}", options="{}", seed=i, state=BIG_STATE, phase="ended",
             active=False)
        for i in range(count)])


@dataclass
class Site:
    client: TestClient
    done: int
    now: list[float]


@pytest_asyncio.fixture(params=[10, 400], ids=["small", "large"])
async def served(request: pytest.FixtureRequest, template: tuple[Path, int], tmp_path: Path
                 ) -> AsyncIterator[Site]:
    source, done = template
    database = tmp_path / "mafia.db"
    database.write_bytes(source.read_bytes())
    await init_db(f"sqlite://{database}")
    try:
        await fill(request.param)
        app = make_app(SECRET, GameService(), "en")
        now = [0.0]
        guilds = app.get(getattr(site, "GUILDS", None)) if hasattr(site, "GUILDS") else None
        if guilds is not None:
            guilds.clock = lambda: now[0]
        async with TestClient(TestServer(app)) as client:
            yield Site(client, done, now)
    finally:
        await close_db()


async def get(s: Site, reads: Reads, path: str, status: int) -> int:
    reads.reset()
    res = await s.client.get(path)
    assert res.status == status, path
    await res.read()
    for sql in reads.statements:  # no page reads a game's state
        assert '"state"' not in sql.split("FROM")[0], sql
    return reads.rows


async def test_an_unknown_address_reads_nothing(served: Site, reads: Reads) -> None:
    await get(served, reads, guild_path(SECRET, SIM_GUILD), 200)  # the map is read once
    wrong = token_for("another secret", SIM_GUILD)
    for i in range(20):
        assert await get(served, reads, f"/g/{wrong[:-2]}{i:02d}/", 404) == 0
        assert await get(served, reads, f"/g/{wrong}/games/{served.done}", 404) == 0
    # once REFRESH has passed, a miss reads the guilds' ids: one row per guild
    served.now[0] += site.REFRESH
    guilds = 2 + len(FILLER_GUILDS)  # the site's game, another guild's, the fillers'
    assert await get(served, reads, f"/g/{wrong}/", 404) == guilds
    assert await get(served, reads, f"/g/{wrong}/", 404) == 0  # and not again so soon


async def test_pages_read_their_own_rows_only(served: Site, reads: Reads) -> None:
    index = await get(served, reads, guild_path(SECRET, SIM_GUILD), 200)
    index = await get(served, reads, guild_path(SECRET, SIM_GUILD), 200)
    assert index == 1  # the guild's one finished game
    filler = await get(served, reads, guild_path(SECRET, FILLER_GUILDS[0]), 200)
    assert filler == await Game.filter(guild_id=FILLER_GUILDS[0]).count()
    page = await get(served, reads, f"{guild_path(SECRET, SIM_GUILD)}games/{served.done}",
                     200)
    logged = await GameService().log(served.done)
    assert page == 1 + len(logged)  # the game's row and its log
    other = guild_path(SECRET, FILLER_GUILDS[1])
    assert await get(served, reads, f"{other}games/{served.done}", 404) == 1
