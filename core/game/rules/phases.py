"""Phase changes: dealing roles, closing days and nights, deaths, inactivity, the end.

Every death goes through `kill()`, which promotes the sergeant and checks the
win; every phase end goes through `advance()`.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from core.game.events import Audience, EventKind
from core.game.roles import Role, info, is_role_player, rows
from core.game.rules import channels, deadlines, economy, shop, voting
from core.game.rules import night as night_rules
from core.game.rules.context import Ctx
from core.game.rules.setup import composition_for
from core.game.rules.victory import verdict
from core.game.state import Clan, Death, DeathCause, GameState, PhaseKind, TurnMark
from core.game.team import Team

# --- teams (private channels) ----------------------------------------------
# Membership is a pure function of the state (core/game/rules/channels.py); these wrappers
# keep the Ctx-taking names for callers inside the engine.
GRAVEYARD = channels.GRAVEYARD


def teams(ctx: Ctx) -> dict[Team, list[int]]:
    """Every private channel's members, dead members included (they keep reading)."""
    return channels.teams(ctx.state)


def team_access(ctx: Ctx, team: str) -> tuple[list[int], list[int]]:
    """A private channel's readers and writers (the dead read only, unless allowed)."""
    return channels.team_access(ctx.state, team)


def emit_team(ctx: Ctx, team: Team, left: tuple[int, ...] = ()) -> None:
    """The channel's members now; `left`: who lost it by this change (a replaced player),
    so the Discord layer takes away exactly what it gave and nobody else's overwrite."""
    members, writers = team_access(ctx, team)
    gone = {"left": list(left)} if left else {}
    ctx.emit(EventKind.TEAM_CHANGED, Audience.of_team(team, *members), team=team,
             members=members, writers=writers, **gone)


# --- start -----------------------------------------------------------------
def start_game(ctx: Ctx, at: datetime) -> None:
    state = ctx.state
    comp = composition_for(state.roles_text, len(state.players),
                           extra_roles=state.options.extra_roles)
    slots = list(zip(comp.roles, comp.clans, strict=True))
    ctx.rng("deal").shuffle(slots)
    ranks: dict[int, int] = {}
    for p, (role, clan) in zip(state.players, slots, strict=True):
        p.role, p.clan = role, clan
        if info(role).rotates and clan is not None:  # the clan's turns go by rank
            ranks[clan] = ranks.get(clan, 0) + 1
            p.rank = ranks[clan]
    state.clans = [Clan(number=n) for n in comp.clan_numbers()]
    ctx.emit(EventKind.GAME_STARTED, composition=[list(r) for r in comp.describe()],
             players=[p.uid for p in state.players])
    for p in state.players:
        ctx.emit(EventKind.ROLE_DEALT, Audience.to(p.uid), role=str(p.role), clan=p.clan,
                 rank=p.rank)
    ctx.emit(EventKind.DESK_OPENED, Audience.master(), master=state.master, roles=[
        [p.uid, str(p.role), p.clan] for p in state.players])
    for team in teams(ctx):
        emit_team(ctx, team)
    open_phase(ctx, PhaseKind.DAY, 0, at)


def open_phase(ctx: Ctx, kind: PhaseKind, number: int, at: datetime) -> None:
    state = ctx.state
    state.phase, state.number = kind, number
    state.serial += 1
    minutes = state.options.day_minutes if kind is PhaseKind.DAY else state.options.night_minutes
    state.deadline = deadlines.next_phase(state, at, minutes)
    state.opened = at
    if kind is PhaseKind.DAY:
        state.vote_log = []
        for p in state.players:
            p.checked_in = False if number == 0 else p.checked_in
    else:
        night_rules.start_night(ctx)
    ctx.emit(EventKind.PHASE_STARTED, phase=str(kind), number=number,
             deadline=state.deadline.isoformat(),
             living=[p.uid for p in state.living()])


