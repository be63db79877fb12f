"""Reading a game's archive input from the database: its initial state and its log.

Used by the Discord delivery (a day's timeline picture, the archive at the end),
`mafia-bot archive` and `mafia-bot web`. Only finished games have an archive:
`record` refuses a running (or cancelled) game with NotFinished.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from tortoise.queryset import QuerySet

from core.game import engine
from core.game.state import GameState, Options, PhaseKind
from core.sight.record import GameRecord, LogRow, NotFinished, build
from core.storage.models import Game
from core.storage.service import GameNotFound, GameService

# The columns a game's initial state is made of (never its current state).
CREATED_WITH = ("id", "seed", "master_id", "title", "plot", "options")


@dataclass(frozen=True)
class FinishedGame:
    id: int
    guild_id: int
    title: str
    language: str
    ended: datetime


async def initial_and_log(service: GameService, game_id: int) -> tuple[GameState, list[LogRow]]:
    """The state the game was created with and every logged command (with its events)."""
    row = await Game.filter(id=game_id).only(*CREATED_WITH).first()
    if row is None:
        raise GameNotFound(game_id)
    return await _initial_and_log(service, row)


async def _initial_and_log(service: GameService, row: Game
                           ) -> tuple[GameState, list[LogRow]]:
    game_id = row.id
    initial = engine.create_game(seed=row.seed, master=row.master_id, title=row.title,
                                 plot=row.plot, options=Options.model_validate_json(row.options),
                                 stored=True)
    return initial, await service.log(game_id)


async def finished_input(service: GameService, game_id: int, *, guild_id: int | None = None
                         ) -> tuple[GameState, list[LogRow], str]:
    """Like `initial_and_log`, for a FINISHED game only (NotFinished otherwise), plus the
    game's language; with `guild_id`, a game of another guild is not found."""
    row = await Game.filter(id=game_id).only(
        *CREATED_WITH, "guild_id", "phase", "active", "language").first()
    if row is None or (guild_id is not None and row.guild_id != guild_id):
        raise GameNotFound(game_id)
    if row.phase != str(PhaseKind.ENDED) or row.active:
        raise NotFinished(row.phase)
    initial, log = await _initial_and_log(service, row)
    return initial, log, row.language


async def record(service: GameService, game_id: int) -> tuple[GameRecord, str]:
    """The archive record of a finished game and its language."""
    initial, log, language = await finished_input(service, game_id)
    return build(initial, log), language


def _finished() -> QuerySet[Game]:
    return Game.filter(phase=str(PhaseKind.ENDED), active=False)


async def finished_games(guild_id: int | None = None) -> list[FinishedGame]:
    """Every finished game (of `guild_id`'s alone if given), newest first; cancelled and
    running games are left out. Only the columns an index shows are read, never the
    state (`mafia-bot web`'s index, issue 41)."""
    query = _finished() if guild_id is None else _finished().filter(guild_id=guild_id)
    rows = await query.order_by("-id").only("id", "guild_id", "title", "language",
                                            "updated_at")
    return [FinishedGame(id=r.id, guild_id=r.guild_id, title=r.title, language=r.language,
                         ended=r.updated_at) for r in rows]


async def finished_guilds() -> list[int]:
    """The guilds that have a finished game: their ids alone, one row each."""
    ids: list[Any] = list(await _finished().distinct().values_list("guild_id", flat=True))
    return sorted(int(g) for g in ids)
