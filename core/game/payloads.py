"""Typed payloads of the event kinds the surface reads: `event.read(Morning).victims`.

Each model names the kinds it reads (`KINDS`) and only the fields readers use; the
stored `Event.data` is unchanged, so logs and outbox rows of older versions read as
before (a field added later has the default the readers assumed for its absence).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from core.game.events import Event, EventKind, Payload
from core.game.events import EventKind as K
from core.game.team import Team


class Row(BaseModel):
    """A row inside a payload (a victim, a check, a payout line)."""

    model_config = ConfigDict(frozen=True, extra="ignore")


class PhaseStarted(Payload):
    KINDS = frozenset({K.PHASE_STARTED})
    phase: str
    number: int
    deadline: str

    @property
    def day(self) -> bool:
        return self.phase == "day"


class Reminder(Payload):
    """A reminder to one player, its public form, and the master's list of who owes."""

    KINDS = frozenset({K.REMINDER, K.REMINDER_PUBLIC, K.REMINDED})
    what: str
    owing: list[int] = Field(default_factory=list)
    away: list[int] = Field(default_factory=list)  # owing, but excused by /away: not reminded


class Victim(Row):
    uid: int
    role: str | None = None  # None: the role is not revealed


class Morning(Payload):
    KINDS = frozenset({K.MORNING})
    victims: list[Victim]
    removed: list[Victim] = Field(default_factory=list)
    left: list[int] = Field(default_factory=list)
    stories: list[str] = Field(default_factory=list)


class DayResult(Payload):
    KINDS = frozenset({K.DAY_RESULT})
    number: int
    tally: dict[int, int]  # target -> half votes (JSON keys are strings: read back as ints)
    hanged: int | None = None
    tied: list[int] = Field(default_factory=list)  # who tied for the most votes


class RoleRow(Row):
    uid: int
    role: str
    alive: bool
    winner: bool


class GameOver(Payload):
    KINDS = frozenset({K.GAME_OVER})
    winners: list[Team]
    draw: bool
    roles: list[RoleRow]


class GameResult(Payload):
    KINDS = frozenset({K.GAME_RESULT})
    draw: bool
    won: bool


class YouDied(Payload):
    KINDS = frozenset({K.YOU_DIED})
    cause: str
    ghost: bool = False
    graveyard: bool = False


class Composition(Payload):
    """The roles of a game as (role, count, clan) rows, announced at start or setup."""

    KINDS = frozenset({K.GAME_STARTED, K.ROLES_SET})
    composition: list[tuple[str, int, int | None]]


class RolesSet(Composition):
    KINDS = frozenset({K.ROLES_SET})
    size: int
    signed_up: int
    lopsided: bool
    negatives: int
    players: int


class Check(Row):
    target: int
    role: str | None


class CheckLog(Payload):
    """The investigator's checks, shared with the sergeants or inherited by one."""

    KINDS = frozenset({K.LOG_SHARED, K.LOG_INHERITED})
    checks: list[Check]
    note: str = ""


class TeamChanged(Payload):
    KINDS = frozenset({K.TEAM_CHANGED})
    team: Team
    members: list[int]
    writers: list[int] = Field(default_factory=list)
    left: list[int] = Field(default_factory=list)  # who lost the channel (a replaced player)


class PayoutLine(Row):
    uid: int
    reason: str
    count: int = 1
    amount: int


class BonusLine(Row):
    uid: int
    amount: int
    reason: str
    secret: bool = False


class Payouts(Payload):
    KINDS = frozenset({K.PAYOUTS})
    lines: list[PayoutLine]
    bonuses: list[BonusLine] = Field(default_factory=list)


class VoteCast(Payload):
    """Old logs without shout, again or ghost read as plain votes."""

    KINDS = frozenset({K.VOTE_CAST})
    shout: bool = False
    again: bool = False
    ghost: bool = False


class ClanTurn(Payload):
    KINDS = frozenset({K.CLAN_TURN})
    actor: int
    passed: int | None = None


