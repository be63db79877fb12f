"""Where an event goes: decided once, here, for every layer that asks.

An event's destination follows from its kind and its audience alone, so the commit
(which events become outbox rows), the worker (which lane a row waits in), the gathering
(which window a line waits for) and the Discord deliverer (which channel it posts to)
read one answer instead of each spelling the audience rules again (issue 40). The
places (a seat's private news) are reached through their own rows (core/sight/places.py),
not through this function's GAME/TEAM/DESK answers.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from core.game.events import Audience, Event, EventKind

#: public events the signup board shows (re-rendered, never posted on their own)
SIGNUP_EVENTS = frozenset({EventKind.JOINED, EventKind.LEFT, EventKind.ROLES_SET,
                           EventKind.OPTIONS_SET})


class Where(StrEnum):
    GAME = "game"  # a post in the game channel
    SIGNUP = "signup"  # the signup board, re-rendered (an edit)
    TEAM = "team"  # a line in a team's channel (a clan's, the police's, the graveyard's)
    TEAM_SETUP = "team setup"  # who reads and writes a team's channel (its overwrites)
    DESK = "desk"  # a line on the master's desk
    PLACES = "places"  # a player's private news: his place's own rows carry it


@dataclass(frozen=True)
class Destination:
    where: Where
    team: str | None = None  # the team, for TEAM and TEAM_SETUP

    @property
    def private(self) -> bool:
        """A private channel's (a team's or the desk's), not the game channel's."""
        return self.where in (Where.TEAM, Where.TEAM_SETUP, Where.DESK)

    @property
    def gathered(self) -> str | None:
        """The window a line may wait in to share one post (cogs/delivery/gathering.py): the
        desk's, or its team channel's ("team:<name>"); None for everything else."""
        if self.where is Where.DESK:
            return "desk"
        if self.where is Where.TEAM:
            return f"team:{self.team}"
        return None


def destination(kind: str, audience: Audience) -> Destination:
    """An event's destination from its kind and audience (an outbox row's head has
    both, so the worker asks without reading the whole event)."""
    if audience.kind == "master":
        return Destination(Where.DESK)
    if audience.kind == "team":
        setup = kind == EventKind.TEAM_CHANGED
        return Destination(Where.TEAM_SETUP if setup else Where.TEAM, audience.team)
    if audience.kind == "public":
        return Destination(Where.SIGNUP if kind in SIGNUP_EVENTS else Where.GAME)
    return Destination(Where.PLACES)


def of(event: Event) -> Destination:
    return destination(event.kind, event.audience)
