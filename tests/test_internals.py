"""The private internals of discord.py, tortoise-orm and aiosqlite the bot reaches into,
each held to the shape the code expects (docs/dependencies.md lists them and why no
public API does the job). pyproject.toml bounds the three to the minor tested here: a
release that moves one of these fails this file loudly, instead of the bot silently
losing its rate budget, its command priority or its one-call group commit.
"""

from __future__ import annotations

import asyncio
import inspect
import sqlite3
from pathlib import Path
from typing import Any

import aiosqlite
import discord
import pytest
import tortoise
from discord.http import HTTPClient, Route
from tortoise.backends.base import executor
from tortoise.backends.sqlite.client import SqliteClient, SqliteTransactionWrapper
from tortoise.context import TortoiseContext

from core.storage import statements
from core.storage.db import PriorityLock, close_db, init_db
from core.storage.models import Game


def _source(obj: Any) -> str:
    return inspect.getsource(obj)


# --- discord.py: the rate budget (cogs/delivery/ratelimits.py), voice warnings (bot.py) --
def test_http_client_request_is_the_one_door_the_budget_wraps() -> None:
    """install() replaces the instance's `request`: every REST call must go through it
    with (route, **kwargs), the JSON body under `json`, uploads under `files`/`form`."""
    assert inspect.iscoroutinefunction(HTTPClient.request)
    params = inspect.signature(HTTPClient.request).parameters
    assert list(params)[:2] == ["self", "route"]
    assert {"files", "form"} <= set(params)
    assert any(p.kind is p.VAR_KEYWORD for p in params.values())
    # the endpoints call self.request(Route(...), json=...), never the session directly
    assert "self.request(r, json=" in _source(HTTPClient.send_message)


def test_route_carries_what_the_budget_keys_on() -> None:
    route = Route("POST", "/channels/{channel_id}/messages", channel_id=5)
    for name in ("method", "path", "url", "channel_id", "guild_id", "key"):
        assert hasattr(route, name), name
    assert route.channel_id == 5 and route.path == "/channels/{channel_id}/messages"


async def test_bucket_cleanup_hook_the_amortized_cleanup_replaces() -> None:
    """_cleanup_amortized swaps the instance's `_try_clear_expired_ratelimits` and reads
    `_buckets`: discord.py must still call the former, by attribute, for each new
    bucket, and keep the buckets in that dict."""
    http = HTTPClient(asyncio.get_running_loop())
    assert isinstance(http._buckets, dict)
    assert inspect.signature(http._try_clear_expired_ratelimits).parameters == {}
    assert "self._try_clear_expired_ratelimits()" in _source(HTTPClient.get_ratelimit)
    calls: list[int] = []
    http._try_clear_expired_ratelimits = lambda: calls.append(1)  # type: ignore[method-assign]
    http.get_ratelimit("a")
    http.get_ratelimit("a")
    assert calls == [1] and "a" in http._buckets


def test_channel_overwrites_keep_raw_bits_for_the_whole_list() -> None:
    """cogs/delivery/overwrites.py reads `GuildChannel._overwrites`: entries with `id`, `type`,
    `allow`, `deny` as Discord's ints, an unnamed bit included (the public `overwrites`
    drops it), filled from a channel payload's `permission_overwrites`."""
    from discord.abc import _Overwrites

    unnamed = 1 << 62
    entry = _Overwrites({"id": "7", "type": 1, "allow": str(unnamed | 1), "deny": "2"})
    assert (entry.id, entry.type, entry.allow, entry.deny) == (7, 1, unnamed | 1, 2)
    assert "self._overwrites.append(overwrite)" in _source(
        discord.abc.GuildChannel._fill_overwrites)
    pair = discord.PermissionOverwrite.from_pair(discord.Permissions(entry.allow),
                                                 discord.Permissions(entry.deny)).pair()
    assert not pair[0].value & unnamed  # why the public view will not do


