"""The process's log: plain lines (the default) or one JSON object per line
(LOG_FORMAT=json), which log collectors (Loki, Elasticsearch, journald's JSON) read
without a parser of our own.

A JSON line carries `time` (UTC, ISO 8601), `level`, `logger`, `game`, `guild` and
`message` (and `exception`, the traceback, when there is one). `game` and `guild` come
from the record (`extra={"game": ..., "guild": ...}`) or, for any line logged while a
slash command runs, from that command's interaction (its guild, and its game once the
command looked it up): bot.py's command tree binds it (`bind_interaction`). Elsewhere
(the outbox's worker, the scheduler) they are null and the message names the game.
"""

from __future__ import annotations

import json
import logging
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any

from .bot import FOUND

PLAIN = "%(asctime)s %(levelname)s %(name)s %(message)s"
KEYS = ("time", "level", "logger", "game", "guild", "message")

#: the interaction whose command is running in this task (None: none)
_INTERACTION: ContextVar[Any] = ContextVar("mafia_log_interaction", default=None)


def bind_interaction(interaction: Any) -> None:
    """Lines logged from here on in this task name the interaction's guild and game
    (a task of its own per interaction in discord.py: nothing leaks to another)."""
    _INTERACTION.set(interaction)


def _context() -> tuple[int | None, int | None]:
    """The running command's game and guild, as far as known."""
    interaction = _INTERACTION.get()
    if interaction is None:
        return None, None
    guild = getattr(interaction, "guild_id", None)
    found = getattr(interaction, "extras", {}).get(FOUND)
    game = None
    if isinstance(found, dict) and found:
        game = getattr(next(iter(found.values())), "id", None)
    return game, guild


class JsonFormatter(logging.Formatter):
    """One JSON object per record, on one line (newlines inside are escaped)."""

    def format(self, record: logging.LogRecord) -> str:
        game, guild = _context()
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(
                timespec="milliseconds").replace("+00:00", "Z"),
            "level": record.levelname,
            "logger": record.name,
            "game": getattr(record, "game", game),
            "guild": getattr(record, "guild", guild),
            "message": record.getMessage(),
        }
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        elif record.exc_text:
            line["exception"] = record.exc_text
        return json.dumps(line, ensure_ascii=False, default=str)


def setup_logging(fmt: str = "plain", level: int = logging.INFO) -> None:
    """The root logger's one handler on stderr, in the chosen format."""
    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter() if fmt == "json" else logging.Formatter(PLAIN))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
