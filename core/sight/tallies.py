"""The live vote count's outbox rows: a pure deriver the service runs in every command's
transaction (listed in core/storage/kinds.py), so the count a day opens, follows and closes
with is owed to Discord exactly like the announcements. Which counts change is the
rules' answer (core.sight.visibility.tally_updates); this only packs them as (kind, payload)
rows, like core.sight.places: storage writes them and knows nothing of what they say."""

from __future__ import annotations

from typing import Any

from core.game.events import Event, EventKind
from core.game.state import GameState
from core.sight.visibility import record_count, tally_updates

TALLY_KIND = "tally"  # Outbox.kind of live-count entries
#: public events the live list shows instead of a post of their own (day 0's check-ins)
LISTED_EVENTS = frozenset({EventKind.CHECKED_IN})


#: public records that carry the day's count after them (a vote, a withdrawal)
COUNTED_RECORDS = frozenset({EventKind.VOTE_CAST, EventKind.VOTE_WITHDRAWN})


def message_key(number: int) -> str:
    return f"tally:{number}"


def tally_outbox(old: GameState, new: GameState, events: list[Event]
                 ) -> list[tuple[str, dict[str, Any]]]:
    """The service's outbox deriver: a day's count opens with the day, follows every
    change of the public view, and closes with the day's result (core decides which)."""
    return [(TALLY_KIND, {"op": op, "coalesce": message_key(count.number),
                          "tally": count.model_dump(mode="json")})
            for op, count in tally_updates(old, new)]


def record_fields(new: GameState, event: Event) -> dict[str, Any]:
    """What an event's outbox row carries beside it: a public vote or withdrawal, the
    day's count as the command left it (its record shows it: issue 30, the channel
    reads the count with every vote, so the live message may be edited seldom)."""
    if event.kind not in COUNTED_RECORDS or event.audience.kind != "public":
        return {}
    count = record_count(new)
    return {} if count is None else {"count": count.model_dump(mode="json")}
