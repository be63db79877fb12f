"""Module "Currency" (rules, 'Модуль «Валюта»'): payouts computed from the finished game.

All amounts are whole lira. The victory prize is split with the largest
remainder method in seat order, so the shares always add up to the prize
exactly: no lira is created or lost by rounding (RULES.md, 'Currency').
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from core.game.events import EventKind
from core.game.roles import Side, is_role_player
from core.game.state import GameState, Payout, Player
from core.game.team import Team, TeamKind

OPENING_BALANCE = 60
SPEND_PER_PLAYER = 15
MASTER_PER_PLAYER = 5
PRIZE_PER_PLAYER = 5
KILL_BONUS = 3
SAVE_BONUS = 3


def spending_cap(state: GameState) -> int:
    return SPEND_PER_PLAYER * len(state.players)


def friendly(a: Player, b: Player) -> bool:
    """Same team, or honest citizens with the positives or the neutrals they win with."""
    if a.team == b.team:
        return True
    sides = {a.side, b.side}
    return sides in ({Side.CITIZENS, Side.POSITIVE}, {Side.CITIZENS, Side.NEUTRAL})


def days_lived(state: GameState, p: Player) -> int:
    """Days 0..N where N is the day of death (or the last day played)."""
    return (p.death.number if p.death else state.number) + 1


def _vote_pays(state: GameState, voter: Player, target: Player, day: int,
               hanged: int | None) -> bool:
    if voter.role is None or target.role is None or voter.team == target.team:
        return False
    if voter.side is Side.NEGATIVE:
        return target.side is not Side.CITIZENS or target.uid == hanged
    if voter.side is Side.POSITIVE:
        return target.side in (Side.NEGATIVE, Side.NEUTRAL)
    if voter.side is Side.NEUTRAL:
        return target.side in (Side.NEGATIVE, Side.POSITIVE)
    # honest citizens: any role player while a neutral and a positive live
    if not is_role_player(target.role):
        return False
    alive_at_start = [p for p in state.players if p.death is None or p.death.number >= day]
    both_live = any(p.side is Side.NEUTRAL for p in alive_at_start) and any(
        p.side is Side.POSITIVE for p in alive_at_start)
    return both_live or target.side is Side.NEGATIVE


#: the removals ("исключается из игры"): for missed turns, and by the master
REMOVED = ("inactive", "kicked")


def forfeits_prize(state: GameState, p: Player) -> bool:
    """A winner removed for missed turns or by the master has no share of the prize
    (master option `removed_prize`, default off): the removal is a sanction, and a forum
    master would not pay the prize to whom he sent off. What he earned by playing (days,
    votes, kills, saves) stays his."""
    return (not state.options.removed_prize and p.death is not None
            and p.death.cause in REMOVED)


def prize_shares(state: GameState) -> dict[int, int]:
    """The victory prize among the winners. "Если выживших победителей меньше, чем
    мертвых" it goes in halves; "Если живых больше, чем мертвых", equally. As many living
    as dead (the original says nothing) is a reading: equally, which gives every winner
    the same share the halves would, up to the odd lira of rounding (RULES.md §9)."""
    prize = PRIZE_PER_PLAYER * len(state.players)
    if state.draw or not state.winners:
        return {}
    winners = [p for p in state.players
               if p.team in state.winners and not forfeits_prize(state, p)]
    alive = {p.side for p in state.living()}
    if Team.of(TeamKind.CITIZENS) in state.winners and not alive & {Side.NEUTRAL, Side.POSITIVE}:
        winners = [p for p in winners if p.side is Side.CITIZENS]
    elif Team.of(TeamKind.NEUTRAL) in state.winners and Side.CITIZENS not in alive:
        winners = [p for p in winners if p.side is Side.NEUTRAL]
    living = [p for p in winners if p.alive]
    dead = [p for p in winners if not p.alive]
    if living and len(living) < len(dead):
        half = prize // 2
        shares = _split(half, living) | _split(prize - half, dead)
    else:
        shares = _split(prize, winners)
    return shares


def _split(amount: int, players: list[Player]) -> dict[int, int]:
    if not players:
        return {}
    base, rest = divmod(amount, len(players))
    return {p.uid: base + (1 if i < rest else 0) for i, p in enumerate(players)}


def payouts(state: GameState) -> list[Payout]:
    """Every payout of the section, one line per player and reason."""
    lines: list[Payout] = []
    by_uid = {p.uid: p for p in state.players}
    for p in state.players:
        lines.append(Payout(uid=p.uid, amount=days_lived(state, p), reason="days",
                            count=days_lived(state, p)))
    vote_count: dict[int, int] = defaultdict(int)
    for day in state.days:
        for voter_id, target_id in day.votes.items():
            voter, target = by_uid.get(voter_id), by_uid.get(target_id)
            if voter is None or target is None or day.weights.get(voter_id, 0) == 0:
                continue
            if _vote_pays(state, voter, target, day.number, day.hanged):
                vote_count[voter_id] += 1
    kills: dict[int, int] = defaultdict(int)
    for victim in state.players:
        if victim.death is None or victim.role is None or not is_role_player(victim.role):
            continue
        for killer_id in set(victim.death.by):
            killer = by_uid.get(killer_id)
            if killer is not None and not friendly(killer, victim):
                kills[killer_id] += 1
    saves: dict[int, int] = defaultdict(int)
    for saver_id, saved_id in state.saves:
        saver, saved = by_uid.get(saver_id), by_uid.get(saved_id)
        if saver is not None and saved is not None and friendly(saver, saved):
            saves[saver_id] += 1
    for day in state.days:
        decider = by_uid.get(day.decider) if day.decider is not None else None
        if decider is None:
            continue
        for tied in day.tied:
            spared = by_uid.get(tied)
            if tied != day.hanged and spared is not None and friendly(decider, spared):
                saves[decider.uid] += 1
    for uid, n in vote_count.items():
        lines.append(Payout(uid=uid, amount=n, reason="votes", count=n))
    for uid, n in kills.items():
        lines.append(Payout(uid=uid, amount=KILL_BONUS * n, reason="kills", count=n))
    for uid, n in saves.items():
        lines.append(Payout(uid=uid, amount=SAVE_BONUS * n, reason="saves", count=n))
    for uid, amount in prize_shares(state).items():
        lines.append(Payout(uid=uid, amount=amount, reason="prize"))
    for bonus in state.bonuses:
        lines.append(Payout(uid=bonus.uid, amount=bonus.amount, reason="bonus"))
    lines.append(Payout(uid=state.master, amount=MASTER_PER_PLAYER * len(state.players),
                        reason="master"))
    return [line for line in lines if line.amount > 0]


def ledger_entries(kind: str, data: dict[str, Any], master: int) -> list[tuple[int, int, str]]:
    """Wallet changes an event implies: (user, amount, reason). Storage writes them
    in the same transaction as the state change."""
    out: list[tuple[int, int, str]] = []
    if kind == EventKind.PAYOUTS:
        for line in data["lines"]:
            out.append((int(line["uid"]), int(line["amount"]), f"payout.{line['reason']}"))
    elif kind == EventKind.THANKED:
        uid, premium = int(data["uid"]), int(data["premium"])
        out.append((master, 1, "thanks"))
        if premium:
            out += [(uid, -premium, "premium.paid"), (master, premium, "premium.received")]
    elif kind == EventKind.PURCHASE:
        out.append((int(data["uid"]), -int(data["cost"]), f"shop.{data['item']}"))
    return out
