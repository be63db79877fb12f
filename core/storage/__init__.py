"""Durable storage: games, their command log, the outbox, deadlines (see service.py)."""

from core.storage.db import close_db, init_db
from core.storage.outbox import OutboxEntry, OutboxWorker, RetryAfter
from core.storage.scheduler import DeadlineScheduler
from core.storage.service import (
    Applied,
    Commit,
    CommitHook,
    DiscordPatch,
    GameInfo,
    GameNotFound,
    GameService,
    OutboxItem,
    ReplayMismatch,
)

__all__ = [
    "Applied",
    "Commit",
    "CommitHook",
    "DeadlineScheduler",
    "DiscordPatch",
    "GameInfo",
    "GameNotFound",
    "GameService",
    "OutboxEntry",
    "OutboxItem",
    "OutboxWorker",
    "ReplayMismatch",
    "RetryAfter",
    "close_db",
    "init_db",
]
