"""What one person may see: the only source the Discord layer renders from.

A player's card holds his own role and results, and the team-mates the rules
let him know (clan, police pairs). The public view holds what everybody may
know. Cogs never read raw state for a player, so a role cannot leak by accident.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from core.game.errors import ErrorCode, RuleError
from core.game.roles import Action, Role, Side, info
from core.game.rules import channels, shop
from core.game.rules import night as night_rules
from core.game.rules.economy import spending_cap
from core.game.rules.owing import owing
from core.game.rules.voting import current_votes, mark_weight, tally, voided
from core.game.rules.weights import ghosts_may_vote
from core.game.state import GameState, Item, Notice, Order, PendingBuy, PhaseKind
from core.text.names import labels


class Mate(BaseModel):
    uid: int
    role: Role | None
    alive: bool


class Card(BaseModel):
    uid: int
    name: str
    alive: bool
    role: Role | None
    side: Side | None
    clan: int | None
    rank: int | None
    teams: list[str] = Field(default_factory=list)
    mates: list[Mate] = Field(default_factory=list)
    night_move: Action | None = None
    moves: int = 0
    first_night: int = 0
    orders: list[Order] = Field(default_factory=list)
    acting_mafioso: int | None = None
    notices: list[Notice] = Field(default_factory=list)
    inventory: list[Item] = Field(default_factory=list)
    pending: list[PendingBuy] = Field(default_factory=list)
    spent: int = 0
    cap: int = 0
    helpless: bool = False
    #: What the card's renderer needs besides the seat: the phase number, whether the
    #: role has a night action at all, and which modules are on.
    number: int = 0
    acts: bool = False
    shop: bool = False
    currency: bool = False
    #: After the end: the card says so, and whether the holder's side won (draw: nobody).
    over: bool = False
    won: bool = False
    draw: bool = False


class Death(BaseModel):
    uid: int
    cause: str
    role: Role | None  # None when roles of the dead are hidden
    number: int
    phase: str


class TallyRow(BaseModel):
    target: int
    halves: int
    voters: list[tuple[int, int, bool]]  # (voter, weight in halves, ghost)


class PublicView(BaseModel):
    title: str
    plot: str
    master: int
    cohost: int | None = None  # the master's co-host (/master cohost), public
    phase: PhaseKind
    number: int
    deadline: datetime | None
    players: list[int]
    names: dict[int, str]
    living: list[int]
    dead: list[Death]
    tally: list[TallyRow] = Field(default_factory=list)
    checked_in: list[int] = Field(default_factory=list)
    winners: list[str] = Field(default_factory=list)
    draw: bool = False
    # the footer "ghost votes weigh half while the occultist lives": as the table knows
    # it, so a hidden occultist's death does not drop it (issue 43)
    ghosts: bool = False
    excluded: list[int] = Field(default_factory=list)
    over: bool = False


def card(state: GameState, uid: int) -> Card:
    p = state.player(uid)
    if p is None:
        raise RuleError(ErrorCode.NOT_A_PLAYER)
    c = Card(uid=uid, name=p.name, alive=p.alive, role=p.role, side=p.side, clan=p.clan,
             rank=p.rank, notices=list(p.notices), number=state.number,
             shop=state.options.shop, currency=state.options.currency)
    if p.role is None:
        return c
    c.teams = [team for team, members in channels.teams(state).items() if uid in members]
    for m in channels.known_to(state, uid):
        q = state.player(m)
        if q is not None:
            c.mates.append(Mate(uid=m, role=q.role, alive=q.alive))
    if state.over:
        c.over, c.draw = True, state.draw
        c.won = p.team in state.winners
    c.first_night = info(p.role).first_night
    c.acts = info(p.role).action is not None
    if state.phase in (PhaseKind.DAY, PhaseKind.NIGHT):
        c.night_move = night_rules.night_action(state, p)
        c.moves = night_rules.moves_allowed(state, p)
        c.orders = [o for o in state.orders if o.actor == uid]
        if p.clan is not None:
            c.acting_mafioso = night_rules.acting_mafioso(state, p.clan)
    if state.options.shop:
        c.inventory = shop.inventory_of(state, uid)
        c.pending = shop.pending_of(state, uid)
        c.helpless = shop.helpless_now(state, uid)
    if state.options.currency:
        c.spent, c.cap = state.spent.get(uid, 0), spending_cap(state)
    return c


def public_cause(cause: str, *, reveal_roles: bool) -> str:
    """A death as everybody may know it: the player's fate, never who or what killed him.
    The spiked club is a night death like any other; the gas chamber is announced as
    such ("под всеобщее улюлюкание") only when the roles of the dead are shown, since it
    names the operative; otherwise it is a night death too (RULES.md §4, §7)."""
    if cause == "spiked":
        return "killed"
    if cause == "gas_chamber" and not reveal_roles:
        return "killed"
    return cause


def public_view(state: GameState) -> PublicView:
    reveal = state.options.reveal_roles or state.over
    dead = [
        Death(uid=p.uid, cause=public_cause(p.death.cause, reveal_roles=reveal),
              role=p.role if reveal else None,
              number=p.death.number, phase=str(p.death.phase))
        for p in state.players if p.death is not None
    ]
    view = PublicView(
        title=state.title, plot=state.plot, master=state.master, cohost=state.cohost,
        phase=state.phase,
        number=state.number, deadline=state.deadline,
        players=[p.uid for p in state.players], names={p.uid: p.name for p in state.players},
        living=[p.uid for p in state.living()], dead=dead, winners=state.winners,
        draw=state.draw, excluded=list(state.occult_excluded), over=state.over,
        ghosts=ghosts_may_vote(state),
    )
    if state.phase is PhaseKind.DAY and state.number == 0:
        view.checked_in = [p.uid for p in state.players if p.checked_in]
    if state.phase is PhaseKind.DAY and state.number > 0:
        view.tally = tally_rows(state)
    return view


def player_labels(state: GameState, shown: dict[int, str] | None = None) -> dict[int, str]:
    """How to list the game's players for choosing (vote menu, autocomplete): the name
    shown (`shown`, e.g. current display names, else the name at signup), with the
    unique name added where two look alike (core.text.names.labels)."""
    names = {p.uid: (shown or {}).get(p.uid, p.name) for p in state.players}
    return labels(names, {p.uid: p.handle for p in state.players if p.handle})


def living_choices(state: GameState) -> list[tuple[int, str]]:
    """The living players with their labels, in seat order: the day's vote menu."""
    shown = player_labels(state)
    return [(p.uid, shown[p.uid]) for p in state.living()]


