"""The catalogue of outbox kinds: what each row carries and how its rows coalesce.

One place says what an outbox row is (issue 30, item 1): its kind, its payload as a
read-only pydantic model, how its rows coalesce, and which functions of a command make
the rows (the route of events, the derivers, the bundlers). Which lane a kind waits in
and who delivers it are the Discord layer's (cogs/delivery/catalogue.py, checked against this
table when it is imported). The stored format is the one rows always had: the models
read it (extra keys ignored, so rows written by older versions still read) and never
write it, so nonces, ordinals and payloads stay as they were.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from core.game.commands import Command
from core.game.events import Audience, Event
from core.game.state import GameState
from core.sight.destinations import SIGNUP_EVENTS as SIGNUP_EVENTS
from core.sight.destinations import Where, destination
from core.sight.destinations import of as destination_of
from core.sight.places import CLOSE_KIND as CLOSE_KIND
from core.sight.places import PING_KIND as PING_KIND
from core.sight.places import PLACE_KIND as PLACE_KIND
from core.sight.places import SILENCE_KIND as SILENCE_KIND
from core.sight.places import outbox_rows as places_rows
from core.sight.tallies import LISTED_EVENTS, tally_outbox
from core.sight.tallies import TALLY_KIND as TALLY_KIND
from core.sight.visibility import LiveTally, RecordCount

EVENT_KIND = "event"  # an engine event (a post in the game channel, a team's, the desk's)
SIGNUP_POST = "signup_post"  # /game create: post the signup board
SIGNUP_REFRESH = "signup"  # re-render the signup board (rows of older versions only)


Rows = list[tuple[str, dict[str, Any]]]
OutboxDeriver = Callable[[GameState, GameState, list[Event]], Rows]
Bundler = Callable[[Command, GameState, GameState, list[Event]], tuple[Rows, Rows]]


class Payload(BaseModel):
    """A row's payload as read: frozen, and blind to keys it does not know (a row
    stored by another version still reads)."""

    model_config = ConfigDict(frozen=True, extra="ignore")


class EventPayload(Payload):
    seq: int
    event: Event
    answered: bool = False  # held for its command's own reply (core/storage/commit.py)
    reply: str | None = None  # that reply's own identity (its interaction's id)
    files: list[dict[str, Any]] = Field(default_factory=list)  # core.sight.record.files_for
    count: RecordCount | None = None  # the day's count a vote's record shows


class EventHead(Payload):
    """Just what decides an event row's lane and gathering (read for every row)."""

    class Head(Payload):
        kind: str = ""
        audience: Audience = Field(default_factory=Audience)

    seq: int | None = None
    event: Head = Field(default_factory=Head)


class TallyPayload(Payload):
    op: Literal["open", "edit", "close"]
    coalesce: str  # core.sight.tallies.message_key: one key per day's message
    tally: LiveTally


class PlacePayload(Payload):
    seq: int
    seat: int
    uid: int
    events: list[Event] = Field(default_factory=list)
    add: list[int] = Field(default_factory=list)
    remove: list[int] = Field(default_factory=list)


class PingPayload(Payload):
    seq: int | None = None
    create: bool = False
    add: list[int] = Field(default_factory=list)
    remove: list[int] = Field(default_factory=list)


class SilencePayload(Payload):
    seq: int | None = None
    mute: list[int] = Field(default_factory=list)
    unmute: list[int] = Field(default_factory=list)


class ClosePayload(Payload):
    seq: int | None = None


class Empty(Payload):
    """A row whose kind says everything (the board's post, its refresh)."""


class Coalescing(StrEnum):
    NONE = "none"  # every row is delivered on its own
    BUNDLED = "bundled per command"  # one command's rows as one message (same `seq`)
    GATHERED = "gathered by window"  # the desk's and a team's lines (cogs/delivery/gathering.py)
    SUPERSEDE = "supersede by key"  # a later row of the same `coalesce` key drops it
    LATEST = "latest only"  # a run of such rows is one re-render: the last


@dataclass(frozen=True)
class Kind:
    name: str
    payload: type[Payload]
    coalescing: tuple[Coalescing, ...]
    what: str

    def read(self, payload: dict[str, Any]) -> Payload:
        return self.payload.model_validate(payload)


