"""Module "Cryptography" (rules, 'Модуль «Криптография»').

The sender of an anonymous post or a whisper never appears in a public or
private event's data: only the master may see it, and only if the master
option says so. Posting is rate-limited per player by the commands' own
timestamps, so replays decide the same way.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from core.game.errors import ErrorCode, RuleError
from core.game.events import Audience, EventKind
from core.game.roles import Role, info, rows
from core.game.rules.context import Ctx
from core.game.state import GameState, Notice, Player

MIN_GAP = timedelta(seconds=20)
PER_PHASE = 5


def _module_on(state: GameState) -> None:
    if not state.options.crypto:
        raise RuleError(ErrorCode.MODULE_OFF, module="crypto")


def dealt_role(state: GameState, p: Player) -> Role | None:
    """The role a player was dealt at the start (a promoted sergeant was a sergeant)."""
    if p.uid in state.promoted:  # he holds the role he inherited (the row's `heir_of`)
        return next((ri.role for ri in rows() if ri.heir_of is p.role), p.role)
    return p.role


def roles_in_game(state: GameState) -> list[str]:
    """The roles dealt at the start, whoever holds them now: the list is public (the
    opening names it), so it must not change when a sergeant is promoted, or a refusal
    would tell everybody the investigator is out (RULES.md, "Secrecy of refusals")."""
    dealt = {str(r) for p in state.players if (r := dealt_role(state, p)) is not None}
    return [str(r) for r in Role if str(r) in dealt]


def _signature(state: GameState, signature: str | None) -> str | None:
    if signature is None or signature in ("", "anonymous"):
        return None
    if signature not in roles_in_game(state):
        raise RuleError(ErrorCode.UNKNOWN_ROLE, name=signature)
    return signature


def _rate(state: GameState, sender: Player, at: datetime) -> None:
    posts = [t for uid, serial, t in state.posts if uid == sender.uid and serial == state.serial]
    if len(posts) >= PER_PHASE:
        raise RuleError(ErrorCode.POST_LIMIT, limit=PER_PHASE)
    last = max((t for uid, _, t in state.posts if uid == sender.uid), default=None)
    if last is not None and at - last < MIN_GAP:
        raise RuleError(ErrorCode.POST_TOO_SOON,
                        seconds=int((MIN_GAP - (at - last)).total_seconds()) + 1)
    state.posts.append((sender.uid, state.serial, at))


def anon(ctx: Ctx, sender: Player, text: str, signature: str | None, at: datetime) -> None:
    state = ctx.state
    _module_on(state)
    sig = _signature(state, signature)
    _rate(state, sender, at)
    ctx.emit(EventKind.ANON_POST, text=text, signature=sig)
    if state.options.master_sees_anon:
        ctx.emit(EventKind.ANON_SENDER, Audience.master(), uid=sender.uid, text=text)


def whisper(ctx: Ctx, sender: Player, role: str, text: str, signature: str | None,
            at: datetime) -> None:
    state = ctx.state
    _module_on(state)
    if role not in roles_in_game(state):
        raise RuleError(ErrorCode.UNKNOWN_ROLE, name=role)
    sig = _signature(state, signature)
    _rate(state, sender, at)
    holders = [p for p in state.living() if str(p.role) == role]
    for p in holders:
        p.notices.append(Notice(kind="whisper", night=state.number,
                                data={"text": text, "signature": sig, "role": role}))
    # Accepted even when nobody holds the role: a refusal would tell the sender so.
    ctx.emit(EventKind.WHISPER_SENT, Audience.to(sender.uid), role=role)
    if holders:
        ctx.emit(EventKind.WHISPER, Audience.to(*[p.uid for p in holders]), text=text,
                 signature=sig, role=role)
    if state.options.master_sees_anon:
        ctx.emit(EventKind.ANON_SENDER, Audience.master(), uid=sender.uid, text=text)


def last_check(state: GameState, actor: Player) -> Notice:
    """The check a public move would reveal, or the refusal: the guard of /reveal."""
    _module_on(state)
    if not state.options.public_moves:
        raise RuleError(ErrorCode.PUBLIC_MOVES_OFF)
    if actor.role is None or not info(actor.role).can_reveal:
        raise RuleError(ErrorCode.WRONG_ROLE, role="investigator")
    checks = [n for n in actor.notices if n.kind == "check" and not n.data.get("revealed")]
    if not checks:
        raise RuleError(ErrorCode.NOTHING_TO_REVEAL)
    return checks[-1]


def reveal(ctx: Ctx, actor: Player) -> None:
    last = last_check(ctx.state, actor)
    last.data["revealed"] = 1
    # Public: the night, the target and his role, never who checked or which of the two
    # roles did (the advocate's reveal would point at the clan, the investigator's at him).
    ctx.emit(EventKind.PUBLIC_MOVE, target=last.data["target"], role=last.data["role"],
             night=last.night)
