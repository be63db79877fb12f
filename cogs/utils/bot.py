"""The bot as the cogs know it: its type, its services, and finding a command's game.

bot.py builds the concrete bot as a subclass of this one; cogs type themselves
against this class (`discord.Interaction[MafiaBot]`, `setup(bot: MafiaBot)`), so
neither imports the other and the import graph, type-only imports included, has no
circle (tests/test_house.py). The extensions are loaded by name.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import discord
from discord.ext import commands

from core.commands import Command
from core.errors import ErrorCode, RuleError
from core.i18n import normalize_locale
from core.places import private_reader
from core.settings import Settings
from core.storage.budget import RateBudget
from core.storage.outbox import OutboxWorker
from core.storage.scheduler import DeadlineScheduler
from core.storage.service import Applied, GameInfo, GameService
from core.views import phase_seen
from core.vocabulary import PhaseKind


def now() -> datetime:
    """The time a command is stamped with (the engine never reads a clock)."""
    return datetime.now(UTC)


READER_GAME = "mafia_game"  # Interaction.extras: the game a command found


def reader_language(locale: str) -> str:
    """A client locale as one of our catalogues; "" for a language we have no catalogue
    for (Ukrainian, German...): his private pushes then follow the game's language."""
    lang = normalize_locale(locale)
    return lang if lang == "ru" or locale.lower().startswith("en") else ""


def is_admin(interaction: discord.Interaction[MafiaBot]) -> bool:
    """The caller holds "Manage Server" or is an administrator (core.access weighs it)."""
    perms = interaction.permissions
    return bool(perms.manage_guild or perms.administrator)


class MafiaBot(commands.Bot):
    """What every cog may rely on; bot.py sets these up before the extensions load."""

    settings: Settings
    service: GameService
    scheduler: DeadlineScheduler
    outbox: OutboxWorker
    budget: RateBudget
    state_dir: Path
    private_index: dict[int, int]  # private channel id -> game id

    async def find_game(self, interaction: discord.Interaction[MafiaBot], *,
                        finished: bool = False) -> GameInfo:
        """The game a command is about: this channel's, its private channel's, or (in
        DMs) the caller's only running game, with the phase the caller saw (`seen`)."""
        info = await self._find_game(interaction, finished=finished)
        interaction.extras[READER_GAME] = info.id  # for `on_app_command_completion`
        return replace(info, seen=phase_seen(await self.service.state(info.id)))

    async def on_app_command_completion(self, interaction: discord.Interaction[MafiaBot],
                                        command: Any) -> None:
        """A command about a game went through: remember the language its sender used if
        the game writes to him privately (core.places.private_reader): his pushes are
        written in it (core/storage/readers.py; a write only when
        it changes, none for a refused command: bad input changes nothing)."""
        game = interaction.extras.get(READER_GAME)
        if isinstance(game, int) and private_reader(await self.service.state(game),
                                                    interaction.user.id):
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

    async def apply(self, info: GameInfo, command: Command) -> Applied:
        """Apply through the service. The cog stamped the phase the sender saw on a
        phase-bound command (`core.commands.stamped`): if that phase ended on its way,
        the engine refuses it as `phase_ended`."""
        return await self.service.apply(info.id, command)
