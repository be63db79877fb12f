"""Night orders and their resolution (rules, 'Роли' and 'Порядок хода').

Resolution order: bouncers, then the investigator, then everybody else in a
seeded dice order. An actor killed earlier in that order loses his move; a
target that died earlier the same night still takes the hit (killers share
the credit); a target dead before the night falls to the order's fallback.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.game.errors import ErrorCode, RuleError
from core.game.events import Audience, EventKind
from core.game.roles import LETHAL, Action, info
from core.game.rules.context import Ctx
from core.game.rules.items import ItemKind
from core.game.rules.shop import attacker_kind, ignores_bouncer, moves, use_item
from core.game.state import Clan, GameState, Notice, Order, PhaseKind, Player
from core.game.team import Team


def prospective_acting(state: GameState, clan: Clan) -> int | None:
    """The mafioso whose turn the clan's next night is: rotation by rank, dead skipped."""
    ranked = sorted(
        (p for p in state.clan_members(clan.number) if takes_turns(p) and p.alive),
        key=lambda p: p.rank or 0,
    )
    if not ranked:
        return None
    for p in ranked:
        if (p.rank or 0) >= clan.next_rank:
            return p.uid
    return ranked[0].uid


def takes_turns(p: Player) -> bool:
    """Whether his night move is the clan's, given in turn by rank (the mafiosi)."""
    return p.role is not None and info(p.role).rotates


def coming_night(state: GameState) -> int:
    return state.number


def acting_mafioso(state: GameState, clan_no: int) -> int | None:
    clan = next((c for c in state.clans if c.number == clan_no), None)
    if clan is None:
        return None
    if state.phase is PhaseKind.NIGHT:
        return clan.acting
    return prospective_acting(state, clan)


def night_action(state: GameState, p: Player) -> Action | None:
    """The move this player has in the current (or coming) night, if any."""
    if not p.alive or p.role is None:
        return None
    ri = info(p.role)
    night = coming_night(state)
    if ri.action is None or night < ri.first_night:
        return None
    if takes_turns(p) and (p.clan is None or acting_mafioso(state, p.clan) != p.uid):
        return None
    if state.operative_benched.get(p.uid) == night:
        return None
    return ri.action


def moves_allowed(state: GameState, p: Player) -> int:
    """How many orders a player may give tonight: Doubling gives two, Helplessness none."""
    base = 1 if night_action(state, p) is not None else 0
    if state.options.shop:
        return moves(state, p, base)
    return base


def check_target(state: GameState, actor: Player, action: Action, target: int) -> Player:
    t = state.player(target)
    if t is None or t.role is None:
        raise RuleError(ErrorCode.NOT_A_PLAYER_TARGET, target=target)
    if not t.alive:
        raise RuleError(ErrorCode.TARGET_DEAD, target=target)
    if target == actor.uid and not (action is Action.PROTECT and state.options.bouncer_self):
        raise RuleError(ErrorCode.NO_SELF_TARGET)
    if action is Action.KILL and actor.clan is not None and t.clan == actor.clan:
        raise RuleError(ErrorCode.OWN_CLAN_TARGET, target=target)
    if action is Action.PROTECT and target in state.covered.get(actor.uid, []):
        raise RuleError(ErrorCode.ALREADY_COVERED, target=target)
    return t


def order_move(state: GameState, actor: Player) -> tuple[Action, int]:
    """The move `actor` may order now and how many orders he may give, or the refusal:
    the guard of /night (core.game.guards), whatever the target."""
    if state.phase not in (PhaseKind.DAY, PhaseKind.NIGHT):
        raise RuleError(ErrorCode.WRONG_PHASE)
    action = night_action(state, actor)
    if action is None:
        if takes_turns(actor) and actor.alive:
            raise RuleError(ErrorCode.NOT_YOUR_TURN, acting=acting_mafioso(state, actor.clan or 0))
        if actor.role is not None and info(actor.role).action is not None and actor.alive:
            raise RuleError(ErrorCode.NO_MOVE_TONIGHT)
        raise RuleError(ErrorCode.NO_NIGHT_ACTION)
    allowed = moves_allowed(state, actor)
    if allowed == 0:
        raise RuleError(ErrorCode.HELPLESS_NIGHT)
    return action, allowed


