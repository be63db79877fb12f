"""Module "Inventory and spells" (rules, 'Модуль «Инвентарь и заклинания»').

Items are kept until they trigger; spells act at one moment. Day spells (Sleep,
Silence, Free speech, Shout) act on the current day's votes; items and night
spells (Helplessness, Doubling, Destruction) are bought in the evening, which
here is the night phase before it resolves, or ordered during the day and
carried out right after the lynch, optionally "if X is hanged" (RULES.md, 'Shop').
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from core.game.errors import ErrorCode, RuleError
from core.game.events import Audience, EventKind
from core.game.roles import LETHAL, Action, by_alias, info, rows
from core.game.rules.context import Ctx
from core.game.rules.economy import spending_cap
from core.game.rules.items import WARES, ItemKind, Moment, SpellKind, is_item, items, spells, ware
from core.game.rules.weights import known_voiceless
from core.game.state import GameState, Item, Notice, PendingBuy, PhaseKind, Player, SpellCast

# Views of the catalogue (core/game/rules/items.py) under their historical names.
ITEM_PRICES: dict[str, int] = {str(k): WARES[k].price for k in items()
                               if k is not ItemKind.PROTECTION}
ITEMS: tuple[str, ...] = tuple(str(k) for k in items())
SPELL_PRICES: dict[str, int] = {str(k): WARES[k].price for k in spells()}
DAY_SPELLS = frozenset(str(k) for k in spells(Moment.DAY))
NIGHT_SPELLS = frozenset(str(k) for k in spells(Moment.NIGHT))
PER_DAY_LIMIT = {k: w.per_day for k, w in WARES.items() if w.per_day is not None}
PER_TURN_LIMIT = {k: w.per_turn for k, w in WARES.items() if w.per_turn is not None}
PROTECTION_BASE = WARES[ItemKind.PROTECTION].price
PROTECTION_STEP, SAME_KIND_FACTOR = 5, 1.5


@dataclass(frozen=True)
class Condition:
    """An evening order's condition ("Если произойдет событие А, то покупаю вещь Б"):
    X hanged, X not hanged, or nobody hanged; at most one."""

    hanged: int | None = None
    not_hanged: int | None = None
    nobody: bool = False

    @classmethod
    def of(cls, cmd: Any) -> Condition:
        return cls(hanged=getattr(cmd, "if_hanged", None),
                   not_hanged=getattr(cmd, "unless_hanged", None),
                   nobody=bool(getattr(cmd, "if_nobody_hanged", False)))

    @property
    def given(self) -> bool:
        return self.hanged is not None or self.not_hanged is not None or self.nobody

    def players(self) -> list[int]:
        return [u for u in (self.hanged, self.not_hanged) if u is not None]

    def holds(self, hanged: int | None) -> bool:
        if self.hanged is not None and self.hanged != hanged:
            return False
        if self.not_hanged is not None and self.not_hanged == hanged:
            return False
        return not (self.nobody and hanged is not None)


# --- prices ------------------------------------------------------------------------
def attacker_kinds(state: GameState) -> list[str]:
    """What a 'Protection from X' can be bought against in this game: one per clan, then
    the dealt roles with an attacker kind, night killers before club bearers."""
    kinds = [f"mafia:{c.number}" for c in state.clans]
    roles = {p.role for p in state.players}
    solo = [ri for ri in rows() if ri.attacker and not ri.in_clan and ri.role in roles]
    kinds += [str(ri.attacker) for ri in sorted(solo, key=lambda ri: ri.action not in LETHAL)]
    return kinds


def parse_attacker(text: str | None, state: GameState) -> str | None:
    """What a player typed for 'Protection from X': a kind id, a role name (English or
    Russian), or a clan ('clan 2', 'mafia:2'); 'mafioso' means the only clan if there is one."""
    if text is None:
        return None
    key = " ".join(text.strip().lower().replace("#", " ").split())
    kinds = attacker_kinds(state)
    if key in kinds:
        return key
    words = key.replace(":", " ").split()
    if words and words[-1].isdigit() and words[0] in ("clan", "клан", "mafia", "мафия",
                                                      "mafioso", "мафиози"):
        return f"mafia:{words[-1]}"
    role = by_alias().get(key)
    ri = info(role) if role is not None else None
    if ri is None or ri.attacker is None:
        return key
    if ri.in_clan:
        clans = [k for k in kinds if k.startswith("mafia:")]
        return clans[0] if len(clans) == 1 else key
    return ri.attacker


def attacker_kind(p: Player) -> str | None:
    """The kind a 'Protection from X' must name to stop him: 'mafia:N' for a clan's."""
    ri = info(p.role) if p.role is not None else None
    if ri is None or ri.attacker is None:
        return None
    return f"{ri.attacker}:{p.clan}" if ri.in_clan else ri.attacker


