"""Day: /checkin, /vote (public red embed), /unvote, /votes; the vote menu.

The public record of a vote, a withdrawal or a check-in is written to the outbox in the
command's own transaction, so a crash before the reply cannot lose it. Typed in the game
channel, the reply is that record (the outbox only stands by: cogs/utils/actions.py
`record`); typed elsewhere (a clan channel, a DM), the outbox posts it in the game
channel and the reply confirms to the sender alone (the same embed).
"""

from __future__ import annotations

import discord
from discord import app_commands

from core.game import commands as c
from core.game.errors import ErrorCode, RuleError
from core.game.events import EventKind
from core.sight.vocabulary import PhaseKind
from core.text.i18n import t

from .base import GameCog, PlayerArg
from .ui.components import VoteSelect
from .ui.render import tally_embed
from .ui.text import command_kwargs, localized, user_lang
from .utils.actions import cast_vote, record
from .utils.bot import MafiaBot, is_admin, now
from .utils.sight import note_sight


class Voting(GameCog):
    async def _answer(self, interaction: discord.Interaction[MafiaBot],
                      cmd: type[c.CheckIn] | type[c.Unvote],
                      kind: EventKind) -> None:
        """Apply a command without options and answer with the event it made (`record`:
        in the game channel, the public record itself)."""
        info = await self.game_here(interaction)
        await note_sight(interaction, info)  # a right given during the game: RULES.md §8
        command = c.stamped(cmd(by=interaction.user.id, at=now(),
                                admin=is_admin(interaction)), info.seen)
        await record(interaction, info, command, kind)

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