def test_voice_warning_flags_bot_py_lowers() -> None:
    """quiet_voice_warnings() sets these class flags before Client.__init__ reads them."""
    assert isinstance(discord.VoiceClient.warn_nacl, bool)
    assert isinstance(discord.VoiceClient.warn_dave, bool)
    init = _source(discord.Client.__init__)
    assert "VoiceClient.warn_nacl" in init and "VoiceClient.warn_dave" in init


# --- tortoise-orm: the SQLite connection's lock, the reader, the executor cache ----------
def test_sqlite_client_keeps_its_lock_connection_filename_and_pragmas() -> None:
    """core/storage/db.py replaces `_lock` with PriorityLock before first use and builds
    the reader from `filename` and `pragmas`; queries and transactions must take
    exactly the lock they find in `_lock`."""
    client = SqliteClient("x.db", connection_name="shape", journal_mode="WAL")
    assert isinstance(client._lock, asyncio.Lock)
    assert client._connection is None
    assert client.filename == "x.db" and client.pragmas["journal_mode"] == "WAL"
    assert "self._lock" in _source(SqliteClient.acquire_connection)
    assert "self._lock" in _source(SqliteClient._in_transaction)
    lock = PriorityLock()
    client._lock = lock  # type: ignore[assignment]
    assert client.acquire_connection()._lock is lock


def test_transaction_wrapper_shares_the_aiosqlite_connection() -> None:
    """statements._thread_api reads `_connection` on the transaction's client too."""
    assert "connection._connection" in _source(SqliteTransactionWrapper.__init__)


def test_context_init_takes_the_global_fallback_flag() -> None:
    assert "_enable_global_fallback" in inspect.signature(TortoiseContext.init).parameters
    assert "_enable_global_fallback" in inspect.signature(tortoise.Tortoise.init).parameters


def test_executor_cache_is_the_module_dict_init_db_clears() -> None:
    assert isinstance(executor.EXECUTOR_CACHE, dict)
    assert "EXECUTOR_CACHE" in _source(executor.BaseExecutor.__init__)


def test_model_meta_names_the_columns_the_statements_write() -> None:
    meta = Game._meta
    assert meta.db_table == "game"
    assert "seq" in meta.fields_map and "seq" in meta.fields_db_projection
    assert callable(meta.fields_map["seq"].to_db_value)


# --- aiosqlite: one call into the connection's thread per group commit -------------------
async def test_aiosqlite_runs_a_function_in_the_connection_thread() -> None:
    params = list(inspect.signature(aiosqlite.Connection._execute).parameters)
    assert params[:2] == ["self", "fn"]
    async with aiosqlite.connect(":memory:") as conn:
        raw = conn._conn
        assert isinstance(raw, sqlite3.Connection)
        assert await conn._execute(lambda: raw.execute("SELECT 41 + 1").fetchone()[0]) == 42


async def test_the_group_commit_finds_the_thread_api_on_a_sqlite_file(tmp_path: Path) -> None:
    """statements falls back to a call per statement where the private API is missing:
    correct but several times slower. Here, on the versions pinned, it must be found."""
    from tortoise.transactions import in_transaction

    await init_db(f"sqlite://{tmp_path / 'shape.db'}")
    try:
        async with in_transaction() as conn:
            assert statements._thread_api(conn) is not None
        assert statements._thread_api(statements._default()) is not None
    finally:
        await close_db()


@pytest.mark.parametrize("name", ["discord.py", "tortoise-orm", "aiosqlite"])
def test_the_installed_version_is_within_the_pins(name: str) -> None:
    """The bounds in pyproject.toml are the versions this file was run against."""
    import tomllib
    from importlib.metadata import version

    from packaging.requirements import Requirement

    deps = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    (requirement,) = [Requirement(d) for d in deps["project"]["dependencies"]
                      if Requirement(d).name == name]
    assert requirement.specifier.contains(version(name)), (name, str(requirement.specifier))
    assert any(s.operator == "<" for s in requirement.specifier), "no upper bound"
