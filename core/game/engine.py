"""The engine: apply a command to a state, get the new state and its events.

Pure and deterministic: the input state is never mutated, randomness comes
from the game's seed and the command counter, time from the command.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TypeAlias, assert_never

from core.game import commands as c
from core.game import guards
from core.game.access import Sight, seat_refusal, seated_sight
from core.game.commands import PHASE_BOUND
from core.game.errors import ErrorCode, RuleError
from core.game.events import Audience, Event, EventKind
from core.game.roles import Action, info
from core.game.rules import cohost, crypto, deadlines, owing, phases, shop
from core.game.rules import night as night_rules
from core.game.rules.channels import spectated
from core.game.rules.context import Ctx
from core.game.rules.cooldown import check_vote_cooldown
from core.game.rules.setup import (
    MIN_PLAYERS,
    check_written,
    composition_for,
    lopsided,
    negatives,
)
from core.game.rules.voting import current_votes, hammered, standing_after_kick, totals
from core.game.rules.weights import known_voiceless
from core.game.state import (
    Bonus,
    GameState,
    Notice,
    Options,
    PhaseKind,
    Player,
    Spectator,
    Standby,
    VoteMark,
)
from core.text.names import is_blank


@dataclass
class Outcome:
    state: GameState
    events: list[Event]


def create_game(
    *, seed: int, master: int, title: str, plot: str = "", options: Options | None = None,
    stored: bool = False,
) -> GameState:
    """A game in signup. `stored`: the options are the ones the game was created with
    (a replay of its log), taken as they are: a game older than a rule keeps its way."""
    options = options or Options()
    if not stored:  # a new game spreads its deadlines (RULES.md section 4, "Deadlines")
        options = options.model_copy(update={"spread_deadlines": True})
    _text(title, "title")
    if plot:
        _text(plot, "plot")
    if options.shop and not options.currency:
        raise RuleError(ErrorCode.SHOP_NEEDS_CURRENCY)
    return GameState(seed=seed, master=master, title=title, plot=plot, options=options)


def apply(state: GameState, cmd: c.Command, *, as_json: str | None = None) -> Outcome:
    """Apply one command; raise RuleError (state untouched) if the rules refuse it.

    `as_json`, if the caller has it, must be `state.model_dump_json()` (the stored
    form): the private copy is then parsed from it instead of serialized anew."""
    if cmd.seen is not None and not state.over and phase_ended(state, cmd):
        raise RuleError(ErrorCode.PHASE_ENDED)
    guards.check(state, cmd)  # the refusals /help lists from, before any copy is made
    ctx = Ctx(_private(state, cmd, as_json))
    _dispatch(ctx, cmd)
    ctx.state.seq += 1
    return Outcome(ctx.state, ctx.events)


def apply_in_place(state: GameState, cmd: c.Command) -> list[Event]:
    """Replay one LOGGED command on `state` itself (no copy): for rebuilding a finished
    game's story quickly (core/sight/record.py). Never for new commands: a refusal halfway
    would leave `state` half changed."""
    guards.check(state, cmd)
    ctx = Ctx(state)
    _dispatch(ctx, cmd)
    state.seq += 1
    return ctx.events


def phase_ended(state: GameState, cmd: c.Command) -> bool:
    """Whether `cmd` was sent in a phase that is over now (a late vote, an order for a
    night already resolved, a second "advance" racing the first or the deadline)."""
    if cmd.seen is None or cmd.kind not in PHASE_BOUND:
        return False
    serial, number = cmd.seen
    if cmd.kind == "night":  # day N and night N give orders for the same night N
        return number != state.number
    return serial != state.serial


def copy_state(state: GameState) -> GameState:
    """A private copy for the handlers to change: a JSON round trip, as the state is
    stored, which pydantic-core does several times faster than copy.deepcopy."""
    return GameState.model_validate_json(state.model_dump_json())


def _private(state: GameState, cmd: c.Command, as_json: str | None) -> GameState:
    """The copy the handler may change. The commands of a day's stream (a vote, its
    withdrawal, a night order) change only one list of the state, appending to it or
    removing from it: they get the state's top level and that list copied (and the
    sender's own orders: a second move renumbers them), the rest shared with `state`;
    a whole copy would cost most of such a command (tests/engine/test_engine_copy.py
    checks both ways give the same state, and that `state` is left untouched)."""
    if isinstance(cmd, c.Vote | c.Unvote) and not (isinstance(cmd, c.Vote) and cmd.shout) \
            and not state.options.hammer:  # a hammer's vote ends the day: changes it all
        new = state.model_copy()
        new.vote_log = list(state.vote_log)
        return new
    if isinstance(cmd, c.NightOrder) and not state.options.early_night:
        new = state.model_copy()
        new.orders = [o.model_copy() if o.actor == cmd.by else o for o in state.orders]
        return new
    return copy_state(state) if as_json is None else GameState.model_validate_json(as_json)


# --- guards ------------------------------------------------------------------
def _hosted(ctx: Ctx, cmd: c.Command) -> None:
    """After a master's guard passed: a stand-in host is written down (never seated)."""
    s = ctx.state
    if cmd.by != s.master and cmd.by not in s.hosts:
        s.hosts.append(cmd.by)