def protection_price(state: GameState, uid: int, against: str) -> int:
    """10 + 5 per armour already bought; the same kind again costs 1.5x (rounded up)."""
    bought = state.armour.get(uid, [])
    base = PROTECTION_BASE + PROTECTION_STEP * len(bought)
    return math.ceil(base * SAME_KIND_FACTOR) if against in bought else base


def price(state: GameState, uid: int, what: str, against: str | None = None) -> int:
    if what == ItemKind.PROTECTION:
        return protection_price(state, uid, against or "")
    if what in ITEM_PRICES:
        return ITEM_PRICES[what]
    if what in SPELL_PRICES:
        return SPELL_PRICES[what]
    raise RuleError(ErrorCode.UNKNOWN_ITEM, name=what)


def catalogue(state: GameState, uid: int) -> list[tuple[str, str | None, int]]:
    """(item or spell, protection kind, the caller's current price), for /shop."""
    rows: list[tuple[str, str | None, int]] = [
        (ItemKind.PROTECTION, k, protection_price(state, uid, k)) for k in attacker_kinds(state)
    ]
    rows += [(k, None, v) for k, v in ITEM_PRICES.items()]
    rows += [(k, None, v) for k, v in SPELL_PRICES.items()]
    return rows


@dataclass(frozen=True)
class ShopRow:
    """One line of /shop with what a renderer needs to place it (items apart from spells)
    without a list of its own."""

    kind: str
    against: str | None
    price: int
    item: bool
    moment: Moment


def shop_rows(state: GameState, uid: int) -> list[ShopRow]:
    """`catalogue` with each line's place in the shop's catalogue (core/game/rules/items.py)."""
    return [ShopRow(kind=str(k), against=a, price=p, item=is_item(k), moment=WARES[k].moment)
            for k, a, p in catalogue(state, uid)]


# --- paying --------------------------------------------------------------------------
def helpless_now(state: GameState, uid: int) -> bool:
    night = state.helpless.get(uid)
    return night is not None and state.number <= night and not state.over


def charge(ctx: Ctx, uid: int, cost: int, what: str, funds: dict[int, int],
           against: str | None = None) -> None:
    """Take lira for a purchase, or refuse (nothing changes)."""
    state = ctx.state
    if helpless_now(state, uid):
        raise RuleError(ErrorCode.HELPLESS)
    have = funds.get(uid, 0)
    if cost > have:
        raise RuleError(ErrorCode.NOT_ENOUGH_LIRA, need=cost, have=have)
    spent = state.spent.get(uid, 0)
    cap = spending_cap(state)
    if spent + cost > cap:
        raise RuleError(ErrorCode.SPENDING_CAP, cap=cap, left=cap - spent)
    state.spent[uid] = spent + cost
    funds[uid] = have - cost
    ctx.emit(EventKind.PURCHASE, Audience.to(uid), uid=uid, item=what, cost=cost, against=against)
    ctx.emit(EventKind.DESK_PURCHASE, Audience.master(), uid=uid, item=what, cost=cost,
             spent=state.spent[uid], cap=cap, against=against)


def _module_on(state: GameState) -> None:
    if not state.options.shop:
        raise RuleError(ErrorCode.MODULE_OFF, module="shop")


# --- buying items ---------------------------------------------------------------------
def buy(ctx: Ctx, buyer: Player, item: str, against: str | None, cond: Condition,
        funds: dict[int, int]) -> None:
    state = ctx.state
    _module_on(state)
    if not is_item(item):
        raise RuleError(ErrorCode.UNKNOWN_ITEM, name=item)
    _check_item(state, buyer, item, against)
    if state.phase is PhaseKind.DAY:
        _order(ctx, buyer, item, against, None, cond, funds)
        return
    if cond.given:
        raise RuleError(ErrorCode.CONDITION_DAY_ONLY)
    _give_item(ctx, buyer, item, against, funds)


