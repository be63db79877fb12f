"""Group commit: the writes of commands that arrive together share one transaction.

A durable commit costs a sync of the log to disk, and on SQLite every
transaction also waits for the one connection. Commands of different games that
become ready while a transaction is in flight are therefore written together in
the next one: one BEGIN, one COMMIT, one sync for all of them. A lone command
starts its transaction at once, so grouping never delays it.

Each piece of work is a function of the transaction's connection that only
writes (no effects outside the database), so it can be run again: if any piece
fails, the whole group is rolled back and every piece is run again in its own
transaction, where it succeeds or fails alone, as it would have without grouping.
A piece may instead be a `Script` (core/storage/statements.py), writes decided in
advance: a group of scripts alone commits in one call to SQLite's thread.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, overload

from tortoise.backends.base.client import BaseDBAsyncClient
from tortoise.transactions import in_transaction

from core.storage.statements import Script, commit_scripts, run_script

T = TypeVar("T")
Work = Callable[[BaseDBAsyncClient], Awaitable[Any]]
Piece = Work | Script  # a Script's result is whether its guard held


async def _run(piece: Piece, conn: BaseDBAsyncClient) -> Any:
    return await run_script(conn, piece) if isinstance(piece, Script) else await piece(conn)


class _Failed(Exception):
    """A piece of a group failed: roll the group back (the piece's error is __cause__)."""


class GroupCommitter:
    """Runs submitted writes in shared transactions, at most `max_group` per transaction."""

    def __init__(self, max_group: int = 64) -> None:
        self.max_group = max(1, max_group)
        self._queue: list[tuple[Piece, asyncio.Future[Any]]] = []
        self._draining: asyncio.Task[None] | None = None
        self.transactions = 0  # committed or rolled back: how well grouping works
        self.pieces = 0

    @overload
    async def run(self, work: Script) -> bool: ...

    @overload
    async def run(self, work: Callable[[BaseDBAsyncClient], Awaitable[T]]) -> T: ...

    async def run(self, work: Piece) -> Any:
        """Run `work` in a transaction (maybe shared); its result once committed."""
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._queue.append((work, future))
        if self._draining is None or self._draining.done():
            self._draining = asyncio.ensure_future(self._drain())
        return await asyncio.shield(future)

    async def idle(self) -> None:
        """Wait until every submitted piece is committed or failed (before closing the
        database: a transaction cut off by the close would leave its callers guessing)."""
        while self._draining is not None and not self._draining.done():
            await asyncio.wait([self._draining])

    def stop(self) -> None:
        """Cut the drain short (shutdown): the pieces in flight and queued fail with
        RuntimeError, so no caller waits forever."""
        if self._draining is not None:
            self._draining.cancel()

    async def _drain(self) -> None:
        while self._queue:
            group = self._queue[:self.max_group]
            del self._queue[:self.max_group]
            try:
                await self._group(group)
            except BaseException as exc:  # e.g. cancelled at shutdown: nobody waits forever
                failed = exc if isinstance(exc, Exception) else RuntimeError("group commit stopped")
                if not isinstance(exc, Exception):
                    group += self._queue  # the drain ends here: fail what still waits too
                    self._queue = []
                for _, future in group:
                    if not future.done():
                        future.set_exception(failed)
                if not isinstance(exc, Exception):
                    raise

    async def _group(self, group: list[tuple[Piece, asyncio.Future[Any]]]) -> None:
        self.pieces += len(group)
        scripts = [work for work, _ in group if isinstance(work, Script)]
        if len(scripts) == len(group):
            self.transactions += 1
            try:
                outcomes = await commit_scripts(scripts)
            except Exception as exc:
                if len(group) == 1:
                    _settle(group[0][1], exc=exc)
                    return
                # each piece is run again alone below
            else:
                for (_, future), outcome in zip(group, outcomes, strict=True):
                    _settle(future, outcome)
                return
        elif len(group) > 1:
            results: list[Any] = []
            try:
                self.transactions += 1
                async with in_transaction() as conn:
                    for work, _ in group:
                        try:
                            results.append(await _run(work, conn))
                        except Exception as exc:
                            raise _Failed() from exc
            except Exception:
                pass  # each piece is run again alone below
            else:
                for (_, future), value in zip(group, results, strict=True):
                    _settle(future, value)
                return
        for work, future in group:
            self.transactions += 1
            try:
                if isinstance(work, Script):
                    result: Any = (await commit_scripts([work]))[0]
                else:
                    async with in_transaction() as conn:
                        result = await work(conn)
            except Exception as exc:
                _settle(future, exc=exc)
            else:
                _settle(future, result)


def _settle(future: asyncio.Future[Any], result: Any = None, *,
            exc: BaseException | None = None) -> None:
    """Give a waiter its outcome (unless it stopped waiting)."""
    if future.done():
        return
    if exc is not None:
        future.set_exception(exc)
    else:
        future.set_result(result)
