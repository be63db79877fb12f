"""The after-game record: everything the archive shows, taken from the event log.

Pure: given the game's initial state and its log (commands with their events),
it replays the commands once (in place, no copies: they were all accepted) and
keeps what a reader of the archive wants: the feed players saw, each day's
votes and timeline, each night's orders and resolution, the hidden traffic
(whispers, anonymous senders, purchases, spells), payouts and bonuses.
Rendering (HTML, pictures) lives in the top-level `archive` package.

Only a finished game has a record (`finished`): the archive is never built
while a game runs (RULES.md, 'The archive').
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from pydantic import BaseModel, Field

from core.game import commands as c
from core.game.engine import apply_in_place
from core.game.events import Event, EventKind
from core.game.payloads import (
    CheckResult,
    Composition,
    DayResult,
    Extended,
    OrderAccepted,
    PhaseStarted,
    Replaced,
)
from core.game.rules import economy
from core.game.state import Bonus, DayRecord, GameState, Options, Payout, PhaseKind
from core.game.team import Team, TeamKind
from core.sight.timeline import DayTimeline, day_timeline

LogRow = tuple[int, c.Command, list[Event]]


class PlayerRow(BaseModel):
    uid: int
    name: str
    role: str | None
    clan: int | None
    team: str | None
    side: str | None
    alive: bool
    winner: bool
    death_cause: str | None = None
    death_phase: str | None = None
    death_number: int | None = None


class FeedLine(BaseModel):
    """A message the bot posted: in the game channel, or in a team channel (`team`)."""

    seq: int
    at: datetime
    event: Event
    team: str | None = None


class DayArchive(BaseModel):
    number: int
    timeline: DayTimeline
    record: DayRecord | None = None
    decider: int | None = None


class OrderRow(BaseModel):
    seq: int
    at: datetime
    actor: int
    action: str | None
    target: int
    fallback: int | None
    story: str | None
    kept: bool  # False: replaced by a later order, or void at nightfall


class NightArchive(BaseModel):
    number: int
    orders: list[OrderRow] = Field(default_factory=list)
    steps: list[Event] = Field(default_factory=list)  # the resolution, every audience
    checks: list[tuple[int, int, str]] = Field(default_factory=list)  # actor, target, role


class Secret(BaseModel):
    """Hidden traffic: a whisper, an anonymous post, a purchase or a spell."""

    seq: int
    at: datetime
    kind: str  # whisper, anon, buy, cast
    sender: int
    text: str | None = None
    role: str | None = None  # whisper: addressed role
    signature: str | None = None
    what: str | None = None  # buy: item, cast: spell
    target: int | None = None
    against: str | None = None
    if_hanged: int | None = None
    results: list[Event] = Field(default_factory=list)


class PayLine(BaseModel):
    uid: int
    reason: str
    count: int
    unit: int | None  # lira per counted thing, when the line is count × unit
    amount: int
    pool: int | None = None  # prize: the whole prize the share came from
    shares: int | None = None  # prize: among how many winners


class GameRecord(BaseModel):
    title: str
    plot: str
    master: int
    options: Options
    roles_text: str | None
    composition: list[list[object]] = Field(default_factory=list)
    started: datetime | None = None
    ended: datetime | None = None
    names: dict[int, str] = Field(default_factory=dict)
    players: list[PlayerRow] = Field(default_factory=list)
    winners: list[str] = Field(default_factory=list)
    draw: bool = False
    feed: list[FeedLine] = Field(default_factory=list)
    days: list[DayArchive] = Field(default_factory=list)
    nights: list[NightArchive] = Field(default_factory=list)
    secrets: list[Secret] = Field(default_factory=list)
    payouts: list[PayLine] = Field(default_factory=list)
    bonuses: list[Bonus] = Field(default_factory=list)


class NotFinished(ValueError):
    """The archive of a running game was asked for: nothing of it may exist yet."""


def finished(state: GameState) -> bool:
    return state.phase is PhaseKind.ENDED


def times_of(log: Iterable[LogRow]) -> dict[int, datetime]:
    """Vote mark seq -> when it was cast (a mark takes the seq before its command's)."""
    return {seq - 1: cmd.at for seq, cmd, _ in log}


def build(initial: GameState, log: list[LogRow]) -> GameRecord:
    """Replay `log` from `initial` and keep what the archive shows. NotFinished unless the
    log ends the game."""
    replay = _Replay(initial.model_copy(deep=True), times_of(log))
    for seq, cmd, events in log:
        replay.step(seq, cmd, events)
    state = replay.state
    if not finished(state):
        raise NotFinished(state.phase)
    names = replay.names | {p.uid: p.name for p in state.players}
    ended = log[-1][1].at if log else None
    return GameRecord(
        title=state.title, plot=state.plot, master=state.master, options=state.options,
        roles_text=state.roles_text, composition=replay.composition, started=replay.started,
        ended=ended, names=names, players=[_player_row(state, p.uid) for p in state.players],
        winners=list(state.winners), draw=state.draw, feed=replay.feed, days=replay.days,
        nights=replay.nights, secrets=replay.secrets, payouts=pay_lines(state),
        bonuses=list(state.bonuses))


@dataclass
class _Replay:
    """What `build` keeps while it replays the log, one command at a time."""

    state: GameState
    times: dict[int, datetime]
    names: dict[int, str] = field(default_factory=dict)
    feed: list[FeedLine] = field(default_factory=list)
    days: list[DayArchive] = field(default_factory=list)
    nights: list[NightArchive] = field(default_factory=list)
    secrets: list[Secret] = field(default_factory=list)
    orders: dict[int, list[OrderRow]] = field(default_factory=dict)
    deadline: datetime | None = None
    day_start: datetime | None = None
    started: datetime | None = None
    composition: list[list[object]] = field(default_factory=list)

    def step(self, seq: int, cmd: c.Command, events: list[Event]) -> None:
        state = self.state
        closing_day = isinstance(cmd, c.Advance) and state.phase is PhaseKind.DAY \
            and state.number > 0
        closing_night = isinstance(cmd, c.Advance) and state.phase is PhaseKind.NIGHT
        timeline = day_timeline(state, self.times, start=self.day_start,
                                deadline=self.deadline, end=cmd.at) if closing_day else None
        kept = {o.seq for o in state.orders if o.night == state.number} if closing_night \
            else set()
        night_no = state.number
        apply_in_place(state, cmd)
        self.names |= _named(cmd, events, state)
        self._read(seq, cmd, events)
        if timeline is not None:
            record = state.days[-1] if state.days else None
            self.days.append(DayArchive(number=timeline.day, timeline=timeline, record=record,
                                        decider=record.decider if record else None))
        if isinstance(cmd, c.NightOrder):
            self._order(seq, cmd, events, night_no)
        if closing_night:
            self._close_night(night_no, kept, events)
        secret = _secret(seq, cmd, events)
        if secret is not None:
            self.secrets.append(secret)
        elif isinstance(cmd, c.Advance):
            self.secrets += _effects(seq, cmd, events)

    def _read(self, seq: int, cmd: c.Command, events: list[Event]) -> None:
        """The feed players saw, and the moments the timelines need."""
        for event in events:
            if event.audience.kind == "public" or event.audience.kind == "team":
                self.feed.append(FeedLine(seq=seq, at=cmd.at, event=event,
                                          team=event.audience.team))
            if event.kind is EventKind.PHASE_STARTED:
                self.deadline = datetime.fromisoformat(event.read(PhaseStarted).deadline)
                self.day_start = cmd.at
            elif event.kind is EventKind.EXTENDED:
                self.deadline = datetime.fromisoformat(event.read(Extended).deadline)
            elif event.kind is EventKind.GAME_STARTED:
                self.started = cmd.at
                self.composition = [list(r) for r in event.read(Composition).composition]

    def _order(self, seq: int, cmd: c.NightOrder, events: list[Event], night_no: int) -> None:
        accepted = next((e for e in events if e.kind is EventKind.ORDER_ACCEPTED), None)
        order = accepted.read(OrderAccepted) if accepted else None
        night = order.night if order else night_no
        self.orders.setdefault(night, []).append(OrderRow(
            seq=seq - 1, at=cmd.at, actor=cmd.by,
            action=order.action if order else None, target=cmd.target,
            fallback=cmd.fallback, story=cmd.story, kept=False))

    def _close_night(self, night_no: int, kept: set[int], events: list[Event]) -> None:
        rows = self.orders.get(night_no, [])
        for row in rows:
            row.kept = row.seq in kept
        checks = [(o_actor, check.target, str(check.role))
                  for e in events if e.kind is EventKind.CHECK_RESULT
                  for check in [e.read(CheckResult)] for o_actor in e.audience.players]
        self.nights.append(NightArchive(
            number=night_no, orders=rows, checks=checks,
            steps=[e for e in events if e.kind is not EventKind.PHASE_STARTED]))


def timeline_of(initial: GameState, log: list[LogRow], day: int) -> DayTimeline | None:
    """Day `day`'s timeline, replaying only up to its close (for the day's result post:
    nothing later is read). None if that day has not closed in `log`."""
    state = initial.model_copy(deep=True)
    times = times_of(log)
    start: datetime | None = None
    deadline: datetime | None = None
    for _, cmd, events in log:
        if isinstance(cmd, c.Advance) and state.phase is PhaseKind.DAY and state.number == day:
            return day_timeline(state, times, start=start, deadline=deadline, end=cmd.at)
        apply_in_place(state, cmd)
        for event in events:
            if event.kind is EventKind.PHASE_STARTED:
                start = cmd.at
                deadline = datetime.fromisoformat(event.read(PhaseStarted).deadline)
            elif event.kind is EventKind.EXTENDED:
                deadline = datetime.fromisoformat(event.read(Extended).deadline)
    return None


def _named(cmd: c.Command, events: list[Event], state: GameState | None = None
           ) -> dict[int, str]:
    """Names a command gives: a signup, a standby entry, a substitute taking a seat (his
    name as the seat now shows it, when the state after the command is at hand)."""
    if isinstance(cmd, c.Join | c.Standby):
        return {cmd.by: cmd.name}
    if isinstance(cmd, c.Replace):
        for event in events:
            if event.kind is EventKind.REPLACED:
                new = event.read(Replaced).new
                seat = state.player(new) if state is not None else None
                if seat is not None:
                    return {new: seat.name}
                if cmd.name:
                    return {new: cmd.name}
    return {}


def names_of(log: Iterable[LogRow]) -> dict[int, str]:
    """Player names as they signed up (and as substitutes took their seats)."""
    names: dict[int, str] = {}
    for _, cmd, events in log:
        names |= _named(cmd, events)
    return names


TEAM_CHANNELS = frozenset({TeamKind.CLAN, TeamKind.POLICE, TeamKind.OPCOP, TeamKind.GRAVEYARD})


def team_channel_readers(state: GameState, team: str, members: list[int]) -> list[int]:
    """Who may read a private channel once the game is over: with the master option
    `open_team_channels` (default on) every player of a finished game reads the team
    channels (clans, police, investigator and operative, graveyard); else, and for any
    other private channel (the master's desk), and before the end or after a
    cancellation, just its members."""
    if state.phase is PhaseKind.ENDED and state.options.open_team_channels \
            and (parsed := Team.parse(team)) is not None and parsed.kind in TEAM_CHANNELS:
        return sorted({*members, *(p.uid for p in state.players)})
    return list(members)


FILES_KIND_TIMELINE = "timeline"
FILES_KIND_ARCHIVE = "archive"


def files_for(event: Event) -> list[dict[str, int | str]]:
    """Files an announcement carries, built when it is delivered (from committed data):
    a day's result with votes gets its vote timeline, the end of the game the archive."""
    if event.kind is EventKind.DAY_RESULT and event.audience.kind == "public" \
            and (result := event.read(DayResult)).tally:
        return [{"kind": FILES_KIND_TIMELINE, "day": result.number}]
    if event.kind is EventKind.GAME_OVER and event.audience.kind == "public":
        return [{"kind": FILES_KIND_ARCHIVE}]
    return []


def _player_row(state: GameState, uid: int) -> PlayerRow:
    p = state.player(uid)
    assert p is not None
    return PlayerRow(
        uid=p.uid, name=p.name, role=str(p.role) if p.role else None, clan=p.clan,
        team=p.team, side=str(p.side) if p.side else None, alive=p.alive,
        winner=p.team is not None and p.team in state.winners,
        death_cause=p.death.cause if p.death else None,
        death_phase=str(p.death.phase) if p.death else None,
        death_number=p.death.number if p.death else None)


def _secret(seq: int, cmd: c.Command, events: list[Event]) -> Secret | None:
    base = {"seq": seq, "at": cmd.at, "sender": cmd.by}
    if isinstance(cmd, c.Whisper):
        return Secret(kind="whisper", text=cmd.text, role=cmd.role, signature=cmd.signature,
                      results=events, **base)
    if isinstance(cmd, c.Anon):
        return Secret(kind="anon", text=cmd.text, signature=cmd.signature, **base)
    if isinstance(cmd, c.Buy):
        return Secret(kind="buy", what=cmd.item, against=cmd.against, if_hanged=cmd.if_hanged,
                      results=[e for e in events if e.audience.kind != "public"], **base)
    if isinstance(cmd, c.Cast):
        return Secret(kind="cast", what=cmd.spell, target=cmd.target, if_hanged=cmd.if_hanged,
                      results=[e for e in events if e.audience.kind != "public"], **base)
    if isinstance(cmd, c.Vote) and cmd.shout:
        return Secret(kind="shout", target=cmd.target, **base)
    return None


# Shop events a phase's end carries out (evening purchases ordered by day, spells and
# items taking effect): kept with the hidden traffic, addressed to whom they concern.
EFFECTS = frozenset({EventKind.PURCHASE, EventKind.BUY_FAILED, EventKind.BUY_SKIPPED,
                     EventKind.SPELL_CAST, EventKind.SPELL_BLOCKED, EventKind.SPELL_ON_YOU,
                     EventKind.CHEQUE_BOOK_SAVED, EventKind.ALARM_CLOCK_USED,
                     EventKind.ARMOUR_SAVED, EventKind.CLUB_USED})


def _effects(seq: int, cmd: c.Command, events: list[Event]) -> list[Secret]:
    out = []
    for event in events:
        if event.kind not in EFFECTS:
            continue
        uid = event.data.get("uid")
        whom = int(uid) if isinstance(uid, int) else (
            event.audience.players[0] if event.audience.players else 0)
        out.append(Secret(seq=seq, at=cmd.at, kind="effect", sender=whom, results=[event]))
    return out


_UNITS = {"days": 1, "votes": 1, "kills": economy.KILL_BONUS, "saves": economy.SAVE_BONUS}


def pay_lines(state: GameState) -> list[PayLine]:
    """The payouts with the arithmetic behind each line (module "Currency")."""
    if not state.options.currency:
        return []
    winners = len(economy.prize_shares(state))
    out: list[PayLine] = []
    for line in state.payouts:
        out.append(_pay_line(state, line, winners))
    return out


def _pay_line(state: GameState, line: Payout, winners: int) -> PayLine:
    n = len(state.players)
    if line.reason in _UNITS:
        return PayLine(uid=line.uid, reason=line.reason, count=line.count,
                       unit=_UNITS[line.reason], amount=line.amount)
    if line.reason == "prize":
        return PayLine(uid=line.uid, reason="prize", count=1, unit=None, amount=line.amount,
                       pool=economy.PRIZE_PER_PLAYER * n, shares=winners)
    if line.reason == "master":
        return PayLine(uid=line.uid, reason="master", count=n,
                       unit=economy.MASTER_PER_PLAYER, amount=line.amount)
    return PayLine(uid=line.uid, reason=line.reason, count=1, unit=None, amount=line.amount)
