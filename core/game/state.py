"""Game state as pydantic models: everything the rules need, nothing Discord.

The state is the single source of truth; it is stored as JSON and rebuilt
exactly by replaying the command log from the seed.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, Field

from core.game.roles import Action, Role, Side, info
from core.game.team import Team, TeamKind


class PhaseKind(StrEnum):
    SIGNUP = "signup"
    DAY = "day"
    NIGHT = "night"
    ENDED = "ended"
    CANCELLED = "cancelled"


class Options(BaseModel):
    """Per-game switches: the modules and every master option of RULES.md."""

    extra_roles: bool = False
    currency: bool = False
    shop: bool = False
    crypto: bool = False
    day_minutes: int = Field(default=24 * 60, ge=1, le=14 * 24 * 60)
    night_minutes: int = Field(default=12 * 60, ge=1, le=14 * 24 * 60)
    reveal_roles: bool = True
    votes_final: bool = False
    bouncer_self: bool = True
    dead_write: bool = False
    # The dead may still write in the game channel (and its threads, their places
    # included); off: the dead are silent there for the rest of the game (RULES.md §3).
    dead_public: bool = False
    public_moves: bool = False
    master_sees_anon: bool = False
    master_reads_teams: bool = False  # the master reads the team channels (never writes)
    archive_channels: bool = True
    graveyard: bool = False
    # The sergeant shares the police channel from the start (he then knows the
    # investigator); off by default: "Следователь знает сержанта" is one way.
    sergeant_in_police: bool = False
    # The investigator's whole check log passes to the new investigator when he leaves
    # the game; off: only what he chose to send with /share.
    inherit_checks: bool = True
    open_team_channels: bool = True  # after the end, every player reads the team channels
    language: str = "ru"
    # Reminders before each deadline, this many minutes ahead (0: none); see
    # core/game/rules/owing.py.
    reminder_minutes: int = Field(default=60, ge=0, le=14 * 24 * 60)
    # The night ends as soon as every living player with a move has given his orders.
    early_night: bool = False
    # Spectators also read the team channels (clans, police), never writing (RULES.md,
    # "Spectators"); off: the dead players' channel only.
    spectators_see_teams: bool = False
    # A player removed for missed turns or by the master still shares the victory prize
    # like a killed winner; off: the removal, a sanction, costs him his share (RULES.md §9).
    removed_prize: bool = False
    # Addition (RULES.md §4, "The hammer"): the day ends as soon as the living voters'
    # votes against one player are more than half the living weight; with
    # `hammer_confirm` the master is told instead and ends it with /master advance.
    hammer: bool = False
    hammer_confirm: bool = False
    # Addition (RULES.md §4, "Last words"): a player killed at night may post one
    # message within this many minutes of the morning; 0: off.
    last_words_minutes: int = Field(default=0, ge=0, le=24 * 60)
    # Not the master's: on for every game created since deadlines were spread within
    # their minute (core/game/rules/deadlines.py); off, an older game's exact deadlines.
    spread_deadlines: bool = False


DeathCause = Literal["hanged", "killed", "inactive", "kicked", "gas_chamber", "spiked"]


class Death(BaseModel):
    cause: DeathCause
    phase: PhaseKind
    number: int
    by: list[int] = Field(default_factory=list)  # players credited with the kill


class Notice(BaseModel):
    """A private result kept on the player's card (check results, failures)."""

    kind: str
    night: int
    data: dict[str, int | str | None] = Field(default_factory=dict)


class TurnMark(BaseModel):
    """One turn of one player: a day and the night after it (day 0 with night 0 is turn 0)."""

    serial: int  # the turn's number (= its day's number)
    missed: bool
    excused: bool = False