def _seat(ctx: Ctx, uid: int, *, admin: bool, sight: Sight, named: bool = False) -> None:
    refusal = seat_refusal(ctx.state, uid, admin=admin, sight=sight, named=named)
    if refusal is not None:
        raise refusal


def _text(value: str | None, field: str) -> None:
    """Refuse a text option that shows nothing (blank, or invisible characters only)."""
    if is_blank(value):
        raise RuleError(ErrorCode.BLANK_TEXT, field=field)


def _no_bot(bot: bool) -> None:
    if bot:
        raise RuleError(ErrorCode.BOT_CANNOT_PLAY)


def _no_spectator(state: GameState, uid: int) -> None:
    """A spectator has read what no player may know (the dead's talk, maybe the teams'):
    he can never be seated in the game he follows."""
    if state.spectating(uid):
        raise RuleError(ErrorCode.SPECTATOR_CANNOT_PLAY)


def _player(ctx: Ctx, uid: int, *, alive: bool = True) -> Player:
    return guards.player(ctx.state, uid, alive=alive)


def _living_target(ctx: Ctx, uid: int) -> Player:
    t = ctx.state.player(uid)
    if t is None:
        raise RuleError(ErrorCode.NOT_A_PLAYER_TARGET, target=uid)
    if not t.alive:
        raise RuleError(ErrorCode.TARGET_DEAD, target=uid)
    return t


# --- lobby -------------------------------------------------------------------
def _join(ctx: Ctx, cmd: c.Join) -> None:
    s = ctx.state
    s.players.append(Player(uid=cmd.by, name=cmd.name, handle=cmd.handle))
    ctx.emit(EventKind.JOINED, uid=cmd.by, count=len(s.players))


def _leave(ctx: Ctx, cmd: c.Leave) -> None:
    s = ctx.state
    p = _player(ctx, cmd.by)
    s.players.remove(p)
    ctx.emit(EventKind.LEFT, uid=cmd.by, count=len(s.players))


def _configure(ctx: Ctx, cmd: c.Configure) -> None:
    """/game setup: refused at once, in /game start's words, when the start could never
    accept it; a composition the start would question is accepted with the warning."""
    _hosted(ctx, cmd)
    s = ctx.state

    _text(cmd.roles, "roles")
    comp = check_written(cmd.roles, len(s.players), extra_roles=s.options.extra_roles)
    s.roles_text = cmd.roles
    players = max(len(s.players), comp.size, MIN_PLAYERS)
    full = composition_for(cmd.roles, players, extra_roles=s.options.extra_roles)
    ctx.emit(EventKind.ROLES_SET, composition=[list(r) for r in comp.describe()], size=comp.size,
             signed_up=len(s.players), lopsided=lopsided(full), negatives=negatives(full),
             players=players)


def _options(ctx: Ctx, cmd: c.SetOptions) -> None:
    _hosted(ctx, cmd)
    s = ctx.state
    if s.phase is not PhaseKind.SIGNUP and not (set(cmd.changes) <= IN_GAME_OPTIONS
                                                and not s.over):
        raise RuleError(ErrorCode.SIGNUP_CLOSED)
    unknown = sorted(set(cmd.changes) - set(Options.model_fields) | (set(cmd.changes) & FIXED))
    if unknown:
        raise RuleError(ErrorCode.UNKNOWN_OPTION, name=unknown[0])
    try:
        options = Options.model_validate(s.options.model_dump() | cmd.changes)
    except ValueError as exc:
        raise RuleError(ErrorCode.BAD_OPTION, detail=str(exc).splitlines()[0][:100]) from exc
    if options.shop and not options.currency:
        raise RuleError(ErrorCode.SHOP_NEEDS_CURRENCY)
    s.options = options
    ctx.emit(EventKind.OPTIONS_SET, changes=dict(cmd.changes))


