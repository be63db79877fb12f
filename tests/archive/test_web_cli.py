"""`mafia-bot archive` and `mafia-bot web` on a real database: finished games only.

A running game's id gives the same 404 as an unknown one and never shows in the
index; the CLI refuses it. The site is one per guild, under an unguessable path
(`/g/<token>/`); everything else is the same plain 404 (issue 28: N6 and the scoping)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
import pytest_asyncio
from aiohttp.test_utils import TestClient, TestServer

from archive.web import guild_path, make_app, parse_id, token_for
from bench.soak import SIM_GUILD, create_sim_game, play_stored
from core.game import commands as c
from core.game.state import Options
from core.storage.db import close_db, init_db
from core.storage.service import GameService
from core.text.i18n import t

ROOT = Path(__file__).resolve().parents[2]
SECRET_TITLE = "Running Palermo"
SECRET_NAME = "Hidden Player Name"
SECRET = "test-web-secret"
BASE = guild_path(SECRET, SIM_GUILD)
OTHER_GUILD = 4242
OTHER_TITLE = "Another server Palermo"


async def make_games(url: str) -> tuple[int, int]:
    """One finished game (8 players, every module) and one running game."""
    await init_db(url)
    try:
        service = GameService()
        done = await create_sim_game(service, 5, 7001, Options(
            extra_roles=True, currency=True, shop=True, crypto=True))
        await play_stored(service, done, players=8, seed=5)
        other = await service.create(OTHER_GUILD, 7003, 1, OTHER_TITLE, seed=6)
        await play_stored(service, other, players=6, seed=6)
        running = await service.create(1, 7002, 1, SECRET_TITLE)
        at = datetime(2026, 1, 1, tzinfo=UTC)
        for i in range(8):
            await service.apply(running, c.Join(by=200 + i, at=at, name=f"{SECRET_NAME} {i}"))
        await service.apply(running, c.Start(by=1, at=at))
        await service.close()
    finally:
        await close_db()
    return done, running


@pytest_asyncio.fixture
async def db(tmp_path: Path) -> AsyncIterator[tuple[str, int, int]]:
    url = f"sqlite://{tmp_path / 'mafia.db'}"
    done, running = await make_games(url)
    await init_db(url)
    try:
        yield url, done, running
    finally:
        await close_db()


@pytest_asyncio.fixture
async def client(db: tuple[str, int, int]) -> AsyncIterator[TestClient]:
    async with TestClient(TestServer(make_app(SECRET, GameService(), "en"))) as client:
        yield client


async def test_index_lists_only_finished_games(client: TestClient,
                                               db: tuple[str, int, int]) -> None:
    _, done, running = db
    res = await client.get(BASE)
    assert res.status == 200 and "default-src 'none'" in res.headers["Content-Security-Policy"]
    text = await res.text()
    assert f'href="games/{done}"' in text and "Game 5" in text
    assert f"games/{running}" not in text and SECRET_TITLE not in text
    assert OTHER_TITLE not in text  # another server's games are not listed here
    other = await client.get(guild_path(SECRET, OTHER_GUILD))
    assert other.status == 200 and OTHER_TITLE in await other.text()
    assert "Game 5" not in await other.text()


async def test_archive_page_of_a_finished_game(client: TestClient,
                                               db: tuple[str, int, int]) -> None:
    _, done, _ = db
    res = await client.get(f"{BASE}games/{done}?lang=en")
    assert res.status == 200 and res.content_type == "text/html"
    text = await res.text()
    assert text.startswith("<!doctype html>") and "Player1" in text
    assert t("archive.html.section.days", "en") in text


@pytest.mark.parametrize("path", [
    "{base}games/{running}", "{base}games/{running}?lang=ru", "{base}games/999999",
    "{base}games/abc", "{base}games/{running}/x", "/state/{running}", "{base}games/-1",
    "{base}games/0", "{base}games/09", "{base}games/{big}", "{base}games/{huge}",
    "/games/{big}", "/games/{done}", "/", "/g/{wrong}/", "/g/{wrong}/games/{done}",
    "/g/{other}/games/{done}", "{base}x"])
async def test_nothing_but_a_guilds_finished_games_is_reachable(
        client: TestClient, db: tuple[str, int, int], path: str) -> None:
    """A plain 404 for all: a running game, an unknown id, an id no database holds
    (>= 2**63 answered 500 before), the bare root, the old global path, an unknown token,
    a finished game under another guild's token."""
    _, done, running = db
    res = await client.get(path.format(
        base=BASE, running=running, done=done, big=2**63, huge="9" * 40,
        wrong=token_for("another secret", SIM_GUILD),
        other=token_for(SECRET, OTHER_GUILD)))
    assert res.status == 404
    text = await res.text()
    assert SECRET_TITLE not in text and SECRET_NAME not in text and "Game 5" not in text


