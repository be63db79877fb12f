"""/lastwords: the one message a player killed at night may leave (house option
`last_words_minutes`, RULES.md §4); the bot posts it in the game channel, escaped."""

from __future__ import annotations

import discord
from discord import app_commands
from discord.app_commands import Range

from core.game import commands as c

from .base import GameCog, ack
from .ui.text import command_kwargs, localized
from .utils.bot import MafiaBot


class LastWords(GameCog):
    @app_commands.command(**command_kwargs("lastwords"))
    @app_commands.guild_only()
    @localized("lastwords", "text")
    async def lastwords(self, interaction: discord.Interaction[MafiaBot],
                        text: Range[str, 1, c.LAST_WORDS_MAX]) -> None:
        info = await self.game_here(interaction)
        await self.apply(interaction, info, c.LastWords, text=text)
        await ack(interaction, "lastwords.sent")


async def setup(bot: MafiaBot) -> None:
    await bot.add_cog(LastWords(bot))
