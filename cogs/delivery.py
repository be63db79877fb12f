"""Outbox delivery: committed events become Discord messages and channel changes.

Runs in the OutboxWorker, after the command's transaction: a crash delays a
message, never loses it. Deliveries are idempotent where Discord lets us check
(a private channel is looked up before it is created, and opened again if an admin
deleted it mid-game). What keeps failing is parked by the worker and reported to
the master by DM, or in the game channel when his DMs are closed.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import discord

from core.events import Event
from core.i18n import t
from core.narrate import team_name
from core.rules.channels import team_access
from core.storage.outbox import OutboxEntry, RetryAfter, Undeliverable
from core.storage.service import EVENT_KIND, DiscordPatch, GameInfo

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


def _translated(exc: discord.HTTPException) -> Exception:
    """What the outbox should do about a refusal: wait (429), give up at once (404: the
    channel or message is gone, and retrying for minutes would only delay telling the
    master), or count a failed attempt (anything else)."""
    if exc.status == 429:
        return RetryAfter(retry_after(exc))
    if exc.status == 404:
        return Undeliverable(str(exc))
    return exc


def member_overwrite(writer: bool) -> discord.PermissionOverwrite:
    return discord.PermissionOverwrite(view_channel=True, read_message_history=True,
                                       send_messages=writer)


class Delivery:
    def __init__(self, bot: MafiaBot) -> None:
        self.bot = bot
        # Parts of a batch that went out before a later part failed, as (game, ordinal,
        # step): a retry does not post them again, and the failure is charged to the
        # entry that failed. In memory only: after a crash they may be posted twice.
        self._done: set[tuple[int, int, str]] = set()

    @property
    def service(self):
        return self.bot.service

    async def deliver(self, entry: OutboxEntry) -> None:
        try:
            await self._deliver(entry)
        except discord.RateLimited as exc:  # discord.py gave up waiting (max_ratelimit_timeout)
            raise RetryAfter(exc.retry_after) from exc
        except discord.HTTPException as exc:
            raise _translated(exc) from exc

    async def deliver_batch(self, entries: list[OutboxEntry]) -> int:
        """The OutboxWorker's batch hook: the leading entries made by one command go out
        together, its announcements in the game channel as ONE message (one embed each)
        instead of one message per event. Returns how many entries were delivered."""
        run = same_command(entries)
        if len(run) < 2:
            await self.deliver(entries[0])
            return 1
        game, first = run[0].game_id, run[0].ordinal
        self._done = {k for k in self._done if k[0] != game or k[1] >= first}
        try:
            await self._deliver_run(run)
        except Exception as exc:
            lead = 0
            for entry in run:
                if not self._finished(entry):
                    break
                lead += 1
            if lead:  # those went out: the failing part is tried again as the head
                log.warning("game %s: batch stopped after %s of %s entries: %s",
                            game, lead, len(run), exc)
                return lead
            if isinstance(exc, discord.RateLimited):
                raise RetryAfter(exc.retry_after) from exc
            if isinstance(exc, discord.HTTPException):
                raise _translated(exc) from exc
            raise
        return len(run)

    def _did(self, entry: OutboxEntry, step: str) -> bool:
        return (entry.game_id, entry.ordinal, step) in self._done

    def _mark(self, entries: list[OutboxEntry], step: str) -> None:
        self._done.update((e.game_id, e.ordinal, step) for e in entries)

    def _finished(self, entry: OutboxEntry) -> bool:
        event = entry.event()
        if event is None:
            return False
        if event.audience.kind == "team":
            steps = ["team"]
        elif event.kind in SIGNUP_EVENTS:
            steps = ["signup"]
        else:
            steps = ["post"] + (["signup"] if event.kind == "game_started" else []) \
                + (["close"] if event.kind in ("game_over", "cancelled") else [])
        return all(self._did(entry, step) for step in steps)

    async def _deliver_run(self, run: list[OutboxEntry]) -> None:
        """What `public_event`/`team_event` do for each event, with the public ones merged:
        team events first (in order), then the signup refresh, then one message. Parts
        already done by an earlier, interrupted try are skipped; a failing private channel
        stops the team events after it, not the game channel's announcements (the error
        is raised at the end, so it is charged to the entry that failed)."""
        info = await self.service.info(run[0].game_id)
        lang = info.language
        public: list[tuple[OutboxEntry, Event]] = []
        failed: Exception | None = None
        for entry in run:
            event = entry.event()
            assert event is not None
            if event.audience.kind != "team":
                public.append((entry, event))
            elif failed is None and not self._did(entry, "team"):
                try:
                    await self.team_event(info, event)
                except Exception as exc:
                    failed = exc
                    continue
                self._mark([entry], "team")
        kinds = {e.kind for _, e in public}
        signup = [x for x, e in public if e.kind in SIGNUP_EVENTS or e.kind == "game_started"]
        if signup and not all(self._did(x, "signup") for x in signup):
            await self.refresh_signup(info)
            self._mark(signup, "signup")
        todo = [(x, e) for x, e in public
                if e.kind not in SIGNUP_EVENTS and not self._did(x, "post")]
        shown = [e for _, e in todo]
        if shown:
            view: discord.ui.View | None = None
            phase = next((e for e in reversed(shown) if e.kind == "phase_started"), None)
            if phase is not None:
                state = await self.service.state(info.id)
                living = [(p.uid, p.name) for p in state.living()]
                view = day_view(self.bot, info.id, phase.data["number"]
                                if phase.data["phase"] == "day" else 0, living, lang)
            elif "game_started" in kinds:
                view = role_view(info.id, lang)
            channel = self._channel(info.channel_id)
            chunks = embed_chunks([event_embed(e, lang) for e in shown])
            sent = 0
            for i, chunk in enumerate(chunks):
                if i == len(chunks) - 1 and view is not None:
                    await channel.send(embeds=chunk, view=view)
                else:
                    await channel.send(embeds=chunk)
                self._mark([x for x, _ in todo[sent:sent + len(chunk)]], "post")
                sent += len(chunk)
        closing = [x for x, e in public if e.kind in ("game_over", "cancelled")]
        if closing and not all(self._did(x, "close") for x in closing):
            await self.close_channels(info)
            self._mark(closing, "close")
        if failed is not None:
            raise failed
        self._done = {k for k in self._done if k[0] != info.id or k[1] > run[-1].ordinal}

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
        guild = self.bot.get_guild(info.guild_id)
        if guild is not None and guild.get_channel(channel_id) is None:
            # deleted by someone mid-game: the team still needs its channel
            log.warning("game %s: channel of %s is gone; opening it again", info.id, team)
            members, writers = team_access(await self.service.state(info.id), team)
            await self.ensure_team_channel(info, team, members, writers)
            channel_id = (await self.service.info(info.id)).private_channels[team]
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
        """A delivery that kept failing: tell the master what could not be delivered, by
        DM; if his DMs are closed, say in the game channel (without details: the entry
        may concern a private channel) that something could not be delivered."""
        info = await self.service.info(entry.game_id)
        event = entry.event()
        what = event.kind if event else entry.kind
        try:
            user = await self.bot.fetch_user(info.master_id)
            await user.send(t("delivery.parked", info.language, game=info.title, what=what,
                              error=error[:200]))
            return
        except discord.HTTPException as exc:
            log.warning("game %s: cannot DM the master (%s); trying the game channel",
                        entry.game_id, exc)
        try:
            await self._channel(info.channel_id).send(
                t("delivery.parked_public", info.language, master=f"<@{info.master_id}>",
                  game=info.title),
                allowed_mentions=discord.AllowedMentions(users=True))
        except discord.HTTPException:
            log.error("game %s: could not tell the master about parked entry %s (%s)",
                      entry.game_id, entry.key, what)


def same_command(entries: list[OutboxEntry]) -> list[OutboxEntry]:
    """The leading event entries written by the same command (same log number)."""
    first = entries[0]
    if first.kind != EVENT_KIND:
        return [first]
    seq = first.payload.get("seq")
    run = [first]
    for entry in entries[1:]:
        if entry.kind != EVENT_KIND or entry.payload.get("seq") != seq:
            break
        run.append(entry)
    return run


def embed_chunks(embeds: list[discord.Embed], *, most: int = 10,
                 budget: int = 5500) -> list[list[discord.Embed]]:
    """Split embeds into messages within Discord's limits (10 embeds, 6000 characters)."""
    chunks: list[list[discord.Embed]] = []
    size = 0
    for embed in embeds:
        n = len(embed)
        if not chunks or len(chunks[-1]) >= most or size + n > budget:
            chunks.append([])
            size = 0
        chunks[-1].append(embed)
        size += n
    return chunks


def retry_after(exc: discord.HTTPException) -> float:
    """The wait Discord asked for after a 429 discord.py stopped retrying."""
    headers = getattr(exc.response, "headers", None) or {}
    for name in ("Retry-After", "retry-after", "X-RateLimit-Reset-After"):
        try:
            value = float(headers[name])
        except (KeyError, TypeError, ValueError):
            continue
        if value > 0:
            return value
    return 1.0
