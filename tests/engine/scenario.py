"""A tiny scenario DSL for hand-checked engine tests: fixed roles by seat."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from core.game import commands as c
from core.game.engine import apply, create_game
from core.game.events import Event
from core.game.roles import Role
from core.game.state import GameState, Options, PhaseKind

MASTER = 1
T0 = datetime(2026, 1, 1, tzinfo=UTC)


class Game:
    """Players are named; `deal` fixes who gets which role (bypassing the dice)."""

    def __init__(self, roles: dict[str, str], options: Options | None = None) -> None:
        self.names = list(roles)
        self.ids = {n: 100 + i for i, n in enumerate(self.names)}
        self.clock = T0
        self.events: list[Event] = []
        self.state: GameState = create_game(seed=7, master=MASTER, title="t", options=options)
        for n in self.names:
            self.do(c.Join(by=self.ids[n], at=self.clock, name=n))
        self.do(c.Start(by=MASTER, at=self.clock))
        # Re-deal deterministically by the given spec: 'mafioso:1' = mafioso of clan 1.
        ranks: dict[int, int] = {}
        for n, spec in roles.items():
            role, _, clan = spec.partition(":")
            p = self.state.player(self.ids[n])
            assert p is not None
            p.role = Role(role)
            p.clan = int(clan) if clan else None
            p.rank = None
            if p.role is Role.MAFIOSO and p.clan:
                ranks[p.clan] = ranks.get(p.clan, 0) + 1
                p.rank = ranks[p.clan]
        from core.game.state import Clan

        self.state.clans = [Clan(number=n) for n in sorted(ranks)]

    def id(self, name: str) -> int:
        return self.ids[name]

    def p(self, name: str):
        p = self.state.player(self.ids[name])
        assert p is not None
        return p

    wallet: dict[int, int] | None = None  # like the service: balances stamped on commands

    def do(self, cmd: c.Command) -> list[Event]:
        if self.wallet is not None:
            cmd = cmd.model_copy(update={"funds": dict(self.wallet)})
        out = apply(self.state, cmd)
        self.state = out.state
        self.events += out.events
        for e in out.events:
            if e.kind == "purchase" and self.wallet is not None:
                self.wallet[e.data["uid"]] -= e.data["cost"]
        return out.events

    def fund(self, amount: int = 60) -> None:
        self.wallet = dict.fromkeys(self.ids.values(), amount)

    def tick(self, seconds: int = 1) -> datetime:
        self.clock += timedelta(seconds=seconds)
        return self.clock

    # conveniences ----------------------------------------------------------
    def checkin_all(self) -> None:
        for n in self.names:
            if self.p(n).alive:
                self.do(c.CheckIn(by=self.id(n), at=self.tick()))

    def vote(self, voter: str, target: str, *, wait: int = 1, **kw: object) -> list[Event]:
        return self.do(c.Vote(by=self.id(voter), at=self.tick(wait), target=self.id(target),
                              **kw))

    def unvote(self, voter: str) -> list[Event]:
        return self.do(c.Unvote(by=self.id(voter), at=self.tick()))

    def night(self, actor: str, target: str, fallback: str | None = None) -> list[Event]:
        return self.do(c.NightOrder(by=self.id(actor), at=self.tick(), target=self.id(target),
                                    fallback=self.id(fallback) if fallback else None))

    def advance(self) -> list[Event]:
        return self.do(c.Advance(by=MASTER, at=self.tick()))

    def to_night(self, number: int) -> None:
        """Advance (check-in on day 0) until night `number` is open."""
        while not (self.state.phase is PhaseKind.NIGHT and self.state.number == number):
            if self.state.phase is PhaseKind.DAY and self.state.number == 0:
                self.checkin_all()
            self.advance()

    def alive(self, name: str) -> bool:
        return self.p(name).alive

    def kinds(self, events: list[Event] | None = None) -> list[str]:
        return [e.kind for e in (self.events if events is None else events)]