# Options that change no rule, only how the table is told: the master may set them any
# time before the end (RULES.md, "Reminders").
IN_GAME_OPTIONS = frozenset({"reminder_minutes"})
# Options the game is created with, never the master's to change.
FIXED = frozenset({"spread_deadlines"})


def _start(ctx: Ctx, cmd: c.Start) -> None:
    """Any composition where no side has won yet may start; a likely lopsided one
    (negatives at half the players or more) only once the master confirms it."""
    _hosted(ctx, cmd)
    s = ctx.state
    comp = composition_for(s.roles_text, len(s.players), extra_roles=s.options.extra_roles)
    if lopsided(comp) and not cmd.confirm:
        raise RuleError(ErrorCode.SETUP_LOPSIDED, negatives=negatives(comp), players=comp.size)
    seeing = seated_sight(s, cmd.sights)
    if seeing and not cmd.confirm_sight:
        raise RuleError(ErrorCode.SIGHT_UNCONFIRMED, count=len(seeing))
    for p in s.players:  # in seat order: the table is told before the deal
        if p.uid in seeing:
            _declare_sight(ctx, p.uid, seeing[p.uid])
    phases.start_game(ctx, cmd.at)


def _declare_sight(ctx: Ctx, uid: int, sight: str) -> None:
    """Tell the table, publicly, that a player can read other seats' places (RULES.md §8:
    the master accepted it at the start, or a right was given during the game)."""
    ctx.state.sight[uid] = sight
    kind = EventKind.SIGHT_ALL if sight == "all" else EventKind.SIGHT_THREADS
    ctx.emit(kind, uid=uid)
    # the master's desk gets it as a warning of its own (a line he may be pinged for)
    ctx.emit(EventKind.DESK_SIGHT, Audience.master(), uid=uid, sight=sight)


def _sight(ctx: Ctx, cmd: c.Sight) -> None:
    p = _player(ctx, cmd.by)
    _declare_sight(ctx, p.uid, cmd.sight)


def _host(ctx: Ctx, cmd: c.Host) -> None:
    _hosted(ctx, cmd)


def _cancel(ctx: Ctx, cmd: c.Cancel) -> None:
    _hosted(ctx, cmd)
    s = ctx.state
    s.phase, s.deadline = PhaseKind.CANCELLED, None
    s.serial += 1
    ctx.emit(EventKind.CANCELLED, roles=[{"uid": p.uid, "role": str(p.role) if p.role else None}
                                 for p in s.players])


# --- day ---------------------------------------------------------------------
def _checkin(ctx: Ctx, cmd: c.CheckIn) -> None:
    s = ctx.state
    p = _player(ctx, cmd.by)
    p.checked_in = True
    ctx.emit(EventKind.CHECKED_IN, uid=p.uid, count=sum(1 for q in s.players if q.checked_in),
             living=len(s.living()))


def _vote(ctx: Ctx, cmd: c.Vote) -> None:
    s = ctx.state
    voter = _player(ctx, cmd.by, alive=False)
    target = _living_target(ctx, cmd.target)

    standing = current_votes(s).get(voter.uid)
    if standing is not None:
        if standing.target == target.uid:
            if not cmd.shout:  # a second Shout on the same vote does not change the vote
                raise RuleError(ErrorCode.ALREADY_VOTED_FOR, target=target.uid)
        elif s.options.votes_final:
            raise RuleError(ErrorCode.VOTES_FINAL)
    check_vote_cooldown(s, voter.uid, cmd.at)
    was_hammered = s.options.hammer and hammered(s, target.uid)
    shouts = standing.shouts if standing is not None and standing.target == target.uid else 0
    if cmd.shout:
        shouts += shop.shout(ctx, voter, target.uid, dict(cmd.funds))
    s.vote_log.append(VoteMark(seq=s.seq, voter=voter.uid, target=target.uid, shouts=shouts,
                               at=cmd.at))
    # "Крик – применяется в явном виде в посте по ходу голосования": the public post says
    # so, and a Shout on the standing vote reads as a Shout, not as a new vote (`again`).
    again = standing is not None and standing.target == target.uid
    ctx.emit(EventKind.VOTE_CAST, voter=voter.uid, target=target.uid, ghost=not voter.alive,
             previous=standing.target if standing else None,
             total=totals(s, spells=False).get(target.uid, 0),  # spells show at the result
             shout=cmd.shout, again=again)
    if s.options.hammer and s.number > 0 and not was_hammered and hammered(s, target.uid):
        _hammer(ctx, target.uid, cmd.at, dict(cmd.funds))