def tally_rows(state: GameState, *, spells: bool = False) -> list[TallyRow]:
    """The day's tally in hanging order, with each standing vote and its weight. While
    the day runs the town's count leaves Sleep and Silence out: their effect shows at
    the day's result (`spells=True`, RULES.md "When a spell shows")."""
    t = tally(state, spells=spells)
    void = voided(state) if spells else frozenset()
    standing = current_votes(state)
    # A living target whose every vote weighs nothing (voided by Sleep or Silence, an
    # excluded ghost's) still has his row, at 0, after the counted ones (RULES.md §6):
    # the tally has no count for him, but the votes stand and the voters did vote.
    order = t.order + list(dict.fromkeys(
        m.target for m in sorted(standing.values(), key=lambda m: m.seq)
        if m.target is not None and m.target not in t.totals and _alive(state, m.target)))
    rows = []
    for target in order:
        voters = [
            (m.voter, mark_weight(state, m, void), not _alive(state, m.voter))
            for m in sorted(standing.values(), key=lambda m: m.seq) if m.target == target
        ]
        rows.append(TallyRow(target=target, halves=t.totals.get(target, 0), voters=voters))
    return rows


class TallyVoter(BaseModel):
    uid: int
    halves: int  # what the vote weighs now (0: it does not count)
    ghost: bool
    shouts: int = 0


class TallyLine(BaseModel):
    target: int
    halves: int
    voters: list[TallyVoter]


class LiveTally(BaseModel):
    """The public vote count of a voting day: what the live message shows.

    Built from `tally_rows` (the numbers of /votes); who has not voted is public by day.
    A vote that does not count (Sleep, Silence, an excluded ghost) is listed with 0
    and nothing says why (RULES.md, "Live vote count"). Day 0 has the same one message
    as its check-in list (`checkin`): who has checked in, who has not yet (issue 32),
    instead of one post per check-in."""

    number: int
    checkin: bool = False
    checked_in: list[int] = Field(default_factory=list)
    deadline: datetime | None
    rows: list[TallyLine] = Field(default_factory=list)
    not_voted: list[int] = Field(default_factory=list)
    ghosts: bool = False
    closed: bool = False
    hanged: int | None = None
    tied: list[int] = Field(default_factory=list)


