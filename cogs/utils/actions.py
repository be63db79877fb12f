"""What a command and a persistent component share: the one path from the Discord
layer to a command, showing the caller's card, joining or leaving, casting a vote.
Here, not in the cogs, so that the components (cogs/ui/components.py) reach them
without importing a cog extension."""

from __future__ import annotations

import logging
from typing import Any

import discord

from core.game import commands as c
from core.game.events import Event, EventKind
from core.storage.observer import GameInfo, Outcome
from core.text.i18n import t

from ..ui.limits import EMBEDS, split_embed
from ..ui.markup import no_pings, user_text
from ..ui.render import card_embed, event_embed, reply_embed
from ..ui.text import user_lang
from .bot import MafiaBot, is_admin, now
from .sight import member_sight, note_sight

log = logging.getLogger(__name__)


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
    """The caller's own card, as an ephemeral reply: the only way a role is shown (his
    rights looked at first, RULES.md §8: the 'Show my role' button is no command)."""
    await note_sight(interaction, await interaction.client.service.info(game_id))
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
    await record(interaction, info, c.Vote(by=interaction.user.id, at=now(), target=target,
                                           shout=shout, admin=bool(perms.manage_guild),
                                           seen=seen), EventKind.VOTE_CAST)


#: events whose public record a player's own command makes (a vote, a withdrawal, a
#: check-in): sent in the game channel, the interaction's response is that record
RECORDS = frozenset({EventKind.VOTE_CAST, EventKind.VOTE_WITHDRAWN, EventKind.CHECKED_IN})


def _recorded(event: Event) -> bool:
    return event.kind in RECORDS and event.audience.kind == "public"


async def record(interaction: discord.Interaction[MafiaBot], info: GameInfo,
                 command: c.Command, kind: EventKind) -> None:
    """Apply a vote, a withdrawal or a check-in and answer with its event. Sent in the
    game channel, the answer is the public record itself (an interaction response:
    exempt from Discord's global limit, and the author sees it once); its outbox entry,
    written in the same transaction, is held meanwhile and marked delivered after the
    response, so the outbox posts it only if the response failed (issue 30). Sent
    elsewhere (a team channel, a DM), the outbox posts the record in the game channel
    and the sender alone gets the event."""
    bot = interaction.client
    here = interaction.channel_id == info.channel_id
    applied = await bot.apply(info, command, answer=_recorded if here else None,
                              reply=str(interaction.id) if here else None)
    event = next(e for e in applied.events if e.kind is kind)
    if applied.answered and await bot.outbox.behind(info.id, min(applied.answered)):
        # the channel's earlier posts are held back (Discord's limits): the record
        # waits its turn in the outbox rather than overtake them
        await bot.observe.answered(info.id, applied.answered, release=True)
    elif applied.answered:
        await _answer_publicly(interaction, info, applied)
        return
    await interaction.response.send_message(embed=reply_embed(event, user_lang(interaction)),
                                            ephemeral=True)


async def _answer_publicly(interaction: discord.Interaction[MafiaBot], info: GameInfo,
                           applied: Outcome) -> None:
    bot = interaction.client
    # as the outbox would post it (cogs/delivery/deliverer.py): the same embeds. Should the
    # process stop before marking the entry, the outbox finds this response by its
    # interaction's id (stored with the entry: `reply`), not by its text
    embeds = [piece for e in applied.events if _recorded(e)
              for piece in split_embed(event_embed(e, info.language,
                                                   applied.record_count(e)))]
    try:
        await interaction.response.send_message(embeds=embeds[:EMBEDS],
                                                allowed_mentions=no_pings())
    except discord.HTTPException as exc:  # the outbox posts it when the hold ends
        log.warning("game %s: public record not answered (%s); the outbox posts it",
                    info.id, exc)
        return
    await bot.observe.answered(info.id, applied.answered)
