"""The per-command writes as plain SQL, built once per dialect and column set.

A command's commit runs three statements (the game row, its log row, its outbox
rows). Through the ORM each one costs more CPU to build (pypika copies the query
at every step) than SQLite takes to run it, on the one path every accepted vote
and night order takes. The statements here are the same portable SQL the ORM
would send, values converted by the models' own fields, so rows read back
through the ORM exactly as if it had written them.

A `Script` is such a write decided before its transaction (it reads nothing in
between). On SQLite a group of them commits in one call to the connection's
thread: BEGIN, every statement, COMMIT. Each call is a round trip through the
event loop, and under load the loop's turn, not SQLite, is what a commit waits
for: a transaction of separate calls (BEGIN, the writes, COMMIT) waited four turns.
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from tortoise.backends.base.client import BaseDBAsyncClient
from tortoise.connection import get_connections
from tortoise.exceptions import IntegrityError, OperationalError
from tortoise.models import Model
from tortoise.transactions import in_transaction

from core.storage.models import DELIVERED, PENDING, EventLog, Game, Outbox


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


def _default() -> BaseDBAsyncClient:
    client: BaseDBAsyncClient = get_connections().get("default")
    return client


def default_dialect() -> str:
    """The dialect of the connection commands commit through ('sqlite', 'postgres')."""
    return _dialect(_default())


Statement = tuple[str, list[Any]]


@dataclass(frozen=True)
class Script:
    """Writes decided before the transaction: `guard` (an UPDATE that must change
    exactly one row, or None) and then `then`. If the guard changes no row, nothing of
    the script is written and its result is False (another writer got there first)."""

    guard: Statement | None
    then: tuple[Statement, ...] = ()

    def run_on(self, raw: sqlite3.Connection) -> bool:
        """Run it on a SQLite connection already inside a transaction (its thread)."""
        if self.guard is not None and raw.execute(*self.guard).rowcount != 1:
            return False
        for sql, params in self.then:
            raw.execute(sql, params)
        return True


def game_update(dialect: str, game_id: int, values: dict[str, Any],
                **guards: Any) -> Statement:
    """UPDATE the game row where id and every guard column still hold."""
    where = {"id": game_id, **guards}
    sql = _update_sql(dialect, Game._meta.db_table, _columns(Game, values),
                      _columns(Game, where))
    return sql, _db_values(Game, values) + _db_values(Game, where)


def log_insert(dialect: str, game_id: int, seq: int, command: str,
               events: str, now: datetime) -> Statement:
    values = {"game_id": game_id, "seq": seq, "command": command, "events": events,
              "created_at": now}
    sql = _insert_sql(dialect, EventLog._meta.db_table, _columns(EventLog, values), 1)
    return sql, _db_values(EventLog, values)


def outbox_answered(dialect: str, game_id: int, ordinals: Sequence[int],
                    now: datetime, *, release: bool = False) -> Statement:
    """Mark the game's entries `ordinals` delivered at `now` (their caller answered them)
    if they are still pending; with `release`, make them due at `now` instead (their
    caller leaves them to the worker)."""
    values: dict[str, Any] = {"next_attempt_at": now} if release \
        else {"status": DELIVERED, "delivered_at": now}
    sets = _update_sql(dialect, Outbox._meta.db_table, _columns(Outbox, values), ("id",))
    marks = _placeholders(dialect, len(ordinals) + 2, start=len(values))
    sql = sets.rsplit(" WHERE ", 1)[0] + (
        f' WHERE "game_id" = {marks[0]} AND "status" = {marks[1]}'
        f' AND "ordinal" IN ({", ".join(marks[2:])})')
    return sql, _db_values(Outbox, values) + [game_id, PENDING] + [int(o) for o in ordinals]


def outbox_delivered(dialect: str, ids: Sequence[int], now: datetime) -> Statement:
    """Mark the outbox entries `ids` delivered at `now`."""
    values = {"status": DELIVERED, "delivered_at": now}
    sets = _update_sql(dialect, Outbox._meta.db_table, _columns(Outbox, values), ("id",))
    marks = _placeholders(dialect, len(ids), start=len(values))
    sql = sets.rsplit(" WHERE ", 1)[0] + f' WHERE "id" IN ({", ".join(marks)})'
    return sql, _db_values(Outbox, values) + [int(i) for i in ids]


def outbox_insert(dialect: str, game_id: int, last: int,
                  rows: Sequence[tuple[str, str]], now: datetime, *,
                  held: Collection[int] = (), hold: timedelta = timedelta(0)
                  ) -> Statement | None:
    """The entries `rows` (kind, payload JSON) numbered after ordinal `last`; those at
    the indexes `held` are not due before `now + hold` (their caller answers them)."""
    if not rows:
        return None
    params: list[Any] = []
    columns: tuple[str, ...] = ()
    for i, (kind, payload) in enumerate(rows, start=1):
        values = {"game_id": game_id, "ordinal": last + i, "kind": kind,
                  "payload": payload, "status": PENDING, "attempts": 0,
                  "next_attempt_at": now + hold if i - 1 in held else now,
                  "created_at": now}
        columns = _columns(Outbox, values)
        params += _db_values(Outbox, values)
    sql = _insert_sql(dialect, Outbox._meta.db_table, columns, len(rows))
    return sql, params


async def update_game(conn: BaseDBAsyncClient, game_id: int, values: dict[str, Any],
                      **guards: Any) -> int:
    """UPDATE the game row where id and every guard column still hold; rows changed."""
    changed, _ = await conn.execute_query(*game_update(_dialect(conn), game_id, values,
                                                       **guards))
    return int(changed)


async def insert_outbox(conn: BaseDBAsyncClient, game_id: int, last: int,
                        rows: Sequence[tuple[str, str]], now: datetime) -> None:
    """The entries `rows` (kind, payload JSON) numbered after ordinal `last`."""
    statement = outbox_insert(_dialect(conn), game_id, last, rows, now)
    if statement is not None:
        await conn.execute_query(*statement)


def _thread_api(conn: BaseDBAsyncClient
                ) -> tuple[Callable[..., Any], sqlite3.Connection] | None:
    """aiosqlite's call into the connection's thread and the sqlite3 connection it
    holds (private API: None where missing or not SQLite, and the caller goes the
    portable way, a call per statement)."""
    if _dialect(conn) != "sqlite":
        return None
    connection = getattr(conn, "_connection", None)
    run = getattr(connection, "_execute", None)
    raw = getattr(connection, "_conn", None) if run is not None else None
    if run is None or raw is None:
        return None
    return run, raw


async def _in_thread(conn: BaseDBAsyncClient, run: Callable[..., Any],
                     body: Callable[[], Any]) -> Any:
    """`body` in the connection's thread, holding the connection's lock; sqlite3's
    errors come out as tortoise's, as its own queries' do."""
    async with conn.acquire_connection():
        try:
            return await run(body)
        except sqlite3.OperationalError as exc:
            raise OperationalError(exc) from exc
        except sqlite3.IntegrityError as exc:
            raise IntegrityError(exc) from exc


async def run_script(conn: BaseDBAsyncClient, script: Script) -> bool:
    """Run `script` inside the open transaction `conn`; whether its guard held."""
    api = _thread_api(conn)
    if api is None:
        if script.guard is not None:
            changed, _ = await conn.execute_query(*script.guard)
            if changed != 1:
                return False
        for statement in script.then:
            await conn.execute_query(*statement)
        return True
    run, raw = api
    return bool(await _in_thread(conn, run, lambda: script.run_on(raw)))


async def commit_scripts(scripts: Sequence[Script]) -> list[bool]:
    """Every script in one transaction on the default connection, committed; whether
    each one's guard held. On SQLite one call to the connection's thread (BEGIN, the
    statements, COMMIT; ROLLBACK if any statement fails) under the connection's lock,
    the lock a tortoise transaction takes."""
    client = _default()
    api = _thread_api(client)
    if api is None:
        async with in_transaction() as conn:
            return [await run_script(conn, script) for script in scripts]
    run, raw = api

    def body() -> list[bool]:
        if raw.in_transaction:  # as tortoise's begin(): nothing half-open carries over
            raw.commit()
        raw.execute("BEGIN")
        try:
            results = [script.run_on(raw) for script in scripts]
            raw.execute("COMMIT")
        except BaseException:
            if raw.in_transaction:
                raw.execute("ROLLBACK")
            raise
        return results

    return list(await _in_thread(client, run, body))