def live_tally(state: GameState, *, spells: bool = False) -> LiveTally | None:
    """The running count of a voting day (None outside one); `spells`: as counted at
    the day's result."""
    if state.phase is not PhaseKind.DAY or state.number == 0:
        return None
    standing = current_votes(state)
    rows = [
        TallyLine(target=row.target, halves=row.halves, voters=[
            TallyVoter(uid=v, halves=w, ghost=ghost,
                       shouts=standing[v].shouts if v in standing else 0)
            for v, w, ghost in row.voters])
        for row in tally_rows(state, spells=spells)
    ]
    return LiveTally(number=state.number, deadline=state.deadline, rows=rows,
                     not_voted=owing(state),
                     ghosts=ghosts_may_vote(state))


#: rows a vote's record shows of the count; the rest are counted, not named, so that
#: the line stays short (and within Discord's limits) by construction
RECORD_ROWS = 8


class RecordCount(BaseModel):
    """The day's count as a vote's or a withdrawal's public record carries it (issue 30):
    the counted targets, leaders first (hanging order), as (uid, halves), and how many
    more have counted votes. Votes that count nothing (an excluded ghost's) are left
    out: the live message lists them."""

    rows: list[tuple[int, int]] = Field(default_factory=list)
    more: int = 0


def record_count(state: GameState) -> RecordCount | None:
    """The running count after a command, compact (None outside a voting day)."""
    if state.phase is not PhaseKind.DAY or state.number == 0:
        return None
    counted = [(row.target, row.halves) for row in tally_rows(state) if row.halves > 0]
    return RecordCount(rows=counted[:RECORD_ROWS], more=max(0, len(counted) - RECORD_ROWS))


def checkin_list(state: GameState) -> LiveTally | None:
    """Day 0's public check-in list (None outside day 0), in seat order."""
    if state.phase is not PhaseKind.DAY or state.number != 0:
        return None
    return LiveTally(number=0, deadline=state.deadline, checkin=True,
                     checked_in=[p.uid for p in state.living() if p.checked_in],
                     not_voted=owing(state))


def live_count(state: GameState) -> LiveTally | None:
    """The day's one live message as it stands: the vote count, or day 0's check-in
    list (None at night). A public list or result posted beside it refreshes it first
    (cogs/tally.py `LiveTallies.refresh`)."""
    return live_tally(state) or checkin_list(state)


_count = live_count


def _closed(before: GameState, after: GameState) -> LiveTally | None:
    """The last form of the day `before` was in, once `after` has left it."""
    if after.phase is PhaseKind.DAY and after.number == before.number:
        return None
    last = checkin_list(before)
    if last is None:
        return closed_tally(before, after)
    last.closed, last.not_voted = True, []
    return last


def closed_tally(before: GameState, after: GameState) -> LiveTally | None:
    """The final count of the day `before` was in, once `after` has left it: the last
    running count plus the result (None if `before` was not a voting day, or still is)."""
    last = live_tally(before, spells=True)  # the result: the spells count now
    if last is None or (after.phase is PhaseKind.DAY and after.number == before.number):
        return None
    last.closed, last.not_voted = True, []
    record = next((d for d in after.days if d.number == before.number), None)
    if record is not None:
        last.hanged, last.tied = record.hanged, list(record.tied)
    return last


def tally_updates(old: GameState, new: GameState) -> list[tuple[str, LiveTally]]:
    """What a command did to the public vote count, as (op, count): "close" (the day it
    was in ended: its final count), "open" (a voting day began), "edit" (the count, who
    has not voted or the deadline changed). Day 0's check-in list the same way; nothing
    at night."""
    if old.phase is not PhaseKind.DAY and new.phase is not PhaseKind.DAY:
        return []
    out: list[tuple[str, LiveTally]] = []
    # closed_tally is None while the day goes on: skip its count of `old` then
    still = new.phase is PhaseKind.DAY and new.number == old.number
    final = None if still else _closed(old, new)
    if final is not None:
        out.append(("close", final))
    now = _count(new)
    if now is not None:
        before = _count(old)
        if before is None or before.number != now.number:
            out.append(("open", now))
        elif before != now:
            out.append(("edit", now))
    return out


def _alive(state: GameState, uid: int) -> bool:
    p = state.player(uid)
    return p is not None and p.alive