def submit(ctx: Ctx, actor: Player, target: int, fallback: int | None, story: str | None) -> None:
    state = ctx.state
    waiting = bool(missed_night(state)) if state.phase is PhaseKind.NIGHT else False
    action, allowed = order_move(state, actor)
    check_target(state, actor, action, target)
    if fallback is not None:
        if fallback == target:
            raise RuleError(ErrorCode.FALLBACK_SAME)
        check_target(state, actor, action, fallback)
    night = coming_night(state)
    mine = [o for o in state.orders if o.actor == actor.uid and o.night == night]
    # One move: a new order replaces the old. Two moves (Doubling): the oldest goes.
    dropped = mine[: max(0, len(mine) - allowed + 1)]
    for o in dropped:
        state.orders.remove(o)
    kept = [o for o in mine if o not in dropped]
    for slot, o in enumerate(kept):
        o.slot = slot
    state.orders.append(
        Order(
            actor=actor.uid, action=action, target=target, fallback=fallback,
            story=story, night=night, seq=state.seq, slot=len(kept),
        )
    )
    ctx.emit(
        EventKind.ORDER_ACCEPTED, Audience.to(actor.uid),
        action=str(action), target=target, fallback=fallback, night=night,
        replaced=bool(mine),
    )
    if actor.clan is not None and action is Action.KILL:
        ctx.emit(
            EventKind.CLAN_ORDER, Audience.of_team(Team.clan(actor.clan)),
            actor=actor.uid, target=target, fallback=fallback, night=night, story=story or "",
            replaced=bool(dropped),  # the clan reads that the earlier order is void
        )
    ctx.emit(EventKind.DESK_ORDER, Audience.master(), actor=actor.uid, role=str(actor.role),
             action=str(action), target=target, fallback=fallback, story=story or "",
             night=night, replaced=bool(mine))
    if waiting and not missed_night(state):
        announce_all_in(ctx)


def pass_turn(ctx: Ctx, uid: int) -> None:
    """The acting mafioso left the game during his night (the master removed him): the
    clan's move passes to the next living mafioso by number, "ночные ходы выполняют в
    порядке нумерации за вычетом погибших", and the clan is told who acts now (issue 33,
    N19). Helplessness does not pass it: the helpless mafioso is alive and keeps the
    turn, and the spell is bought to stop that very move."""
    state = ctx.state
    if state.phase is not PhaseKind.NIGHT:
        return  # by day the coming night's turn is worked out when it falls
    for clan in state.clans:
        if clan.acting != uid:
            continue
        acting = prospective_acting(state, clan)  # from the next number on, dead skipped
        clan.acting = acting
        p = state.player(acting) if acting is not None else None
        if p is not None:
            clan.next_rank = (p.rank or 0) + 1
            ctx.emit(EventKind.CLAN_TURN, Audience.of_team(Team.clan(clan.number)),
                     actor=acting, night=state.number, passed=uid)


def all_orders_in(state: GameState) -> bool:
    """Whether every living player with a move tonight has given his order(s)."""
    obliged = [p for p in state.living() if moves_allowed(state, p)]
    return state.phase is PhaseKind.NIGHT and bool(obliged) and not missed_night(state)


def announce_all_in(ctx: Ctx) -> None:
    """Tell the master's desk that the night's orders are complete (once per change)."""
    ctx.emit(EventKind.ALL_ORDERS_IN, Audience.master(), night=ctx.state.number)


