"""Random legal agents playing whole games through the engine (no Discord).

Used by `mafia-bot simulate`, the property tests and the benchmarks.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from core.game import commands as c
from core.game.engine import apply, apply_in_place, create_game, legal_targets, night_move
from core.game.errors import RuleError
from core.game.events import Event
from core.game.roles import info
from core.game.rules.economy import OPENING_BALANCE, ledger_entries
from core.game.rules.shop import DAY_SPELLS, ITEMS, NIGHT_SPELLS, attacker_kinds
from core.game.state import GameState, Options, PhaseKind

MASTER = 1
EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


@dataclass
class Played:
    state: GameState
    commands: list[c.Command] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    rejected: int = 0


class Table:
    """One game being played; `send` applies a command and records it."""

    def __init__(self, seed: int, players: int, options: Options | None = None,
                 roles: str | None = None) -> None:
        self.rng = random.Random(seed)
        self.clock = EPOCH
        self.played = Played(create_game(seed=seed, master=MASTER, title=f"Game {seed}",
                                         options=options))
        # Wallets as the storage layer keeps them: opened with 60 lira, changed only by
        # the ledger entries the events imply.
        self.wallet: dict[int, int] | None = (
            {MASTER: 0} if options is not None and options.currency else None)
        for i in range(players):
            self.send(c.Join(by=100 + i, at=self.clock, name=f"Player{i + 1}"))
        if roles:
            self.send(c.Configure(by=MASTER, at=self.clock, roles=roles))

    @classmethod
    def seated(cls, signup: GameState, seed: int) -> Table:
        """A table for a game whose signup is `signup` (players joined, roles set; no
        wallets), dealt from `seed`: many games of one setup skip the joins."""
        table = cls.__new__(cls)
        table.rng = random.Random(seed)
        table.clock = EPOCH
        table.played = Played(signup.model_copy(update={"seed": seed}))
        table.wallet = None
        return table

    @property
    def state(self) -> GameState:
        return self.played.state

    def advance(self, cmd: c.Advance) -> list[Event]:
        """End the phase at its deadline changing the state itself, no private copy (a
        third of a strategic game's time): no rule refuses it halfway (its guards come
        first). In a game with wallets, or for the master's Advance, like `send`."""
        if self.wallet is not None or not cmd.deadline:
            return self.send(cmd)
        events = apply_in_place(self.played.state, cmd)
        self.played.commands.append(cmd)
        self.played.events += events
        return events

    def send(self, cmd: c.Command) -> list[Event]:
        if self.wallet is not None:
            if isinstance(cmd, c.Join):
                self.wallet.setdefault(cmd.by, OPENING_BALANCE)
            cmd = cmd.model_copy(update={"funds": dict(self.wallet)})
        out = apply(self.played.state, cmd)
        self.played.state = out.state
        self.played.commands.append(cmd)
        self.played.events += out.events
        if self.wallet is not None:
            for e in out.events:
                for uid, amount, _ in ledger_entries(e.kind, e.data, MASTER):
                    self.wallet[uid] = self.wallet.get(uid, 0) + amount
        return out.events

    def tick(self, minutes: int = 1) -> datetime:
        self.clock += timedelta(minutes=minutes)
        return self.clock