def _hammer(ctx: Ctx, target: int, at: datetime, funds: dict[int, int]) -> None:
    """The vote that gives one player an absolute majority of the living weight ends the
    day (house option `hammer`), or tells the master so (`hammer_confirm`)."""
    s = ctx.state
    if s.options.hammer_confirm:
        ctx.emit(EventKind.DESK_HAMMER, Audience.master(), target=target, number=s.number)
        return
    ctx.emit(EventKind.HAMMER, target=target, number=s.number)
    phases.advance(ctx, at, funds)


def _unvote(ctx: Ctx, cmd: c.Unvote) -> None:
    s = ctx.state
    voter = _player(ctx, cmd.by, alive=False)

    standing = current_votes(s)[voter.uid]
    check_vote_cooldown(s, voter.uid, cmd.at)
    s.vote_log.append(VoteMark(seq=s.seq, voter=voter.uid, target=None, at=cmd.at))
    ctx.emit(EventKind.VOTE_WITHDRAWN, voter=voter.uid, target=standing.target)


# --- night -------------------------------------------------------------------
def _night(ctx: Ctx, cmd: c.NightOrder) -> None:
    actor = _player(ctx, cmd.by)
    if cmd.story is not None:
        _text(cmd.story, "story")
    night_rules.submit(ctx, actor, cmd.target, cmd.fallback, cmd.story)
    s = ctx.state
    if s.options.early_night and owing.all_moves_in(s):
        # Master option: the last order in ends the night (players are told so up front).
        ctx.emit(EventKind.ORDERS_ALL_IN, number=s.number)
        phases.advance(ctx, cmd.at)


def _share(ctx: Ctx, cmd: c.Share) -> None:
    """"следователь имеет право передать сержанту всю имеющуюся у него информацию": his
    check log (and a note) reaches each sergeant privately, from "the investigator"
    without his name, since the sergeant does not know him."""
    s = ctx.state
    p = _player(ctx, cmd.by)
    known = info(p.role).knows if p.role is not None else ()  # the investigator's sergeant
    sergeants = [q for role in known for q in s.with_role(role)]
    checks = [n for n in p.notices if n.kind in ("check", "shared_check")]
    for sgt in sergeants:
        have = {(n.night, n.data.get("target")) for n in sgt.notices if n.kind == "shared_check"}
        for n in checks:
            if (n.night, n.data.get("target")) not in have:
                sgt.notices.append(n.model_copy(update={"kind": "shared_check"}))
        if cmd.note:
            sgt.notices.append(Notice(kind="police_note", night=s.number,
                                      data={"text": cmd.note}))
    ctx.emit(EventKind.LOG_SHARED, Audience.to(*[x.uid for x in sergeants]),
             checks=[{"night": n.night, **n.data} for n in checks], note=cmd.note or "")


def _away(ctx: Ctx, cmd: c.Away) -> None:
    """"пропустил два хода не подряд, но не предупредил мастера": a warning covers the
    turns up to `until` (a day number; by default the current turn and the next)."""
    p = _player(ctx, cmd.by)
    if cmd.reason is not None:
        _text(cmd.reason, "reason")
    turn = ctx.state.number  # day N and night N are turn N
    until = turn + 1 if cmd.until is None else cmd.until
    if until < turn:
        raise RuleError(ErrorCode.AWAY_UNTIL_PAST, day=turn)
    p.away_until = until
    p.away_reason = cmd.reason
    ctx.emit(EventKind.AWAY_NOTED, Audience.master(), uid=p.uid, reason=cmd.reason, until=until)
    ctx.emit(EventKind.AWAY_ACK, Audience.to(p.uid), until=until)


