"""Master tools: /master advance, extend, kick, bonus, log, replace, pings, prod, and
/master cohost add|remove|handover (core/game/rules/cohost.py decides)."""

from __future__ import annotations

from typing import Any

import discord
from discord import app_commands
from discord.app_commands import Choice, Range

from core.game import commands as c
from core.game.events import EventKind
from core.sight.deskpings import PING_KINDS
from core.sight.narrate import team_name
from core.text.i18n import t

from .base import GameCog, PlayerArg, ack
from .delivery import desk
from .ui.text import L, command_kwargs, localized, mention, user_lang, when
from .utils.bot import MafiaBot, is_admin


class Master(GameCog):
    master = app_commands.Group(**command_kwargs("master"), guild_only=True)
    cohost = app_commands.Group(**command_kwargs("master.cohost"), parent=master)

    async def _master_game(self, interaction: discord.Interaction[MafiaBot], *,
                           finished: bool = False) -> Any:
        """The game, if the caller may use its master's tools (core.game.access decides)."""
        info = await self.game_here(interaction, finished=finished)
        await self.observe.require_master(info.id, interaction.user.id,
                                          admin=is_admin(interaction))
        return info

    @master.command(**command_kwargs("master.advance"))
    async def advance(self, interaction: discord.Interaction[MafiaBot]) -> None:
        info = await self.game_here(interaction)
        applied = await self.apply(interaction, info, c.Advance)
        end = next((e for e in applied.events if e.kind is EventKind.GAME_OVER), None)
        if end is None:
            await ack(interaction, "master.advanced")
        elif end.data["draw"]:
            await ack(interaction, "master.advanced_draw")
        else:  # the last advance says what happened: the end, and who won
            lang = user_lang(interaction)
            await ack(interaction, "master.advanced_over",
                      winners=", ".join(team_name(w, lang) for w in end.data["winners"]))

    @master.command(**command_kwargs("master.extend"))
    @localized("master.extend", "minutes")
    async def extend(self, interaction: discord.Interaction[MafiaBot],
                     minutes: Range[int, 1, 20160]) -> None:
        info = await self.game_here(interaction)
        applied = await self.apply(interaction, info, c.Extend, minutes=minutes)
        assert applied.deadline is not None
        await ack(interaction, "master.extended", deadline=when(applied.deadline))

    @master.command(**command_kwargs("master.kick"))
    @localized("master.kick", "player")
    async def kick(self, interaction: discord.Interaction[MafiaBot],
                   player: app_commands.Transform[int, PlayerArg("living")]) -> None:
        info = await self.game_here(interaction)
        await self.apply(interaction, info, c.Kick, target=player)
        await ack(interaction, "master.kicked")

    @master.command(**command_kwargs("master.bonus"))
    @localized("master.bonus", "player", "amount", "reason", "secret")
    async def bonus(self, interaction: discord.Interaction[MafiaBot],
                    player: app_commands.Transform[int, PlayerArg("any")],
                    amount: Range[int, 1, 1000], reason: Range[str, 1, 300],
                    secret: bool = False) -> None:
        info = await self.game_here(interaction)
        await self.apply(interaction, info, c.Bonus, target=player, amount=amount,
                         reason=reason, secret=secret)
        key = "master.bonus_secret" if secret else "master.bonus_public"
        await ack(interaction, key)

    @master.command(**command_kwargs("master.log"))
    @localized("master.log", "file", "phase", "number", "player")
    @app_commands.choices(phase=[Choice(name=L("desk.log.phase.day"), value="day"),
                                 Choice(name=L("desk.log.phase.night"), value="night")])
    async def log(self, interaction: discord.Interaction[MafiaBot], file: bool = False,
                  phase: str | None = None, number: Range[int, 0, 1000] | None = None,
                  player: app_commands.Transform[int, PlayerArg("any", finished=True)]
                  | None = None) -> None:
        """The whole history for the master: paged with buttons, or as a file (cogs/desk)."""
        info = await self._master_game(interaction, finished=True)
        await desk.send_log(interaction, info, file=file, phase=phase, number=number,
                            player=player)

    @master.command(**command_kwargs("master.replace"))
    @localized("master.replace", "old", "new", "standby")
    async def replace(self, interaction: discord.Interaction[MafiaBot],
                      old: app_commands.Transform[int, PlayerArg("any")],
                      new: discord.Member | None = None,
                      standby: app_commands.Transform[int, desk.StandbyArg()] | None = None,
                      ) -> None:
        info = await self.game_here(interaction)
        await desk.replace(interaction, info, old, new, standby)

    @master.command(**command_kwargs("master.pings"))
    @localized("master.pings", *PING_KINDS)
    async def pings(self, interaction: discord.Interaction[MafiaBot],
                    away: bool | None = None, orders: bool | None = None,
                    sight: bool | None = None, anon: bool | None = None,
                    standby: bool | None = None, missed: bool | None = None) -> None:
        """Which desk lines ping the master (cogs/delivery/desk.py `choose_pings`)."""
        info = await self._master_game(interaction)
        await desk.choose_pings(interaction, info, {
            "away": away, "orders": orders, "sight": sight, "anon": anon,
            "standby": standby, "missed": missed})

    @master.command(**command_kwargs("master.prod"))
    async def prod(self, interaction: discord.Interaction[MafiaBot]) -> None:
        """Remind, privately and at once, everybody who still owes his turn (the engine
        decides who: core.game.rules.owing); the master is told whom."""
        info = await self._master_game(interaction)
        applied = await self.apply(interaction, info, c.Remind)
        done = next(e for e in applied.events if e.kind is EventKind.REMINDED)
        idle: list[int] = done.data["owing"]
        lang = user_lang(interaction)
        text = t("master.prod", lang, names=" ".join(mention(u) for u in idle)) if idle \
            else t("master.prod_none", lang)
        await interaction.response.send_message(text, ephemeral=True)

    @cohost.command(**command_kwargs("master.cohost.add"))
    @localized("master.cohost.add", "player")
    async def cohost_add(self, interaction: discord.Interaction[MafiaBot],
                         player: discord.Member) -> None:
        """Name a co-host: the engine refuses a player, a former one, a bot."""
        info = await self.game_here(interaction)
        await self.apply(interaction, info, c.Cohost, action="add", target=player.id,
                         bot=player.bot)
        await _told(interaction, "master.cohost_added", player.id)

    @cohost.command(**command_kwargs("master.cohost.remove"))
    @localized("master.cohost.remove", "player")
    async def cohost_remove(self, interaction: discord.Interaction[MafiaBot],
                            player: discord.Member | None = None) -> None:
        info = await self.game_here(interaction)
        applied = await self.apply(interaction, info, c.Cohost, action="remove",
                                   target=player.id if player else None)
        done = next(e for e in applied.events if e.kind is EventKind.COHOST_REMOVED)
        await _told(interaction, "master.cohost_removed", done.data["uid"])

    @cohost.command(**command_kwargs("master.cohost.handover"))
    async def cohost_handover(self, interaction: discord.Interaction[MafiaBot]) -> None:
        """The master hands the game to his co-host; the co-host takes it when the master
        is no longer on the server (asked of Discord only then: one request)."""
        info = await self.game_here(interaction)
        view = await self.view(info)
        left = interaction.user.id == view.cohost and not await _member(interaction,
                                                                          view.master)
        applied = await self.apply(interaction, info, c.Cohost, action="handover",
                                   left=left)
        done = next(e for e in applied.events if e.kind is EventKind.MASTER_HANDED_OVER)
        await _told(interaction, "master.cohost_handed", done.data["new"])


async def _member(interaction: discord.Interaction[MafiaBot], uid: int) -> bool:
    """Whether `uid` is still a member of the server (the bot asks for no members
    intent, so it is not told when one leaves: RULES.md §8)."""
    assert interaction.guild is not None
    try:
        await interaction.guild.fetch_member(uid)
    except discord.NotFound:
        return False
    return True


async def _told(interaction: discord.Interaction[MafiaBot], key: str, uid: int) -> None:
    """The master's ephemeral confirmation naming the member (no ping)."""
    await interaction.response.send_message(
        t(key, user_lang(interaction), uid=mention(uid)), ephemeral=True,
        allowed_mentions=discord.AllowedMentions.none())


async def setup(bot: MafiaBot) -> None:
    await bot.add_cog(Master(bot))
    bot.add_dynamic_items(*desk.DESK_ITEMS)  # the pages of /master log
