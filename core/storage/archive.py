"""Reading a game's archive input from the database: its initial state and its log.

Used by the Discord delivery (a day's timeline picture, the archive at the end),
`mafia-bot archive` and `mafia-bot web`. Only finished games have an archive:
`record` refuses a running (or cancelled) game with NotFinished.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from core.game import engine
from core.game.state import GameState, Options, PhaseKind
from core.sight.record import GameRecord, LogRow, NotFinished, build
from core.storage.models import Game
from core.storage.service import GameNotFound, GameService


@dataclass(frozen=True)
class FinishedGame:
    id: int
    guild_id: int
    title: str
    language: str
    ended: datetime


async def initial_and_log(service: GameService, game_id: int) -> tuple[GameState, list[LogRow]]:
    """The state the game was created with and every logged command (with its events)."""
    row = await Game.get_or_none(id=game_id)
    if row is None:
        raise GameNotFound(game_id)
    initial = engine.create_game(seed=row.seed, master=row.master_id, title=row.title,
                                 plot=row.plot, options=Options.model_validate_json(row.options),
                                 stored=True)
    return initial, await service.log(game_id)


async def finished_input(service: GameService, game_id: int, *, guild_id: int | None = None
                         ) -> tuple[GameState, list[LogRow], str]:
    """Like `initial_and_log`, for a FINISHED game only (NotFinished otherwise), plus the
    game's language; with `guild_id`, a game of another guild is not found."""
    row = await Game.get_or_none(id=game_id)
    if row is None or (guild_id is not None and row.guild_id != guild_id):
        raise GameNotFound(game_id)
    if row.phase != str(PhaseKind.ENDED) or row.active:
        raise NotFinished(row.phase)
    initial, log = await initial_and_log(service, game_id)
    return initial, log, row.language


async def record(service: GameService, game_id: int) -> tuple[GameRecord, str]:
    """The archive record of a finished game and its language."""
    initial, log, language = await finished_input(service, game_id)
    return build(initial, log), language


async def finished_games() -> list[FinishedGame]:
    """Every finished game, newest first (cancelled and running games are left out)."""
    rows = await Game.filter(phase=str(PhaseKind.ENDED), active=False).order_by("-id")
    return [FinishedGame(id=r.id, guild_id=r.guild_id, title=r.title, language=r.language,
                         ended=r.updated_at) for r in rows]