def _check_item(state: GameState, buyer: Player, item: str, against: str | None) -> None:
    if item == ItemKind.PROTECTION:
        if against not in attacker_kinds(state):
            raise RuleError(ErrorCode.UNKNOWN_PROTECTION, name=against or "")
    elif against is not None:
        raise RuleError(ErrorCode.NO_TARGET_NEEDED)
    holder = WARES[item].holder
    if holder is not None and buyer.role is not holder:
        raise RuleError(ErrorCode.WRONG_ROLE, role=str(holder))


def _give_item(ctx: Ctx, buyer: Player, item: str, against: str | None,
               funds: dict[int, int]) -> None:
    state = ctx.state
    charge(ctx, buyer.uid, price(state, buyer.uid, item, against), item, funds, against)
    if item == ItemKind.PROTECTION and against:
        state.armour.setdefault(buyer.uid, []).append(against)
    state.inventory.setdefault(buyer.uid, []).append(Item(kind=item, against=against))


def _order(ctx: Ctx, buyer: Player, what: str, against: str | None, target: int | None,
           cond: Condition, funds: dict[int, int]) -> None:
    """During the day: check now that it could be paid, carry it out in the evening."""
    state = ctx.state
    if sum((cond.hanged is not None, cond.not_hanged is not None, cond.nobody)) > 1:
        raise RuleError(ErrorCode.ONE_CONDITION)
    for uid in cond.players():
        t = state.player(uid)
        if t is None or not t.alive:
            raise RuleError(ErrorCode.NOT_A_PLAYER_TARGET, target=uid)
    cost = price(state, buyer.uid, what, against)
    if helpless_now(state, buyer.uid):
        raise RuleError(ErrorCode.HELPLESS)
    if cost > funds.get(buyer.uid, 0):
        raise RuleError(ErrorCode.NOT_ENOUGH_LIRA, need=cost, have=funds.get(buyer.uid, 0))
    state.pending.append(PendingBuy(uid=buyer.uid, what=what, against=against, target=target,
                                    if_hanged=cond.hanged, unless_hanged=cond.not_hanged,
                                    if_nobody_hanged=cond.nobody, day=state.number,
                                    seq=state.seq))
    ctx.emit(EventKind.BUY_ORDERED, Audience.to(buyer.uid), item=what, if_hanged=cond.hanged,
             unless_hanged=cond.not_hanged, if_nobody_hanged=cond.nobody, target=target,
             against=against)
    ctx.emit(EventKind.DESK_BUY_ORDERED, Audience.master(), uid=buyer.uid, item=what,
             if_hanged=cond.hanged, unless_hanged=cond.not_hanged,
             if_nobody_hanged=cond.nobody, target=target, against=against)


def run_evening(ctx: Ctx, hanged: int | None, funds: dict[int, int]) -> None:
    """Carry out the day's orders after the lynch, in the order they were given. Called
    only while the game goes on: nothing is charged once it has ended."""
    state = ctx.state
    orders, state.pending = state.pending, []
    for order in sorted(orders, key=lambda o: o.seq):
        buyer = state.player(order.uid)
        if buyer is None or not buyer.alive:
            continue
        cond = Condition(hanged=order.if_hanged, not_hanged=order.unless_hanged,
                         nobody=order.if_nobody_hanged)
        if not cond.holds(hanged):
            _notice(buyer, "buy_skipped", state.number, order)
            ctx.emit(EventKind.BUY_SKIPPED, Audience.to(order.uid), item=order.what,
                     against=order.against)
            ctx.emit(EventKind.DESK_BUY_SKIPPED, Audience.master(), uid=order.uid, item=order.what,
                     if_hanged=order.if_hanged, unless_hanged=order.unless_hanged,
                     if_nobody_hanged=order.if_nobody_hanged, against=order.against)
            continue
        try:
            if order.what in DAY_SPELLS:
                assert order.target is not None
                target = state.player(order.target)
                if target is None:
                    raise RuleError(ErrorCode.NOT_A_PLAYER_TARGET, target=order.target)
                day_spell_target(state, target)
                _cast_day(ctx, buyer, order.what, target, funds, state.number + 1)
            elif order.what in NIGHT_SPELLS:
                assert order.target is not None
                _cast_night(ctx, buyer, order.what, order.target, funds)
            else:
                _give_item(ctx, buyer, order.what, order.against, funds)
        except RuleError as err:
            _notice(buyer, "buy_failed", state.number, order)
            ctx.emit(EventKind.BUY_FAILED, Audience.to(order.uid), item=order.what, code=err.code,
                     against=order.against)
            ctx.emit(EventKind.DESK_BUY_FAILED, Audience.master(), uid=order.uid, item=order.what,
                     code=err.code, params=dict(err.params), against=order.against)
            continue
        if cond.given:  # a conditional order is confirmed when carried out, with its condition
            _notice(buyer, "buy_done", state.number, order)
            ctx.emit(EventKind.BUY_DONE, Audience.to(order.uid), item=order.what,
                     against=order.against, if_hanged=order.if_hanged,
                     unless_hanged=order.unless_hanged, if_nobody_hanged=order.if_nobody_hanged,
                     target=order.target)