def start_night(ctx: Ctx) -> None:
    state = ctx.state
    for clan in state.clans:
        acting = prospective_acting(state, clan)
        clan.acting = acting
        p = state.player(acting) if acting is not None else None
        if p is not None:
            clan.next_rank = (p.rank or 0) + 1
            ctx.emit(
                EventKind.CLAN_TURN, Audience.of_team(Team.clan(clan.number)),
                actor=acting, night=state.number,
            )
    # Orders given during the day by players who no longer have a move are void.
    keep: list[Order] = []
    for o in state.orders:
        actor = state.player(o.actor)
        if o.night == state.number and actor is not None and night_action(state, actor):
            keep.append(o)
    state.orders = keep
    if all_orders_in(state):  # every order was given during the day
        announce_all_in(ctx)


@dataclass
class NightResult:
    deaths: dict[int, list[int]] = field(default_factory=dict)  # victim -> credited actors
    causes: dict[int, str] = field(default_factory=dict)  # victim -> cause if not 'killed'
    stories: list[str] = field(default_factory=list)  # told with the kills, published unsigned
    bad_kills: list[int] = field(default_factory=list)
    acted: set[int] = field(default_factory=set)  # gave an order for the night (inactivity)
    steps: list[dict[str, Any]] = field(default_factory=list)  # for the master's desk


def _notice(p: Player, kind: str, night: int, **data: int | str | None) -> None:
    p.notices.append(Notice(kind=kind, night=night, data=data))


def _slot(state: GameState, order: Order) -> int | None:
    """The actor's fixed place in the night order (his row's `order`), None for the dice."""
    a = state.player(order.actor)
    return info(a.role).order if a is not None and a.role is not None else None


def _ordered(ctx: Ctx, orders: list[Order]) -> list[Order]:
    """Fixed slots first (bouncers, then the investigator), then the rest by the dice."""
    state = ctx.state
    slots = {id(o): _slot(state, o) for o in orders}
    fixed = sorted((o for o in orders if slots[id(o)] is not None),
                   key=lambda o: (slots[id(o)] or 0, o.actor, o.slot))
    rest = sorted((o for o in orders if slots[id(o)] is None), key=lambda o: (o.actor, o.slot))
    ctx.rng("night-order").shuffle(rest)
    return fixed + rest


def resolve(ctx: Ctx) -> NightResult:
    """Play the night's orders in order; the master's desk gets every step and why."""
    state = ctx.state
    night = state.number
    result = NightResult(acted={o.actor for o in state.orders if o.night == night})
    given = [o for o in state.orders if o.night == night]
    orders = _within_allowance(state, given)
    for o in given:
        if o not in orders:
            result.steps.append(_step("void", o))
    run = _Night(ctx, result, night)
    sequence = _ordered(ctx, orders)
    result.steps.insert(0, {"step": "sequence", "actors": [o.actor for o in sequence]})
    for order in sequence:
        _play(run, order)
    state.orders = [o for o in state.orders if o.night > night]
    return result


@dataclass
class _Night:
    """A night being resolved: what the orders played so far have done."""

    ctx: Ctx
    result: NightResult
    number: int
    protected: dict[int, int] = field(default_factory=dict)  # target -> bouncer
    dead: set[int] = field(default_factory=set)  # killed tonight so far


def _play(run: _Night, order: Order) -> None:
    """One order, in its turn: a dead actor loses it, a bouncer may stop it."""
    actor = run.ctx.state.player(order.actor)
    if actor is None or not actor.alive or actor.uid in run.dead:
        run.result.steps.append(_step("actor_dead", order))
        return
    t = _aim(run, order, actor)
    if t is not None and not _bounced(run, order, actor, t.uid):
        _act(run, order, actor, t)


def _aim(run: _Night, order: Order, actor: Player) -> Player | None:
    """The order's target, or its fallback when the target died before the night; None
    (and the actor told so) when both are gone."""
    state, ctx, night = run.ctx.state, run.ctx, run.number
    t = state.player(order.target)
    if t is not None and t.alive:
        return t
    target_id = order.fallback if order.fallback is not None else -1
    t = state.player(target_id)
    if t is None or not t.alive:
        run.result.steps.append(_step("target_gone", order))
        _notice(actor, "target_gone", night)
        ctx.emit(EventKind.TARGET_GONE, Audience.to(actor.uid), night=night)
        _clan_hears_failure(ctx, actor, order.action, order.target, gone=True)
        return None
    run.result.steps.append(_step("fallback", order, target=target_id))
    return t


