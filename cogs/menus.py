"""Right-click play: the user context-menu commands "Vote against" (as /vote) and
"Night order on" (as /night with that target) on a member.

Each goes the slash command's own way: the game of the channel, the target resolved by
the observer as an option typed with his id would be (so a member who is not a player
is refused in the same words), then the same engine command and guard. Shout stays
with /vote: a right click carries no options.
"""

from __future__ import annotations

import discord
from discord import app_commands

from core.game import commands as c

from .base import GameCog
from .night import answer_order
from .ui.text import L
from .utils.actions import cast_vote
from .utils.bot import MafiaBot

#: The menus' names (English from the catalogue) and the /help path of each.
VOTE_AGAINST = L("ctx.vote_against.name")
NIGHT_ORDER_ON = L("ctx.night_order_on.name")
MENU_PATHS = {VOTE_AGAINST.message: "menu vote", NIGHT_ORDER_ON.message: "menu night"}


class Menus(GameCog):
    def __init__(self, bot: MafiaBot) -> None:
        super().__init__(bot)
        self.menus = [
            app_commands.ContextMenu(name=VOTE_AGAINST, callback=self.vote_against),
            app_commands.ContextMenu(name=NIGHT_ORDER_ON, callback=self.night_order_on),
        ]
        for menu in self.menus:
            menu.guild_only = True
            bot.tree.add_command(menu)

    async def cog_unload(self) -> None:
        for menu in self.menus:
            self.bot.tree.remove_command(menu.name, type=menu.type)

    async def vote_against(self, interaction: discord.Interaction[MafiaBot],
                           member: discord.Member) -> None:
        """As /vote player:<member>, without Shout."""
        info = await self.game_here(interaction)
        target = await self.observe.player(info.id, str(member.id))
        await cast_vote(interaction, info, target, shout=False)

    async def night_order_on(self, interaction: discord.Interaction[MafiaBot],
                             member: discord.Member) -> None:
        """As /night target:<member>, without a fallback or a story."""
        info = await self.game_here(interaction)
        target = await self.observe.player(info.id, str(member.id))
        applied = await self.apply(interaction, info, c.NightOrder, target=target,
                                   fallback=None, story=None)
        await answer_order(interaction, applied)


async def setup(bot: MafiaBot) -> None:
    await bot.add_cog(Menus(bot))