def test_ids_the_database_cannot_hold_are_no_ids() -> None:
    assert parse_id("9223372036854775807") == 2**63 - 1
    assert [parse_id(x) for x in ("9223372036854775808", "0", "-3", "1e3", " 7", "٣")] \
        == [None] * 6


async def test_the_site_is_read_only(client: TestClient, db: tuple[str, int, int]) -> None:
    _, done, _ = db
    for method in ("POST", "PUT", "DELETE"):
        res = await client.request(method, f"{BASE}games/{done}")
        assert res.status == 405


def _cli(url: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DISCORD_", "DATABASE_"))}
    env.update({"LANG": "en_US.UTF-8", "DATABASE_URL": url,
                "PYTHONPATH": str(ROOT)})
    return subprocess.run([sys.executable, str(ROOT / "cli.py"), *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def test_cli_writes_the_archive_and_refuses_a_running_game(tmp_path: Path) -> None:
    from tests.conftest import run_sync

    url = f"sqlite://{tmp_path / 'mafia.db'}"
    done, running = run_sync(make_games(url))
    out = tmp_path / "a.html"
    ok = _cli(url, "archive", str(done), "--out", str(out), "--lang", "ru", cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    html = out.read_text(encoding="utf-8")
    assert html.startswith('<!doctype html><html lang="ru">') and "Player8" in html
    assert str(out) in ok.stdout
    default = _cli(url, "archive", str(done), cwd=tmp_path)
    assert default.returncode == 0 and (tmp_path / "Game-5-archive.html").exists()
    refused = _cli(url, "archive", str(running), "--out", str(tmp_path / "b.html"), cwd=tmp_path)
    assert refused.returncode == 2
    assert refused.stderr.strip() == t("cli.archive.not_finished", "en", game=running)
    assert not (tmp_path / "b.html").exists()
    missing = _cli(url, "archive", "424242", cwd=tmp_path)
    assert missing.returncode == 2 and "424242" in missing.stderr


def test_mafia_bot_web_serves_until_stopped(tmp_path: Path) -> None:
    """The console command itself: it listens where told and serves the index."""
    import socket
    import time
    import urllib.request

    from tests.conftest import run_sync

    url = f"sqlite://{tmp_path / 'mafia.db'}"
    done, running = run_sync(make_games(url))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DISCORD_", "DATABASE_"))}
    env.update({"LANG": "en_US.UTF-8", "DATABASE_URL": url, "PYTHONPATH": str(ROOT),
                "WEB_SECRET": SECRET})
    link = subprocess.run([sys.executable, str(ROOT / "cli.py"), "web", "--port", str(port),
                           "--link", str(SIM_GUILD)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60)
    assert link.returncode == 0 and link.stdout.strip() == f"http://127.0.0.1:{port}{BASE}"
    proc = subprocess.Popen([sys.executable, str(ROOT / "cli.py"), "web", "--port", str(port)],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        body = ""
        for _ in range(100):
            try:
                with urllib.request.urlopen(link.stdout.strip(), timeout=2) as res:
                    body = res.read().decode()
                break
            except OSError:
                time.sleep(0.2)
        assert f"games/{done}" in body and SECRET_TITLE not in body
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}{BASE}games/{running}", timeout=5)
            raise AssertionError("a running game's archive was served")
        except urllib.error.HTTPError as exc:
            assert exc.code == 404
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_mafia_bot_web_needs_its_secret(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("DISCORD_", "DATABASE_", "WEB_"))}
    env.update({"LANG": "en_US.UTF-8", "PYTHONPATH": str(ROOT),
                "DATABASE_URL": f"sqlite://{tmp_path / 'mafia.db'}"})
    res = subprocess.run([sys.executable, str(ROOT / "cli.py"), "web", "--link", "1"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert res.returncode == 2 and res.stderr.strip() == t("cli.web.no_secret", "en")