def _bounced(run: _Night, order: Order, actor: Player, target_id: int) -> bool:
    """Whether the target's bouncer stops the order (the Spiked club hits a killer first;
    Destruction breaks through)."""
    state, ctx, night, steps = run.ctx.state, run.ctx, run.number, run.result.steps
    bouncer = run.protected.get(target_id)
    if bouncer is None or bouncer == actor.uid:
        return False
    shop_on = state.options.shop
    if order.action in LETHAL and shop_on:
        _spiked_club(ctx, run.result, run.dead, bouncer, actor)
    if shop_on and _ignores_bouncer(state, actor.uid):
        steps.append(_step("wrecking", order, target=target_id, bouncer=bouncer))
        return False
    steps.append(_step("blocked", order, target=target_id, bouncer=bouncer))
    _notice(actor, "action_failed", night, action=str(order.action))
    ctx.emit(EventKind.ACTION_FAILED, Audience.to(actor.uid), night=night,
             action=str(order.action))
    _clan_hears_failure(ctx, actor, order.action, target_id)
    covered = state.covered.setdefault(bouncer, [])
    if target_id not in covered:
        covered.append(target_id)
    b = state.player(bouncer)
    if b is not None:
        _notice(b, "protection_used", night, target=target_id)
        ctx.emit(EventKind.PROTECTION_USED, Audience.to(bouncer), night=night,
                 target=target_id)
    if order.action in LETHAL:
        state.saves.append((bouncer, target_id))
    return True


def _act(run: _Night, order: Order, actor: Player, t: Player) -> None:
    """The move itself: protect, check, or kill (armour may stop a killer)."""
    state, ctx, night, steps = run.ctx.state, run.ctx, run.number, run.result.steps
    target_id = t.uid
    if order.action is Action.PROTECT:
        run.protected[target_id] = actor.uid
        steps.append(_step("protect", order, target=target_id))
        _notice(actor, "protected", night, target=target_id)
    elif order.action is Action.CHECK:
        role = str(t.role)
        steps.append(_step("check", order, target=target_id, result=role))
        _notice(actor, "check", night, target=target_id, role=role)
        ctx.emit(EventKind.CHECK_RESULT, Audience.to(actor.uid), night=night, target=target_id,
                 role=role)
    elif order.action in LETHAL:
        if state.options.shop and _armour_stops(ctx, actor, t):
            steps.append(_step("armour", order, target=target_id))
            return
        _kill(run, order, actor, t)


def _kill(run: _Night, order: Order, actor: Player, t: Player) -> None:
    ctx, night, result = run.ctx, run.number, run.result
    target_id = t.uid
    again = target_id in run.dead
    run.dead.add(target_id)
    result.deaths.setdefault(target_id, []).append(actor.uid)
    result.steps.append(_step("kill", order, target=target_id, again=again))
    if order.story:
        result.stories.append(order.story)
    kind = EventKind.KILL_DONE if order.action is Action.KILL else EventKind.SHOT_DONE
    _notice(actor, kind, night, target=target_id)
    audience = (Audience.of_team(Team.clan(actor.clan)) if actor.clan is not None
                else Audience.to(actor.uid))
    ctx.emit(kind, audience, night=night, target=target_id)
    if actor.role is not None and t.side in info(actor.role).punished_sides:
        result.bad_kills.append(actor.uid)
        result.steps.append(_step("bad_kill", order, target=target_id))


def _step(kind: str, order: Order, **data: int | str | bool | None) -> dict[str, Any]:
    """One line of the night's explanation for the master: who did what to whom, and why."""
    return {"step": kind, "actor": order.actor, "action": str(order.action),
            "target": order.target, "fallback": order.fallback} | data