class Player(BaseModel):
    uid: int
    name: str
    handle: str | None = None  # the user's unique name: tells apart look-alike names
    role: Role | None = None
    clan: int | None = None
    rank: int | None = None  # number inside the clan (mafiosi only)
    alive: bool = True
    death: Death | None = None
    checked_in: bool = False
    turns: list[TurnMark] = Field(default_factory=list)
    away_until: int | None = None  # the last turn (day number) a warning covers
    away_reason: str | None = None
    notices: list[Notice] = Field(default_factory=list)

    @property
    def side(self) -> Side | None:
        return info(self.role).side if self.role else None

    @property
    def team(self) -> Team | None:
        """Who he wins with: his clan for a negative, else his side."""
        if self.role is None:
            return None
        if self.side is Side.NEGATIVE:
            return Team.clan(self.clan) if self.clan is not None else None
        return Team.of(TeamKind(str(self.side)))


class Clan(BaseModel):
    number: int
    next_rank: int = 1  # rotation pointer: the lowest rank that may act next
    acting: int | None = None  # uid of the mafioso acting in the current/coming night


class Standby(BaseModel):
    """Somebody ready to take a seat: /game standby during a game."""

    uid: int
    name: str
    handle: str | None = None  # the user's unique name (look-alike names)


class Spectator(BaseModel):
    """A member following the game without a seat (/game spectate): never seated."""

    uid: int
    name: str
    handle: str | None = None


class VoteMark(BaseModel):
    """One entry of the day's vote log; the tie-break replays it."""

    seq: int
    voter: int
    target: int | None  # None: the vote was withdrawn
    shouts: int = 0
    void: bool = False  # cancelled by a spell (shop module)
    at: datetime | None = None  # when it was sent: the vote cooldown reads it


class Order(BaseModel):
    actor: int
    action: Action
    target: int
    fallback: int | None = None
    story: str | None = None
    night: int
    slot: int = 0  # 0, or 1 for the second move of Doubling
    seq: int


class DayRecord(BaseModel):
    """What each day left behind; payouts and the log read it."""

    number: int
    votes: dict[int, int] = Field(default_factory=dict)  # voter -> target, final
    weights: dict[int, int] = Field(default_factory=dict)  # voter -> weight in halves
    tally: dict[int, int] = Field(default_factory=dict)  # target -> halves
    hanged: int | None = None
    tied: list[int] = Field(default_factory=list)
    decider: int | None = None  # voter whose vote broke the tie


class Bonus(BaseModel):
    uid: int
    amount: int
    reason: str
    secret: bool = False


class Payout(BaseModel):
    """One line of the post-game table; `reason` is a catalogue key suffix."""

    uid: int
    amount: int
    reason: str
    count: int = 1


class Item(BaseModel):
    kind: str  # protection, alarm_clock, cheque_book, spiked_club
    against: str | None = None  # protection: 'mafia:N', 'killer', 'operative', 'bouncer'


class SpellCast(BaseModel):
    """A spell cast: a day spell's `number` is the day it acts on, a night spell's the
    night; `turn` is the turn it was cast in (day N and night N are turn N, RULES.md §6),
    which Silence's limit and the Alarm clock count by. None in games stored before it:
    read as `number` (shop.cast_turn)."""

    spell: str
    caster: int
    target: int
    phase: PhaseKind
    number: int
    seq: int
    turn: int | None = None


class PendingBuy(BaseModel):
    """A purchase ordered during the day, carried out in the evening (after the lynch)."""

    uid: int
    what: str  # an item or a night spell
    against: str | None = None
    target: int | None = None
    if_hanged: int | None = None
    unless_hanged: int | None = None  # "if X is not hanged"
    if_nobody_hanged: bool = False
    day: int
    seq: int


