"""A member's finished games and wins in a guild (/profile), as a value, not an ORM row.

The rows are kept by core.storage.commit when a game ends; readers get `PlayerStats`
so no cog touches the table (its JSON column is parsed here, once).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from core.storage.models import UserStats


@dataclass(frozen=True, slots=True)
class PlayerStats:
    games: int = 0
    wins: int = 0
    wins_by_side: dict[str, int] = field(default_factory=dict)


async def player_stats(guild_id: int, user_id: int) -> PlayerStats:
    """The member's record in this guild (zeros if he never finished a game here)."""
    row = await UserStats.get_or_none(guild_id=guild_id, user_id=user_id)
    if row is None:
        return PlayerStats()
    return PlayerStats(games=row.games, wins=row.wins, wins_by_side={
        str(side): int(n) for side, n in json.loads(row.wins_by_side).items()})