def _notice(buyer: Player, kind: str, day: int, order: PendingBuy) -> None:
    """An evening order's result on the buyer's card, as his place was told (issue 42)."""
    buyer.notices.append(Notice(kind=kind, night=day,
                                data={"item": order.what, "against": order.against}))


# --- spells ---------------------------------------------------------------------------
def spell_day(state: GameState) -> int:
    """The day a day spell cast now acts on: today during a voting day; bought in the
    evening (the night, or day 0 which has no vote) it acts from the next day's opening,
    before anyone can vote."""
    if state.phase is PhaseKind.DAY and state.number > 0:
        return state.number
    return state.number + 1


def day_spell_target(state: GameState, target: Player) -> None:
    """Sleep, Silence and Free speech act on a player's votes: they reach whoever votes,
    a ghost too while the occultist lives ("все погибшие имеют право голоса"; the Shout's
    clause weighs ghosts' votes: "для последних 0,5"). A dead player known to have no vote
    is refused as such (issue 33, S34): removed, excluded, or no occultist may live. One
    whose only lack is a dead occultist whose role is hidden is accepted, charged and
    wasted, like Doubling on a player without a move (issue 43, RULES.md §13)."""
    if target.alive:
        return
    if known_voiceless(state, target.uid):
        raise RuleError(ErrorCode.TARGET_NO_VOTE, target=target.uid)


def spell_target(state: GameState, caster: Player, spell: str, target_id: int) -> Player:
    """The player `spell` may be cast on, or the refusal: a day spell reaches whoever
    votes, a ghost too; a night spell only the living (a ghost has no night move)."""
    w = ware(spell)
    if w is None or w.is_item or w.moment is Moment.VOTE:  # Shout comes with a vote
        raise RuleError(ErrorCode.UNKNOWN_SPELL, name=spell)
    target = state.player(target_id)
    if target is None:
        raise RuleError(ErrorCode.NOT_A_PLAYER_TARGET, target=target_id)
    if spell in DAY_SPELLS:
        day_spell_target(state, target)
    elif not target.alive:
        raise RuleError(ErrorCode.TARGET_DEAD, target=target_id)
    if spell in NIGHT_SPELLS:
        _check_night_spell(state, caster, spell, target)
    return target


def cast(ctx: Ctx, caster: Player, spell: str, target_id: int, cond: Condition,
         funds: dict[int, int]) -> None:
    state = ctx.state
    _module_on(state)
    target = spell_target(state, caster, spell, target_id)
    if cond.given:  # an evening order: tomorrow's day spell, or tonight's night spell
        if state.phase is not PhaseKind.DAY:
            raise RuleError(ErrorCode.CONDITION_DAY_ONLY)
        _order(ctx, caster, spell, None, target.uid, cond, funds)
        return
    if spell in DAY_SPELLS:
        _cast_day(ctx, caster, spell, target, funds, spell_day(state))
        return
    if state.phase is PhaseKind.DAY:
        _order(ctx, caster, spell, None, target.uid, cond, funds)
        return
    _cast_night(ctx, caster, spell, target.uid, funds)


