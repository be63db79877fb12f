"""Inventory and spells: /shop, /buy, /cast."""

from __future__ import annotations

from typing import Any

import discord
from discord import app_commands
from discord.app_commands import Choice, Range

from core.game import commands as c
from core.game.errors import RuleError
from core.game.events import Event, EventKind
from core.sight.narrate import attacker_name, item_name, phase_words
from core.sight.vocabulary import ITEMS, SPELLS
from core.storage import wallets
from core.storage.observer import GameInfo, Outcome
from core.text.i18n import t

from .base import CastTargetArg, GameCog, PlayerArg
from .ui.render import shop_embed
from .ui.text import L, command_kwargs, localized, mention, user_lang
from .utils.bot import MafiaBot

ITEM_CHOICES = [Choice(name=L(f"item.{i}.name"), value=i) for i in ITEMS]
SPELL_CHOICES = [Choice(name=L(f"spell.{s}.name"), value=s) for s in SPELLS]

#: The condition options of /buy and /cast: if_hanged, unless_hanged, if_nobody_hanged.
Condition = tuple[int | None, int | None, bool]


class Shop(GameCog):
    async def _order(self, interaction: discord.Interaction[MafiaBot], info: GameInfo,
                     cmd: type[c.Buy | c.Cast], condition: Condition, **fields: Any
                     ) -> Outcome:
        """/buy and /cast take the same condition on the day's result (then the purchase
        is an evening order carried out after it)."""
        if_hanged, unless_hanged, if_nobody_hanged = condition
        return await self.apply(interaction, info, cmd, **fields, if_hanged=if_hanged,
                                unless_hanged=unless_hanged, if_nobody_hanged=if_nobody_hanged)

    @app_commands.command(**command_kwargs("shop"))
    @app_commands.guild_only()
    async def shop(self, interaction: discord.Interaction[MafiaBot]) -> None:
        info = await self.game_here(interaction, finished=True)
        shop = await self.observe.shop(info.id, interaction.user.id)
        balance = (await wallets.balances(None, info.guild_id, [interaction.user.id])).get(
            interaction.user.id, 0)
        await interaction.response.send_message(
            embed=shop_embed(shop, user_lang(interaction), balance),
            ephemeral=True)

    @app_commands.command(**command_kwargs("buy"))
    @app_commands.guild_only()
    @localized("buy", "item", "target", "if_hanged", "unless_hanged", "if_nobody_hanged")
    @app_commands.choices(item=ITEM_CHOICES)
    async def buy(self, interaction: discord.Interaction[MafiaBot], item: str,
                  target: Range[str, 1, 40] | None = None,
                  if_hanged: app_commands.Transform[int, PlayerArg("living")] | None = None,
                  unless_hanged: app_commands.Transform[int, PlayerArg("living")] | None = None,
                  if_nobody_hanged: bool = False) -> None:
        info = await self.game_here(interaction)
        applied = await self._order(
            interaction, info, c.Buy, (if_hanged, unless_hanged, if_nobody_hanged),
            item=item, against=await self.observe.attacker(info.id, target))
        lang = user_lang(interaction)
        against = next((e.data.get("against") for e in applied.events
                        if e.kind in (EventKind.PURCHASE, EventKind.BUY_ORDERED)), None)
        name = item_name(item, against, lang)
        text = t("shop.bought", lang, item=name) \
            if any(e.kind is EventKind.PURCHASE for e in applied.events) \
            else ordered(applied.events, name, lang)
        await interaction.response.send_message(text, ephemeral=True)

    @buy.autocomplete("target")
    async def buy_target(self, interaction: discord.Interaction[MafiaBot], value: str
                         ) -> list[Choice[str]]:
        try:
            info = await self.game_here(interaction)
        except RuleError:
            return []
        lang = user_lang(interaction)
        return [Choice(name=attacker_name(k, lang), value=k)
                for k in await self.observe.attackers(info.id)
                if value.casefold() in attacker_name(k, lang).casefold()]

    @app_commands.command(**command_kwargs("cast"))
    @app_commands.guild_only()
    @localized("cast", "spell", "target", "if_hanged", "unless_hanged", "if_nobody_hanged")
    @app_commands.choices(spell=SPELL_CHOICES)
    async def cast(self, interaction: discord.Interaction[MafiaBot], spell: str,
                   target: app_commands.Transform[int, CastTargetArg()],
                   if_hanged: app_commands.Transform[int, PlayerArg("living")] | None = None,
                   unless_hanged: app_commands.Transform[int, PlayerArg("living")] | None = None,
                   if_nobody_hanged: bool = False) -> None:
        """By day a day spell acts today; by night (the evening) it acts from the next
        day's opening; with a condition it is an evening order, carried out after the
        day's result."""
        info = await self.game_here(interaction)
        applied = await self._order(
            interaction, info, c.Cast, (if_hanged, unless_hanged, if_nobody_hanged),
            spell=spell, target=target)
        lang = user_lang(interaction)
        cast = next((e for e in applied.events if e.kind is EventKind.SPELL_CAST), None)
        name = item_name(spell, None, lang)
        if cast is None:
            text = ordered(applied.events, name, lang)
        elif cast.data.get("evening"):  # a day spell for the next day's opening
            text = t("shop.cast_evening", lang, item=name, **phase_words(cast.data["day"], lang))
        else:
            text = t("shop.cast", lang, item=name)
        await interaction.response.send_message(text, ephemeral=True)


def ordered(events: list[Event], name: str, lang: str) -> str:
    """An evening order's reply, restating its condition in the words of its
    execution ("if @X is hanged")."""
    order = next((e for e in events if e.kind is EventKind.BUY_ORDERED), None)
    data = order.data if order is not None else {}
    if isinstance(data.get("if_hanged"), int):
        return t("shop.ordered_if", lang, item=name, if_hanged=mention(data["if_hanged"]))
    if isinstance(data.get("unless_hanged"), int):
        return t("shop.ordered_unless", lang, item=name,
                 unless_hanged=mention(data["unless_hanged"]))
    if data.get("if_nobody_hanged"):
        return t("shop.ordered_nobody", lang, item=name)
    return t("shop.ordered", lang, item=name)


async def setup(bot: MafiaBot) -> None:
    await bot.add_cog(Shop(bot))
