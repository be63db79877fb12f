"""Shared moves for bot tests: a table of members playing through slash commands."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bot import MafiaBot
from core.rules.roles import Role
from core.state import GameState, PhaseKind
from tests.harness import Harness, InteractionResult


@dataclass
class Table:
    h: Harness
    master: Any
    players: list[Any] = field(default_factory=list)
    channel: int = 0
    game_id: int = 0

    @property
    def bot(self) -> MafiaBot:
        return self.h.bot  # type: ignore[return-value]

    async def state(self) -> GameState:
        return await self.bot.service.state(self.game_id)

    async def settle(self) -> None:
        """Let the outbox deliver what the last commands committed."""
        await self.bot.outbox.idle(within=20)

    async def do(self, user: Any, command: str, **options: Any) -> InteractionResult:
        return await self.h.slash(user, command, channel=self.channel, **options)

    def member(self, uid: int) -> Any:
        return next(p for p in [*self.players, self.master] if p.id == uid)

    async def holders(self, role: Role, alive: bool = True) -> list[Any]:
        state = await self.state()
        return [self.member(p.uid) for p in state.players
                if p.role is role and (p.alive or not alive)]

    async def living(self) -> list[Any]:
        state = await self.state()
        return [self.member(p.uid) for p in state.living()]

    async def advance(self) -> InteractionResult:
        res = await self.do(self.master, "master advance")
        assert res.ephemeral, res.text
        await self.settle()
        return res

    async def phase(self) -> tuple[PhaseKind, int]:
        s = await self.state()
        return s.phase, s.number


def confirmed(res: InteractionResult) -> bool:
    """A vote, withdrawal or check-in was accepted: the sender alone gets the event's embed
    (its public record goes to the game channel through the outbox); a refusal is text."""
    return res.ephemeral and bool(res.embeds)


async def open_table(h: Harness, n: int = 8, *, roles: str | None = None,
                     locale: str = "en-US", **create: Any) -> Table:
    master = h.add_member("Master", locale=locale)
    players = [h.add_member(f"P{i}", locale=locale) for i in range(1, n + 1)]
    table = Table(h, master, players, channel=h.default_guild.general_id)
    res = await table.do(master, "game create", title="Palermo", **create)
    assert not res.ephemeral, res.text
    table.game_id = (await table.bot.service.game_in_channel(table.channel)).id  # type: ignore[union-attr]
    for p in players:
        res = await table.do(p, "game join")
        assert res.ephemeral, res.text
    if roles:
        res = await table.do(master, "game setup", roles=roles)
        assert res.ephemeral, res.text
    await table.settle()
    return table


async def start(t: Table) -> None:
    res = await t.do(t.master, "game start")
    assert res.ephemeral, res.text
    await t.settle()


async def checkin_all(t: Table) -> None:
    for p in await t.living():
        res = await t.do(p, "checkin")
        assert confirmed(res), res.text
