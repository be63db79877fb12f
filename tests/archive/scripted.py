"""A scripted game with every kind of record the archive shows, logged as the storage
logs it: (seq, command, events). Deterministic (seeded); used by the archive tests."""

from __future__ import annotations

import contextlib

from core.game import commands as c
from core.game.engine import legal_targets, night_move
from core.game.errors import RuleError
from core.game.events import Event
from core.game.roles import Role
from core.game.state import GameState, Options, PhaseKind
from core.play.sim import MASTER, Table

NAMES = ["Ann", "Bob <b>bold</b>", "Cid & Co", "Dan", "Eve \"quoted\"", "Fay", "Gus", "Hal",
         "Ivy", "Jon"]
ROLES = "mafioso x2; investigator; sergeant; bouncer; killer; citizen x4"
EVIL_TEXT = "<script>window.pwned = 1</script><img src=\"http://example.com/x.png\">"


class LoggedTable(Table):
    def __init__(self, *args: object, **kwargs: object) -> None:
        self.log: list[tuple[int, c.Command, list[Event]]] = []
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]

    def send(self, cmd: c.Command) -> list[Event]:
        events = super().send(cmd)
        self.log.append((self.state.seq, self.played.commands[-1], events))
        return events


def play_scripted(seed: int = 11, options: Options | None = None
                  ) -> tuple[GameState, LoggedTable]:
    """Returns the initial state and the finished table (with its log)."""
    options = options or Options(currency=True, shop=True, crypto=True, master_sees_anon=True,
                                 language="en")
    table = LoggedTable(seed, 0, options)
    initial = table.state
    for i, name in enumerate(NAMES):
        table.send(c.Join(by=100 + i, at=table.clock, name=name))
    table.send(c.Configure(by=MASTER, at=table.clock, roles=ROLES))
    table.send(c.Start(by=MASTER, at=table.tick()))
    for _ in range(60):
        s = table.state
        if s.over:
            return initial, table
        if s.phase is PhaseKind.DAY and s.number == 0:
            for p in s.living():
                table.send(c.CheckIn(by=p.uid, at=table.tick()))
            sender = s.living()[0].uid
            table.send(c.Anon(by=sender, at=table.tick(), text=EVIL_TEXT, signature="killer"))
            table.send(c.Bonus(by=MASTER, at=table.tick(), target=sender, amount=5,
                               reason="for <i>style</i>"))
        elif s.phase is PhaseKind.DAY:
            _day(table)
        else:
            _night(table)
        table.send(c.Advance(by=MASTER, at=table.tick(30)))
    raise AssertionError("the scripted game did not end")


def _day(table: Table) -> None:
    s = table.state
    mafia = [p for p in s.living() if p.role is Role.MAFIOSO]
    target = mafia[0].uid if mafia else s.living()[-1].uid
    living = s.living()
    first = living[0].uid
    with contextlib.suppress(RuleError):
        table.send(c.Whisper(by=first, at=table.tick(11), role="investigator",
                             text=f"day {s.number}: trust me", signature=None))
    # a spell (Sleep voids the first voter's first vote today) and a purchase
    with contextlib.suppress(RuleError):
        table.send(c.Cast(by=living[-1].uid, at=table.tick(), spell="sleep", target=first))
    with contextlib.suppress(RuleError):
        table.send(c.Buy(by=living[-2].uid, at=table.tick(), item="alarm_clock"))
    for p in living:
        if p.uid == target:
            continue
        if p.uid == first:  # a change of mind, then a withdrawal, then the vote
            other = next(q.uid for q in living if q.uid not in (p.uid, target))
            table.send(c.Vote(by=p.uid, at=table.tick(7), target=other))
            table.send(c.Unvote(by=p.uid, at=table.tick(7)))
        table.send(c.Vote(by=p.uid, at=table.tick(13), target=target))


def _night(table: Table) -> None:
    s = table.state
    for p in s.living():
        if night_move(s, p.uid) is None:
            continue
        targets = legal_targets(s, p.uid, "night")
        if not targets:
            continue
        target = targets[-1]
        fallback = targets[0] if len(targets) > 1 and targets[0] != target else None
        story = f"night {s.number}: {p.name} <em>strikes</em>" if p.role is Role.MAFIOSO \
            else None
        table.send(c.NightOrder(by=p.uid, at=table.tick(9), target=target, fallback=fallback,
                                story=story))
