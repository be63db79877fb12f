"""The live vote count's outbox entries: a storage-side deriver the service runs in every
command's transaction (registered by cogs/tally.py), so the count a day opens, follows
and closes with is owed to Discord exactly like the announcements.  Which counts change
is the rules' answer (core.visibility.tally_updates); this only packs them."""

from __future__ import annotations

from core.state import GameState
from core.storage.commit import OutboxItem
from core.visibility import LiveTally, tally_updates

TALLY_KIND = "tally"  # Outbox.kind of live-count entries


def message_key(number: int) -> str:
    return f"tally:{number}"


def _tally_item(tally: LiveTally, op: str) -> OutboxItem:
    return OutboxItem(kind=TALLY_KIND, payload={
        "op": op, "coalesce": message_key(tally.number), "tally": tally.model_dump(mode="json")})


def tally_outbox(old: GameState, new: GameState, events: object) -> list[OutboxItem]:
    """The service's outbox deriver: a day's count opens with the day, follows every
    change of the public view, and closes with the day's result (core decides which)."""
    return [_tally_item(count, op) for op, count in tally_updates(old, new)]