KINDS: dict[str, Kind] = {k.name: k for k in (
    Kind(EVENT_KIND, EventPayload, (Coalescing.BUNDLED, Coalescing.GATHERED,
                                    Coalescing.LATEST),
         "an engine event: a public post, a team's line, the desk's line"),
    Kind(TALLY_KIND, TallyPayload, (Coalescing.SUPERSEDE,), "the day's live vote count"),
    Kind(PLACE_KIND, PlacePayload, (Coalescing.NONE,),
         "one seat's news of one command, in its private place"),
    Kind(PING_KIND, PingPayload, (Coalescing.NONE,), "who holds the game's ping role"),
    Kind(SILENCE_KIND, SilencePayload, (Coalescing.NONE,),
         "who may (no longer) post in the game channel"),
    Kind(CLOSE_KIND, ClosePayload, (Coalescing.NONE,),
         "the end: team channels archived, places locked, the ping role deleted"),
    Kind(SIGNUP_POST, Empty, (Coalescing.NONE,), "post the signup board"),
    Kind(SIGNUP_REFRESH, Empty, (Coalescing.LATEST,), "re-render the signup board"),
)}


def routed(event: Event) -> bool:
    """Which events become EVENT_KIND rows: every public one (a vote's record too: the
    outbox posts it if the reply fails), every team one, every one for the master's
    desk. Player notes reach the places through PLACE_KIND rows; LISTED_EVENTS show
    on the live list (core.sight.tallies)."""
    return destination_of(event).where is not Where.PLACES \
        and event.kind not in LISTED_EVENTS


#: what a command's rows are made of beyond its routed events, in the order they run
DERIVERS: tuple[OutboxDeriver, ...] = (tally_outbox,)  # after the events
BUNDLERS: tuple[Bundler, ...] = (places_rows,)  # around them (before, after)


class Row(Protocol):
    """An outbox row as the catalogue reads it (core.storage.outbox.OutboxEntry)."""

    @property
    def kind(self) -> str: ...

    @property
    def payload(self) -> dict[str, Any]: ...


def head(row: Row) -> EventHead | None:
    """An event row's kind, audience and log number (None for other kinds)."""
    return EventHead.model_validate(row.payload) if row.kind == EVENT_KIND else None


#: an event row's rule, one of its kind's declared ones, by where it goes
EVENT_BATCHING: dict[Where, Coalescing] = {
    Where.GAME: Coalescing.BUNDLED, Where.TEAM_SETUP: Coalescing.BUNDLED,
    Where.PLACES: Coalescing.BUNDLED, Where.SIGNUP: Coalescing.LATEST,
    Where.TEAM: Coalescing.GATHERED, Where.DESK: Coalescing.GATHERED}


def batching(row: Row) -> Coalescing:
    """How a row joins the rows after it, as the catalogue declares for its kind (an
    event row: the one of its kind's rules its destination takes). The worker's batch
    hook applies it (cogs/delivery/deliverer.py `deliver_batch`; SUPERSEDE: the worker itself)."""
    kind = KINDS.get(row.kind)
    if kind is None:
        return Coalescing.NONE  # a row of another version: on its own
    h = head(row)
    if h is None:
        return kind.coalescing[0]
    rule = EVENT_BATCHING[destination(h.event.kind, h.event.audience).where]
    assert rule in kind.coalescing, (row.kind, rule)
    return rule


def latest_only(row: Row) -> bool:
    """A row whose whole delivery is re-rendering the signup board (a run of them is
    one edit: the last)."""
    return batching(row) is Coalescing.LATEST


R = TypeVar("R", bound=Row)


def same_command(rows: Sequence[R]) -> list[R]:
    """The leading event rows written by the same command (same log number): bundled."""
    first = rows[0]
    if first.kind != EVENT_KIND:
        return [first]
    seq = first.payload.get("seq")
    run = [first]
    for row in rows[1:]:
        if row.kind != EVENT_KIND or row.payload.get("seq") != seq:
            break
        run.append(row)
    return run
