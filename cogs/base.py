"""What every game cog shares: finding the game, applying a command, replying.

A cog turns an interaction into an engine command and the outcome into a
reply; the rules decide everything. It never holds a game's state: what it shows comes
as views from the facade (`observe`, core/storage/observer.py), and a player typed in
an option arrives resolved to his id (`PlayerArg.transform`). Refusals (RuleError) are
rendered once, in the tree's error handler, as an ephemeral message in the user's
language.
"""

from __future__ import annotations

from typing import Any

import discord
from discord import app_commands
from discord.ext import commands

from core.game import commands as c
from core.game.errors import RuleError
from core.sight.visibility import PublicView
from core.storage.observer import GameInfo, GameService, Observer, Outcome
from core.text.i18n import t

from .ui.text import user_lang
from .utils.actions import command
from .utils.bot import MafiaBot

MAX_CHOICES = 25


class GameCog(commands.Cog):
    def __init__(self, bot: MafiaBot) -> None:
        self.bot = bot

    @property
    def service(self) -> GameService:
        """Games' records (create, Discord-side columns); their state only via `observe`."""
        return self.bot.service

    @property
    def observe(self) -> Observer:
        """What a viewer may see of a game: a cog's only way to a game's state."""
        return self.bot.observe

    async def game_here(self, interaction: discord.Interaction[MafiaBot], *,
                        finished: bool = False) -> GameInfo:
        return await self.bot.find_game(interaction, finished=finished)

    async def apply(self, interaction: discord.Interaction[MafiaBot], info: GameInfo,
                    cmd: type[c.Command], **fields: Any) -> Outcome:
        """The caller's command (cogs.utils.actions.command: the one path to the engine)."""
        return await command(interaction, info, cmd, **fields)

    async def view(self, info: GameInfo) -> PublicView:
        return await self.observe.view(info.id)


async def ack(interaction: discord.Interaction[MafiaBot], key: str, **values: Any) -> None:
    """The ephemeral confirmation most commands answer with: one catalogue line in the
    sender's language."""
    await interaction.response.send_message(t(key, user_lang(interaction), **values),
                                            ephemeral=True)


# --- player options: autocomplete of the game's players ---------------------------------
class Refused(app_commands.AppCommandError):
    """A rule refusal met while an option was resolved: the tree's error handler
    renders `original` as it renders a command's own (bot.py `on_error`)."""

    def __init__(self, original: RuleError) -> None:
        super().__init__(str(original))
        self.original = original


class PlayerArg(app_commands.Transformer):
    """A string option offering the game's players; `kind` picks which ones. What was
    typed (an id from autocomplete, a mention, a name) arrives in the command resolved
    to the player's id, against the game the command is about (`finished`: a game
    over counts, as for /master log)."""

    def __init__(self, kind: str = "living", *, finished: bool = False) -> None:
        self.kind = kind
        self.finished = finished

    @property
    def type(self) -> discord.AppCommandOptionType:
        return discord.AppCommandOptionType.string

    async def transform(self, interaction: discord.Interaction[MafiaBot],  # type: ignore[override]
                        value: str) -> int:
        try:
            bot = interaction.client
            info = await bot.find_game(interaction, finished=self.finished)
            return await bot.observe.player(info.id, value)
        except RuleError as err:
            raise Refused(err) from err

    async def autocomplete(self, interaction: discord.Interaction[MafiaBot],  # type: ignore[override]
                           value: str) -> list[app_commands.Choice[str]]:
        try:
            info = await interaction.client.find_game(interaction, finished=False)
        except RuleError:  # no running game here: nothing to offer, no error while typing
            return []
        typed = value.casefold()
        return [app_commands.Choice(name=label[:100], value=str(uid))
                for uid, label in await self.offered(interaction, info)
                if typed in label.casefold()][:MAX_CHOICES]

    async def offered(self, interaction: discord.Interaction[MafiaBot], info: GameInfo
                      ) -> list[tuple[int, str]]:
        """The (uid, label) pairs this option offers the sender; a subclass offers others."""
        observe = interaction.client.observe
        guild = interaction.guild
        shown = {}
        for uid in await observe.seats(info.id):
            member = guild.get_member(uid) if guild else None
            if member is not None:
                shown[uid] = member.display_name
        return await observe.choices(info.id, interaction.user.id, self.kind, shown)


class CastTargetArg(PlayerArg):
    """/cast's target: once the spell is chosen, only whom the engine would accept for
    it (a ghost for a day spell, never for a night spell); before, every voter."""

    def __init__(self) -> None:
        super().__init__("voters")

    async def offered(self, interaction: discord.Interaction[MafiaBot], info: GameInfo
                      ) -> list[tuple[int, str]]:
        everyone = await super().offered(interaction, info)
        spell = getattr(interaction.namespace, "spell", None)
        if not isinstance(spell, str) or not spell:
            return everyone
        allowed = set(await interaction.client.observe.cast_targets(
            info.id, interaction.user.id, spell))
        return [(uid, label) for uid, label in everyone if uid in allowed]
