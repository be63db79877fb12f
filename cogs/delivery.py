"""Outbox delivery: committed events become Discord messages and channel changes.

Runs in the OutboxWorker, after the command's transaction: a crash delays a
message, never loses it. Deliveries are idempotent where Discord lets us check
(a private channel is looked up before it is created).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import discord

from core.events import Event
from core.i18n import t
from core.narrate import team_name
from core.storage.outbox import OutboxEntry, RetryAfter
from core.storage.service import DiscordPatch, GameInfo

from .ui.components import day_view, role_view
from .ui.lobby import signup_embed
from .ui.render import event_embed

if TYPE_CHECKING:
    from bot import MafiaBot

log = logging.getLogger(__name__)

# Public events the interaction itself answers in public (no second message).
ANSWERED_IN_PLACE = frozenset({"vote_cast", "vote_withdrawn", "checked_in"})
SIGNUP_EVENTS = frozenset({"joined", "left", "roles_set", "options_set"})

# The bot's own overwrite: what it needs in a channel @everyone cannot see. Managing
# the channel comes from its guild role (granting manage_permissions in an
# overwrite would need Administrator).
BOT_ALLOW = discord.PermissionOverwrite(
    view_channel=True, send_messages=True, read_message_history=True, embed_links=True)
HIDDEN = discord.PermissionOverwrite(view_channel=False)


def route(event: Event) -> bool:
    """Which events must reach Discord through the outbox."""
    return event.audience.kind in ("public", "team") and event.kind not in ANSWERED_IN_PLACE


def member_overwrite(writer: bool) -> discord.PermissionOverwrite:
    return discord.PermissionOverwrite(view_channel=True, read_message_history=True,
                                       send_messages=writer)


class Delivery:
    def __init__(self, bot: MafiaBot) -> None:
        self.bot = bot

    @property
    def service(self):
        return self.bot.service

    async def deliver(self, entry: OutboxEntry) -> None:
        try:
            await self._deliver(entry)
        except discord.HTTPException as exc:
            if exc.status == 429:
                retry = getattr(exc, "retry_after", None) or 1.0
                raise RetryAfter(float(retry)) from exc
            raise

    async def _deliver(self, entry: OutboxEntry) -> None:
        info = await self.service.info(entry.game_id)
        event = entry.event()
        if event is None:
            if entry.kind == "signup":
                await self.refresh_signup(info)
            return
        if event.audience.kind == "team":
            await self.team_event(info, event)
        else:
            await self.public_event(info, event)

    # --- the game channel ---------------------------------------------------------------
    def _channel(self, channel_id: int) -> discord.abc.Messageable:
        channel = self.bot.get_channel(channel_id)
        if channel is None:
            channel = self.bot.get_partial_messageable(channel_id)
        return channel  # type: ignore[return-value]

    async def public_event(self, info: GameInfo, event: Event) -> None:
        lang = info.language
        channel = self._channel(info.channel_id)
        if event.kind in SIGNUP_EVENTS:
            await self.refresh_signup(info)
            return
        embed = event_embed(event, lang)
        if event.kind == "game_started":
            await self.refresh_signup(info)
            await channel.send(embed=embed, view=role_view(info.id, lang))
        elif event.kind == "phase_started":
            state = await self.service.state(info.id)
            living = [(p.uid, p.name) for p in state.living()]
            await channel.send(embed=embed, view=day_view(
                self.bot, info.id, event.data["number"] if event.data["phase"] == "day" else 0,
                living, lang))
        elif event.kind in ("game_over", "cancelled"):
            await channel.send(embed=embed)
            await self.close_channels(info)
        else:
            await channel.send(embed=embed)

    async def refresh_signup(self, info: GameInfo) -> None:
        if info.signup_message_id is None:
            return
        state = await self.service.state(info.id)
        message = self._channel(info.channel_id).get_partial_message(  # type: ignore[attr-defined]
            info.signup_message_id)
        from .ui.components import signup_view

        view = signup_view(info.id, info.language) if not state.started else None
        await message.edit(embed=signup_embed(state, info.language), view=view)

    # --- private channels -------------------------------------------------------------------
    async def team_event(self, info: GameInfo, event: Event) -> None:
        team = event.audience.team or ""
        if event.kind == "team_changed":
            await self.ensure_team_channel(info, team, event.data["members"],
                                           event.data["writers"])
            return
        channel_id = (await self.service.info(info.id)).private_channels.get(team)
        if channel_id is None:
            log.warning("game %s: no channel for team %s yet", info.id, team)
            return
        await self._channel(channel_id).send(embed=event_embed(event, info.language))

    def _guild(self, info: GameInfo) -> discord.Guild:
        guild = self.bot.get_guild(info.guild_id)
        if guild is None:
            raise RuntimeError(f"guild {info.guild_id} is not available")
        return guild

    def overwrites(self, guild: discord.Guild, members: list[int], writers: list[int]
                   ) -> dict[Any, discord.PermissionOverwrite]:
        """Deny @everyone, allow exactly the members (the dead read-only), keep the bot in."""
        out: dict[Any, discord.PermissionOverwrite] = {guild.default_role: HIDDEN,
                                                      guild.me: BOT_ALLOW}
        for uid in members:
            out[discord.Object(id=uid)] = member_overwrite(uid in writers)
        return out

    async def ensure_team_channel(self, info: GameInfo, team: str, members: list[int],
                                  writers: list[int]) -> None:
        guild = self._guild(info)
        current = await self.service.info(info.id)
        overwrites = self.overwrites(guild, members, writers)
        channel_id = current.private_channels.get(team)
        channel = guild.get_channel(channel_id) if channel_id else None
        if isinstance(channel, discord.TextChannel):
            await channel.edit(overwrites=overwrites)
            return
        category = await self.ensure_category(current, guild)
        name = t(f"channel.{team.split(':')[0]}", info.language,
                 number=team.split(":")[1] if ":" in team else "")
        channel = await guild.create_text_channel(
            name, category=category, overwrites=overwrites,
            topic=t("channel.topic", info.language, team=team_name(team, info.language),
                    title=info.title))
        channels = dict((await self.service.info(info.id)).private_channels)
        channels[team] = channel.id
        await self.service.set_discord(info.id, DiscordPatch(private_channels=channels))
        self.bot.private_index[channel.id] = info.id
        await channel.send(t("channel.welcome", info.language,
                             team=team_name(team, info.language)))

    async def ensure_category(self, info: GameInfo, guild: discord.Guild
                              ) -> discord.CategoryChannel:
        existing = guild.get_channel(info.category_id) if info.category_id else None
        if isinstance(existing, discord.CategoryChannel):
            return existing
        category = await guild.create_category(
            t("channel.category", info.language, title=info.title)[:100],
            overwrites={guild.default_role: HIDDEN, guild.me: BOT_ALLOW})
        await self.service.set_discord(info.id, DiscordPatch(category_id=category.id))
        return category

    async def close_channels(self, info: GameInfo) -> None:
        """After the game: private channels become read-only archives, or are removed."""
        current = await self.service.info(info.id)
        state = await self.service.state(info.id)
        guild = self._guild(current)
        for team, channel_id in current.private_channels.items():
            channel = guild.get_channel(channel_id)
            if not isinstance(channel, discord.TextChannel):
                continue
            if state.options.archive_channels:
                members = [o.id for o in channel.overwrites
                           if not isinstance(o, discord.Role) and o.id != guild.me.id]
                await channel.edit(overwrites=self.overwrites(guild, members, []))
            else:
                await channel.delete(reason=t("channel.closed_reason", current.language))
                self.bot.private_index.pop(channel_id, None)
            log.info("game %s: closed %s", info.id, team)
        if not state.options.archive_channels and current.category_id:
            category = guild.get_channel(current.category_id)
            if category is not None:
                await category.delete()

    # --- failures ------------------------------------------------------------------------
    async def parked(self, entry: OutboxEntry, error: str) -> None:
        """A delivery that kept failing: tell the master what could not be delivered."""
        try:
            info = await self.service.info(entry.game_id)
            user = await self.bot.fetch_user(info.master_id)
            event = entry.event()
            what = event.kind if event else entry.kind
            await user.send(t("delivery.parked", info.language, game=info.title, what=what,
                              error=error[:200]))
        except discord.HTTPException:
            log.error("game %s: could not tell the master about parked entry %s",
                      entry.game_id, entry.key)
