"""Role cards: /role and the 'Show my role' button, always ephemeral."""

from __future__ import annotations

from typing import Any

import discord
from discord import app_commands

from .base import GameCog
from .ui.text import command_kwargs
from .utils.actions import send_card


class Roles(GameCog):
    @app_commands.command(**command_kwargs("role"))
    async def role(self, interaction: discord.Interaction[Any]) -> None:
        info = await self.game_here(interaction, finished=True)
        await send_card(interaction, info.id)


async def setup(bot: Any) -> None:
    await bot.add_cog(Roles(bot))