def _occult(ctx: Ctx, cmd: c.OccultExclude) -> None:
    s = ctx.state
    t = s.player(cmd.target)
    if t is None:
        raise RuleError(ErrorCode.NOT_A_PLAYER_TARGET, target=cmd.target)
    if t.alive:
        raise RuleError(ErrorCode.TARGET_ALIVE, target=cmd.target)
    if cmd.target in s.occult_excluded:
        raise RuleError(ErrorCode.ALREADY_EXCLUDED, target=cmd.target)
    s.occult_excluded.append(cmd.target)
    ctx.emit(EventKind.GHOST_EXCLUDED, uid=cmd.target)


# --- master ------------------------------------------------------------------
def _advance(ctx: Ctx, cmd: c.Advance) -> None:
    if not cmd.deadline:
        _hosted(ctx, cmd)
    s = ctx.state
    if cmd.deadline and (s.deadline is None or cmd.at < s.deadline):
        raise RuleError(ErrorCode.DEADLINE_NOT_REACHED)
    phases.advance(ctx, cmd.at, dict(cmd.funds))


def _remind(ctx: Ctx, cmd: c.Remind) -> None:
    if not cmd.scheduled:
        _hosted(ctx, cmd)
    owing.remind(ctx, cmd.at, scheduled=cmd.scheduled)


def _extend(ctx: Ctx, cmd: c.Extend) -> None:
    _hosted(ctx, cmd)
    s = ctx.state
    # The deadline keeps the game's second (RULES.md section 4, "Deadlines").
    s.deadline = deadlines.after(s, max(s.deadline or cmd.at, cmd.at), cmd.minutes)
    ctx.emit(EventKind.EXTENDED, deadline=s.deadline.isoformat(), minutes=cmd.minutes)


def _kick(ctx: Ctx, cmd: c.Kick) -> None:
    _hosted(ctx, cmd)
    _living_target(ctx, cmd.target)
    waiting = ctx.state.phase is PhaseKind.NIGHT and bool(night_rules.missed_night(ctx.state))
    phases.kill(ctx, cmd.target, "kicked")
    _release_votes(ctx, cmd.target)
    night_rules.pass_turn(ctx, cmd.target)  # the acting mafioso's move goes to the next
    if phases.finish_if_won(ctx):
        return
    if waiting and night_rules.all_orders_in(ctx.state):
        night_rules.announce_all_in(ctx)  # the one who had not ordered is gone
    s = ctx.state
    if s.phase is PhaseKind.DAY and s.number > 0:  # what the removal does to the day's vote

        ctx.emit(EventKind.DESK_DAY_KICK, Audience.master(), uid=cmd.target, number=s.number,
                 **standing_after_kick(s))


def _release_votes(ctx: Ctx, gone: int) -> None:
    """RULES.md §4, "A vote whose target leaves": a standing vote against a player removed
    during the day is withdrawn (not left counting against nobody), and each voter is told
    privately, so he may vote again, even when votes are final (he did not change it)."""
    s = ctx.state
    if s.phase is not PhaseKind.DAY or s.number == 0:
        return
    voters = sorted(v for v, m in current_votes(s).items() if m.target == gone and v != gone)
    for voter in voters:  # no time: the cooldown counts the voter's own actions only
        s.vote_log.append(VoteMark(seq=s.seq, voter=voter, target=None))
    if voters:
        ctx.emit(EventKind.VOTE_RELEASED, Audience.to(*voters), target=gone)


def _tell_moved_votes(ctx: Ctx, old: int, new: int) -> None:
    """On a replacement the votes against the seat stand against the substitute (the seat
    keeps everything, votes included); their voters are told privately."""
    s = ctx.state
    if s.phase is not PhaseKind.DAY or s.number == 0:
        return
    voters = sorted(v for v, m in current_votes(s).items() if m.target == new and v != new)
    if voters:
        ctx.emit(EventKind.VOTE_MOVED, Audience.to(*voters), old=old, new=new)