# --- deaths ----------------------------------------------------------------
def kill(ctx: Ctx, uid: int, cause: DeathCause, by: list[int] | None = None,
         announce: bool = True) -> bool:
    """Remove a player from the game; False when he was already out (nobody dies twice)."""
    state = ctx.state
    p = state.player(uid)
    if p is None or not p.alive:
        return False
    p.alive = False
    p.death = Death(cause=cause, phase=state.phase, number=state.number, by=list(by or []))
    state.orders = [o for o in state.orders if o.actor != uid]
    if announce:
        role = str(p.role) if state.options.reveal_roles else None
        ctx.emit(EventKind.PLAYER_DIED, uid=uid, cause=cause, role=role,
                 phase=str(state.phase), number=state.number)
    # the dead hears where he may still read, and whether he still votes (as a ghost)
    ctx.emit(EventKind.YOU_DIED, Audience.to(uid), cause=cause,
             ghost=voting.base_weight(state, uid) > 0, graveyard=state.options.graveyard)
    for team, members in teams(ctx).items():
        if uid in members:
            emit_team(ctx, team)
    # his living mates know him as a team mate already: it tells them nothing new but
    # the news; a team channel he shares with them hears it once (after its permissions
    # changed, so it joins the command's other posts there as one message), the others
    # in private
    mates = _living_mates(ctx, uid)
    told = _tell_teams(ctx, uid, cause, mates)
    if rest := [m for m in mates if m not in told]:
        ctx.emit(EventKind.MATE_DIED, Audience.to(*rest), uid=uid, cause=cause)
    promote_sergeant(ctx)
    return True


def _living_mates(ctx: Ctx, uid: int) -> list[int]:
    """The living players who know `uid` by role (channels.known_to: clan mates, the
    police pairs, the investigator his sergeant; not the sergeant, who knows nobody)."""
    knowers = set(channels.known_by(ctx.state, uid))
    return [p.uid for p in ctx.state.living() if p.uid in knowers]


def _tell_teams(ctx: Ctx, uid: int, cause: DeathCause, mates: list[int]) -> set[int]:
    """A mate's death said once in each team channel the dead shares with living mates
    (a clan, the police): its readers all know him already, and one post there costs
    Discord one request where a post in each mate's place costs one a mate (issue 30).
    Returns the mates told so."""
    told: set[int] = set()
    for team, members in teams(ctx).items():
        if team == GRAVEYARD or uid not in members:
            continue
        here = [m for m in mates if m in members and m not in told]
        if here:
            readers, _ = team_access(ctx, team)
            ctx.emit(EventKind.MATE_DIED, Audience.of_team(team, *readers), uid=uid,
                     cause=cause)
            told.update(here)
    return told


def promote_sergeant(ctx: Ctx) -> None:
    """"в случае выбывания следователя становится следователем": the first living
    sergeant takes the role, joins the police channel (the operative and he now know
    each other) and receives the check log of the investigator who left: the whole log
    (the night's check included, the investigator acting before the dice), or with the
    master's option off only what was sent with /share (already on his card)."""
    for ri in rows():
        if ri.heir_of is not None:
            _promote(ctx, ri.role, ri.heir_of)


def _promote(ctx: Ctx, heir: Role, role: Role) -> None:
    """The first living `heir` takes `role` once no living player holds it (the row's
    `heir_of`: the sergeant the investigator's)."""
    state = ctx.state
    if any(p.alive for p in state.with_role(role)):
        return
    heirs = state.with_role(heir)
    if not heirs:
        return
    new = heirs[0]
    new.role = role
    state.promoted.append(new.uid)
    ctx.emit(EventKind.PROMOTED, Audience.of_team(channels.POLICE, new.uid), uid=new.uid)
    if state.options.inherit_checks:
        shared = {(n.night, n.data.get("target")) for n in new.notices
                  if n.kind == "shared_check"}
        inherited = [n for old in state.with_role(role, alive=False)
                     if not old.alive for n in old.notices
                     if n.kind == "check" and (n.night, n.data.get("target")) not in shared]
        for n in inherited:
            new.notices.append(n.model_copy(update={"kind": "shared_check"}))
        ctx.emit(EventKind.LOG_INHERITED, Audience.to(new.uid),
                 checks=[{"night": n.night, **n.data} for n in inherited])
    if channels.POLICE in teams(ctx):
        emit_team(ctx, channels.POLICE)