class GameState(BaseModel):
    seed: int
    title: str
    plot: str = ""
    master: int
    options: Options = Field(default_factory=Options)
    roles_text: str | None = None
    players: list[Player] = Field(default_factory=list)
    clans: list[Clan] = Field(default_factory=list)
    phase: PhaseKind = PhaseKind.SIGNUP
    number: int = 0
    serial: int = 0  # counts phase changes; turns are identified by it
    deadline: datetime | None = None
    opened: datetime | None = None  # when the current phase began
    reminded: datetime | None = None  # the deadline the last scheduled reminder was for
    seq: int = 0  # counts accepted commands; orders the vote log
    vote_log: list[VoteMark] = Field(default_factory=list)
    orders: list[Order] = Field(default_factory=list)
    covered: dict[int, list[int]] = Field(default_factory=dict)  # bouncer -> players
    occult_excluded: list[int] = Field(default_factory=list)
    operative_bad_kills: dict[int, int] = Field(default_factory=dict)
    operative_benched: dict[int, int] = Field(default_factory=dict)  # uid -> night lost
    days: list[DayRecord] = Field(default_factory=list)
    promoted: list[int] = Field(default_factory=list)  # sergeants who became investigator
    last_words: dict[int, datetime] = Field(default_factory=dict)  # uid -> window's end
    took_part: list[int] = Field(default_factory=list)  # voted (checked in) on this turn's day
    saves: list[tuple[int, int]] = Field(default_factory=list)  # (saver, saved)
    winners: list[Team] = Field(default_factory=list)
    draw: bool = False
    standby: list[Standby] = Field(default_factory=list)  # substitutes, in order of sign-up
    spectators: list[Spectator] = Field(default_factory=list)  # in order of arrival
    # Members other than the master who used this game's master tools: never seated.
    hosts: list[int] = Field(default_factory=list)
    # The master's co-host (/master cohost add): every master tool, never a seat; he
    # becomes the master at a handover or when the master leaves the server.
    cohost: int | None = None
    # Members who left a seat of the dealt game (replaced): they knew a role, so they
    # never host it (a co-host "is never seated and never was").
    former: list[int] = Field(default_factory=list)
    # Seated players whose Discord rights show them other seats' places, as the table
    # was told ("threads" or "all", core.game.access.Sight).
    sight: dict[int, str] = Field(default_factory=dict)
    # --- module "Currency" ---------------------------------------------------
    bonuses: list[Bonus] = Field(default_factory=list)
    payouts: list[Payout] = Field(default_factory=list)
    spent: dict[int, int] = Field(default_factory=dict)  # lira spent in this game
    thanked: list[int] = Field(default_factory=list)
    # --- module "Inventory and spells" ----------------------------------------
    inventory: dict[int, list[Item]] = Field(default_factory=dict)
    spells: list[SpellCast] = Field(default_factory=list)
    pending: list[PendingBuy] = Field(default_factory=list)
    armour: dict[int, list[str]] = Field(default_factory=dict)  # protections bought, by kind
    helpless: dict[int, int] = Field(default_factory=dict)  # uid -> night it blocks
    doubled: dict[int, int] = Field(default_factory=dict)  # uid -> night with two moves
    wrecking: dict[int, int] = Field(default_factory=dict)  # Destruction: uid -> night
    # --- module "Cryptography" --------------------------------------------------
    posts: list[tuple[int, int, datetime]] = Field(default_factory=list)  # (uid, serial, at)

    # --- lookups ---------------------------------------------------------
    def player(self, uid: int) -> Player | None:
        for p in self.players:
            if p.uid == uid:
                return p
        return None

    def living(self) -> list[Player]:
        return [p for p in self.players if p.alive]

    def with_role(self, role: Role, *, alive: bool = True) -> list[Player]:
        return [p for p in self.players if p.role is role and (p.alive or not alive)]

    def spectating(self, uid: int) -> bool:
        return any(s.uid == uid for s in self.spectators)

    def clan_members(self, clan: int) -> list[Player]:
        return [p for p in self.players if p.clan == clan]

    @property
    def started(self) -> bool:
        return self.phase not in (PhaseKind.SIGNUP,)

    @property
    def over(self) -> bool:
        return self.phase in (PhaseKind.ENDED, PhaseKind.CANCELLED)
