"""Settings and DATABASE_URL: the default works out of the box, a bad URL says why."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.settings import DEFAULT_DATABASE_URL, ConfigError, Settings, database_config
from core.storage.db import close_db, init_db
from core.storage.models import Game


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    for name in ("DATABASE_URL", "DISCORD_TOKEN", "DISCORD_GUILD_ID"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


async def test_default_url_creates_folder_and_file(clean_env: Path) -> None:
    settings = Settings()
    assert settings.database_url == DEFAULT_DATABASE_URL == "sqlite://data/mafia.db"
    assert not (clean_env / "data").exists()
    await init_db(settings.database_url)
    try:
        assert await Game.all().count() == 0  # schema is there
    finally:
        await close_db()
    assert (clean_env / "data" / "mafia.db").is_file()


def test_env_and_dotenv(clean_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (clean_env / ".env").write_text("DISCORD_TOKEN=from-dotenv\nDISCORD_GUILD_ID=\n")
    settings = Settings()
    assert settings.discord_token == "from-dotenv" and settings.discord_guild_id is None
    assert "from-dotenv" not in repr(settings)
    monkeypatch.setenv("DISCORD_GUILD_ID", "1234")
    monkeypatch.setenv("DATABASE_URL", "postgres://bot@db.example:5432/mafia")
    settings = Settings()
    assert settings.discord_guild_id == 1234
    assert settings.database_url == "postgres://bot@db.example:5432/mafia"


def test_sqlite_urls(tmp_path: Path) -> None:
    memory = database_config("sqlite://:memory:")["connections"]["default"]
    assert memory["credentials"]["file_path"] == ":memory:"
    absolute = tmp_path / "deep" / "er" / "bot.db"
    conn = database_config(f"sqlite://{absolute}")["connections"]["default"]
    assert conn["engine"] == "tortoise.backends.sqlite"
    assert conn["credentials"]["file_path"] == str(absolute)
    assert conn["credentials"]["journal_mode"] == "WAL"
    assert absolute.parent.is_dir()


@pytest.mark.parametrize("url", ["postgres://bot:s3cret@db.example:6543/mafia?max_size=5",
                                 "postgresql://bot:s3cret@db.example:6543/mafia?max_size=5"])
def test_postgres_urls(url: str) -> None:
    conn = database_config(url)["connections"]["default"]
    assert conn["engine"] == "tortoise.backends.asyncpg"
    assert conn["credentials"] == {"host": "db.example", "port": 6543, "user": "bot",
                                   "password": "s3cret", "database": "mafia", "max_size": 5}


@pytest.mark.parametrize(("url", "why"), [
    ("", "no scheme"),
    ("data/mafia.db", "no scheme"),
    ("mysql://u@h/db", "unsupported scheme 'mysql'"),
    ("sqlite://", "no file path"),
    ("sqlite://x.db?mode=ro", "take no '?' options"),
    ("postgres://bot@db.example", "needs a database name"),
    ("postgres:///mafia", "has no host"),
    ("postgres://bot@db.example:port/mafia", "cannot parse"),
    ("postgres://bot@db.example/mafia?max_size=lots", "must be a whole number"),
])
def test_invalid_urls_say_why(url: str, why: str) -> None:
    with pytest.raises(ConfigError) as err:
        database_config(url)
    message = str(err.value)
    assert message.startswith("Invalid DATABASE_URL") and why in message
    assert "sqlite://data/mafia.db" in message  # and shows what would work


def test_folder_instead_of_file_and_hidden_password(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="is a folder"):
        database_config(f"sqlite://{tmp_path}")
    with pytest.raises(ConfigError) as err:
        database_config("postgres://bot:hunter2@db.example")
    assert "hunter2" not in str(err.value) and "***" in str(err.value)


async def test_init_db_rejects_a_bad_url_before_connecting() -> None:
    with pytest.raises(ConfigError):
        await init_db("redis://localhost/0")
