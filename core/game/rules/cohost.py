"""The co-host (RULES.md §8, "The co-host", an addition): a second host the master
names, who may use every master tool and reads the desk and the log, is never seated
and never was, and becomes the master at a handover or when the master leaves."""

from __future__ import annotations

from core.game import commands as c
from core.game.access import cohost_refusal
from core.game.errors import ErrorCode, RuleError
from core.game.events import Audience, EventKind
from core.game.rules.context import Ctx
from core.game.state import GameState


def _host(s: GameState, uid: int) -> None:
    """Written down as a host of this game: never seated in it (access.seat_refusal)."""
    if uid != s.master and uid not in s.hosts:
        s.hosts.append(uid)


def apply(ctx: Ctx, cmd: c.Cohost) -> None:
    """Name, remove or succeed the co-host; the table is told each time."""
    s = ctx.state
    if cmd.by == s.cohost and not (cmd.action == "handover" and cmd.left):
        raise RuleError(ErrorCode.COHOST_ONLY_MASTER)  # he does not name or succeed himself
    _host(s, cmd.by)  # a stand-in host who names one has used the master's tools
    if cmd.action == "add":
        if cmd.target is None:
            raise RuleError(ErrorCode.COHOST_NONE)
        refusal = cohost_refusal(s, cmd.target, bot=cmd.bot)
        if refusal is not None:
            raise refusal
        previous = s.cohost
        s.cohost = cmd.target
        _host(s, cmd.target)
        if any(x.uid == cmd.target for x in s.standby):  # hosting rules out a seat
            s.standby = [x for x in s.standby if x.uid != cmd.target]
            ctx.emit(EventKind.DESK_STANDBY, Audience.master(), uid=cmd.target, on=False,
                     count=len(s.standby))
        ctx.emit(EventKind.COHOST_NAMED, uid=cmd.target, previous=previous)
        return
    current = s.cohost
    if current is None:
        raise RuleError(ErrorCode.COHOST_NONE)
    if cmd.action == "remove":
        if cmd.target is not None and cmd.target != current:
            raise RuleError(ErrorCode.COHOST_NOT_THEM, target=cmd.target)
        s.cohost = None
        ctx.emit(EventKind.COHOST_REMOVED, uid=current)
        return
    old = s.master
    s.master, s.cohost = current, None
    s.hosts = [u for u in s.hosts if u != current]
    _host(s, old)  # the former master read every role: never seated either
    ctx.emit(EventKind.MASTER_HANDED_OVER, old=old, new=current, left=cmd.left)
