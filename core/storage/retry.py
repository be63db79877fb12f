"""Retries of a game's writes: the one loop every writer of a game row goes through.

A write can meet another writer (a process that changed the game since we read it:
the guarded `UPDATE ... WHERE seq=` matched nothing) or a conflict the database
reports (a unique key two transactions raced for, a deadlock, a busy SQLite file).
Both are cured by reading again and running the whole write again; `retrying` does
that, a bounded number of times, with a short random backoff for database conflicts.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

from tortoise.exceptions import IntegrityError

ATTEMPTS = 5  # tries of one command when another writer or a lock conflict intervenes
# PostgreSQL SQLSTATEs that mean "run the transaction again": serialization failure,
# deadlock detected.
_RETRY_SQLSTATES = frozenset({"40001", "40P01"})
T = TypeVar("T")


class Stale(Exception):
    """Another writer (another process) changed the game since we loaded it, or the
    database refused the transaction for a conflict a retry resolves (__cause__)."""


def conflict(exc: BaseException) -> bool:
    """A failure that running the same transaction again can cure."""
    seen: BaseException | None = exc
    for _ in range(5):
        if seen is None:
            return False
        if isinstance(seen, IntegrityError):
            return True  # e.g. two games opening the same wallet at once
        if getattr(seen, "sqlstate", None) in _RETRY_SQLSTATES:
            return True
        if "database is locked" in str(seen):  # SQLite busy beyond its timeout
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def as_stale(exc: Exception) -> Exception:
    """`exc` as Stale (its cause) when a retry can cure it, else `exc` itself."""
    if isinstance(exc, Stale) or not conflict(exc):
        return exc
    stale = Stale()
    stale.__cause__ = exc
    return stale


async def backoff(attempt: int) -> None:
    await asyncio.sleep(random.uniform(0, 0.005 * 2 ** attempt))


async def retrying(game_id: int, attempt: Callable[[int], Awaitable[T]], *,
                   forget: Callable[[], None],
                   keeps: Callable[[BaseException], bool] = lambda exc: False) -> T:
    """Run `attempt(n)` until it returns; it raises Stale to be run again.

    Every failure but those `keeps` says leave the cache valid calls `forget` (the
    cached state may no longer be what the database holds). A database conflict
    (Stale with a cause) waits a little before the next try, and its cause is raised
    once the tries are spent.
    """
    for n in range(ATTEMPTS):
        try:
            return await attempt(n)
        except Stale as stale:
            forget()
            if stale.__cause__ is not None:  # a database conflict, not a new seq
                if n == ATTEMPTS - 1:
                    raise stale.__cause__ from None
                await backoff(n)
        except BaseException as exc:
            if not keeps(exc):
                forget()
            raise
    raise RuntimeError(f"game {game_id} keeps changing under us")


async def settle(commit: Coroutine[Any, Any, T]) -> tuple[T, bool]:
    """Run a transaction to its end even if our caller is cancelled meanwhile.

    A cancellation inside the ORM's BEGIN can leave its connection lock taken for
    good (tortoise 1.1.9, SQLite), and a cancelled commit leaves us not knowing
    whether the command landed. So the commit runs in its own task; the caller
    learns of its own cancellation (True) only once the outcome is known.
    """
    task = asyncio.ensure_future(commit)
    cancelled = False
    while not task.done():
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            cancelled = True
        except BaseException:
            pass  # the task's own error: task.result() re-raises it
    return task.result(), cancelled
