"""Commands: the only way a game changes. Stored verbatim, replayed from the seed."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, Field, TypeAdapter

MAX_TEXT = 1500


class _Cmd(BaseModel):
    by: int  # the Discord user id (or 0 for the scheduler)
    at: datetime  # stamped by the service; the engine never reads a clock
    admin: bool = False  # caller holds the guild's "Manage Server": counts as master
    # Wallet balances of the game's players, stamped by the service in currency
    # games so the engine can refuse what a player cannot pay.
    funds: dict[int, int] = Field(default_factory=dict)
    # The phase the sender was looking at (GameState.serial, GameState.number), when the
    # Discord layer knows it: a phase-bound command that arrives after that phase ended
    # is refused (`phase_ended`) instead of counting in the next phase.
    seen: tuple[int, int] | None = None

    def reads_funds(self) -> bool:
        """Whether the engine may look at `funds` (the service reads wallets only then)."""
        return False



# Commands whose meaning depends on the phase the sender was looking at: a vote, a night
# order (given by night, or by day for the coming night), a check-in, a purchase (an
# order by day, a purchase by night), the master's "end this phase" or "extend it".
PHASE_BOUND = frozenset({"vote", "unvote", "night", "checkin", "buy", "cast", "advance",
                         "extend"})


def stamped(command: Command, seen: tuple[int, int] | None) -> Command:
    """`command` carrying the phase its sender saw (`_Cmd.seen`) when its meaning depends
    on it (PHASE_BOUND): the Discord layer stamps what it looked up for the interaction."""
    if seen is None or command.kind not in PHASE_BOUND:
        return command
    return command.model_copy(update={"seen": seen})

class Join(_Cmd):
    kind: Literal["join"] = "join"
    name: str = Field(min_length=1, max_length=100)
    bot: bool = False  # the member is a bot account: bots never take a seat
    handle: str | None = Field(default=None, max_length=100)  # the user's unique name
    # What his Discord rights show him of the private places (core.game.access.Sight).
    sight: Literal["none", "threads", "all"] = "none"


class Leave(_Cmd):
    kind: Literal["leave"] = "leave"


class Configure(_Cmd):
    kind: Literal["configure"] = "configure"
    roles: str = Field(max_length=MAX_TEXT)


class SetOptions(_Cmd):
    """Master options (RULES.md), changeable until the start."""

    kind: Literal["options"] = "options"
    changes: dict[str, bool | int | str] = Field(default_factory=dict)


class Start(_Cmd):
    kind: Literal["start"] = "start"
    confirm: bool = False  # the master accepts a likely lopsided composition
    # What each seated player's Discord rights show him of the others' places, worked out
    # by the Discord layer at the start; the master must accept any but "none".
    sights: dict[int, Literal["none", "threads", "all"]] = Field(default_factory=dict)
    confirm_sight: bool = False


class Cancel(_Cmd):
    kind: Literal["cancel"] = "cancel"


class CheckIn(_Cmd):
    kind: Literal["checkin"] = "checkin"


class Vote(_Cmd):
    kind: Literal["vote"] = "vote"
    target: int
    shout: bool = False  # spell "Shout" (shop module): adds the base weight

    def reads_funds(self) -> bool:
        return self.shout


class Buy(_Cmd):
    """Buy an item (evening), or order it during the day, optionally 'if X is hanged'."""

    kind: Literal["buy"] = "buy"
    item: str = Field(max_length=40)
    against: str | None = Field(default=None, max_length=40)  # protection: attacker kind
    if_hanged: int | None = None
    unless_hanged: int | None = None  # "if X is not hanged"
    if_nobody_hanged: bool = False

    def reads_funds(self) -> bool:
        return True


class Cast(_Cmd):
    kind: Literal["cast"] = "cast"
    spell: str = Field(max_length=40)
    target: int
    if_hanged: int | None = None
    unless_hanged: int | None = None
    if_nobody_hanged: bool = False

    def reads_funds(self) -> bool:
        return True


class Unvote(_Cmd):
    kind: Literal["unvote"] = "unvote"


class NightOrder(_Cmd):
    kind: Literal["night"] = "night"
    target: int
    fallback: int | None = None
    story: str | None = Field(default=None, max_length=MAX_TEXT)


class Share(_Cmd):
    kind: Literal["share"] = "share"
    note: str | None = Field(default=None, max_length=MAX_TEXT)


class Away(_Cmd):
    kind: Literal["away"] = "away"
    reason: str | None = Field(default=None, max_length=300)
    until: int | None = Field(default=None, ge=0, le=1000)  # the last day (turn) covered


class OccultExclude(_Cmd):
    kind: Literal["occult_exclude"] = "occult_exclude"
    target: int


class Advance(_Cmd):
    """End the current phase: by the master, or by the scheduler at the deadline (by=0)."""

    kind: Literal["advance"] = "advance"
    deadline: bool = False

    def reads_funds(self) -> bool:
        return True


class Remind(_Cmd):
    """Remind every living player who still owes his turn: by the scheduler before the
    deadline (by=0, once per deadline), or at once by the master (/master prod)."""

    kind: Literal["remind"] = "remind"
    scheduled: bool = False


class Extend(_Cmd):
    kind: Literal["extend"] = "extend"
    minutes: int = Field(ge=1, le=14 * 24 * 60)


class Kick(_Cmd):
    kind: Literal["kick"] = "kick"
    target: int


class Replace(_Cmd):
    """A substitute takes a seat; without `new`, the first on the standby list."""

    kind: Literal["replace"] = "replace"
    old: int
    new: int | None = None
    name: str | None = Field(default=None, min_length=1, max_length=100)
    bot: bool = False  # the substitute is a bot account: refused
    handle: str | None = Field(default=None, max_length=100)
    new_admin: bool = False  # the substitute may use the master's tools (Manage Server)
    new_sight: Literal["none", "threads", "all"] = "none"  # core.game.access.Sight


class Standby(_Cmd):
    """/game standby during a game: put oneself on (or take oneself off) the standby list."""

    kind: Literal["standby"] = "standby"
    name: str = Field(min_length=1, max_length=100)
    bot: bool = False  # a bot account: bots never stand by for a seat
    handle: str | None = Field(default=None, max_length=100)  # the user's unique name
    sight: Literal["none", "threads", "all"] = "none"  # core.game.access.Sight


class Host(_Cmd):
    """A read-only master tool (/master log) used by a stand-in host: written down so that
    he is never seated in this game (core.game.access.seat_refusal)."""

    kind: Literal["host"] = "host"


class Cohost(_Cmd):
    """/master cohost add|remove|handover (RULES.md §8, "The co-host"). `left`: the
    Discord layer found the master no longer a member of the server (the co-host's
    handover, which only then is his to make)."""

    kind: Literal["cohost"] = "cohost"
    action: Literal["add", "remove", "handover"]
    target: int | None = None
    bot: bool = False  # the named member is a bot account
    left: bool = False


class Sight(_Cmd):
    """A seated player's Discord rights were seen to show him more of the other seats'
    places than the table was told (a role given during the game): tell it."""

    kind: Literal["sight"] = "sight"
    sight: Literal["threads", "all"]


class Spectate(_Cmd):
    """/game spectate: follow the game without a seat (RULES.md, "Spectators")."""

    kind: Literal["spectate"] = "spectate"
    name: str = Field(min_length=1, max_length=100)
    bot: bool = False
    handle: str | None = Field(default=None, max_length=100)


class Bonus(_Cmd):
    """The master's bonus: public now, or secret until the game ends."""

    kind: Literal["bonus"] = "bonus"
    target: int
    amount: int = Field(ge=1, le=1000)
    reason: str = Field(min_length=1, max_length=300)
    secret: bool = False


