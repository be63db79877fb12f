"""Runtime state (the database, the command-sync markers) goes to the data directory,
MAFIA_DATA_DIR or ./data of the working directory, never into the source tree."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot import MafiaBot
from core.settings import Settings
from tests.bot.helpers import TIMEOUT, started
from tests.harness import Harness

ROOT = Path(__file__).resolve().parents[1]


def _tree(folder: Path) -> set[Path]:
    return {p for p in folder.rglob("*") if "__pycache__" not in p.parts}


@pytest.fixture
def elsewhere(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    for name in ("DATABASE_URL", "MAFIA_DATA_DIR", "DISCORD_TOKEN", "DISCORD_GUILD_ID"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_data_directory_setting(elsewhere: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings().mafia_data_dir == Path("data")
    assert Settings().database_url == "sqlite://data/mafia.db"
    monkeypatch.setenv("MAFIA_DATA_DIR", str(elsewhere / "state"))
    assert Settings().database_url == f"sqlite://{elsewhere / 'state' / 'mafia.db'}"
    monkeypatch.setenv("DATABASE_URL", "postgres://bot@db.example:5432/mafia")
    assert Settings().database_url == "postgres://bot@db.example:5432/mafia"


async def test_the_bot_started_elsewhere_writes_only_there(elsewhere: Path) -> None:
    """A bot started with no setting but its token, from another folder: its database and
    its command-sync marker appear in ./data there, and nothing in the checkout."""
    before = _tree(ROOT / "data")
    bot = MafiaBot(Settings(discord_token="x"))
    h = await started(bot, Harness(bot, timeout=TIMEOUT))
    await h.close()
    assert (elsewhere / "data" / "mafia.db").is_file()
    assert (elsewhere / "data" / ".commands-global.sha256").is_file()
    assert _tree(ROOT / "data") == before


def test_the_console_commands_started_elsewhere_write_nothing_in_the_checkout(
        tmp_path: Path) -> None:
    before = _tree(ROOT / "data")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("DISCORD_", "DATABASE_", "MAFIA_"))}
    env.update({"LANG": "en_US.UTF-8", "PYTHONPATH": str(ROOT)})

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, str(ROOT / "cli.py"), *args], cwd=tmp_path,
                              env=env, capture_output=True, text=True, timeout=300)

    assert cli("run").returncode == 2
    missing = cli("archive", "1")
    assert missing.returncode == 2 and "data/mafia.db" in missing.stderr
    assert not (tmp_path / "data").exists()  # reading made no database
    soaked = cli("simulate", "--games", "1", "--db", "sqlite://data/soak.db")
    assert soaked.returncode == 0, soaked.stderr
    assert (tmp_path / "data" / "soak.db").is_file()
    assert _tree(ROOT / "data") == before
