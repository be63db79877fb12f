"""Each outbox kind on Discord: the lane it waits in and the function that delivers it.

The kinds, their payloads and how their rows coalesce are storage's facts
(core/storage/kinds.py); this is the Discord layer's half of the same table
(docs/delivery.md, "The catalogue"). It is checked against core's when imported: a kind
without a lane or a deliverer, or an entry for a kind core does not know, is an error,
so a new kind cannot reach the worker half-wired.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol

from core.sight.destinations import Where, destination
from core.storage.kinds import (
    CLOSE_KIND,
    EVENT_KIND,
    KINDS,
    PING_KIND,
    PLACE_KIND,
    SIGNUP_POST,
    SIGNUP_REFRESH,
    SILENCE_KIND,
    TALLY_KIND,
)
from core.storage.observer import GameInfo
from core.storage.outbox import OutboxEntry

log = logging.getLogger(__name__)

# The outbox's lanes (OutboxWorker `lane`), one per kind of destination: each game's
# lanes are delivered separately (each in order), and the lanes take weighted turns for
# the worker's slots (docs/delivery.md): public announcements get the largest share, but
# a player's private push, a team channel or the live count never waits until every
# announcement of every game is out, and a guild's slow windows (channel creations,
# member roles) hold back only their own lane of their own game. The master's desk has
# a lane of its own: its lines wait up to a minute to be gathered (cogs/delivery/gathering.py),
# which must not hold back the team channels. The game's ping role has one too: a phase
# announcement never waits for member-role changes (10 per 10 s per guild).
LANE_ANNOUNCE, LANE_PRIVATE, LANE_CHANNELS, LANE_COSMETIC, LANE_ROLES, LANE_DESK = range(6)
LANES = 6
LANE_NAMES = ("announce", "places", "channels", "cosmetic", "roles", "desk")
LANE_WEIGHTS = (8.0, 4.0, 2.0, 2.0, 1.0, 1.0)


class PlacesDeliverer(Protocol):
    """What cogs.delivery.places.Places delivers: the seats' places, the ping role, the silence."""

    async def push(self, info: GameInfo, entry: OutboxEntry) -> None: ...
    async def sync_role(self, info: GameInfo, entry: OutboxEntry) -> None: ...
    async def silence(self, info: GameInfo, entry: OutboxEntry) -> None: ...


class Delivery(Protocol):
    """What cogs.delivery.Delivery offers the table (named here: no import circle)."""

    @property
    def places(self) -> PlacesDeliverer: ...
    async def deliver_event(self, info: GameInfo, entry: OutboxEntry) -> None: ...
    async def deliver_tally(self, info: GameInfo, entry: OutboxEntry) -> None: ...
    async def post_signup(self, info: GameInfo, entry: OutboxEntry) -> None: ...
    async def refresh_signup(self, info: GameInfo, entry: OutboxEntry) -> None: ...
    async def close_game(self, info: GameInfo, entry: OutboxEntry) -> None: ...


Deliverer = Callable[[Delivery, GameInfo, OutboxEntry], Awaitable[None]]


@dataclass(frozen=True)
class OnDiscord:
    """A kind's lane (a number, or a function of the entry) and its deliverer."""

    lane: int | Callable[[OutboxEntry], int]
    deliver: Deliverer


#: an event row's lane by its destination (core/sight/destinations.py)
EVENT_LANES: dict[Where, int] = {
    Where.GAME: LANE_ANNOUNCE, Where.SIGNUP: LANE_COSMETIC, Where.TEAM: LANE_CHANNELS,
    Where.TEAM_SETUP: LANE_CHANNELS, Where.DESK: LANE_DESK, Where.PLACES: LANE_PRIVATE}


def event_lane(entry: OutboxEntry) -> int:
    """An event's lane by its audience: the desk, a team's channel, the game channel
    (the signup board's refreshes are edits: cosmetic)."""
    h = entry.head
    assert h is not None
    return EVENT_LANES[destination(h.event.kind, h.event.audience).where]


async def _event(d: Delivery, info: GameInfo, entry: OutboxEntry) -> None:
    await d.deliver_event(info, entry)


async def _tally(d: Delivery, info: GameInfo, entry: OutboxEntry) -> None:
    await d.deliver_tally(info, entry)


async def _place(d: Delivery, info: GameInfo, entry: OutboxEntry) -> None:
    await d.places.push(info, entry)


async def _ping(d: Delivery, info: GameInfo, entry: OutboxEntry) -> None:
    await d.places.sync_role(info, entry)


async def _silence(d: Delivery, info: GameInfo, entry: OutboxEntry) -> None:
    await d.places.silence(info, entry)


async def _close(d: Delivery, info: GameInfo, entry: OutboxEntry) -> None:
    await d.close_game(info, entry)


async def _signup_post(d: Delivery, info: GameInfo, entry: OutboxEntry) -> None:
    await d.post_signup(info, entry)


async def _signup_refresh(d: Delivery, info: GameInfo, entry: OutboxEntry) -> None:
    await d.refresh_signup(info, entry)


DISCORD: dict[str, OnDiscord] = {
    EVENT_KIND: OnDiscord(event_lane, _event),
    TALLY_KIND: OnDiscord(LANE_COSMETIC, _tally),
    PLACE_KIND: OnDiscord(LANE_PRIVATE, _place),
    PING_KIND: OnDiscord(LANE_ROLES, _ping),
    SILENCE_KIND: OnDiscord(LANE_PRIVATE, _silence),
    CLOSE_KIND: OnDiscord(LANE_CHANNELS, _close),
    SIGNUP_POST: OnDiscord(LANE_ANNOUNCE, _signup_post),
    SIGNUP_REFRESH: OnDiscord(LANE_COSMETIC, _signup_refresh),
}


def check(kinds: Iterable[str], discord: Mapping[str, OnDiscord]) -> None:
    """Every kind of core's catalogue has exactly one Discord entry, and no other."""
    missing = sorted(set(kinds) - set(discord))
    unknown = sorted(set(discord) - set(kinds))
    if missing or unknown:
        raise RuntimeError(f"outbox kinds without a lane and deliverer: {missing}; "
                           f"Discord entries for kinds core does not list: {unknown}")
    for name, on in discord.items():
        if not ((isinstance(on.lane, int) and 0 <= on.lane < LANES) or callable(on.lane)):
            raise RuntimeError(f"outbox kind {name}: no lane ({on.lane!r})")


check(KINDS, DISCORD)


def lane(entry: OutboxEntry) -> int:
    """Which lane an entry waits in (a kind no catalogue lists, from a row of another
    version: a player's private push's, where it holds back nothing public)."""
    on = DISCORD.get(entry.kind)
    if on is None:
        return LANE_PRIVATE
    return on.lane(entry) if callable(on.lane) else on.lane


async def deliver(d: Delivery, info: GameInfo, entry: OutboxEntry) -> None:
    """The kind's deliverer (an unknown kind is logged and left: nothing can send it)."""
    on = DISCORD.get(entry.kind)
    if on is None:
        log.warning("game %s: outbox entry %s of unknown kind %r left undelivered",
                    entry.game_id, entry.ordinal, entry.kind)
        return
    await on.deliver(d, info, entry)

