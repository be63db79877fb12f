"""What a command and a persistent component share: the one path from the Discord
layer to a command, showing the caller's card, joining or leaving, casting a vote.
Here, not in the cogs, so that the components (cogs/ui/components.py) reach them
without importing a cog extension."""

from __future__ import annotations

from typing import Any

import discord

from core import commands as c
from core.events import EventKind
from core.i18n import t
from core.storage.observer import GameInfo, Outcome

from ..ui.markup import user_text
from ..ui.render import card_embed, reply_embed
from ..ui.text import user_lang
from .bot import MafiaBot, is_admin, now
from .sight import member_sight, note_sight


async def command(interaction: discord.Interaction[MafiaBot], info: GameInfo,
                  cmd: type[c.Command], *, noted: bool = False, **fields: Any) -> Outcome:
    """The caller's command on the game `info`: his rights looked at first (a right given
    during the game, RULES.md §8; `noted`: already done), stamped with who, when, his
    admin flag and the phase he saw; `fields` may set the stamps themselves (a vote's
    admin flag, a menu's phase)."""
    if not noted:
        await note_sight(interaction, info)
    stamps: dict[str, Any] = {"by": interaction.user.id, "at": now(),
                              "admin": is_admin(interaction)}
    made = cmd(**(stamps | fields))
    if "seen" not in fields:
        made = c.stamped(made, info.seen)
    return await interaction.client.apply(info, made)


async def send_card(interaction: discord.Interaction[MafiaBot], game_id: int) -> None:
    """The caller's own card, as an ephemeral reply: the only way a role is shown."""
    mine = await interaction.client.observe.card(game_id, interaction.user.id)
    await interaction.response.send_message(
        embed=card_embed(mine, user_lang(interaction)), ephemeral=True)


async def game_info(interaction: discord.Interaction[MafiaBot], game: GameInfo | int
                    ) -> GameInfo:
    """The game a command found (`GameInfo`) or a component names (its id)."""
    return game if isinstance(game, GameInfo) else await interaction.client.service.info(game)


async def join_or_leave(interaction: discord.Interaction[MafiaBot], game: GameInfo | int,
                        action: str) -> None:
    """Shared by /game join|leave and the signup message's buttons."""
    bot = interaction.client
    info = await game_info(interaction, game)
    if action == "join":  # his rights go with his seat: no sight to note before it
        name = getattr(interaction.user, "display_name", interaction.user.name)
        done = await command(
            interaction, info, c.Join, noted=True, name=name[:100], bot=interaction.user.bot,
            handle=interaction.user.name[:100],
            sight=member_sight(bot, info, interaction.user, interaction.permissions))
    else:
        done = await command(interaction, info, c.Leave, noted=True, admin=False)
    lang = user_lang(interaction)
    key = "lobby.joined" if action == "join" else "lobby.left"
    await interaction.response.send_message(
        t(key, lang, title=user_text(info.title), count=done.players), ephemeral=True)


async def cast_vote(interaction: discord.Interaction[MafiaBot], game: GameInfo | int,
                    target: int, *, shout: bool, day: int | None = None) -> None:
    """Shared by /vote (the game it found, with the phase the command was sent in) and
    the day announcement's menu (`day`); the outbox posts the vote."""
    info = await game_info(interaction, game)
    await note_sight(interaction, info)
    seen = info.seen
    if day is not None:  # a menu click: the day it belongs to is the phase it was sent in
        seen = await interaction.client.observe.menu_seen(info.id, day)
    perms = interaction.permissions
    done = await command(interaction, info, c.Vote, noted=True, target=target, shout=shout,
                         admin=bool(perms.manage_guild), seen=seen)
    event = next(e for e in done.events if e.kind is EventKind.VOTE_CAST)
    await interaction.response.send_message(embed=reply_embed(event, info.language),
                                            ephemeral=True)
