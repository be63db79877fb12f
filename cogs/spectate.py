"""/game spectate: follow a game without a seat (RULES.md, "Spectators").

The rules decide who may and which channels he reads (core.game.rules.channels.spectated);
the `team_changed` events they emit carry the new readers and writers, and the outbox
turns them into the channels' overwrites like any other membership change."""

from __future__ import annotations

import discord

from core.game import commands as c
from core.storage.observer import GameInfo
from core.text.i18n import t

from .ui.markup import user_text
from .ui.text import user_lang
from .utils.actions import command
from .utils.bot import MafiaBot


async def spectate(interaction: discord.Interaction[MafiaBot], info: GameInfo) -> None:
    done = await command(interaction, info, c.Spectate, noted=True,
                         name=interaction.user.display_name[:100], bot=interaction.user.bot,
                         handle=interaction.user.name[:100])
    lang = user_lang(interaction)
    key = "spectate.done_teams" if done.spectators_see_teams else "spectate.done"
    await interaction.response.send_message(
        t(key, lang, title=user_text(info.title)), ephemeral=True,
        allowed_mentions=discord.AllowedMentions.none())
