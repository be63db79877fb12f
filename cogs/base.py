"""What every game cog shares: finding the game, applying a command, replying.

A cog turns an interaction into an engine command and the outcome into a
reply; the rules decide everything. Refusals (RuleError) are rendered once, in
the tree's error handler, as an ephemeral message in the user's language.
"""

from __future__ import annotations

from typing import Any

import discord
from discord import app_commands
from discord.ext import commands

from core import commands as c
from core.errors import RuleError
from core.i18n import t
from core.storage.service import Applied, GameInfo, GameService
from core.views import parse_player, seat_uids, target_choices
from core.visibility import PublicView, public_view

from .ui.text import user_lang
from .utils.bot import MafiaBot, is_admin, now
from .utils.sight import note_sight

MAX_CHOICES = 25


class GameCog(commands.Cog):
    def __init__(self, bot: MafiaBot) -> None:
        self.bot = bot

    @property
    def service(self) -> GameService:
        return self.bot.service

    async def game_here(self, interaction: discord.Interaction[MafiaBot], *,
                        finished: bool = False) -> GameInfo:
        return await self.bot.find_game(interaction, finished=finished)

    async def apply(self, interaction: discord.Interaction[MafiaBot], info: GameInfo,
                    cmd: type[c.Command], **fields: Any) -> Applied:
        await note_sight(interaction, info)  # a right given during the game: RULES.md §8
        command = c.stamped(cmd(by=interaction.user.id, at=now(), admin=is_admin(interaction),
                                **fields), info.seen)
        return await self.bot.apply(info, command)

    async def apply_to(self, interaction: discord.Interaction[MafiaBot], info: GameInfo,
                       cmd: type[c.Command], player: str, **fields: Any) -> Applied:
        """`apply` for a command aimed at the player typed in an option (its `target`),
        resolved against the game's current seats."""
        state = await self.service.state(info.id)
        return await self.apply(interaction, info, cmd, target=parse_player(player, state),
                                **fields)

    async def view(self, info: GameInfo) -> PublicView:
        return public_view(await self.service.state(info.id))


async def ack(interaction: discord.Interaction[MafiaBot], key: str, **values: Any) -> None:
    """The ephemeral confirmation most commands answer with: one catalogue line in the
    sender's language."""
    await interaction.response.send_message(t(key, user_lang(interaction), **values),
                                            ephemeral=True)


# --- player options: autocomplete of the game's players ---------------------------------
class PlayerArg(app_commands.Transformer):
    """A string option offering the game's players; `kind` picks which ones."""

    def __init__(self, kind: str = "living") -> None:
        self.kind = kind

    @property
    def type(self) -> discord.AppCommandOptionType:
        return discord.AppCommandOptionType.string

    async def transform(self, interaction: discord.Interaction[Any], value: str) -> str:
        return value  # resolved against the game in the command, where the state is loaded

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
        state = await interaction.client.service.state(info.id)
        guild = interaction.guild
        shown = {}
        for uid in seat_uids(state):
            member = guild.get_member(uid) if guild else None
            if member is not None:
                shown[uid] = member.display_name
        return target_choices(state, interaction.user.id, self.kind, shown)
