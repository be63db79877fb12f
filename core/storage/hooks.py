"""What runs inside a command's transaction besides the engine: commit hooks (the
currency module's ledger, core/storage/wallets.py) and what they are shown. Apart from
service.py so a hook module needs no import of the service."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from tortoise.backends.base.client import BaseDBAsyncClient

from core.game.commands import Command
from core.game.events import Event
from core.game.state import GameState


@dataclass(frozen=True)
class Commit:
    """What a commit hook sees: the command being committed and its outcome."""

    game_id: int
    guild_id: int
    command: Command
    old: GameState
    new: GameState
    events: list[Event]


# Runs inside the command's transaction (e.g. the currency module's ledger rows), which
# other games' commands may share (core/storage/groupcommit.py): it must only write
# through `conn`, with no effect outside the database. Raising (RuleError included)
# rolls the whole command back.
CommitHook = Callable[[BaseDBAsyncClient, Commit], Awaitable[None]]


@dataclass(frozen=True)
class QuietHook:
    """A commit hook that can tell before the transaction that a commit gives it nothing
    to write. A commit no hook has work for is decided in advance (a Script: one call to
    SQLite's thread, core/storage/statements.py); a plain CommitHook always runs."""

    write: CommitHook
    quiet: Callable[[Commit], bool]

    async def __call__(self, conn: BaseDBAsyncClient, commit: Commit) -> None:
        await self.write(conn, commit)


def quiet(hook: CommitHook, commit: Commit) -> bool:
    """Whether `hook` is known to have nothing to write for `commit`."""
    return isinstance(hook, QuietHook) and hook.quiet(commit)
