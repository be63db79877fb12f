"""The setup history of a server: its finished games' final states, grouped by setup
(core/play/setups.py). Cancelled and running games are left out."""

from __future__ import annotations

from core.game.state import GameState, PhaseKind
from core.play.setups import History, SetupKey, histories
from core.storage.models import Game

#: The newest games read per question: /stats answers in one query, whatever the past.
HISTORY_GAMES = 2000


async def setup_histories(guild_id: int, limit: int = HISTORY_GAMES
                          ) -> dict[SetupKey, History]:
    """This server's finished games (the newest `limit`) by setup."""
    rows = await Game.filter(guild_id=guild_id, phase=str(PhaseKind.ENDED), active=False) \
        .order_by("-id").limit(limit).values_list("state", flat=True)
    return histories(GameState.model_validate_json(str(row)) for row in rows)