def _replace(ctx: Ctx, cmd: c.Replace) -> None:
    _hosted(ctx, cmd)
    s = ctx.state
    old = s.player(cmd.old)
    if old is None:
        raise RuleError(ErrorCode.NOT_A_PLAYER_TARGET, target=cmd.old)
    _no_bot(cmd.bot)
    new, name, handle = cmd.new, cmd.name, cmd.handle
    if new is None:
        if not s.standby:
            raise RuleError(ErrorCode.STANDBY_EMPTY)
        new, name, handle = s.standby[0].uid, s.standby[0].name, s.standby[0].handle
    _seat(ctx, new, admin=cmd.new_admin, sight=cmd.new_sight, named=True)
    if s.player(new) is not None:
        raise RuleError(ErrorCode.ALREADY_JOINED)
    _no_spectator(s, new)
    s.standby = [x for x in s.standby if x.uid != new]
    s.sight.pop(cmd.old, None)  # what the table was told was about the member who leaves
    if old.role is not None and cmd.old not in s.former:  # he knew a role: never a host
        s.former.append(cmd.old)
    _rename_uid(s, cmd.old, new)
    old.name, old.handle = name or str(new), handle
    ctx.emit(EventKind.REPLACED, old=cmd.old, new=new)
    _tell_moved_votes(ctx, cmd.old, new)
    ctx.emit(EventKind.DESK_REPLACED, Audience.master(), old=cmd.old, new=new,
             role=str(old.role) if old.role else None)
    seat_teams = [team for team, members in phases.teams(ctx).items() if new in members]
    for team in seat_teams:
        phases.emit_team(ctx, team, left=(cmd.old,))
    if old.role is not None:
        ctx.emit(EventKind.ROLE_DEALT, Audience.to(new), role=str(old.role), clan=old.clan,
                 rank=old.rank)
        ctx.emit(EventKind.SEAT_TAKEN, Audience.to(new), old=cmd.old, role=str(old.role),
                 teams=seat_teams, notices=len(old.notices))


def _standby(ctx: Ctx, cmd: c.Standby) -> None:
    """Anyone outside the game may offer to substitute while it runs (and withdraw)."""
    s = ctx.state
    if any(x.uid == cmd.by for x in s.standby):
        s.standby = [x for x in s.standby if x.uid != cmd.by]
        ctx.emit(EventKind.STANDBY_LEFT, Audience.to(cmd.by), count=len(s.standby))
        ctx.emit(EventKind.DESK_STANDBY, Audience.master(), uid=cmd.by, on=False,
                 count=len(s.standby))
        return
    s.standby.append(Standby(uid=cmd.by, name=cmd.name, handle=cmd.handle))
    ctx.emit(EventKind.STANDBY_JOINED, Audience.to(cmd.by), count=len(s.standby))
    ctx.emit(EventKind.DESK_STANDBY, Audience.master(), uid=cmd.by, on=True, count=len(s.standby))


def _spectate(ctx: Ctx, cmd: c.Spectate) -> None:
    """RULES.md, "Spectators": from the signup until the end, a member who has no seat and
    is not the master follows the game from the dead players' channel (opened for him if
    the game has none), and reads the team channels when the master allows it."""
    s = ctx.state
    if any(x.uid == cmd.by for x in s.standby):  # watching rules out ever taking a seat
        s.standby = [x for x in s.standby if x.uid != cmd.by]
        ctx.emit(EventKind.DESK_STANDBY, Audience.master(), uid=cmd.by, on=False,
                 count=len(s.standby))
    s.spectators.append(Spectator(uid=cmd.by, name=cmd.name, handle=cmd.handle))
    for team in spectated(s):
        phases.emit_team(ctx, team)


def _rename_uid(s: GameState, old: int, new: int) -> None:
    """A substitute takes the seat: every reference to the old id moves to the new,
    so the seat keeps its role, items, spells, spending of this game and duties."""
    p = s.player(old)
    assert p is not None
    p.uid = new

    def sub(x: int) -> int:
        return new if x == old else x

    def sub_opt(x: int | None) -> int | None:
        return new if x == old else x

    for o in s.orders:
        o.actor, o.target, o.fallback = sub(o.actor), sub(o.target), sub_opt(o.fallback)
    for m in s.vote_log:
        m.voter, m.target = sub(m.voter), sub_opt(m.target)
    for clan in s.clans:
        clan.acting = sub_opt(clan.acting)
    s.covered = {sub(k): [sub(x) for x in v] for k, v in s.covered.items()}
    s.occult_excluded = [sub(x) for x in s.occult_excluded]
    s.promoted = [sub(x) for x in s.promoted]
    s.saves = [(sub(a), sub(b)) for a, b in s.saves]
    for table in (s.spent, s.operative_bad_kills, s.operative_benched, s.helpless,
                  s.doubled, s.wrecking):
        if old in table:
            table[new] = table.pop(old)
    for items in (s.inventory, s.armour):
        if old in items:
            items[new] = items.pop(old)  # type: ignore[assignment]
    for cast in s.spells:
        cast.caster, cast.target = sub(cast.caster), sub(cast.target)
    for buy in s.pending:
        buy.uid, buy.target, buy.if_hanged = sub(buy.uid), sub_opt(buy.target), \
            sub_opt(buy.if_hanged)
        buy.unless_hanged = sub_opt(buy.unless_hanged)
    for day in s.days:
        day.votes = {sub(v): sub(t) for v, t in day.votes.items()}
        day.weights = {sub(v): w for v, w in day.weights.items()}
        day.tally = {sub(v): h for v, h in day.tally.items()}
        day.hanged, day.decider = sub_opt(day.hanged), sub_opt(day.decider)
        day.tied = [sub(x) for x in day.tied]
    for q in s.players:
        if q.death is not None:
            q.death.by = [sub(x) for x in q.death.by]
    s.took_part = [sub(x) for x in s.took_part]