class Thank(_Cmd):
    """After the game: +1 lira to the master from thin air, plus a premium from the wallet."""

    kind: Literal["thank"] = "thank"
    premium: int = Field(default=0, ge=0, le=100_000)

    def reads_funds(self) -> bool:
        return True


class Anon(_Cmd):
    """Module "Cryptography": an open post signed with any role of the game, or nothing."""

    kind: Literal["anon"] = "anon"
    text: str = Field(min_length=1, max_length=MAX_TEXT)
    signature: str | None = Field(default=None, max_length=40)


class Whisper(_Cmd):
    kind: Literal["whisper"] = "whisper"
    role: str = Field(max_length=40)
    text: str = Field(min_length=1, max_length=MAX_TEXT)
    signature: str | None = Field(default=None, max_length=40)


LAST_WORDS_MAX = 500  # characters: a farewell, not a second day


class LastWords(_Cmd):
    """House option: the one message a player killed at night leaves (RULES.md §4)."""

    kind: Literal["last_words"] = "last_words"
    text: str = Field(min_length=1, max_length=LAST_WORDS_MAX)


class Reveal(_Cmd):
    """A public move: the caller's latest check is announced to everybody."""

    kind: Literal["reveal"] = "reveal"


Command = Annotated[
    Join
    | Leave
    | Configure
    | SetOptions
    | Start
    | Cancel
    | CheckIn
    | Vote
    | Unvote
    | NightOrder
    | Share
    | Away
    | OccultExclude
    | Advance
    | Remind
    | Extend
    | Kick
    | Replace
    | Standby
    | Spectate
    | Bonus
    | Thank
    | Buy
    | Cast
    | Anon
    | Whisper
    | Reveal
    | LastWords
    | Host
    | Cohost
    | Sight,
    Field(discriminator="kind"),
]

COMMAND_ADAPTER: TypeAdapter[Command] = TypeAdapter(Command)