# --- inactivity --------------------------------------------------------------
def took_part_today(state: GameState) -> list[int]:
    """Who took part in the day that is closing: a vote cast (even withdrawn later),
    on day 0 the check-in."""
    if state.number == 0:
        return [p.uid for p in state.players if p.checked_in]
    voted: list[int] = []
    for mark in state.vote_log:
        if mark.voter not in voted:
            voted.append(mark.voter)
    return voted


def judge_turn(ctx: Ctx, acted: set[int]) -> list[int]:
    """At the end of a night, the end of turn N (day N and night N): mark each living
    player's turn and remove those the rules exclude; returns the removed, announced by
    the caller in the morning report (never alone at the night's end: that would tell
    everyone the removed player had a night move).

    "Каждый, кто пропустил два хода подряд, исключается из игры. Также как и тот, кто
    пропустил два хода не подряд, но не предупредил мастера." A turn is missed only when
    the player took no part in it: no vote that day and no night order. Night powers are
    optional ("может"), so an order is never required of one who voted."""
    state = ctx.state
    turn = state.number
    removed: list[int] = []
    for p in state.living():
        missed = p.uid not in state.took_part and p.uid not in acted
        excused = missed and p.away_until is not None and turn <= p.away_until
        p.turns.append(TurnMark(serial=turn, missed=missed, excused=excused))
        if not missed:
            continue
        two_in_row = len(p.turns) >= 2 and p.turns[-2].missed and \
            p.turns[-2].serial == turn - 1
        unexcused = sum(1 for t in p.turns if t.missed and not t.excused)
        out = two_in_row or unexcused >= 2
        ctx.emit(EventKind.TURN_MISSED, Audience.master(), uid=p.uid, turn=turn, excused=excused,
                 removed=out)
        if out:
            removed.append(p.uid)
        else:
            ctx.emit(EventKind.TURN_WARNING, Audience.to(p.uid), turn=turn, excused=excused)
    for uid in removed:
        kill(ctx, uid, "inactive", announce=False)
    return removed


# --- phase ends ----------------------------------------------------------------
def end_day(ctx: Ctx, at: datetime, funds: dict[int, int]) -> None:
    state = ctx.state
    state.took_part = took_part_today(state)
    if state.number > 0:
        why = voting.zero_reasons(state)  # before the record: today's spells still apply
        record = voting.close_day(state)
        state.days.append(record)
        ctx.emit(EventKind.DAY_RESULT, number=state.number, tally=record.tally, votes=record.votes,
                 weights=record.weights, hanged=record.hanged, tied=record.tied)
        ctx.emit(EventKind.DAY_EXPLAINED, Audience.master(), number=state.number,
                 votes=[[v, target, record.weights.get(v, 0), why.get(v, "")]
                        for v, target in record.votes.items()],
                 tally=sorted(([u, h] for u, h in record.tally.items()), key=lambda r: -r[1]),
                 hanged=record.hanged, tied=record.tied, decider=record.decider)
        if record.hanged is not None:
            kill(ctx, record.hanged, "hanged")
        if state.options.shop:
            shop.close_day(ctx)
    # Nothing is charged or carried out once the game has ended (a game-ending lynch).
    if finish_if_won(ctx):
        return
    if state.options.shop:
        shop.run_evening(ctx, state.days[-1].hanged if state.number else None, funds)
    open_phase(ctx, PhaseKind.NIGHT, state.number, at)


