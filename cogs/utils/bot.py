"""The bot as the cogs know it: its type, its services, and finding a command's game.

bot.py builds the concrete bot as a subclass of this one; cogs type themselves
against this class (`discord.Interaction[MafiaBot]`, `setup(bot: MafiaBot)`), so
neither imports the other and the import graph, type-only imports included, has no
circle (tests/test_house.py). The extensions are loaded by name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

import discord
from discord.ext import commands

from core.game.commands import Command
from core.game.errors import ErrorCode, RuleError
from core.game.events import Event
from core.settings import Settings
from core.sight.vocabulary import PhaseKind
from core.storage.observer import Observer, Outcome
from core.storage.outbox import OutboxWorker
from core.storage.scheduler import DeadlineScheduler
from core.storage.service import GameInfo, GameService
from core.text.i18n import normalize_locale

from ..delivery.budget import RateBudget

#: Where an interaction keeps the game it is about, once looked up (`find_game`): its
#: options' transformers and its command body share one lookup.
FOUND = "mafia.game"


def now() -> datetime:
    """The time a command is stamped with (the engine never reads a clock)."""
    return datetime.now(UTC)


READER_GAME = "mafia.created"  # Interaction.extras: the game /game create made


def reader_language(locale: str) -> str:
    """A client locale as one of our catalogues; "" for a language we have no catalogue
    for (Ukrainian, German...): his private pushes then follow the game's language."""
    lang = normalize_locale(locale)
    return lang if lang == "ru" or locale.lower().startswith("en") else ""


def is_admin(interaction: discord.Interaction[MafiaBot]) -> bool:
    """The caller holds "Manage Server" or is an administrator (core.game.access weighs it)."""
    perms = interaction.permissions
    return bool(perms.manage_guild or perms.administrator)


class Identifies(Protocol):
    async def before_identify(self, shard_id: int | None) -> None: ...


class Coordinated(Protocol):
    """The token's coordination across processes (cogs/delivery/sharedbudget.py Coordination)."""

    @property
    def identify(self) -> Identifies: ...


class MafiaBot(commands.Bot):
    """What every cog may rely on: bot.py sets up the settings, the service, the
    scheduler and the private index; the cogs.delivery.outbox extension, loaded first, the
    budget, the deliverer and the outbox worker (`cogs.delivery.outbox.wire`)."""

    settings: Settings
    service: GameService
    scheduler: DeadlineScheduler
    outbox: OutboxWorker
    budget: RateBudget
    budgeted: Any  # cogs.delivery.ratelimits.BudgetedHTTP (typed there: no import circle)
    delivery: Any  # cogs.delivery.Delivery
    coordination: Coordinated | None = None
    state_dir: Path
    private_index: dict[int, int]  # private channel id -> game id
    _observer: Observer | None = None

    @property
    def observe(self) -> Observer:
        """What a viewer may see of a game (core.storage.observer): the cogs' only
        way to a game's state."""
        if self._observer is None or self._observer.service is not self.service:
            self._observer = Observer(self.service)
        return self._observer

    async def find_game(self, interaction: discord.Interaction[MafiaBot], *,
                        finished: bool = False) -> GameInfo:
        """The game a command is about: this channel's, its private channel's, or (in
        DMs) the caller's only running game, with the phase the caller saw (`seen`).
        Looked up once per interaction (and `finished`): a player option's transformer
        and the command's body get the same game, seen at the same moment."""
        found: dict[bool, GameInfo] = interaction.extras.setdefault(FOUND, {})
        if finished not in found:
            info = await self._find_game(interaction, finished=finished)
            found[finished] = replace(info, seen=await self.observe.seen(info.id))
        return found[finished]

    async def on_app_command_completion(self, interaction: discord.Interaction[MafiaBot],
                                        command: Any) -> None:
        """A command about a game went through: remember the language its sender used if
        the game writes to him privately (core.sight.places.private_reader): his pushes are
        written in it (core/storage/readers.py; a write only when
        it changes, none for a refused command: bad input changes nothing)."""
        found: dict[bool, GameInfo] = interaction.extras.get(FOUND, {})
        games = {info.id for info in found.values()}
        if isinstance(created := interaction.extras.get(READER_GAME), int):
            games.add(created)  # /game create: the master's language (his desk's)
        await self.note_reader(interaction, games)

    async def note_reader(self, interaction: discord.Interaction[MafiaBot],
                          games: set[int]) -> None:
        """The sender's client language, for each of `games` that writes to him
        privately: after a slash command and after a button or menu went through alike
        (cogs/ui/components.py `_guarded`), so his pushes follow the client he last used."""
        for game in games:
            if await self.observe.private_reader(game, interaction.user.id):
                await self.service.readers.note_language(
                    game, interaction.user.id, reader_language(str(interaction.locale)))

    async def _find_game(self, interaction: discord.Interaction[MafiaBot], *,
                         finished: bool) -> GameInfo:
        channel_id = interaction.channel_id or 0
        info = await self.service.game_in_channel(channel_id)
        if info is not None:
            return info
        if channel_id in self.private_index:
            return await self.service.info(self.private_index[channel_id])
        if interaction.guild is not None:
            last = await self.service.last_game_in_channel(channel_id)
            if last is not None and (finished or last.phase is PhaseKind.ENDED):
                if not finished:  # every game command says so, as /votes does
                    raise RuleError(ErrorCode.GAME_OVER)
                return last
        if interaction.guild is None:
            mine = await self.service.games_of_user(None, interaction.user.id)
            if len(mine) == 1:
                return mine[0]
            raise RuleError(ErrorCode.DM_WHICH_GAME if mine else ErrorCode.NO_GAME_FOR_YOU)
        raise RuleError(ErrorCode.NO_GAME_HERE)

    async def apply(self, info: GameInfo, command: Command, *,
                    answer: Callable[[Event], bool] | None = None,
                    reply: str | None = None) -> Outcome:
        """Apply through the facade. The cog stamped the phase the sender saw on a
        phase-bound command (`core.game.commands.stamped`): if that phase ended on its way,
        the engine refuses it as `phase_ended`. `answer`: the events whose outbox
        entries the caller answers itself (cogs/utils/actions.py `record`), `reply` the
        identity of that answer (its interaction's id)."""
        return await self.observe.apply(info.id, command, answer=answer, reply=reply)
