"""Day: /checkin, /vote (public red embed), /unvote, /votes; the vote menu.

The public record of a vote, a withdrawal or a check-in is posted by the outbox in the
game's channel, wherever the command was typed (a clan channel, a DM): it is written in
the command's own transaction, so a crash before the reply cannot lose it. The reply only
confirms, to the sender alone (the same embed).
"""

from __future__ import annotations

import discord
from discord import app_commands

from core import commands as c
from core.errors import ErrorCode, RuleError
from core.events import EventKind
from core.i18n import t
from core.vocabulary import PhaseKind

from .base import GameCog, PlayerArg
from .ui.components import VoteSelect
from .ui.render import reply_embed, tally_embed
from .ui.text import command_kwargs, localized, user_lang
from .utils.actions import cast_vote
from .utils.bot import MafiaBot


class Voting(GameCog):
    async def _answer(self, interaction: discord.Interaction[MafiaBot], cmd: type[c.Command],
                      kind: EventKind) -> None:
        """Apply a command without options and show the sender the event that answers it."""
        info = await self.game_here(interaction)
        applied = await self.apply(interaction, info, cmd)
        event = next(e for e in applied.events if e.kind is kind)
        await interaction.response.send_message(embed=reply_embed(event, info.language),
                                                ephemeral=True)

    @app_commands.command(**command_kwargs("checkin"))
    @app_commands.guild_only()
    async def checkin(self, interaction: discord.Interaction[MafiaBot]) -> None:
        await self._answer(interaction, c.CheckIn, EventKind.CHECKED_IN)

    @app_commands.command(**command_kwargs("vote"))
    @app_commands.guild_only()
    @localized("vote", "player", "shout")
    async def vote(self, interaction: discord.Interaction[MafiaBot],
                   player: app_commands.Transform[int, PlayerArg("vote")],
                   shout: bool = False) -> None:
        info = await self.game_here(interaction)  # the option's lookup, kept on the interaction
        await cast_vote(interaction, info, player, shout=shout)

    @app_commands.command(**command_kwargs("unvote"))
    @app_commands.guild_only()
    async def unvote(self, interaction: discord.Interaction[MafiaBot]) -> None:
        await self._answer(interaction, c.Unvote, EventKind.VOTE_WITHDRAWN)

    @app_commands.command(**command_kwargs("votes"))
    @app_commands.guild_only()
    async def votes(self, interaction: discord.Interaction[MafiaBot]) -> None:
        info = await self.game_here(interaction, finished=True)
        view = await self.view(info)
        lang = user_lang(interaction)
        if view.over:  # the channel's last game: say it is over, not "no game here"
            raise RuleError(ErrorCode.GAME_OVER)
        if view.phase is not PhaseKind.DAY or view.number == 0:
            await interaction.response.send_message(t("votes.not_voting", lang), ephemeral=True)
            return
        await interaction.response.send_message(embed=tally_embed(view, lang),
                                                ephemeral=True)


async def setup(bot: MafiaBot) -> None:
    await bot.add_cog(Voting(bot))
    bot.add_dynamic_items(VoteSelect)  # the day announcement's vote menu