def random_phase(table: Table, activity: float = 0.95) -> None:
    """Every living player does something legal (most of the time), then the phase ends."""
    s = table.state
    rng = table.rng
    serial = s.serial
    for p in list(s.players):
        if table.state.serial != serial:
            return  # a vote ended the day (house option "hammer"): a phase of its own
        if rng.random() > activity:
            continue
        s = table.state
        cmd: c.Command | None = None
        if s.phase is PhaseKind.DAY and s.number == 0 and p.alive:
            cmd = c.CheckIn(by=p.uid, at=table.tick())
        elif s.phase is PhaseKind.DAY:
            targets = [t for t in legal_targets(s, p.uid, "vote") if t != p.uid]
            if targets and (p.alive or rng.random() < 0.5):
                cmd = c.Vote(by=p.uid, at=table.tick(), target=_pick(rng, s, p.uid, targets))
        elif s.phase is PhaseKind.NIGHT and night_move(s, p.uid):
            targets = legal_targets(s, p.uid, "night")
            if targets:
                fb = rng.choice(targets) if len(targets) > 1 and rng.random() < 0.3 else None
                t = rng.choice(targets)
                cmd = c.NightOrder(by=p.uid, at=table.tick(), target=t,
                                   fallback=fb if fb != t else None)
        if cmd is None:
            continue
        try:
            table.send(cmd)
        except RuleError:
            table.played.rejected += 1
        if table.state.options.shop and p.alive and rng.random() < 0.3:
            _shop(table, p.uid)
        if p.alive and rng.random() < 0.03:
            until = table.state.number + rng.randint(0, 3) if rng.random() < 0.5 else None
            _try(table, c.Away(by=p.uid, at=table.tick(), until=until, reason="42"))
        row = info(p.role) if p.role is not None else None
        if p.alive and row is not None and row.knows and rng.random() < 0.2:
            _try(table, c.Share(by=p.uid, at=table.tick(), note="42"))
        if row is not None and row.raises_ghosts and rng.random() < 0.2:
            dead = legal_targets(table.state, p.uid, "occult")
            if dead:
                _try(table, c.OccultExclude(by=p.uid, at=table.tick(), target=rng.choice(dead)))
    if table.state.serial != serial:
        return
    deadline = table.state.deadline or table.clock
    table.clock = max(table.clock, deadline)
    table.send(c.Advance(by=0, at=table.clock, deadline=True))


def _pick(rng: random.Random, s: GameState, uid: int, targets: list[int]) -> int:
    """Mafiosi avoid their clan mates; everybody else votes at random."""
    me = s.player(uid)
    if me is not None and me.clan is not None:
        others = [t for t in targets if (q := s.player(t)) is not None and q.clan != me.clan]
        targets = others or targets
    return rng.choice(targets)


def _shop(table: Table, uid: int) -> None:
    """Buy or cast something at random; refusals (funds, cap, limits) are fine."""
    s, rng = table.state, table.rng
    living = [p.uid for p in s.living()]
    day = s.phase is PhaseKind.DAY
    # an evening order's condition: X hanged, X not hanged, nobody hanged, or none
    cond: dict[str, int | bool] = {}
    if day and rng.random() < 0.5:
        key = rng.choice(("if_hanged", "unless_hanged", "if_nobody_hanged"))
        cond = {key: True} if key == "if_nobody_hanged" else {key: rng.choice(living)}
    if rng.random() < 0.6:
        spell = rng.choice(sorted(DAY_SPELLS))  # by day for today; by night for tomorrow
        _try(table, c.Cast(by=uid, at=table.tick(), spell=spell, target=rng.choice(living),
                           **cond))
    elif rng.random() < 0.5:
        item = rng.choice(ITEMS)
        against = rng.choice(attacker_kinds(s)) if item == "protection" else None
        _try(table, c.Buy(by=uid, at=table.tick(), item=item, against=against,
                          **cond))
    else:
        spell = rng.choice(sorted(NIGHT_SPELLS))
        target = uid if spell == "destruction" else rng.choice(living)
        _try(table, c.Cast(by=uid, at=table.tick(), spell=spell, target=target))


def _try(table: Table, cmd: c.Command) -> None:
    try:
        table.send(cmd)
    except RuleError:
        table.played.rejected += 1


def play(seed: int, players: int, options: Options | None = None, roles: str | None = None,
         max_phases: int = 400, on_phase: Callable[[Table], None] | None = None) -> Played:
    table = Table(seed, players, options, roles)
    table.send(c.Start(by=MASTER, at=table.clock, confirm=True))
    for _ in range(max_phases):
        if table.state.over:
            break
        random_phase(table)
        if on_phase:
            on_phase(table)
    return table.played


def games(n: int, players: int, seed: int = 0, options: Options | None = None) -> Iterator[Played]:
    for i in range(n):
        yield play(seed + i, players, options)
