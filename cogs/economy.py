"""Currency: /wallet, /thank, /profile."""

from __future__ import annotations

import discord
from discord import app_commands
from discord.app_commands import Range

from core.game import commands as c
from core.game.errors import ErrorCode, RuleError
from core.storage import wallets
from core.storage.ratings import marks_of, skill_of
from core.storage.stats import player_stats
from core.text.i18n import has_key, t

from .base import GameCog, ack
from .ui.limits import clamp_embed
from .ui.markup import user_text
from .ui.text import command_kwargs, localized, mention, user_lang
from .utils.bot import MafiaBot


class Economy(GameCog):
    @app_commands.command(**command_kwargs("wallet"))
    @app_commands.guild_only()
    async def wallet(self, interaction: discord.Interaction[MafiaBot]) -> None:
        assert interaction.guild is not None
        lang = user_lang(interaction)
        balance, rows = await wallets.recent(interaction.guild.id, interaction.user.id)
        embed = discord.Embed(title=t("wallet.title", lang), colour=discord.Colour.green(),
                              description=t("wallet.balance", lang, balance=t(
                                  "currency.lira", lang, count=balance)))
        lines = [t("wallet.row", lang, when=f"<t:{int(w.timestamp())}:d>",
                   amount=f"{a:+d}", reason=reason_text(r, lang)) for w, a, r, _ in rows]
        embed.add_field(name=t("wallet.recent", lang),
                        value="\n".join(lines) or t("wallet.empty", lang), inline=False)
        await interaction.response.send_message(embed=clamp_embed(embed), ephemeral=True)

    @app_commands.command(**command_kwargs("thank"))
    @app_commands.guild_only()
    @localized("thank", "amount")
    async def thank(self, interaction: discord.Interaction[MafiaBot],
                    amount: Range[int, 0, 100000] = 0) -> None:
        info = await self.game_here(interaction, finished=True)
        await self.apply(interaction, info, c.Thank, premium=amount)
        await ack(interaction, "thank.done" if amount else "thank.done_plain",
                  master=mention(info.master_id),  # the premium in words: "5 лир"
                  premium=t("currency.lira_acc", user_lang(interaction), count=amount))

    @app_commands.command(**command_kwargs("profile"))
    @app_commands.guild_only()
    @localized("profile", "user")
    async def profile(self, interaction: discord.Interaction[MafiaBot],
                      user: discord.User | None = None) -> None:
        assert interaction.guild is not None
        who = user or interaction.user
        lang = user_lang(interaction)
        stats = await player_stats(interaction.guild.id, who.id)
        balance = (await wallets.balances(None, interaction.guild.id, [who.id])).get(who.id)
        embed = discord.Embed(title=t("profile.title", lang, name=user_text(who.display_name)),
                              colour=discord.Colour.blurple())
        embed.add_field(name=t("profile.games", lang), value=str(stats.games), inline=True)
        embed.add_field(name=t("profile.wins", lang), value=str(stats.wins), inline=True)
        if stats.wins_by_side:
            embed.add_field(name=t("profile.by_side", lang), value="\n".join(
                f"{t(f'side.{side}.name', lang)}: {n}"
                for side, n in sorted(stats.wins_by_side.items())), inline=False)
        embed.add_field(name=t("profile.lira", lang), value=t(
            "currency.lira", lang, count=balance) if balance is not None
            else t("profile.no_wallet", lang), inline=True)
        standing = await skill_of(interaction.guild.id, who.id)
        embed.add_field(name=t("profile.rating", lang), value=t(
            "profile.rating_value", lang, rating=standing.skill.shown,
            place=standing.place) if standing is not None else t("profile.unrated", lang),
            inline=True)
        marks = await marks_of(interaction.guild.id, who.id)
        embed.add_field(name=t("profile.achievements", lang), value="\n".join(
            f"• {t(f'achievement.{m}', lang)}" for m in marks)
            or t("profile.no_achievements", lang), inline=False)
        await interaction.response.send_message(embed=clamp_embed(embed), ephemeral=True,
                                                allowed_mentions=discord.AllowedMentions.none())


def reason_text(reason: str, lang: str) -> str:
    key = f"ledger.{reason}"
    if has_key(key, lang):
        return t(key, lang)
    head = reason.split(".")[0]
    if has_key(f"ledger.{head}", lang):
        return t(f"ledger.{head}", lang)
    raise RuleError(ErrorCode.INTERNAL_ERROR)


async def setup(bot: MafiaBot) -> None:
    await bot.add_cog(Economy(bot))
