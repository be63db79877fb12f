"""Cryptography: /anon, /whisper, /reveal. The sender never appears in public."""

from __future__ import annotations

import discord
from discord import app_commands
from discord.app_commands import Choice, Range

from core.game import commands as c
from core.sight.vocabulary import Role

from .base import GameCog, ack
from .ui.text import L, command_kwargs, localized
from .utils.bot import MafiaBot

ROLE_CHOICES = [Choice(name=L(f"role.{r}.name"), value=str(r)) for r in Role]


class Anon(GameCog):
    @app_commands.command(**command_kwargs("anon"))
    @app_commands.guild_only()
    @localized("anon", "text", "signature")
    @app_commands.choices(signature=ROLE_CHOICES)
    async def anon(self, interaction: discord.Interaction[MafiaBot], text: Range[str, 1, 1500],
                   signature: str | None = None) -> None:
        info = await self.game_here(interaction)
        await self.apply(interaction, info, c.Anon, text=text, signature=signature)
        await ack(interaction, "anon.sent")

    @app_commands.command(**command_kwargs("whisper"))
    @app_commands.guild_only()
    @localized("whisper", "role", "text", "signature")
    @app_commands.choices(role=ROLE_CHOICES, signature=ROLE_CHOICES)
    async def whisper(self, interaction: discord.Interaction[MafiaBot], role: str,
                      text: Range[str, 1, 1500], signature: str | None = None) -> None:
        info = await self.game_here(interaction)
        await self.apply(interaction, info, c.Whisper, role=role, text=text,
                         signature=signature)
        await ack(interaction, "anon.whispered")

    @app_commands.command(**command_kwargs("reveal"))
    @app_commands.guild_only()
    async def reveal(self, interaction: discord.Interaction[MafiaBot]) -> None:
        info = await self.game_here(interaction)
        await self.apply(interaction, info, c.Reveal)
        await ack(interaction, "anon.revealed")



async def setup(bot: MafiaBot) -> None:
    await bot.add_cog(Anon(bot))
