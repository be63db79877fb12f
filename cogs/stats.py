"""/stats setups: this server's finished games by setup (core/play/setups.py)."""

from __future__ import annotations

import discord
from discord import app_commands

from core.play.setups import days_text, setup_text, wins_text
from core.storage.setups import setup_histories
from core.text.i18n import t

from .base import GameCog
from .ui.limits import clamp_embed
from .ui.text import command_kwargs, user_lang
from .utils.bot import MafiaBot

SHOWN = 15  # setups listed, the most played first


class Stats(GameCog):
    stats = app_commands.Group(**command_kwargs("stats"), guild_only=True)

    @stats.command(**command_kwargs("stats.setups"))
    async def setups(self, interaction: discord.Interaction[MafiaBot]) -> None:
        assert interaction.guild is not None
        lang = user_lang(interaction)
        history = await setup_histories(interaction.guild.id)
        ranked = sorted(history.items(), key=lambda kv: (-kv[1].games, kv[0]))
        lines = [t("stats.setups.row", lang, setup=setup_text(key, lang), count=h.games,
                   wins=wins_text(h, lang), days=days_text(h, lang))
                 for key, h in ranked[:SHOWN]]
        if len(ranked) > SHOWN:
            lines.append(t("stats.setups.more", lang, count=len(ranked) - SHOWN))
        embed = discord.Embed(title=t("stats.setups.title", lang), colour=discord.Colour.blurple(),
                              description="\n\n".join(lines) or t("stats.setups.none", lang))
        await interaction.response.send_message(embed=clamp_embed(embed), ephemeral=True)


async def setup(bot: MafiaBot) -> None:
    await bot.add_cog(Stats(bot))
