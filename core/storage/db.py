"""Open and close the database, bringing its schema up to date on the way in.

The ORM context is registered as Tortoise's *global fallback* so every task
(discord.py spawns its own) sees the same connections without relying on
contextvars being inherited from whoever called `init_db`.

Several processes may start at once on one database (shards): on PostgreSQL the
migrations run under an advisory lock, on SQLite a process that lost the race
reconnects and retries, then finds the schema already there.

On SQLite every query and transaction takes turns on one connection. Background work
(the outbox's writes, marked with `background()`) waits behind what a command needs: a
command committed during a deadline storm queues behind at most the one query in flight,
not behind every game's outbox work (`PriorityLock`). The outbox's reads do not take
turns there at all: on a SQLite file they go through a second connection (`reader()`),
which in WAL mode reads the last commit without waiting for the writer.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import contextvars
import logging
from collections.abc import Iterator
from typing import Any

from tortoise.backends.base.client import BaseDBAsyncClient
from tortoise.backends.base.executor import EXECUTOR_CACHE
from tortoise.context import TortoiseContext
from tortoise.migrations.executor import MigrationExecutor

from core.settings import database_config

log = logging.getLogger(__name__)

_context: TortoiseContext | None = None
_reader: BaseDBAsyncClient | None = None
_MIGRATION_LOCK = 0x6D61666961  # pg_advisory_lock key: "mafia"
_MIGRATION_TRIES = 3


_background: contextvars.ContextVar[bool] = contextvars.ContextVar("mafia_db_background",
                                                                  default=False)


@contextlib.contextmanager
def background(flag: bool = True) -> Iterator[None]:
    """Database access in this block (and in tasks started from it) is background work:
    on SQLite it waits while anything else waits for the connection. `background(False)`
    undoes it for a piece of work others wait for (a commit shared with commands)."""
    token = _background.set(flag)
    try:
        yield
    finally:
        _background.reset(token)


class PriorityLock:
    """The SQLite connection's lock (in place of tortoise's asyncio.Lock): released, it
    goes to the longest-waiting foreground acquirer, else to the longest-waiting
    background one (see `background`). Handed over directly, so nothing barges in."""

    def __init__(self) -> None:
        self._locked = False
        self._waiters: tuple[collections.deque[asyncio.Future[None]], ...] = (
            collections.deque(), collections.deque())

    def locked(self) -> bool:
        return self._locked

    @property
    def waiting(self) -> int:
        """Acquirers waiting for the lock, foreground and background."""
        return sum(len(w) for w in self._waiters)

    async def acquire(self) -> bool:
        if not self._locked:
            self._locked = True
            return True
        waiters = self._waiters[1 if _background.get() else 0]
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        waiters.append(future)
        try:
            await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self.release()  # handed the lock just as we were cancelled: pass it on
            else:
                with contextlib.suppress(ValueError):
                    waiters.remove(future)
            raise
        return True

    def release(self) -> None:
        if not self._locked:
            raise RuntimeError("PriorityLock released while not locked")
        for waiters in self._waiters:
            while waiters:
                future = waiters.popleft()
                if not future.done():
                    future.set_result(None)  # still locked: now the waiter's
                    return
        self._locked = False

    async def __aenter__(self) -> None:
        await self.acquire()

    async def __aexit__(self, *exc: object) -> None:
        self.release()


def reader() -> BaseDBAsyncClient | None:
    """The connection for reads outside a transaction that need not wait for a commit in
    flight (the outbox's scans; a command's look at wallet balances, which its commit
    checks again): a second connection on a SQLite file, with the same priorities; None
    elsewhere (PostgreSQL has a pool; an in-memory SQLite database exists only on its one
    connection), where the default connection serves."""
    return _reader


async def _open_reader(default: BaseDBAsyncClient) -> None:
    global _reader
    filename = str(getattr(default, "filename", ":memory:"))
    if filename == ":memory:" or filename.startswith("file::memory:"):
        return
    pragmas = dict(getattr(default, "pragmas", {}))
    client = type(default)(filename, connection_name="reader", **pragmas)  # type: ignore[misc]
    client._lock = PriorityLock()  # type: ignore[attr-defined]
    await client.create_connection(with_db=True)
    _reader = client


async def migrate(config: dict[str, Any]) -> None:
    """Apply every migration in core/storage/migrations not yet recorded in the database."""
    assert _context is not None
    await migrate_connection(_context.db("default"), config["connections"]["default"],
                             config["apps"])


async def migrate_connection(connection: BaseDBAsyncClient, connection_config: dict[str, Any],
                             apps: dict[str, Any]) -> None:
    """Migrate one open connection (`connection_config`: its entry in the Tortoise config)."""

    def progress(event: str, app: str, name: str) -> None:
        if event == "apply_done":
            log.info("database migration applied: %s.%s", app, name)

    async def run() -> None:
        await MigrationExecutor(connection, apps).migrate(progress=progress)

    if connection_config["engine"] != "tortoise.backends.asyncpg":
        await run()
        return
    async with connection.acquire_connection() as raw:
        await raw.execute("SELECT pg_advisory_lock($1)", _MIGRATION_LOCK)
        try:
            schema = connection_config["credentials"].get("schema")
            if schema:  # ?schema=name: the tables go there; create it once
                quoted = str(schema).replace('"', '""')
                await raw.execute(f'CREATE SCHEMA IF NOT EXISTS "{quoted}"')
            await run()
        finally:
            await raw.execute("SELECT pg_advisory_unlock($1)", _MIGRATION_LOCK)


async def init_db(url: str, *, run_migrations: bool = True) -> TortoiseContext:
    """Connect to `url` (see core.settings.database_config), create/upgrade the schema."""
    global _context
    if _context is not None:
        await close_db()
    config = database_config(url)
    sqlite = config["connections"]["default"]["engine"] == "tortoise.backends.sqlite"
    for attempt in range(_MIGRATION_TRIES):
        # Tortoise caches prepared INSERT/UPDATE SQL per (connection name, table), not per
        # dialect: reopening under the same name on another backend (tests, `simulate`
        # after a SQLite run) would reuse SQLite's SQL on PostgreSQL.
        EXECUTOR_CACHE.clear()
        ctx = TortoiseContext()
        with ctx:  # init needs an active context; afterwards the global fallback serves
            await ctx.init(config=config, _enable_global_fallback=True)
        _context = ctx
        if sqlite:  # before any use: queries and transactions take the lock they find here
            ctx.db("default")._lock = PriorityLock()  # type: ignore[attr-defined]
        try:
            if sqlite:  # connect now: tortoise would hide a failed lazy connect (and hang)
                await ctx.db("default").create_connection(with_db=True)
            if run_migrations:
                await migrate(config)
            if sqlite:
                await _open_reader(ctx.db("default"))
            return ctx
        except Exception:
            await close_db()
            if not sqlite or attempt == _MIGRATION_TRIES - 1:
                raise
            # Another process migrated the same SQLite file at the same moment. Retry on
            # fresh connections: a failed BEGIN can leave tortoise's connection lock taken.
            log.warning("database migration collided with another process; retrying")
            await asyncio.sleep(0.2 * (attempt + 1))
        except BaseException:
            await close_db()
            raise
    raise AssertionError("unreachable")


async def close_db() -> None:
    """Close the connections; safe to call twice."""
    global _context, _reader
    ctx, _context = _context, None
    reading, _reader = _reader, None
    if reading is not None:
        await reading.close()
    if ctx is not None:
        await ctx.close_connections()
