"""Shared moves for bot tests: a real MafiaBot on a temp SQLite file behind the fake
Discord, a table of members playing through slash commands, and a bot that "dies" and
starts again on the same database and the same fake Discord (`Lives`)."""

from __future__ import annotations

import asyncio
import atexit
import functools
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import discord

from bot import MafiaBot
from core.game.roles import Role
from core.game.state import GameState, PhaseKind
from core.settings import Settings
from tests.harness import Harness, InteractionResult, MessageRecord
from tests.harness.payloads import PayloadBuilder
from tests.harness.routes import RestApi

EVERYTHING = discord.Permissions(
    view_channel=True, send_messages=True, embed_links=True, read_message_history=True,
    manage_channels=True, manage_roles=True, create_private_threads=True,
    send_messages_in_threads=True, manage_threads=True, create_public_threads=True,
    add_reactions=True, attach_files=True)
#: The table most bot tests play: a clan of two, the police pair and the bouncer.
ROLES = "mafioso x2; investigator; sergeant; bouncer"
#: A generous per-interaction timeout: a loaded 2-core machine must not cancel a
#: command mid-transaction (that is a test artefact, not a bot behaviour).
TIMEOUT = 30.0


def new_bot(tmp_path: Path) -> MafiaBot:
    """A MafiaBot on `tmp_path`/bot.db (the same file again after a restart)."""
    database = tmp_path / "bot.db"
    if not database.exists():
        shutil.copyfile(_migrated_template(), database)
    settings = Settings(discord_token="x", database_url=f"sqlite://{database}")
    return MafiaBot(settings, state_dir=tmp_path)


@functools.cache
def _migrated_template() -> Path:
    """An empty database with every migration applied, made once per test process (in a
    child process: no ORM state here) and copied for each bot. Migrating a fresh file
    was most of a bot's start-up; the bot tests are not about migrations (the storage
    tests start from empty files and schemas)."""
    folder = Path(tempfile.mkdtemp(prefix="mafia-bot-template-"))
    atexit.register(shutil.rmtree, folder, True)
    template = folder / "migrated.db"
    code = ("import asyncio, sys\n"
            "from core.storage.db import close_db, init_db\n"
            "async def main():\n"
            "    await init_db('sqlite://' + sys.argv[1])\n"
            "    await close_db()\n"
            "asyncio.run(main())\n")
    root = Path(__file__).resolve().parents[2]
    subprocess.run([sys.executable, "-c", code, str(template)], check=True, cwd=root,
                   timeout=120)
    assert template.is_file() and not Path(f"{template}-wal").exists()
    return template


async def started(bot: MafiaBot, h: Harness) -> Harness:
    """Start `h` (closed again if starting fails). The live count waits `interval` real
    seconds between two edits of a message, and every settle after a vote would sit that
    out: tests run it at 0 (test_tally sets its own), and the desk's window too."""
    try:
        await h.start()
    except BaseException:
        await h.close()
        raise
    bot.delivery.tallies.interval = 0.0
    # each command's desk and team lines as they come (test_bursts sets its own windows)
    bot.delivery.gathering.desk_window = bot.delivery.gathering.team_window = 0.0
    # an announcement waits for its picture however long drawing takes (test_late_files
    # sets its own wait)
    bot.delivery.attached.wait = None
    return h


async def first_life(tmp_path: Path) -> Harness:
    """A started bot in a new fake Discord: one guild, 'Mafia Club' (ru), where the bot
    holds every permission it asks for."""
    bot = new_bot(tmp_path)
    h = await started(bot, Harness(bot, timeout=TIMEOUT))
    try:
        h.add_guild("Mafia Club", locale="ru")
        h.set_bot_permissions(EVERYTHING)
    except BaseException:
        await h.close()
        raise
    return h


def posted(h: Harness, channel: int) -> list[MessageRecord]:
    """What the bot posted in a channel (through the outbox): interaction responses left
    out."""
    return [m for m in h.messages_in(channel) if "interaction_metadata" not in m.payload]


async def wait_for(check: Callable[[], bool], what: str) -> None:
    """Wait (up to 5 seconds of real time) until `check()` holds."""
    for _ in range(500):
        if check():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"timed out waiting for: {what}")


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
    """A vote, withdrawal or check-in was accepted: the reply is the event's embed (typed
    in the game channel, the public record itself; elsewhere to the sender alone, the
    outbox posting the record in the game channel); a refusal is ephemeral text."""
    return bool(res.embeds)