class ClanOrder(Payload):
    """The clan's line for a kill order; `replaced`: it voids the actor's earlier order
    of the night (a re-sent /night), absent in rows older than issue 40."""

    KINDS = frozenset({K.CLAN_ORDER})
    replaced: bool = False


class BuyDone(Payload):
    KINDS = frozenset({K.BUY_DONE})
    if_hanged: int | None = None
    unless_hanged: int | None = None


class ClanKillFailed(Payload):
    KINDS = frozenset({K.CLAN_KILL_FAILED})
    gone: bool = False


class Thanked(Payload):
    KINDS = frozenset({K.THANKED})
    premium: int = 0  # lira given on top of the thanks


class TurnMissed(Payload):
    """The master's note of a missed turn, and the player's warning."""

    KINDS = frozenset({K.TURN_MISSED, K.TURN_WARNING})
    excused: bool = False
    removed: bool = False


class PlayerDied(Payload):
    KINDS = frozenset({K.PLAYER_DIED})
    uid: int
    role: str | None = None  # None: the role is not revealed
    cause: str  # what makes the verb: "По итогам дня повешен игрок @X"


class AnonPost(Payload):
    KINDS = frozenset({K.ANON_POST})
    text: str
    signature: str | None = None


class Extended(Payload):
    KINDS = frozenset({K.EXTENDED})
    deadline: str
    minutes: int


class Replaced(Payload):
    """A seat handed over: `new` took `old`'s place (the public announcement)."""

    KINDS = frozenset({K.REPLACED})
    old: int
    new: int


class OrderAccepted(Payload):
    KINDS = frozenset({K.ORDER_ACCEPTED})
    action: str
    target: int
    fallback: int | None = None
    night: int
    replaced: bool = False


class CheckResult(Payload):
    KINDS = frozenset({K.CHECK_RESULT})
    night: int
    target: int
    role: str | None


class SpellCast(Payload):
    """A spell cast; a day spell bought in the evening says for which day."""

    KINDS = frozenset({K.SPELL_CAST})
    spell: str
    target: int
    day: int | None = None
    evening: bool = False


class Bought(Payload):
    """An item bought now, or ordered for the evening."""

    KINDS = frozenset({K.PURCHASE, K.BUY_ORDERED})
    item: str
    against: str | None = None


class AwayAck(Payload):
    KINDS = frozenset({K.AWAY_ACK})
    until: int


class Standby(Payload):
    """One joined or left the substitutes: how many wait now."""

    KINDS = frozenset({K.STANDBY_JOINED, K.STANDBY_LEFT})
    count: int


#: Every payload model, by the kinds it reads (tests validate them against played games).
MODELS: tuple[type[Payload], ...] = (
    PhaseStarted, Reminder, Morning, DayResult, GameOver, GameResult, YouDied, Composition,
    RolesSet, CheckLog, TeamChanged, Payouts, VoteCast, ClanTurn, ClanOrder, BuyDone,
    ClanKillFailed, Thanked, TurnMissed, PlayerDied, AnonPost, Extended, Replaced,
    OrderAccepted, CheckResult, SpellCast, Bought, AwayAck, Standby)


def _by_kind() -> dict[EventKind, type[Payload]]:
    """Each kind's model; a kind read by a general model and a narrower one (roles_set:
    Composition and RolesSet) gets the narrower, the one naming fewer kinds."""
    out: dict[EventKind, type[Payload]] = {}
    for model in sorted(MODELS, key=lambda m: -len(m.KINDS)):
        out |= dict.fromkeys(model.KINDS, model)
    return out


#: The model of each kind that has one: `payload(event)` reads through it.
BY_KIND: dict[EventKind, type[Payload]] = _by_kind()


def payload(event: Event) -> Payload | None:
    """The event's typed payload, for a reader matching on it (`case Morning(victims=v)`);
    None for a kind no reader takes fields from."""
    model = BY_KIND.get(event.kind)
    return None if model is None else event.read(model)
