"""What a command and a persistent component share: showing the caller's card, joining
or leaving, casting a vote. Here, not in the cogs, so that the components
(cogs/ui/components.py) reach them without importing a cog extension."""

from __future__ import annotations

import discord

from core import commands as c
from core.events import EventKind
from core.i18n import t
from core.views import menu_seen
from core.visibility import card

from ..ui.markup import user_text
from ..ui.render import card_embed, reply_embed
from ..ui.text import user_lang
from .bot import MafiaBot, is_admin, now
from .sight import member_sight, note_sight


async def send_card(interaction: discord.Interaction[MafiaBot], game_id: int) -> None:
    """The caller's own card, as an ephemeral reply: the only way a role is shown."""
    bot = interaction.client
    mine = card(await bot.service.state(game_id), interaction.user.id)
    await interaction.response.send_message(
        embed=card_embed(mine, user_lang(interaction)), ephemeral=True)


async def join_or_leave(interaction: discord.Interaction[MafiaBot], game_id: int, action: str
                        ) -> None:
    """Shared by /game join|leave and the signup message's buttons."""
    bot = interaction.client
    info = await bot.service.info(game_id)
    cmd: c.Command
    if action == "join":
        name = getattr(interaction.user, "display_name", interaction.user.name)
        cmd = c.Join(by=interaction.user.id, at=now(), name=name[:100],
                     bot=interaction.user.bot, handle=interaction.user.name[:100],
                     admin=is_admin(interaction),
                     sight=member_sight(bot, info, interaction.user, interaction.permissions))
    else:
        cmd = c.Leave(by=interaction.user.id, at=now())
    applied = await bot.apply(info, cmd)
    lang = user_lang(interaction)
    key = "lobby.joined" if action == "join" else "lobby.left"
    await interaction.response.send_message(
        t(key, lang, title=user_text(info.title), count=len(applied.state.players)),
        ephemeral=True)


async def cast_vote(interaction: discord.Interaction[MafiaBot], game_id: int, target: int, *,
                    shout: bool, day: int | None = None,
                    seen: tuple[int, int] | None = None) -> None:
    """Shared by /vote (`seen`: the phase the command was sent in) and the day
    announcement's menu (`day`); the outbox posts the vote."""
    bot = interaction.client
    info = await bot.service.info(game_id)
    await note_sight(interaction, info)
    if day is not None:  # a menu click: the day it belongs to is the phase it was sent in
        seen = menu_seen(await bot.service.state(game_id), day)
    perms = interaction.permissions
    applied = await bot.apply(info, c.Vote(by=interaction.user.id, at=now(), target=target,
                                           shout=shout, admin=bool(perms.manage_guild),
                                           seen=seen))
    event = next(e for e in applied.events if e.kind is EventKind.VOTE_CAST)
    await interaction.response.send_message(embed=reply_embed(event, info.language),
                                            ephemeral=True)