def _within_allowance(state: GameState, orders: list[Order]) -> list[Order]:
    """Orders beyond what a player may give tonight (e.g. after Helplessness) are void."""
    out: list[Order] = []
    for o in sorted(orders, key=lambda o: (o.actor, o.slot)):
        actor = state.player(o.actor)
        if actor is None:
            continue
        if sum(1 for x in out if x.actor == o.actor) < moves_allowed(state, actor):
            out.append(o)
    return out


def _ignores_bouncer(state: GameState, uid: int) -> bool:
    return ignores_bouncer(state, uid)


def _spiked_club(ctx: Ctx, result: NightResult, dead_tonight: set[int], bouncer: int,
                 attacker: Player) -> None:
    """The bouncer's club kills the first role player attacking the protected player.

    "Шипованная дубина – позволяет вышибале убить": the bouncer swings it, so a bouncer
    killed earlier in the night's order does not (a dead actor loses his move), while his
    protection, given before anyone else moved ("первым ходит вышибала"), still holds.
    The club stays unused (issue 33, N27)."""
    state = ctx.state
    if bouncer in dead_tonight:
        if any(i.kind == ItemKind.SPIKED_CLUB for i in state.inventory.get(bouncer, [])):
            result.steps.append({"step": "club_dead", "actor": bouncer,
                                 "target": attacker.uid})
        return
    if not use_item(state, bouncer, ItemKind.SPIKED_CLUB):
        return
    ctx.emit(EventKind.CLUB_USED, Audience.to(bouncer), night=state.number, target=attacker.uid)
    holder = state.player(bouncer)
    if holder is not None:  # his card keeps what his place was told (issue 42)
        _notice(holder, "club_used", state.number, target=attacker.uid)
    kind = attacker_kind(holder) if holder is not None else None  # 'Protection from the bouncer'
    if kind is not None and use_item(state, attacker.uid, ItemKind.PROTECTION, kind):
        result.steps.append({"step": "club_armour", "actor": bouncer, "target": attacker.uid})
        _notice(attacker, "armour_saved", state.number)
        ctx.emit(EventKind.ARMOUR_SAVED, Audience.to(attacker.uid), night=state.number)
        return
    result.steps.append({"step": "club", "actor": bouncer, "target": attacker.uid})
    dead_tonight.add(attacker.uid)
    result.deaths.setdefault(attacker.uid, []).append(bouncer)
    result.causes[attacker.uid] = "spiked"


def _armour_stops(ctx: Ctx, attacker: Player, target: Player) -> bool:
    """A 'Protection from X' of the target absorbs one attack of its kind."""
    kind = attacker_kind(attacker)
    if kind is None or not use_item(ctx.state, target.uid, ItemKind.PROTECTION, kind):
        return False
    night = ctx.state.number
    _notice(attacker, "action_failed", night, action="kill")
    ctx.emit(EventKind.ACTION_FAILED, Audience.to(attacker.uid), night=night, action="kill")
    _clan_hears_failure(ctx, attacker, Action.KILL, target.uid)
    _notice(target, "armour_saved", night)  # his card keeps it, as the bouncer's does
    ctx.emit(EventKind.ARMOUR_SAVED, Audience.to(target.uid), night=night)
    return True


def _clan_hears_failure(ctx: Ctx, actor: Player, action: Action, target: int,
                        gone: bool = False) -> None:
    """A clan hears its kill's failure as it hears its success (kill_done): the mover's
    mates learn that the target lives, never why (the mover's own place says as much)."""
    if actor.clan is None or action is not Action.KILL:
        return
    ctx.emit(EventKind.CLAN_KILL_FAILED, Audience.of_team(Team.clan(actor.clan)),
             night=ctx.state.number, actor=actor.uid, target=target, gone=gone)


def missed_night(state: GameState) -> list[int]:
    """Players who had a move this night and gave no order."""
    acted = {o.actor for o in state.orders if o.night == state.number}
    return [p.uid for p in state.living() if moves_allowed(state, p) and p.uid not in acted]
