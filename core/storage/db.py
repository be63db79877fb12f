"""Open and close the database, bringing its schema up to date on the way in.

The ORM context is registered as Tortoise's *global fallback* so every task
(discord.py spawns its own) sees the same connections without relying on
contextvars being inherited from whoever called `init_db`.
"""

from __future__ import annotations

import logging
from typing import Any

from tortoise.backends.base.executor import EXECUTOR_CACHE
from tortoise.context import TortoiseContext
from tortoise.migrations.executor import MigrationExecutor

from core.settings import database_config

log = logging.getLogger(__name__)

_context: TortoiseContext | None = None


async def migrate(config: dict[str, Any]) -> None:
    """Apply every migration in core/storage/migrations not yet recorded in the database."""
    assert _context is not None
    connection = _context.db("default")

    def progress(event: str, app: str, name: str) -> None:
        if event == "apply_done":
            log.info("database migration applied: %s.%s", app, name)

    await MigrationExecutor(connection, config["apps"]).migrate(progress=progress)


async def init_db(url: str, *, run_migrations: bool = True) -> TortoiseContext:
    """Connect to `url` (see core.settings.database_config), create/upgrade the schema."""
    global _context
    if _context is not None:
        await close_db()
    config = database_config(url)
    # Tortoise caches prepared INSERT/UPDATE SQL per (connection name, table), not per
    # dialect: reopening under the same name on another backend (tests, `simulate`
    # after a SQLite run) would reuse SQLite's SQL on PostgreSQL.
    EXECUTOR_CACHE.clear()
    ctx = TortoiseContext()
    with ctx:  # init needs an active context; afterwards the global fallback serves
        await ctx.init(config=config, _enable_global_fallback=True)
    _context = ctx
    try:
        if run_migrations:
            await migrate(config)
    except BaseException:
        await close_db()
        raise
    return ctx


async def close_db() -> None:
    """Close the connections; safe to call twice."""
    global _context
    ctx, _context = _context, None
    if ctx is not None:
        await ctx.close_connections()
