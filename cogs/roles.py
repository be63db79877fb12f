"""Role cards: /role and the 'Show my role' button, always ephemeral."""

from __future__ import annotations

import discord
from discord import app_commands

from .base import GameCog
from .ui.components import RoleButton
from .ui.text import command_kwargs
from .utils.actions import send_card
from .utils.bot import MafiaBot


class Roles(GameCog):
    @app_commands.command(**command_kwargs("role"))
    async def role(self, interaction: discord.Interaction[MafiaBot]) -> None:
        info = await self.game_here(interaction, finished=True)
        await send_card(interaction, info.id)


async def setup(bot: MafiaBot) -> None:
    await bot.add_cog(Roles(bot))
    bot.add_dynamic_items(RoleButton)  # the role button under announcements
