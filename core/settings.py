"""Process settings from the environment (and `.env`), plus the database URL check.

A bad DATABASE_URL should stop the bot at start with a sentence a host can act
on, not with a stack trace from deep inside the ORM on the first query.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal
from urllib.parse import parse_qs, unquote, urlsplit

from pydantic import Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

#: Where the bot keeps its runtime state unless MAFIA_DATA_DIR says otherwise: `data`
#: under the working directory (in a checkout started from its root, the checkout's
#: data/, as the project layout has it; an installed bot, wherever it is started: a
#: container's WORKDIR, a service's WorkingDirectory). Never the installed package.
DEFAULT_DATA_DIR = Path("data")
DEFAULT_DATABASE_URL = "sqlite://data/mafia.db"  # the database in the default data dir
MODELS_MODULE = "core.storage.models"
MIGRATIONS_MODULE = "core.storage.migrations"

_EXAMPLES = (
    "sqlite://data/mafia.db (relative path), sqlite:///var/lib/mafia/mafia.db (absolute), "
    "sqlite://:memory:, postgres://user:password@host:5432/dbname"
)
# Pragmas for every SQLite connection: WAL lets readers run beside the writer,
# synchronous=FULL makes an acknowledged commit survive a power cut too, and the
# busy timeout lets a second process (the `simulate` CLI, another shard) wait instead
# of failing. They run in this order: busy_timeout first, so that switching a new file
# to WAL waits for a process creating the same file at that moment.
_SQLITE_PRAGMAS: dict[str, Any] = {
    "busy_timeout": 5000,
    "journal_mode": "WAL",
    "journal_size_limit": 16384,
    "foreign_keys": "ON",
    "synchronous": "FULL",
}
_PG_INT_PARAMS = {"min_size", "max_size", "max_queries", "timeout", "statement_cache_size"}


class ConfigError(ValueError):
    """A setting that cannot work; the message says what to write instead."""


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_file=".env", env_file_encoding="utf-8", env_ignore_empty=True, extra="ignore"
    )

    discord_token: str | None = Field(default=None, repr=False)
    # Runtime state: the default SQLite database and the command-sync markers
    # (bot.py, `.commands-<guild>.sha256`). Nothing the bot writes goes anywhere else.
    mafia_data_dir: Path = DEFAULT_DATA_DIR
    # Empty: the SQLite file mafia.db in the data directory.
    database_url: str = ""
    discord_guild_id: int | None = None
    # Games open at once (signup or running): per member who opened them, per guild.
    max_games_per_member: int = Field(default=3, ge=1)
    max_games_per_guild: int = Field(default=25, ge=1)
    # The balance estimate's share of the machine (cogs/balance.py): estimates at once,
    # one worker process each (unset: one per core left to the bot, all but one, at
    # least one); how many a member and a server may ask for a minute.
    balance_workers: int | None = Field(default=None, ge=1)
    balance_per_member_minute: int = Field(default=6, ge=1)
    balance_per_guild_minute: int = Field(default=30, ge=1)
    # `mafia-bot web`: the secret each guild's address is derived from (archive/web.py).
    web_secret: str | None = Field(default=None, repr=False)

    # The outbox (docs/delivery.md): delivered entries are deleted after this many days
    # (0: kept forever); an entry delivered later than `outbox_late_seconds` after its
    # commit is logged and counted; the backlog is logged every `outbox_health_seconds`.
    outbox_retention_days: float = Field(default=7.0, ge=0)
    outbox_late_seconds: float = Field(default=60.0, gt=0)
    outbox_health_seconds: float = Field(default=300.0, gt=0)
    # Bursts cost one post per channel (docs/delivery.md): the master's desk gathers its
    # informative lines (night orders, purchases) for up to `desk_window_seconds`, a team
    # channel its order lines for up to `team_window_seconds` (0: no waiting).
    desk_window_seconds: float = Field(default=60.0, ge=0)
    team_window_seconds: float = Field(default=10.0, ge=0)

    # An announcement waits this many seconds at most for its files (a day's vote
    # picture, the archive); files drawn later follow it as a message of their own
    # (cogs/delivery/pictures.py).
    files_wait_seconds: float = Field(default=1.0, ge=0)

    # The live vote count (cogs/delivery/tally.py): one message per day, edited at most once per
    # this many seconds per message; every vote's public record carries the count after
    # it, so the channel never waits for the edit (docs/delivery.md). The final count at
    # the day's end is never held back.
    tally_interval: float = Field(default=60.0, ge=0)

    # Operating (docs/operating.md). Health and metrics over HTTP (/healthz, /metrics):
    # off unless METRICS_PORT is set (0: any free port, logged at start), bound to
    # METRICS_HOST (this machine only by default). /healthz calls the outbox stuck when a
    # lane's oldest pending entry is older than `outbox_stuck_seconds`.
    metrics_port: int | None = Field(default=None, ge=0, le=65535)
    metrics_host: str = "127.0.0.1"
    outbox_stuck_seconds: float = Field(default=900.0, gt=0)
    # The log: one plain line per record, or one JSON object per line (docs/operating.md).
    log_format: Literal["plain", "json"] = "plain"
    # Discord's global allowance for this bot token, a second (unset: the standard one,
    # which cogs/delivery/budget.py knows): for a bot Discord granted more. A sharded
    # deployment on PostgreSQL shares it between its processes (cogs/delivery/sharedbudget.py).
    global_rate_limit: int | None = Field(default=None, ge=1)

    @model_validator(mode="after")
    def _database_in_data_dir(self) -> Settings:
        if not self.database_url.strip():
            self.database_url = sqlite_url(self.mafia_data_dir / "mafia.db")
        return self


def sqlite_url(path: Path) -> str:
    """The DATABASE_URL of a SQLite file (relative paths stay relative)."""
    return f"sqlite://{path.as_posix()}"


def _bad(url: str, why: str) -> ConfigError:
    shown = url
    parts = urlsplit(url) if "://" in url else None
    if parts is not None and parts.password:
        shown = url.replace(f":{parts.password}@", ":***@", 1)
    return ConfigError(f"Invalid DATABASE_URL {shown!r}: {why}. Examples: {_EXAMPLES}.")


def _sqlite(url: str, rest: str, *, create_dirs: bool) -> dict[str, Any]:
    path, _, query = rest.partition("?")
    if query:
        raise _bad(url, "SQLite URLs take no '?' options")
    if not path:
        raise _bad(url, "the SQLite URL has no file path")
    if path != ":memory:":
        file = Path(unquote(path))
        if file.exists() and file.is_dir():
            raise _bad(url, f"{str(file)!r} is a folder, not a database file")
        if create_dirs:
            try:
                file.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise _bad(url, f"cannot create the folder {str(file.parent)!r} ({exc})") from exc
    return {
        "engine": "tortoise.backends.sqlite",
        "credentials": {"file_path": unquote(path), **_SQLITE_PRAGMAS},
    }


def _postgres(url: str) -> dict[str, Any]:
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise _bad(url, f"cannot parse it ({exc})") from exc
    database = unquote(parts.path.lstrip("/"))
    if not parts.hostname:
        raise _bad(url, "the PostgreSQL URL has no host")
    if not database or "/" in database:
        raise _bad(url, "the PostgreSQL URL needs a database name after the host, like /mafia")
    creds: dict[str, Any] = {
        "host": parts.hostname,
        "port": port or 5432,
        "user": unquote(parts.username) if parts.username else None,
        "password": unquote(parts.password) if parts.password else None,
        "database": database,
    }
    for key, values in parse_qs(parts.query).items():
        value = values[-1]
        if key in _PG_INT_PARAMS:
            try:
                creds[key] = int(value)
            except ValueError as exc:
                raise _bad(url, f"option {key} must be a whole number") from exc
        else:
            creds[key] = value
    return {"engine": "tortoise.backends.asyncpg", "credentials": creds}


def database_config(url: str, *, create_dirs: bool = True) -> dict[str, Any]:
    """Tortoise config for a DATABASE_URL; raise ConfigError with a clear message if unusable.

    Creates the SQLite file's folder (the file itself appears on first connect).
    """
    url = url.strip()
    scheme, sep, rest = url.partition("://")
    if not sep:
        raise _bad(url, "it has no scheme (expected sqlite:// or postgres://)")
    scheme = scheme.lower()
    if scheme == "sqlite":
        connection = _sqlite(url, rest, create_dirs=create_dirs)
    elif scheme in ("postgres", "postgresql"):
        connection = _postgres(url)
    else:
        raise _bad(url, f"unsupported scheme {scheme!r} (use sqlite or postgres)")
    return {
        "connections": {"default": connection},
        "apps": {
            "models": {
                "models": [MODELS_MODULE],
                "default_connection": "default",
                "migrations": MIGRATIONS_MODULE,
            }
        },
        "use_tz": True,
        "timezone": "UTC",
    }
