"""/stats setups: this server's finished games by setup (core/play/setups.py); /stats
players: its rating leaderboard (core/sight/ratings.py, core/storage/ratings.py)."""

from __future__ import annotations

import discord
from discord import app_commands

from core.play.setups import days_text, setup_text, wins_text
from core.storage.ratings import Standing, leaderboard, skill_of
from core.storage.setups import setup_histories
from core.text.i18n import t

from .base import GameCog
from .ui.limits import clamp_embed
from .ui.text import command_kwargs, mention, user_lang
from .utils.bot import MafiaBot

SHOWN = 15  # setups listed, the most played first
TOP = 20  # rows of the leaderboard (issue 46.5), then the reader's own if below


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

    @stats.command(**command_kwargs("stats.players"))
    async def players(self, interaction: discord.Interaction[MafiaBot]) -> None:
        """Mentions inside an embed never ping; the reply is the reader's alone."""
        assert interaction.guild is not None
        lang = user_lang(interaction)
        top = await leaderboard(interaction.guild.id, TOP)
        embed = discord.Embed(title=t("stats.players.title", lang),
                              colour=discord.Colour.blurple(),
                              description="\n".join(_row(s, lang) for s in top)
                              or t("stats.players.none", lang))
        if top:
            own = await skill_of(interaction.guild.id, interaction.user.id)
            if own is None:
                embed.add_field(name=t("stats.players.yours", lang),
                                value=t("stats.players.unrated", lang), inline=False)
            elif all(s.user_id != own.user_id for s in top):
                embed.add_field(name=t("stats.players.yours", lang), value=_row(own, lang),
                                inline=False)
            embed.set_footer(text=t("stats.players.about", lang))
        await interaction.response.send_message(embed=clamp_embed(embed), ephemeral=True,
                                                allowed_mentions=discord.AllowedMentions.none())


def _row(standing: Standing, lang: str) -> str:
    return t("stats.players.row", lang, place=standing.place, member=mention(standing.user_id),
             rating=standing.skill.shown, count=standing.rated)


async def setup(bot: MafiaBot) -> None:
    await bot.add_cog(Stats(bot))
