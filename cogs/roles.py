"""Role cards: /role and the 'Show my role' button, always ephemeral."""

from __future__ import annotations

from typing import Any

import discord
from discord import app_commands

from core.visibility import card

from .base import GameCog
from .ui.render import card_embed
from .ui.text import command_kwargs, user_lang


async def send_card(interaction: discord.Interaction[Any], game_id: int) -> None:
    """The caller's own card, as an ephemeral reply: the only way a role is shown."""
    bot: Any = interaction.client
    state = await bot.service.state(game_id)
    mine = card(state, interaction.user.id)
    await interaction.response.send_message(
        embed=card_embed(mine, state, user_lang(interaction)), ephemeral=True)


class Roles(GameCog):
    @app_commands.command(**command_kwargs("role"))
    async def role(self, interaction: discord.Interaction[Any]) -> None:
        info = await self.game_here(interaction, finished=True)
        await send_card(interaction, info.id)


async def setup(bot: Any) -> None:
    await bot.add_cog(Roles(bot))