def _buy(ctx: Ctx, cmd: c.Buy) -> None:
    buyer = _player(ctx, cmd.by)
    shop.buy(ctx, buyer, cmd.item, cmd.against, shop.Condition.of(cmd), dict(cmd.funds))


def _cast(ctx: Ctx, cmd: c.Cast) -> None:
    caster = _player(ctx, cmd.by)
    shop.cast(ctx, caster, cmd.spell, cmd.target, shop.Condition.of(cmd), dict(cmd.funds))


def _anon(ctx: Ctx, cmd: c.Anon) -> None:
    _text(cmd.text, "text")
    crypto.anon(ctx, _player(ctx, cmd.by), cmd.text, cmd.signature, cmd.at)


def _last_words(ctx: Ctx, cmd: c.LastWords) -> None:
    """One message, once, before the window closes; the bot posts it in the game channel
    in the dead player's name (the Discord layer escapes it, it never pings)."""
    s = ctx.state
    _text(cmd.text, "text")
    until = s.last_words.get(cmd.by)
    if until is None or cmd.at > until:
        s.last_words.pop(cmd.by, None)
        raise RuleError(ErrorCode.NO_LAST_WORDS)
    del s.last_words[cmd.by]
    ctx.emit(EventKind.LAST_WORDS, uid=cmd.by, text=cmd.text)


def _whisper(ctx: Ctx, cmd: c.Whisper) -> None:
    _text(cmd.text, "text")
    crypto.whisper(ctx, _player(ctx, cmd.by), cmd.role, cmd.text, cmd.signature, cmd.at)


def _reveal(ctx: Ctx, cmd: c.Reveal) -> None:
    crypto.reveal(ctx, _player(ctx, cmd.by))


def _bonus(ctx: Ctx, cmd: c.Bonus) -> None:
    _hosted(ctx, cmd)
    s = ctx.state
    if s.player(cmd.target) is None:
        raise RuleError(ErrorCode.NOT_A_PLAYER_TARGET, target=cmd.target)
    _text(cmd.reason, "reason")
    s.bonuses.append(Bonus(uid=cmd.target, amount=cmd.amount, reason=cmd.reason,
                           secret=cmd.secret))
    audience = Audience.master() if cmd.secret else Audience.public()
    ctx.emit(EventKind.BONUS_GRANTED, audience, uid=cmd.target, amount=cmd.amount,
             reason=cmd.reason,
             secret=cmd.secret)


def _thank(ctx: Ctx, cmd: c.Thank) -> None:
    s = ctx.state
    have = cmd.funds.get(cmd.by, 0)
    if cmd.premium > have:
        raise RuleError(ErrorCode.NOT_ENOUGH_LIRA, need=cmd.premium, have=have)
    s.thanked.append(cmd.by)
    ctx.emit(EventKind.THANKED, uid=cmd.by, master=s.master, premium=cmd.premium)


MAX_STANDBY = guards.MAX_STANDBY

# The command union in three groups, each with its own exhaustive match: a command left
# out of every group fails `_dispatch`'s assert_never, one left out of its group's match
# fails that match's assert_never (mypy checks both).
_Lobby: TypeAlias = (
    c.Join | c.Leave | c.Configure | c.SetOptions | c.Start | c.Cancel | c.Spectate | c.Standby)
_Move: TypeAlias = (
    c.CheckIn | c.Vote | c.Unvote | c.NightOrder | c.Share | c.Away | c.OccultExclude
    | c.Buy | c.Cast | c.Anon | c.Whisper | c.Reveal | c.Thank | c.LastWords)
