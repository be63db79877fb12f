"""Night: /night (orders, also during the day), /share, /away, /occult exclude."""

from __future__ import annotations

import discord
from discord import app_commands
from discord.app_commands import Range

from core.game import commands as c
from core.game.events import EventKind
from core.sight.narrate import describe
from core.storage.observer import Outcome

from .base import GameCog, PlayerArg, ack
from .ui.limits import CONTENT, clip
from .ui.markup import user_data
from .ui.text import command_kwargs, localized, mention, user_lang, when
from .utils.bot import MafiaBot


class Night(GameCog):
    occult = app_commands.Group(**command_kwargs("occult"), guild_only=False)

    @app_commands.command(**command_kwargs("night"))
    @localized("night", "target", "fallback", "story")
    async def night(self, interaction: discord.Interaction[MafiaBot],
                    target: app_commands.Transform[int, PlayerArg("night")],
                    fallback: app_commands.Transform[int, PlayerArg("night")] | None = None,
                    story: Range[str, 1, 1500] | None = None) -> None:
        info = await self.game_here(interaction)
        applied = await self.apply(interaction, info, c.NightOrder, target=target,
                                   fallback=fallback, story=story)
        await answer_order(interaction, applied)

    @app_commands.command(**command_kwargs("share"))
    @localized("share", "note")
    async def share(self, interaction: discord.Interaction[MafiaBot],
                    note: Range[str, 1, 1500] | None = None) -> None:
        info = await self.game_here(interaction)
        await self.apply(interaction, info, c.Share, note=note)
        await ack(interaction, "night.shared")

    @app_commands.command(**command_kwargs("away"))
    @localized("away", "reason", "until")
    async def away(self, interaction: discord.Interaction[MafiaBot],
                   reason: Range[str, 1, 300] | None = None,
                   until: Range[int, 0, 1000] | None = None) -> None:
        info = await self.game_here(interaction)
        applied = await self.apply(interaction, info, c.Away, reason=reason, until=until)
        done = next(e for e in applied.events if e.kind is EventKind.AWAY_ACK)
        await ack(interaction, "event.away_ack", until=done.data["until"])

    @occult.command(**command_kwargs("occult.exclude"))
    @localized("occult.exclude", "player")
    async def exclude(self, interaction: discord.Interaction[MafiaBot],
                      player: app_commands.Transform[int, PlayerArg("occult")]) -> None:
        info = await self.game_here(interaction)
        await self.apply(interaction, info, c.OccultExclude, target=player)
        await ack(interaction, "night.excluded")


async def answer_order(interaction: discord.Interaction[MafiaBot], applied: Outcome) -> None:
    """The order's acceptance, in the sender's words, to him alone (/night and the
    "Night order on" menu alike)."""
    accepted = next(e for e in applied.events if e.kind is EventKind.ORDER_ACCEPTED)
    safe = accepted.model_copy(update={"data": user_data(accepted.data)})
    await interaction.response.send_message(
        clip(describe(safe, mention, user_lang(interaction), when), CONTENT), ephemeral=True)


async def setup(bot: MafiaBot) -> None:
    await bot.add_cog(Night(bot))