def _open_last_words(ctx: Ctx, at: datetime) -> None:
    """House option (RULES.md §4, "Last words"): each player killed this night may leave
    one message until the window closes; a window of an earlier night closes now."""
    state = ctx.state
    state.last_words = {}
    minutes = state.options.last_words_minutes
    if not minutes:
        return
    until = at + timedelta(minutes=minutes)
    for p in state.players:
        if p.death is not None and p.death.cause in ("killed", "spiked") \
                and p.death.phase is PhaseKind.NIGHT and p.death.number == state.number:
            state.last_words[p.uid] = until
            ctx.emit(EventKind.LAST_WORDS_OPEN, Audience.to(p.uid), deadline=until.isoformat())


def end_night(ctx: Ctx, at: datetime) -> None:
    state = ctx.state
    result = night_rules.resolve(ctx)
    ctx.emit(EventKind.NIGHT_EXPLAINED, Audience.master(), night=state.number, steps=result.steps,
             deaths={str(v): by for v, by in result.deaths.items()})
    victims = []
    for victim, by in result.deaths.items():
        cause: DeathCause = "spiked" if result.causes.get(victim) == "spiked" else "killed"
        if kill(ctx, victim, cause, by, announce=False):
            victims.append(victim)
    for uid in result.bad_kills:
        count = state.operative_bad_kills.get(uid, 0) + 1
        state.operative_bad_kills[uid] = count
        if count == 1:
            state.operative_benched[uid] = state.number + 1
            ctx.emit(EventKind.OPERATIVE_BENCHED, Audience.to(uid), night=state.number + 1)
    removed = judge_turn(ctx, result.acted)
    state.took_part = []
    reveal = state.options.reveal_roles
    # The gas chamber is public "to general booing" when roles of the dead are shown;
    # hidden, it would name the operative, so he is listed among the night's dead.
    gassed = [uid for uid in result.bad_kills if state.operative_bad_kills.get(uid, 0) >= 2]
    if not reveal:
        victims += [uid for uid in gassed if kill(ctx, uid, "gas_chamber", announce=False)]

    def row(uid: int) -> dict[str, str | int | None]:
        p = state.player(uid)
        return {"uid": uid, "role": str(p.role) if reveal and p is not None else None}

    # Who else left the game this night (removed by the master): the morning must not
    # say "everybody is alive" then.
    left = sorted(p.uid for p in state.players if p.death is not None
                  and p.death.phase is PhaseKind.NIGHT and p.death.number == state.number
                  and p.uid not in victims and p.uid not in removed)
    ctx.emit(EventKind.MORNING, number=state.number + 1, stories=result.stories,
             victims=[row(v) for v in victims], removed=[row(u) for u in removed], left=left)
    _open_last_words(ctx, at)
    for uid in gassed:
        kill(ctx, uid, "gas_chamber")
    if not finish_if_won(ctx):
        open_phase(ctx, PhaseKind.DAY, state.number + 1, at)


def finish_if_won(ctx: Ctx) -> bool:
    state = ctx.state
    if state.over:
        return True
    v = verdict(state)
    if not v.decided:
        return False
    state.winners, state.draw = v.winners, v.draw
    state.phase, state.deadline = PhaseKind.ENDED, None
    state.serial += 1
    ctx.emit(EventKind.GAME_OVER, winners=v.winners, draw=v.draw, roles=[
        {"uid": p.uid, "role": str(p.role), "clan": p.clan, "alive": p.alive,
         "winner": p.team in v.winners}
        for p in state.players
    ])
    # Each seat hears the end in its own place, with a ping: its side won or lost.
    for p in state.players:
        ctx.emit(EventKind.GAME_RESULT, Audience.to(p.uid), uid=p.uid, draw=v.draw,
                 won=p.team in v.winners, winners=v.winners)
    if state.options.currency:
        state.payouts = economy.payouts(state)
        ctx.emit(EventKind.PAYOUTS, lines=[line.model_dump() for line in state.payouts],
                 bonuses=[b.model_dump() for b in state.bonuses])
    return True


def advance(ctx: Ctx, at: datetime, funds: dict[int, int] | None = None) -> None:
    if ctx.state.phase is PhaseKind.DAY:
        end_day(ctx, at, funds or {})
    else:
        end_night(ctx, at)


__all__ = ["advance", "is_role_player", "kill", "start_game"]