_Table: TypeAlias = (
    c.Advance | c.Remind | c.Extend | c.Kick | c.Replace | c.Host | c.Sight | c.Bonus
    | c.Cohost)


def _dispatch(ctx: Ctx, cmd: c.Command) -> None:
    """Hand a command to its rule: exhaustive over the command union (by group, then
    within the group), so mypy follows each command into its handler and a command left
    out fails type checking. The command's guard (core.game.guards) has spoken before
    (`apply`, `apply_in_place`)."""
    if isinstance(cmd, _Lobby):
        _dispatch_lobby(ctx, cmd)
    elif isinstance(cmd, _Move):
        _dispatch_move(ctx, cmd)
    elif isinstance(cmd, _Table):
        _dispatch_table(ctx, cmd)
    else:
        assert_never(cmd)


def _dispatch_lobby(ctx: Ctx, cmd: _Lobby) -> None:
    """Sign-up, setup and the seats around the table: joining, leaving, watching."""
    match cmd:
        case c.Join():
            _join(ctx, cmd)
        case c.Leave():
            _leave(ctx, cmd)
        case c.Configure():
            _configure(ctx, cmd)
        case c.SetOptions():
            _options(ctx, cmd)
        case c.Start():
            _start(ctx, cmd)
        case c.Cancel():
            _cancel(ctx, cmd)
        case c.Spectate():
            _spectate(ctx, cmd)
        case c.Standby():
            _standby(ctx, cmd)
        case _:
            assert_never(cmd)


def _dispatch_move(ctx: Ctx, cmd: _Move) -> None:
    """A player's own moves: votes, night orders, shop, spells, posts, thanks."""
    match cmd:
        case c.CheckIn():
            _checkin(ctx, cmd)
        case c.Vote():
            _vote(ctx, cmd)
        case c.Unvote():
            _unvote(ctx, cmd)
        case c.NightOrder():
            _night(ctx, cmd)
        case c.Share():
            _share(ctx, cmd)
        case c.Away():
            _away(ctx, cmd)
        case c.OccultExclude():
            _occult(ctx, cmd)
        case c.Buy():
            _buy(ctx, cmd)
        case c.Cast():
            _cast(ctx, cmd)
        case c.Anon():
            _anon(ctx, cmd)
        case c.LastWords():
            _last_words(ctx, cmd)
        case c.Whisper():
            _whisper(ctx, cmd)
        case c.Reveal():
            _reveal(ctx, cmd)
        case c.Thank():
            _thank(ctx, cmd)
        case _:
            assert_never(cmd)


def _dispatch_table(ctx: Ctx, cmd: _Table) -> None:
    """The master's and the scheduler's hand on the game, and what Discord showed."""
    match cmd:
        case c.Advance():
            _advance(ctx, cmd)
        case c.Remind():
            _remind(ctx, cmd)
        case c.Extend():
            _extend(ctx, cmd)
        case c.Kick():
            _kick(ctx, cmd)
        case c.Replace():
            _replace(ctx, cmd)
        case c.Host():
            _host(ctx, cmd)
        case c.Sight():
            _sight(ctx, cmd)
        case c.Bonus():
            _bonus(ctx, cmd)
        case c.Cohost():
            cohost.apply(ctx, cmd)
        case _:
            assert_never(cmd)


# --- questions the Discord layer asks ------------------------------------------
def night_move(state: GameState, uid: int) -> Action | None:
    p = state.player(uid)
    return night_rules.night_action(state, p) if p else None


def legal_targets(state: GameState, uid: int, what: str) -> list[int]:
    """Players a command may name, for autocomplete: 'vote', 'night', 'occult', 'voters',
    'any'."""
    p = state.player(uid)
    if what == "occult":
        return [q.uid for q in state.players if not q.alive and q.uid not in state.occult_excluded]
    if what == "voters":  # a day spell's target: whoever may vote today, as the table knows
        return [q.uid for q in state.players if not known_voiceless(state, q.uid)]
    if what == "night" and p is not None:
        action = night_rules.night_action(state, p)
        if action is None:
            return []
        out = []
        for q in state.living():
            try:
                night_rules.check_target(state, p, action, q.uid)
            except RuleError:
                continue
            out.append(q.uid)
        return out
    return [q.uid for q in state.living()]

