"""Which lines of the master's desk ping him: the kinds he may choose, and his choice.

The desk is a quiet feed by default; a master who runs several games misses an /away
notice or the moment all orders are in. He chooses (`/master pings`) the kinds of
desk line that ping him; the choice is a reader's preference kept beside the game
(core/storage/readers.py), not a rule, so it never enters the game's state or log.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

#: kind of desk line -> the master events it covers
PING_KINDS: Final[dict[str, frozenset[str]]] = {
    "away": frozenset({"away_noted"}),
    "orders": frozenset({"all_orders_in"}),
    "sight": frozenset({"desk_sight"}),
    "anon": frozenset({"anon_sender"}),
    "standby": frozenset({"desk_standby"}),
    "missed": frozenset({"turn_missed"}),
}
#: what pings a master who chose nothing: the two lines he must act on
DEFAULT_PINGS: Final = frozenset({"away", "orders"})


def ping_kind(event_kind: str) -> str | None:
    """The choosable kind of a desk line made from this event (None: never pings)."""
    return next((k for k, events in PING_KINDS.items() if event_kind in events), None)


def pings(stored: str | None) -> frozenset[str]:
    """The master's choice as stored (None: never chosen, the default)."""
    if stored is None:
        return DEFAULT_PINGS
    return frozenset(k for k in stored.split(",") if k in PING_KINDS)


def stored(kinds: Iterable[str]) -> str:
    """A choice as stored: the known kinds, in a fixed order ("" for none)."""
    chosen = set(kinds)
    return ",".join(k for k in PING_KINDS if k in chosen)
