"""The per-command writes as plain SQL, built once per dialect and column set.

A command's commit runs three statements (the game row, its log row, its outbox
rows). Through the ORM each one costs more CPU to build (pypika copies the query
at every step) than SQLite takes to run it, on the one path every accepted vote
and night order takes. The statements here are the same portable SQL the ORM
would send, values converted by the models' own fields, so rows read back
through the ORM exactly as if it had written them.
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from tortoise.backends.base.client import BaseDBAsyncClient
from tortoise.exceptions import IntegrityError, OperationalError
from tortoise.models import Model

from core.storage.models import PENDING, EventLog, Game, Outbox


def _placeholders(dialect: str, count: int, start: int = 0) -> list[str]:
    """`?` for SQLite, `$n` for PostgreSQL (asyncpg)."""
    if dialect == "postgres":
        return [f"${i}" for i in range(start + 1, start + count + 1)]
    return ["?"] * count


@functools.lru_cache(maxsize=64)
def _update_sql(dialect: str, table: str, columns: tuple[str, ...],
                where: tuple[str, ...]) -> str:
    marks = _placeholders(dialect, len(columns) + len(where))
    sets = ", ".join(f'"{c}"={m}' for c, m in zip(columns, marks, strict=False))
    conds = " AND ".join(f'"{c}"={m}'
                         for c, m in zip(where, marks[len(columns):], strict=True))
    return f'UPDATE "{table}" SET {sets} WHERE {conds}'


@functools.lru_cache(maxsize=64)
def _insert_sql(dialect: str, table: str, columns: tuple[str, ...], rows: int) -> str:
    width = len(columns)
    marks = _placeholders(dialect, width * rows)
    values = ", ".join("(" + ", ".join(marks[r * width:(r + 1) * width]) + ")"
                       for r in range(rows))
    names = ", ".join(f'"{c}"' for c in columns)
    return f'INSERT INTO "{table}" ({names}) VALUES {values}'


def _db_values(model: type[Model], values: dict[str, Any]) -> list[Any]:
    fields = model._meta.fields_map
    # None, not the model: as tortoise's own UPDATE does (no auto_now side effects)
    return [fields[name].to_db_value(value, None)  # type: ignore[arg-type]
            for name, value in values.items()]


def _columns(model: type[Model], names: Any) -> tuple[str, ...]:
    projection = model._meta.fields_db_projection
    return tuple(projection[name] for name in names)


def _dialect(conn: BaseDBAsyncClient) -> str:
    return str(conn.capabilities.dialect)


Statement = tuple[str, list[Any]]


def game_update(conn: BaseDBAsyncClient, game_id: int, values: dict[str, Any],
                **guards: Any) -> Statement:
    """UPDATE the game row where id and every guard column still hold."""
    where = {"id": game_id, **guards}
    sql = _update_sql(_dialect(conn), Game._meta.db_table, _columns(Game, values),
                      _columns(Game, where))
    return sql, _db_values(Game, values) + _db_values(Game, where)


def log_insert(conn: BaseDBAsyncClient, game_id: int, seq: int, command: str,
               events: str, now: datetime) -> Statement:
    values = {"game_id": game_id, "seq": seq, "command": command, "events": events,
              "created_at": now}
    sql = _insert_sql(_dialect(conn), EventLog._meta.db_table, _columns(EventLog, values), 1)
    return sql, _db_values(EventLog, values)


def outbox_insert(conn: BaseDBAsyncClient, game_id: int, last: int,
                  rows: Sequence[tuple[str, str]], now: datetime) -> Statement | None:
    """The entries `rows` (kind, payload JSON) numbered after ordinal `last`."""
    if not rows:
        return None
    params: list[Any] = []
    columns: tuple[str, ...] = ()
    for i, (kind, payload) in enumerate(rows, start=1):
        values = {"game_id": game_id, "ordinal": last + i, "kind": kind,
                  "payload": payload, "status": PENDING, "attempts": 0,
                  "next_attempt_at": now, "created_at": now}
        columns = _columns(Outbox, values)
        params += _db_values(Outbox, values)
    sql = _insert_sql(_dialect(conn), Outbox._meta.db_table, columns, len(rows))
    return sql, params


async def update_game(conn: BaseDBAsyncClient, game_id: int, values: dict[str, Any],
                      **guards: Any) -> int:
    """UPDATE the game row where id and every guard column still hold; rows changed."""
    changed, _ = await conn.execute_query(*game_update(conn, game_id, values, **guards))
    return int(changed)


async def insert_log(conn: BaseDBAsyncClient, game_id: int, seq: int, command: str,
                     events: str, now: datetime) -> None:
    await conn.execute_query(*log_insert(conn, game_id, seq, command, events, now))


async def insert_outbox(conn: BaseDBAsyncClient, game_id: int, last: int,
                        rows: Sequence[tuple[str, str]], now: datetime) -> None:
    """The entries `rows` (kind, payload JSON) numbered after ordinal `last`."""
    statement = outbox_insert(conn, game_id, last, rows, now)
    if statement is not None:
        await conn.execute_query(*statement)


async def guarded(conn: BaseDBAsyncClient, update: Statement, then: list[Statement]
                  ) -> bool:
    """Run `update`; if it changed exactly one row, `then` too. Whether it did.

    On SQLite all of it runs in one call to the connection's thread, where each
    statement alone would be a round trip (a command's commit is three of them)."""
    connection = getattr(conn, "_connection", None)
    run = getattr(connection, "_execute", None)
    raw = getattr(connection, "_conn", None)
    if _dialect(conn) != "sqlite" or run is None or raw is None:
        changed, _ = await conn.execute_query(*update)
        if changed != 1:
            return False
        for statement in then:
            await conn.execute_query(*statement)
        return True

    def in_thread() -> bool:
        if raw.execute(*update).rowcount != 1:
            return False
        for sql, params in then:
            raw.execute(sql, params)
        return True

    async with conn.acquire_connection():
        try:
            return bool(await run(in_thread))
        except sqlite3.OperationalError as exc:
            raise OperationalError(exc) from exc
        except sqlite3.IntegrityError as exc:
            raise IntegrityError(exc) from exc