def cast_turn(s: SpellCast) -> int:
    """The turn a spell was cast in (day N and night N: turn N); a game stored before
    the turn was kept counts by the day it acts on, as it was played."""
    return s.turn if s.turn is not None else s.number


def _cast_day(ctx: Ctx, caster: Player, spell: str, target: Player,
              funds: dict[int, int], day: int) -> None:
    state = ctx.state
    # The limit is per target, but other casters' spells are secret: only the caster's
    # own casts may refuse him (he knows them); beyond the limit a spell is paid and
    # wasted (`counted_spells`), so acceptance tells nothing (RULES.md, "Secrecy").
    mine = [s for s in state.spells if s.phase is PhaseKind.DAY and s.spell == spell
            and s.target == target.uid and s.caster == caster.uid]
    turn = state.number  # the turn cast in: day N and the night after it are turn N
    by_turn = PER_TURN_LIMIT.get(spell)
    if by_turn is not None and sum(1 for s in mine if cast_turn(s) == turn) >= by_turn:
        raise RuleError(ErrorCode.SPELL_TURN_LIMIT, limit=by_turn)
    by_day = PER_DAY_LIMIT.get(spell)
    if by_day is not None and sum(1 for s in mine if s.number == day) >= by_day:
        raise RuleError(ErrorCode.SPELL_LIMIT, limit=by_day)
    voting_now = state.phase is PhaseKind.DAY and state.number == day
    if spell == SpellKind.SLEEP and voting_now and \
            any(m.voter == target.uid for m in state.vote_log):
        raise RuleError(ErrorCode.ALREADY_VOTED, target=target.uid)
    charge(ctx, caster.uid, SPELL_PRICES[spell], spell, funds)
    state.spells.append(SpellCast(spell=spell, caster=caster.uid, target=target.uid,
                                  phase=PhaseKind.DAY, number=day, seq=state.seq, turn=turn))
    evening = not (state.phase is PhaseKind.DAY and state.number == day)
    ctx.emit(EventKind.SPELL_CAST, Audience.to(caster.uid), spell=spell, target=target.uid, day=day,
             evening=evening)
    ctx.emit(EventKind.DESK_SPELL, Audience.master(), uid=caster.uid, spell=spell,
             target=target.uid)
    if spell != SpellKind.FREE_SPEECH:
        # his card keeps what his place was told (issue 42)
        target.notices.append(Notice(kind="spell_on_you_day", night=day, data={"spell": spell}))
        ctx.emit(EventKind.SPELL_ON_YOU, Audience.to(target.uid), spell=spell)


def _check_night_spell(state: GameState, caster: Player, spell: str, target: Player) -> None:
    if spell == SpellKind.DESTRUCTION:
        # it breaks through a protection: nothing to a role without a move or a protector
        if caster.role is None or info(caster.role).action in (None, Action.PROTECT):
            raise RuleError(ErrorCode.DESTRUCTION_ROLE)
        if target.uid != caster.uid:
            raise RuleError(ErrorCode.SELF_ONLY)
    # Doubling on a player without a night move is accepted and wasted: refusing it
    # would tell the caster the target's hidden role (RULES.md, "Secrecy of refusals").
    if state.phase is PhaseKind.NIGHT and state.number == 0 and \
            spell == SpellKind.HELPLESSNESS:
        return


