"""Cryptography: /anon, /whisper, /reveal. The sender never appears in public."""

from __future__ import annotations

from typing import Any

import discord
from discord import app_commands
from discord.app_commands import Choice, Range

from core import commands as c
from core.i18n import t
from core.vocabulary import Role

from .base import GameCog
from .ui.text import L, command_kwargs, localized, user_lang

ROLE_CHOICES = [Choice(name=L(f"role.{r}.name"), value=str(r)) for r in Role]


class Anon(GameCog):
    @app_commands.command(**command_kwargs("anon"))
    @app_commands.guild_only()
    @localized("anon", "text", "signature")
    @app_commands.choices(signature=ROLE_CHOICES)
    async def anon(self, interaction: discord.Interaction[Any], text: Range[str, 1, 1500],
                   signature: str | None = None) -> None:
        info = await self.game_here(interaction)
        await self.apply(interaction, info, c.Anon, text=text, signature=signature)
        await interaction.response.send_message(t("anon.sent", user_lang(interaction)),
                                                ephemeral=True)

    @app_commands.command(**command_kwargs("whisper"))
    @app_commands.guild_only()
    @localized("whisper", "role", "text", "signature")
    @app_commands.choices(role=ROLE_CHOICES, signature=ROLE_CHOICES)
    async def whisper(self, interaction: discord.Interaction[Any], role: str,
                      text: Range[str, 1, 1500], signature: str | None = None) -> None:
        info = await self.game_here(interaction)
        await self.apply(interaction, info, c.Whisper, role=role, text=text,
                         signature=signature)
        await interaction.response.send_message(t("anon.whispered", user_lang(interaction)),
                                                ephemeral=True)

    @app_commands.command(**command_kwargs("reveal"))
    @app_commands.guild_only()
    async def reveal(self, interaction: discord.Interaction[Any]) -> None:
        info = await self.game_here(interaction)
        await self.apply(interaction, info, c.Reveal)
        await interaction.response.send_message(t("anon.revealed", user_lang(interaction)),
                                                ephemeral=True)



async def setup(bot: Any) -> None:
    await bot.add_cog(Anon(bot))
