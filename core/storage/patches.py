"""A game's Discord-side columns: the row as the bot routes by it (GameInfo), and the
patches the Discord layer writes (DiscordPatch: ids of the messages, channels and
category the bot made for the game), apart from the rules' state."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from pydantic import BaseModel
from tortoise.backends.base.client import BaseDBAsyncClient

from core.game.state import PhaseKind
from core.storage import statements
from core.storage.models import Game
from core.storage.retry import Stale

_JSON_MAPS = ("private_channels", "live_messages")
SERVER_OVERWRITES = "server_overwrites"
# The columns GameInfo is made of: lookups of many games read these, never the state.
INFO_FIELDS = ("id", "guild_id", "channel_id", "master_id", "title", "phase", "active",
               "deadline", "seq", "language", "signup_message_id", "category_id",
               "private_channels", "live_messages", SERVER_OVERWRITES)
#: A member overwrite as the server had set it before the bot first changed it: [type,
#: allow, deny], or None (he had none). Keyed by `overwrite_key` (cogs/delivery/silence.py).
ServerOverwrite = list[int] | None


def overwrite_key(channel_id: int, target_id: int) -> str:
    """The key of one (channel, member) pair in `server_overwrites`."""
    return f"{channel_id}:{target_id}"


class DiscordPatch(BaseModel):
    """Discord-side columns of a game; only the fields explicitly set are written."""

    signup_message_id: int | None = None
    category_id: int | None = None
    private_channels: dict[str, int] | None = None
    live_messages: dict[str, int] | None = None
    # what the server had set on members the bot changes overwrites of (the whole map)
    server_overwrites: dict[str, ServerOverwrite] | None = None
    language: str | None = None

    def changes(self) -> dict[str, Any]:
        """The fields set, as GameInfo holds them (a language of None is no change)."""
        out: dict[str, Any] = {}
        for name in self.model_fields_set:
            value = getattr(self, name)
            if name in _JSON_MAPS:
                value = {str(k): int(v) for k, v in (value or {}).items()}
            elif name == SERVER_OVERWRITES:
                value = {str(k): None if v is None else [int(b) for b in v]
                         for k, v in (value or {}).items()}
            elif name == "language" and value is None:
                continue
            out[name] = value
        return out

    def columns(self) -> dict[str, Any]:
        """The fields set, as the game row stores them."""
        return {name: json.dumps(value, sort_keys=True)
                if name in (*_JSON_MAPS, SERVER_OVERWRITES) else value
                for name, value in self.changes().items()}


@dataclass(frozen=True)
class GameInfo:
    """What the bot needs to route a message to a game, without parsing its state."""

    id: int
    guild_id: int
    channel_id: int
    master_id: int
    title: str
    phase: PhaseKind
    active: bool
    deadline: datetime | None
    seq: int
    language: str
    signup_message_id: int | None
    category_id: int | None
    private_channels: dict[str, int]
    live_messages: dict[str, int] = field(default_factory=dict)  # key -> message id
    # (channel, member) -> the member's overwrite as the server had set it, remembered
    # before the bot first changed it and given back exactly (cogs/delivery/silence.py)
    server_overwrites: dict[str, ServerOverwrite] = field(default_factory=dict)
    # The phase (GameState.serial, .number) the game was in when the bot looked it up
    # for an interaction (MafiaBot.find_game): the cog stamps it on phase-bound commands
    # (core.game.commands.stamped). None when not looked up for one.
    seen: tuple[int, int] | None = None

    @classmethod
    def of(cls, row: Game) -> GameInfo:
        return cls(
            id=row.id, guild_id=row.guild_id, channel_id=row.channel_id,
            master_id=row.master_id, title=row.title, phase=PhaseKind(row.phase),
            active=row.active, deadline=row.deadline, seq=row.seq, language=row.language,
            signup_message_id=row.signup_message_id, category_id=row.category_id,
            private_channels={k: int(v) for k, v in json.loads(row.private_channels).items()},
            live_messages={k: int(v) for k, v in json.loads(row.live_messages).items()},
            server_overwrites=json.loads(row.server_overwrites or "{}"),
        )


def patched(info: GameInfo, patch: DiscordPatch | None) -> GameInfo:
    """`info` after writing `patch` (the same columns DiscordPatch.columns() writes)."""
    return info if patch is None else replace(info, **patch.changes())


def patch_writer(game_id: int, outbox_seq: int, patch: DiscordPatch,
                 extra: list[tuple[str, str]], now: datetime
                 ) -> Callable[[BaseDBAsyncClient], Any]:
    """The transaction body of `set_discord`: the columns and the outbox rows, guarded
    by the outbox ordinal read (another writer moved it: Stale)."""
    values = {"outbox_seq": outbox_seq + len(extra), "updated_at": now, **patch.columns()}

    async def write(conn: BaseDBAsyncClient) -> None:
        n = await statements.update_game(conn, game_id, values, outbox_seq=outbox_seq)
        if n != 1:
            raise Stale()
        await statements.insert_outbox(conn, game_id, outbox_seq, extra, now)

    return write
