"""Help for players: /help (this game, what you can do now, the commands) and /rules.

Both are ephemeral and in the reader's language. What the reader may do now
comes from core.sight.guide; the rules' words from the catalogue (`help.*`).
"""

from __future__ import annotations

from typing import Any

import discord
from discord import app_commands
from discord.app_commands import Choice

from core.game.errors import ErrorCode, RuleError
from core.sight.guide import topic_ids

from .base import MAX_CHOICES, GameCog
from .menus import MENU_PATHS
from .ui.help import help_embeds, rules_embeds, topic_title
from .ui.limits import pack
from .ui.markup import no_pings
from .ui.text import command_kwargs, localized, user_lang
from .utils.bot import MafiaBot, is_admin


def tree_commands(tree: app_commands.CommandTree[Any]) -> list[str]:
    """Every slash command path of the tree ("game join"), in registration order, and
    the member menus it holds ("menu vote": cogs/menus.py)."""
    out: list[str] = []
    for command in tree.walk_commands():
        if isinstance(command, app_commands.Command):
            out.append(command.qualified_name)
    for menu in tree.get_commands(type=discord.AppCommandType.user):
        if menu.name in MENU_PATHS:
            out.append(MENU_PATHS[menu.name])
    return out


async def send_pages(interaction: discord.Interaction[MafiaBot],
                     embeds: list[discord.Embed]) -> None:
    """Ephemeral replies within Discord's limits: the first message answers the
    interaction, any further ones follow it."""
    first, *rest = pack(embeds=embeds)
    await interaction.response.send_message(embeds=first.embeds, ephemeral=True,
                                            allowed_mentions=no_pings())
    for part in rest:
        await interaction.followup.send(embeds=part.embeds, ephemeral=True,
                                        allowed_mentions=no_pings())


class Help(GameCog):
    @app_commands.command(**command_kwargs("help"))
    async def help(self, interaction: discord.Interaction[MafiaBot]) -> None:
        lang = user_lang(interaction)
        try:
            game_id: int | None = (await self.game_here(interaction, finished=True)).id
        except RuleError:  # no game here: the general help
            game_id = None
        g = await self.observe.guide(game_id, interaction.user.id, admin=is_admin(interaction))
        existing = tree_commands(self.bot.tree)
        await send_pages(interaction, help_embeds(
            g, [c for c in g.commands if c in existing], existing, lang))

    @app_commands.command(**command_kwargs("rules"))
    @localized("rules", "topic")
    async def rules(self, interaction: discord.Interaction[MafiaBot], topic: str | None = None
                    ) -> None:
        lang = user_lang(interaction)
        chosen = _match_topic(topic, lang) if topic else None
        if topic and chosen is None:
            raise RuleError(ErrorCode.HELP_UNKNOWN_TOPIC, name=topic[:50])
        await send_pages(interaction, rules_embeds(chosen, lang))

    @rules.autocomplete("topic")
    async def rules_topic(self, interaction: discord.Interaction[MafiaBot], value: str
                          ) -> list[Choice[str]]:
        lang = user_lang(interaction)
        typed = value.casefold().strip()
        titles = [(topic_title(tid, lang), tid) for tid in topic_ids()]
        found = [(title, tid) for title, tid in titles if typed in title.casefold()]
        found.sort(key=lambda pair: not pair[0].casefold().startswith(typed))  # stable
        return [Choice(name=title[:100], value=tid) for title, tid in found][:MAX_CHOICES]


def _match_topic(text: str, lang: str) -> str | None:
    """A topic id (what autocomplete sends) or its title typed by hand, in either language."""
    ids = topic_ids()
    if text in ids:
        return text
    folded = text.casefold().strip()
    for tid in ids:
        if folded in (topic_title(tid, lang).casefold(), topic_title(tid, "en").casefold(),
                      topic_title(tid, "ru").casefold(), tid.split(":", 1)[1]):
            return tid
    return None


async def setup(bot: MafiaBot) -> None:
    await bot.add_cog(Help(bot))
