"""The live vote count's outbox rows: a pure deriver the service runs in every command's
transaction (registered by cogs/tally.py), so the count a day opens, follows and closes
with is owed to Discord exactly like the announcements. Which counts change is the
rules' answer (core.sight.visibility.tally_updates); this only packs them as (kind, payload)
rows, like core.sight.places: storage writes them and knows nothing of what they say."""

from __future__ import annotations

from typing import Any

from core.game.events import Event
from core.game.state import GameState
from core.sight.visibility import tally_updates

TALLY_KIND = "tally"  # Outbox.kind of live-count entries


def message_key(number: int) -> str:
    return f"tally:{number}"


def tally_outbox(old: GameState, new: GameState, events: list[Event]
                 ) -> list[tuple[str, dict[str, Any]]]:
    """The service's outbox deriver: a day's count opens with the day, follows every
    change of the public view, and closes with the day's result (core decides which)."""
    return [(TALLY_KIND, {"op": op, "coalesce": message_key(count.number),
                          "tally": count.model_dump(mode="json")})
            for op, count in tally_updates(old, new)]