async def open_table(h: Harness, n: int = 8, *, roles: str | None = None,
                     locale: str = "en-US", **create: Any) -> Table:
    master = h.add_member("Master", locale=locale)
    players = [h.add_member(f"P{i}", locale=locale) for i in range(1, n + 1)]
    table = Table(h, master, players, channel=h.default_guild.general_id)
    res = await table.do(master, "game create", title="Palermo", **create)
    assert res.ephemeral, res.text  # the board itself is posted by the outbox
    table.game_id = (await table.bot.service.game_in_channel(table.channel)).id  # type: ignore[union-attr]
    await table.settle()  # the signup board is there before anybody joins
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


async def day_one(h: Harness) -> Table:
    """A game of ROLES for 8 in #general, played to day 1 (a citizen killed at night)."""
    t = await open_table(h, 8, roles=ROLES)
    assert (await t.do(t.master, "game start")).ephemeral
    await t.settle()
    for p in t.players:
        assert confirmed(await t.do(p, "checkin"))
    await t.advance()
    state = await t.state()
    citizen = (await t.holders(Role.CITIZEN))[0]
    assert (await t.do(t.member(state.clans[0].acting), "night",  # type: ignore[arg-type]
                       target=str(citizen.id))).ephemeral
    for bouncer in await t.holders(Role.BOUNCER):
        assert (await t.do(bouncer, "night", target=str(citizen.id))).ephemeral
    await t.advance()
    assert await t.phase() == (PhaseKind.DAY, 1)
    return t


async def on_virtual_time(tmp_path: Path, loop: Any) -> Harness:
    """A started bot whose every clock is the virtual-time loop's
    (tests/harness/virtualtime.py): the service's, the scheduler's, the outbox's, the
    budget's and the fake Discord's rate limits, with discord.py's waits real waits on
    that loop."""
    from cogs.delivery.outbox import wire
    from tests.harness.ratelimits import VirtualClock

    bot = new_bot(tmp_path)
    wire(bot)  # the outbox and the budget, set up now to put them on the virtual clock
    bot.service.set_clock(loop.utcnow)
    bot.scheduler.set_clock(loop.utcnow)
    bot.outbox.set_clock(loop.utcnow)
    bot.budget.clock = loop.time
    h = Harness(bot, timeout=TIMEOUT, retry_sleep_scale=1.0)
    h.world.ratelimits.clock = VirtualClock(loop.time)
    return await started(bot, h)


def rebind(t: Table, h: Harness) -> Table:
    """The same table, seen through the bot of the next life."""
    return Table(h, t.master, t.players, channel=t.channel, game_id=t.game_id)


class Lives:
    """A bot that is stopped (or frozen where a crash should hit, then closed) and a NEW
    MafiaBot started on the same database file, attached to the same fake Discord: the
    guilds, members, channels, messages and rate-limit windows of the first life.

    The `lives` fixture (tests/bot/conftest.py) gives one in its first life and closes
    whichever harness is alive at the end; `h` is always the current life's harness."""

    def __init__(self, tmp_path: Path, h: Harness) -> None:
        self.tmp_path = tmp_path
        self.h = h

    async def restart(self, clock: Callable[[], datetime] | None = None) -> Harness:
        """Close the current bot and start the next one; returns the new harness.

        `clock`, if given, is the new scheduler's clock from its very start (a bot that
        comes back after a deadline passed)."""
        old = self.h
        await old.close()
        bot = new_bot(self.tmp_path)
        if clock is not None:
            bot.scheduler.set_clock(clock)
        h = self.h = Harness(bot, timeout=TIMEOUT)
        h.world = old.world  # re-attach: the same guilds, members, channels and messages
        h.fake.limits = old.world.ratelimits  # and the same rate-limit windows and clock
        h.api = RestApi(h.world)
        h.api.install(h.fake)
        h.payloads = PayloadBuilder(h.world, bot)
        h._default_guild = old._default_guild
        await started(bot, h)
        for gid in h.world.guilds:  # the gateway sends every guild again after READY
            h.world.emit("GUILD_CREATE", h.world.guild_payload(gid, gateway=True))
        await h.settle()
        return h
