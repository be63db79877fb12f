"""Events: what a command changed, addressed to who may see it.

One flat model keeps rendering uniform: the Discord layer renders
`event.<kind>` from the message catalogue with `data` as parameters, and
sends it where `audience` says. Player ids in data are user ids.

`data` is what logs and outbox rows store; readers that need a kind's fields take
them typed with `event.read(Model)` (the models are in core/game/payloads.py), so strict
mypy sees them and a reader that asks the wrong kind fails loudly.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, ClassVar, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from core.game.team import Team


class EventKind(StrEnum):
    """What happened: the message-catalogue key `event.<value>` (core/sight/narrate.py) and the
    form stored in logs and outbox rows, so a value never changes once released."""

    ACTION_FAILED = "action_failed"
    ALARM_CLOCK_USED = "alarm_clock_used"
    ALL_ORDERS_IN = "all_orders_in"
    ANON_POST = "anon_post"
    ANON_SENDER = "anon_sender"
    ARMOUR_SAVED = "armour_saved"
    AWAY_ACK = "away_ack"
    AWAY_NOTED = "away_noted"
    BONUS_GRANTED = "bonus_granted"
    BUY_DONE = "buy_done"
    BUY_FAILED = "buy_failed"
    BUY_ORDERED = "buy_ordered"
    BUY_SKIPPED = "buy_skipped"
    CANCELLED = "cancelled"
    CHECK_RESULT = "check_result"
    CHECKED_IN = "checked_in"
    CHEQUE_BOOK_SAVED = "cheque_book_saved"
    CLAN_ORDER = "clan_order"
    CLAN_TURN = "clan_turn"
    CLAN_KILL_FAILED = "clan_kill_failed"
    CLUB_USED = "club_used"
    COHOST_NAMED = "cohost_named"
    COHOST_REMOVED = "cohost_removed"
    DAY_EXPLAINED = "day_explained"
    DAY_RESULT = "day_result"
    DESK_BUY_FAILED = "desk_buy_failed"
    DESK_BUY_ORDERED = "desk_buy_ordered"
    DESK_BUY_SKIPPED = "desk_buy_skipped"
    DESK_DAY_KICK = "desk_day_kick"
    DESK_HAMMER = "desk_hammer"
    DESK_OPENED = "desk_opened"
    DESK_ORDER = "desk_order"
    DESK_PURCHASE = "desk_purchase"
    DESK_REPLACED = "desk_replaced"
    DESK_SPELL = "desk_spell"
    DESK_SPELL_BLOCKED = "desk_spell_blocked"
    DESK_SIGHT = "desk_sight"
    DESK_STANDBY = "desk_standby"
    EXTENDED = "extended"
    GAME_OVER = "game_over"
    GAME_RESULT = "game_result"
    GAME_STARTED = "game_started"
    GHOST_EXCLUDED = "ghost_excluded"
    HAMMER = "hammer"
    JOINED = "joined"
    KILL_DONE = "kill_done"
    LAST_WORDS = "last_words"
    LAST_WORDS_OPEN = "last_words_open"
    LEFT = "left"
    LOG_INHERITED = "log_inherited"
    LOG_SHARED = "log_shared"
    MASTER_HANDED_OVER = "master_handed_over"
    MATE_DIED = "mate_died"
    MORNING = "morning"
    NIGHT_EXPLAINED = "night_explained"
    OPERATIVE_BENCHED = "operative_benched"
    OPTIONS_SET = "options_set"
    ORDER_ACCEPTED = "order_accepted"
    ORDERS_ALL_IN = "orders_all_in"
    PAYOUTS = "payouts"
    PHASE_STARTED = "phase_started"
    PLAYER_DIED = "player_died"
    PROMOTED = "promoted"
    PROTECTION_USED = "protection_used"
    PUBLIC_MOVE = "public_move"
    PURCHASE = "purchase"
    REMINDED = "reminded"
    REMINDER = "reminder"
    REMINDER_PUBLIC = "reminder_public"
    REPLACED = "replaced"
    ROLE_DEALT = "role_dealt"
    ROLES_SET = "roles_set"
    SEAT_TAKEN = "seat_taken"
    SHOT_DONE = "shot_done"
    SIGHT_ALL = "sight_all"
    SIGHT_THREADS = "sight_threads"
    SPELL_BLOCKED = "spell_blocked"
    SPELL_CAST = "spell_cast"
    SPELL_ON_YOU = "spell_on_you"
    STANDBY_JOINED = "standby_joined"
    STANDBY_LEFT = "standby_left"
    TARGET_GONE = "target_gone"
    TEAM_CHANGED = "team_changed"
    THANKED = "thanked"
    TURN_MISSED = "turn_missed"
    TURN_WARNING = "turn_warning"
    VOTE_CAST = "vote_cast"
    VOTE_MOVED = "vote_moved"
    VOTE_RELEASED = "vote_released"
    VOTE_WITHDRAWN = "vote_withdrawn"
    WHISPER = "whisper"
    WHISPER_SENT = "whisper_sent"
    YOU_DIED = "you_died"


AudienceKind = Literal["public", "players", "team", "master"]


class Audience(BaseModel):
    kind: AudienceKind = "public"
    players: list[int] = Field(default_factory=list)
    team: Team | None = None  # a clan, the police (investigator+operative), the graveyard

    @classmethod
    def public(cls) -> Audience:
        return cls(kind="public")

    @classmethod
    def to(cls, *uids: int) -> Audience:
        return cls(kind="players", players=list(uids))

    @classmethod
    def of_team(cls, team: Team, *uids: int) -> Audience:
        return cls(kind="team", team=team, players=list(uids))

    @classmethod
    def master(cls) -> Audience:
        return cls(kind="master")


class Payload(BaseModel):
    """The typed fields of the kinds in `KINDS`: a read-only view of `Event.data`.
    Unknown keys are ignored and fields added after a release have defaults, so rows
    stored by older versions still read."""

    model_config = ConfigDict(frozen=True, extra="ignore")
    KINDS: ClassVar[frozenset[EventKind]] = frozenset()


P = TypeVar("P", bound=Payload)


class Event(BaseModel):
    kind: EventKind
    audience: Audience = Field(default_factory=Audience.public)
    data: dict[str, Any] = Field(default_factory=dict)
    """The stored form, as the engine emitted it. Reading it by key is the legacy path
    (kept while code written against it is merged): new readers use `read`."""

    def read(self, model: type[P]) -> P:
        """This event's data as `model`, one of core/game/payloads.py: typed for mypy; a
        model of another kind is a programming error (ValueError)."""
        if self.kind not in model.KINDS:
            raise ValueError(f"{model.__name__} does not read {self.kind.value} events")
        return model.model_validate(self.data)

    @property
    def public(self) -> bool:
        return self.audience.kind == "public"


EVENTS_ADAPTER: TypeAdapter[list[Event]] = TypeAdapter(list[Event])
