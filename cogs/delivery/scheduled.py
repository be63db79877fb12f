"""A game's planned start as a Discord scheduled event (issue 46): `/game create start:`
makes one in the server, which Discord reminds the interested of; it follows the game
(started when the game starts, early or not; cancelled with it; completed at its end).

The start is typed as a date ("2026-12-24 19:00", UTC) or a Discord timestamp
("<t:1798138800>" or "<t:1798138800:F>", what a timestamp picker pastes), parsed
strictly: anything else, a moment past or more than a year ahead, is refused before
anything changes. The event's id is kept among the game's live messages.
"""

from __future__ import annotations

import logging
import re
from datetime import UTC, datetime, timedelta

import discord

from core.game.errors import ErrorCode, RuleError
from core.storage.observer import DiscordPatch, GameInfo
from core.text.i18n import t

from ..ui.markup import user_text
from ..utils.bot import MafiaBot

log = logging.getLogger(__name__)

EVENT_KEY = "scheduled_event"  # its id among the game's live messages
_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2})")
_STAMP = re.compile(r"<t:(\d{1,12})(?::[tTdDfFR])?>")
AHEAD = timedelta(days=365)
# Discord's statuses: scheduled 1, active 2, completed 3, canceled 4
ACTIVE, COMPLETED, CANCELED = 2, 3, 4


def parse_start(text: str, now: datetime) -> datetime:
    """The planned start typed in /game create, or the refusal (nothing changed yet)."""
    typed = text.strip()
    when: datetime | None = None
    try:
        if (m := _DATE.fullmatch(typed)) is not None:
            year, month, day, hour, minute = (int(g) for g in m.groups())
            when = datetime(year, month, day, hour, minute, tzinfo=UTC)
        elif (s := _STAMP.fullmatch(typed)) is not None:
            when = datetime.fromtimestamp(int(s[1]), UTC)
    except (ValueError, OverflowError, OSError):  # 2026-02-30, a year 10000
        when = None
    if when is None:
        raise RuleError(ErrorCode.BAD_START_TIME)  # the typed text is not echoed back
    if not now < when <= now + AHEAD:
        raise RuleError(ErrorCode.START_TIME_RANGE)
    return when


def refuse_no_events(interaction: discord.Interaction[MafiaBot]) -> None:
    """The bot needs Create Events (or Manage Events) to plan a game's start."""
    perms = interaction.app_permissions
    if not (perms.create_events or perms.manage_events):
        raise RuleError(ErrorCode.BOT_MISSING_PERMISSIONS,
                        permissions=t("permission.create_events", _lang(interaction)))


def _lang(interaction: discord.Interaction[MafiaBot]) -> str:
    from ..ui.text import user_lang

    return user_lang(interaction)


async def plan(interaction: discord.Interaction[MafiaBot], game: GameInfo, start: datetime,
               lang: str) -> None:
    """The scheduled event of a game just created, its id kept with the game."""
    guild = interaction.guild
    assert guild is not None
    event = await guild.create_scheduled_event(
        name=user_text(game.title)[:100], start_time=start, end_time=start + timedelta(days=1),
        entity_type=discord.EntityType.external, privacy_level=discord.PrivacyLevel.guild_only,
        location=f"https://discord.com/channels/{guild.id}/{game.channel_id}",
        description=t("events.description", lang, title=user_text(game.title))[:1000])
    await interaction.client.service.set_discord(game.id, DiscordPatch(
        live_messages={**game.live_messages, EVENT_KEY: event.id}))


#: What each turn of the game makes of its event, in the order tried: a game cancelled
#: before its start cancels its event, one cancelled while played completes it.
FOLLOWS = {"started": (ACTIVE,), "cancelled": (CANCELED, COMPLETED), "over": (COMPLETED,)}


async def follow(bot: MafiaBot, info: GameInfo, turn: str) -> None:
    """The game started (early or not), was cancelled or ended: its event, if it has
    one, says so (Discord moves an event only forward: the first move it accepts). An
    event a moderator deleted, or already past that state, is left as it is."""
    current = await bot.service.info(info.id)
    event_id = current.live_messages.get(EVENT_KEY)
    if event_id is None:
        return
    for status in FOLLOWS[turn]:
        try:
            await bot.http.edit_scheduled_event(info.guild_id, event_id, status=status)
            return
        except discord.HTTPException as err:
            log.info("game %s: scheduled event %s not moved to %s (%s)", info.id,
                     event_id, status, err)