def _cast_night(ctx: Ctx, caster: Player, spell: str, target_id: int,
                funds: dict[int, int]) -> None:
    """A night spell, for the night being played (or the one the evening leads to)."""
    state = ctx.state
    target = state.player(target_id)
    if target is None or not target.alive:
        raise RuleError(ErrorCode.TARGET_DEAD, target=target_id)
    charge(ctx, caster.uid, SPELL_PRICES[spell], spell, funds)
    night = state.number
    state.spells.append(SpellCast(spell=spell, caster=caster.uid, target=target_id,
                                  phase=PhaseKind.NIGHT, number=night, seq=state.seq,
                                  turn=night))
    ctx.emit(EventKind.SPELL_CAST, Audience.to(caster.uid), spell=spell, target=target_id)
    ctx.emit(EventKind.DESK_SPELL, Audience.master(), uid=caster.uid, spell=spell, target=target_id)
    if spell == SpellKind.HELPLESSNESS:
        if _use_item(state, target_id, ItemKind.CHEQUE_BOOK):
            ctx.emit(EventKind.DESK_SPELL_BLOCKED, Audience.master(), uid=caster.uid,
                     spell=spell, target=target_id)
            saved = state.player(target_id)
            if saved is not None:  # his card keeps what his place was told (issue 42)
                saved.notices.append(Notice(kind="cheque_book_saved", night=night))
            ctx.emit(EventKind.CHEQUE_BOOK_SAVED, Audience.to(target_id))
            ctx.emit(EventKind.SPELL_BLOCKED, Audience.to(caster.uid), spell=spell,
                     target=target_id)
            return
        state.helpless[target_id] = night
        target.notices.append(Notice(kind="spell_on_you_night", night=night,
                                     data={"spell": spell}))
        ctx.emit(EventKind.SPELL_ON_YOU, Audience.to(target_id), spell=spell)
    elif spell == SpellKind.DOUBLING:
        state.doubled[target_id] = night
        target.notices.append(Notice(kind="spell_on_you_night", night=night,
                                     data={"spell": spell}))
        ctx.emit(EventKind.SPELL_ON_YOU, Audience.to(target_id), spell=spell)
    elif spell == SpellKind.DESTRUCTION:
        state.wrecking[target_id] = night


def _use_item(state: GameState, uid: int, kind: str, against: str | None = None) -> bool:
    items = state.inventory.get(uid, [])
    for i, item in enumerate(items):
        if item.kind == kind and (against is None or item.against == against):
            del items[i]
            return True
    return False


def use_item(state: GameState, uid: int, kind: str, against: str | None = None) -> bool:
    return _use_item(state, uid, kind, against)


# --- effects on the day's votes ---------------------------------------------------------
@dataclass
class DayEffects:
    silenced: set[int] = field(default_factory=set)
    sleeps: dict[int, int] = field(default_factory=dict)  # voter -> votes that do not count
    clocks_used: dict[int, int] = field(default_factory=dict)  # clocks spent (even wasted)


def day_effects(state: GameState) -> DayEffects:
    """Sleep and Silence after Alarm clocks, then Free speech (the rules' order)."""
    fx = DayEffects()
    if not state.options.shop or state.phase is not PhaseKind.DAY:
        return fx
    today = counted_spells(
        [s for s in state.spells if s.phase is PhaseKind.DAY and s.number == state.number])
    for target in sorted({s.target for s in today}):
        harm = [s for s in today
                if s.target == target and s.spell in (SpellKind.SLEEP, SpellKind.SILENCE)]
        if not harm:
            continue
        clocks = sum(1 for i in state.inventory.get(target, []) if i.kind == ItemKind.ALARM_CLOCK)
        standing = _after_clocks(harm, clocks, fx, target)
        standing.sort(key=lambda s: (s.spell != SpellKind.SILENCE, s.seq))
        speech = sum(1 for s in today if s.target == target and s.spell == SpellKind.FREE_SPEECH)
        remaining = standing[speech:]
        if any(s.spell == SpellKind.SILENCE for s in remaining):
            fx.silenced.add(target)
        sleeps = sum(1 for s in remaining if s.spell == SpellKind.SLEEP)
        if sleeps:
            fx.sleeps[target] = sleeps
    return fx


def _after_clocks(harm: list[SpellCast], clocks: int, fx: DayEffects, target: int
                  ) -> list[SpellCast]:
    """The spells the target's Alarm clocks leave standing. "Будильник – снимает заклинания
    молчания и сна. Действует лишь однажды. Соответственно, если в один ход таких
    заклинаний было наложено два, то будильник тратится впустую": the spells are taken turn
    by turn as cast (the evening's before the day's); a turn's spells are all lifted, one
    clock each, if the clocks left suffice; otherwise the clocks left are wasted on them
    and they stand. Records the clocks spent in `fx`."""
    used, standing = 0, []
    for turn in sorted({cast_turn(s) for s in harm}):
        batch = [s for s in harm if cast_turn(s) == turn]
        left = clocks - used
        if left >= len(batch):
            used += len(batch)
            continue
        used = clocks  # too few for this turn's spells: wasted on them
        standing += batch
    if used:
        fx.clocks_used[target] = used
    return standing


def counted_spells(today: list[SpellCast]) -> list[SpellCast]:
    """The day's spells that act: per target, the first `PER_DAY_LIMIT` of each spell by
    the order they were cast (Silence: the first `PER_TURN_LIMIT` cast in each turn); the
    rest were paid and are wasted."""
    seen: dict[tuple[int, str, int | None], int] = {}
    out = []
    for s in sorted(today, key=lambda s: s.seq):
        per_turn = PER_TURN_LIMIT.get(s.spell)
        key = (s.target, s.spell, cast_turn(s) if per_turn is not None else None)
        n = seen[key] = seen.get(key, 0) + 1
        limit = per_turn if per_turn is not None else PER_DAY_LIMIT.get(s.spell)
        if limit is None or n <= limit:
            out.append(s)
    return out


def voided_marks(state: GameState) -> set[int]:
    """Seqs of today's vote marks that do not count because of Sleep or Silence."""
    fx = day_effects(state)
    if not fx.silenced and not fx.sleeps:
        return set()
    void: set[int] = set()
    left = dict(fx.sleeps)
    for mark in state.vote_log:
        if mark.voter in fx.silenced:
            void.add(mark.seq)
        elif mark.target is not None and left.get(mark.voter, 0) > 0:
            void.add(mark.seq)
            left[mark.voter] -= 1
    return void


def shout(ctx: Ctx, voter: Player, target: int, funds: dict[int, int]) -> int:
    """Pay for a Shout on a vote: "Приводит к весу голоса на базовую стоимость", +1 base
    weight on the vote it is cast on, a second one on the same vote another +1; "Не может
    быть использовано чаще двух раз в день" (per voter). Returns the shouts it adds."""
    state = ctx.state
    if not state.options.shop:
        raise RuleError(ErrorCode.SHOUT_NEEDS_SHOP)
    used = sum(1 for s in state.spells if s.spell == SpellKind.SHOUT and s.caster == voter.uid
               and s.phase is PhaseKind.DAY and s.number == state.number)
    if used >= PER_DAY_LIMIT[SpellKind.SHOUT]:
        raise RuleError(ErrorCode.SPELL_LIMIT, limit=PER_DAY_LIMIT[SpellKind.SHOUT])
    charge(ctx, voter.uid, SPELL_PRICES[SpellKind.SHOUT], SpellKind.SHOUT, funds)
    state.spells.append(SpellCast(spell=str(SpellKind.SHOUT), caster=voter.uid, target=target,
                                  phase=PhaseKind.DAY, number=state.number, seq=state.seq,
                                  turn=state.number))
    return 1


def close_day(ctx: Ctx) -> None:
    """Spend the Alarm clocks the day's spells used (or wasted)."""
    state = ctx.state
    for uid, n in day_effects(state).clocks_used.items():
        for _ in range(n):
            _use_item(state, uid, ItemKind.ALARM_CLOCK)
        owner = state.player(uid)
        if owner is not None:  # his card keeps what his place was told (issue 42)
            owner.notices.append(Notice(kind="alarm_clock_used", night=state.number,
                                        data={"count": n}))
        ctx.emit(EventKind.ALARM_CLOCK_USED, Audience.to(uid), count=n)


# --- effects at night ------------------------------------------------------------------------
def moves(state: GameState, p: Player, base: int) -> int:
    """Night moves after spells; a Doubling ordered today already counts for tonight's
    orders (if it is not carried out, the second order is dropped at resolution)."""
    night = state.number
    if base == 0:
        return 0
    if state.helpless.get(p.uid) == night:
        return 0
    if state.doubled.get(p.uid) == night:
        return 2
    if state.phase is PhaseKind.DAY and any(
        o.what == SpellKind.DOUBLING and o.target == p.uid for o in state.pending
    ):
        return 2
    return base


def ignores_bouncer(state: GameState, uid: int) -> bool:
    return state.wrecking.get(uid) == state.number


def inventory_of(state: GameState, uid: int) -> list[Item]:
    return list(state.inventory.get(uid, []))


def pending_of(state: GameState, uid: int) -> list[PendingBuy]:
    return [o for o in state.pending if o.uid == uid]
