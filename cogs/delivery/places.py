"""The players' private places and the game's ping role, on Discord.

Each seat gets a private thread of the game channel (created with `invitable=False`,
so only the bot can add people): its holder and the master are its members; a
substitute is added and the replaced member removed, so the seat's history stays with
the seat. The living players hold a guild role that every phase announcement pings.
Both are driven by outbox entries core.sight.places writes in the command's transaction
(PING_KIND before a command's announcements, PLACE_KIND after them; the catalogue of
kinds: core/storage/kinds.py); every step here is idempotent, so a retry after a crash
neither doubles a role or a thread nor posts a push twice (see `_seen`).

Where things are kept: the role id and the threads' ids live in the game's
`private_channels` map under the keys ROLE_KEY and "place:<seat>".
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Literal

import discord

from core.game.events import Event, EventKind
from core.sight.visibility import Card
from core.storage.kinds import PING_KIND, PingPayload, PlacePayload, SilencePayload
from core.storage.observer import DiscordPatch, GameInfo, GameService
from core.storage.outbox import OutboxEntry
from core.text.i18n import t

from ..ui.markup import only_role, only_users, role_and_users, user_text
from ..ui.render import card_embed, event_embed
from ..ui.text import mention
from .catalogue import LANE_ROLES
from .posting import entry_key, post
from .silence import Silencer

if TYPE_CHECKING:
    from cogs.utils.bot import MafiaBot

log = logging.getLogger(__name__)

ROLE_KEY = "ping_role"
PLACE_PREFIX = "place:"
WEEK: Literal[10080] = 10080  # minutes: the longest auto-archive Discord allows
# Discord JSON error codes
UNKNOWN_CHANNEL, UNKNOWN_MEMBER, UNKNOWN_ROLE, UNKNOWN_USER = 10003, 10007, 10011, 10013
THREAD_ARCHIVED = 50083
HISTORY = 20  # recent messages looked at for a push that may have gone out before a crash


def place_key(seat: int) -> str:
    return f"{PLACE_PREFIX}{seat}"


def is_place_key(key: str) -> bool:
    return key.startswith(PLACE_PREFIX) or key == ROLE_KEY


#: members named beside the role at most (a mention is 22 characters: 80 fit with the
#: role in a message's 2,000)
NAMED_MAX = 80


def ping_args(info: GameInfo, unheld: list[int] | None = None) -> dict[str, Any]:
    """Content and allowed mentions of a phase announcement (`Delivery._post_pieces`):
    the game's role, and the members it has not reached yet (`Places.unheld`), and only
    them, are pinged ({} before the role exists)."""
    role_id = info.private_channels.get(ROLE_KEY)
    if role_id is None:
        return {}
    named = (unheld or [])[:NAMED_MAX]
    if not named:
        return {"content": f"<@&{role_id}>", "mentions": only_role(role_id)}
    return {"content": " ".join([f"<@&{role_id}>", *(f"<@{u}>" for u in named)]),
            "mentions": role_and_users(role_id, named)}


class Places:
    def __init__(self, bot: MafiaBot) -> None:
        self.bot = bot
        # Pushes this process posted (game, ordinal): a retry within the process skips
        # them. Threads whose history this process has looked at since it started: the
        # first push into each after a start checks that it was not posted before a crash.
        self._sent: set[tuple[int, int]] = set()
        self._checked: set[int] = set()
        self._locks: dict[int, asyncio.Lock] = {}  # game -> its private_channels writes
        self._role_locks: dict[int, asyncio.Lock] = {}  # game -> making its role
        self.silencer = Silencer(bot)

    @property
    def service(self) -> GameService:
        return self.bot.service

    # --- the ping role ---------------------------------------------------------------------
    async def _patch(self, info: GameInfo, key: str, value: int | None) -> None:
        await self.patch_channels(info.id, {key: value})

    async def patch_channels(self, game_id: int, changes: dict[str, int | None]) -> None:
        """Set (None: drop) keys of the game's `private_channels` map. One game's lanes
        are delivered side by side (its places, team channels and ping role), so this
        read-modify-write holds a lock per game: no writer loses another's id."""
        lock = self._locks.setdefault(game_id, asyncio.Lock())
        async with lock:
            channels = dict((await self.service.info(game_id)).private_channels)
            for key, value in changes.items():
                if value is None:
                    channels.pop(key, None)
                else:
                    channels[key] = value
            await self.service.set_discord(game_id, DiscordPatch(private_channels=channels))

    def _role_name(self, info: GameInfo) -> str:
        return t("places.role_name", info.language, title=info.title[:70], game=info.id)[:100]

    async def ping(self, info: GameInfo, *, make: bool = True) -> dict[str, Any]:
        """`ping_args` of a phase announcement. The role is made now if the game has
        none yet (`make`): its entry waits in the roles' lane behind other games'
        member-role changes, and an announcement waits for nothing of the kind; the
        members the role has not reached yet are mentioned by name (`unheld`)."""
        current = await self.service.info(info.id)
        if current.private_channels.get(ROLE_KEY) is None and make:
            await self.ensure_role(current)
            current = await self.service.info(info.id)
        role_id = current.private_channels.get(ROLE_KEY)
        if role_id is None:
            return ping_args(current)
        return ping_args(current, await self.unheld(current, role_id))

    async def ensure_role(self, info: GameInfo) -> int:
        """The game's role (one at a time per game: an announcement and the roles' lane
        may ask at once)."""
        lock = self._role_locks.setdefault(info.id, asyncio.Lock())
        async with lock:
            return await self._ensure_role(info)

    async def _ensure_role(self, info: GameInfo) -> int:
        """The game's role: the stored one, else one of our name left by a try that
        crashed before storing it, else a new one, with no permissions and no colour.
        Discord lets a bot ping a role members may not mention only if the bot holds
        "Mention @everyone, @here and All Roles": without it the role must be
        mentionable, or the phase announcements would notify nobody."""
        current = await self.service.info(info.id)
        role_id = current.private_channels.get(ROLE_KEY)
        if role_id is not None:
            return role_id
        name = self._role_name(info)
        guild = self.bot.get_guild(info.guild_id)
        if guild is not None:
            found = [r.id for r in guild.roles if r.name == name]
        else:
            found = [int(r["id"]) for r in await self.bot.http.get_roles(info.guild_id)
                     if r.get("name") == name]
        if found:
            role_id = found[0]
        else:
            me = guild.me if guild is not None else None
            can_ping_any = bool(me is not None and me.guild_permissions.mention_everyone)
            payload = await self.bot.http.create_role(
                info.guild_id, name=name, permissions="0", mentionable=not can_ping_any,
                hoist=False,
                reason=t("places.reason", info.language, title=info.title[:80]))
            role_id = int(payload["id"])
        await self._patch(info, ROLE_KEY, role_id)
        return role_id

    async def sync_role(self, info: GameInfo, entry: OutboxEntry) -> None:
        """A PING_KIND entry: make the role if need be, give and take it, one member at a
        time with each step kept (`OutboxWorker.progressed`): the guild's window of 10
        member-role changes per 10 s cuts a table of 11 or more into several tries, and
        each try goes on from the last member served instead of starting over. A game
        that is over has its role deleted by its end: what is left to do is moot."""
        change = PingPayload.model_validate(entry.payload)
        if not (await self.service.info(info.id)).active:
            return
        role_id = await self.ensure_role(info)
        reason = t("places.reason", info.language, title=info.title[:80])
        try:
            await self._member_roles(info, entry, role_id, change.add, change.remove, reason)
        except discord.NotFound as exc:
            if exc.code != UNKNOWN_ROLE:
                raise
            if not (await self.service.info(info.id)).active:
                return  # deleted by the game's own end meanwhile
            # deleted by an admin mid-game: make it again for everyone who should hold it
            log.warning("game %s: the ping role is gone; making it again", info.id)
            await self._patch(info, ROLE_KEY, None)
            role_id = await self.ensure_role(info)
            members = await self.bot.observe.ping_members(info.id)
            await self._member_roles(info, entry, role_id, sorted(members), [], reason)

    async def _member_roles(self, info: GameInfo, entry: OutboxEntry, role_id: int,
                            add: list[int], remove: list[int], reason: str) -> None:
        """Each change once: a step is named by the role and the member, so a role made
        again (deleted by an admin) is given again to everyone."""
        http = self.bot.http
        outbox = self.bot.outbox
        for sign, uids in (("-", remove), ("+", add)):
            for uid in uids:
                step = f"{sign}{role_id}:{uid}"
                if step in outbox.done(entry):
                    continue
                if sign == "-":
                    await self._ignoring_gone(http.remove_role(info.guild_id, uid, role_id,
                                                               reason=reason))
                else:
                    await self._ignoring_gone(http.add_role(info.guild_id, uid, role_id,
                                                            reason=reason))
                await outbox.progressed(entry, step)

    async def unheld(self, info: GameInfo, role_id: int) -> list[int]:
        """Members who should hold the game's role by now but whose add has not gone out
        (the ping role's entries still under way, with their progress): a phase
        announcement mentions them by name beside the role, so it notifies every seat
        at once however far the guild's member-role window has let the adds go."""
        outbox = self.bot.outbox
        waiting: set[int] = set()
        if not outbox.pending_in(info.id, LANE_ROLES):
            return []  # none at the worker's last look: the role's changes are all out
        for entry in await outbox.pending_of(info.id, PING_KIND):
            change = PingPayload.model_validate(entry.payload)
            done = outbox.done(entry)
            waiting |= {uid for uid in change.add if f"+{role_id}:{uid}" not in done}
            waiting -= set(change.remove)
        if not waiting:
            return []
        should = await self.bot.observe.ping_members(info.id)
        return sorted(waiting & should)

    @staticmethod
    async def _ignoring_gone(request: Any) -> None:
        """A member who left the guild neither gets nor loses a role: nothing to do."""
        try:
            await request
        except discord.NotFound as exc:
            if exc.code not in (UNKNOWN_MEMBER, UNKNOWN_USER):
                raise

    # --- the dead are silent in the game channel ---------------------------------------------
    async def silence(self, info: GameInfo, entry: OutboxEntry) -> None:
        """A SILENCE_KIND entry: who may post in the game channel, one request per
        change (cogs/delivery/silence.py)."""
        await self.silencer.apply(info, SilencePayload.model_validate(entry.payload))

    # --- the private places -----------------------------------------------------------------
    def _thread_name(self, info: GameInfo, seat: int) -> str:
        """Unique to the game (its id): a thread left by an earlier game of the same title
        in this channel is never taken for this game's."""
        return t("places.thread_name", info.language, title=info.title[:70], game=info.id,
                 seat=seat + 1)[:100]

    async def ensure_place(self, info: GameInfo, seat: int, holder: int) -> tuple[int, bool]:
        """The seat's thread id, and whether it was opened (or adopted) just now. Opening:
        create (or adopt the thread of our name an interrupted try left), let in the
        holder and the master, and only then store the id: a crash in between is
        repaired by the next try."""
        current = await self.service.info(info.id)
        thread_id = current.private_channels.get(place_key(seat))
        if thread_id is not None:
            return thread_id, False
        name = self._thread_name(info, seat)
        guild = self.bot.get_guild(info.guild_id)
        me = self.bot.user.id if self.bot.user else None
        found = [th.id for th in (guild.threads if guild else [])
                 if th.parent_id == info.channel_id and th.name == name
                 and th.owner_id == me and th.type is discord.ChannelType.private_thread]
        if found:
            thread_id = found[0]
        else:
            payload = await self.bot.http.start_thread_without_message(
                info.channel_id, name=name, auto_archive_duration=WEEK,
                type=discord.ChannelType.private_thread.value,
                invitable=False, reason=t("places.reason", info.language,
                                          title=info.title[:80]))
            thread_id = int(payload["id"])
        for uid in (holder, current.master_id):
            await self._let_in(thread_id, uid)
        await self._patch(info, place_key(seat), thread_id)
        self.bot.private_index[thread_id] = info.id
        if not found:  # a new thread is empty: no earlier post to look for
            self._checked.add(thread_id)
        return thread_id, True

    async def _let_in(self, thread_id: int, uid: int) -> None:
        await self._in_thread(thread_id, lambda: self.bot.http.add_user_to_thread(
            thread_id, uid))

    async def _let_out(self, thread_id: int, uid: int) -> None:
        await self._in_thread(thread_id, lambda: self._ignoring_gone(
            self.bot.http.remove_user_from_thread(thread_id, uid)))

    async def _in_thread(self, thread_id: int, request: Callable[[], Awaitable[Any]]) -> Any:
        """One operation on a place, whatever state Discord left it in. Discord archives a
        private thread after `WEEK` without a post (a quiet citizen may get no news for a
        week) and then refuses member changes, and posts too when it is locked (50083,
        "Thread is archived"): the thread is opened (archived and locked off: the bot
        holds Manage Threads) and the operation made again. Every thread operation of a
        running game goes through here; only `close` archives and locks on purpose."""
        try:
            return await request()
        except discord.HTTPException as exc:
            if exc.code != THREAD_ARCHIVED:
                raise
        await self.bot.http.edit_channel(thread_id, archived=False, locked=False)
        return await request()

    async def push(self, info: GameInfo, entry: OutboxEntry) -> None:
        key = (entry.game_id, entry.ordinal)
        if key in self._sent:
            return
        payload = PlacePayload.model_validate(entry.payload)
        seat = payload.seat
        # a reminder whose reason is gone by now (he voted meanwhile) is not sent late
        news = await self.bot.observe.seat_news(info.id, seat, payload.events)
        if news is None:
            return
        holder, events, mine = news
        thread_id, opened = await self.ensure_place(info, seat, holder)
        for uid in payload.remove:
            await self._let_out(thread_id, uid)
        for uid in payload.add:
            await self._let_in(thread_id, uid)
        if not events:
            self._sent.add(key)
            return
        # his language, not the game's (the public posts keep that): read now, so a
        # switch of his client applies to every push after it
        lang = await self.service.readers.language(info.id, holder, info.language)
        embeds = [self._embed(e, mine, lang) for e in events]
        # a reference unique to this push: how `_seen` recognises it after a crash
        embeds[-1].set_footer(text=t("places.footer", lang, title=info.title[:80],
                                     ref=entry.ordinal))
        content = mention(holder)
        if opened:
            content += " " + t("places.welcome", lang, title=user_text(info.title[:100]))
        try:
            await self._send(thread_id, content, embeds, holder, entry)
        except discord.NotFound as exc:
            if exc.code != UNKNOWN_CHANNEL:
                raise
            # the thread was deleted mid-game: the seat still needs its place
            log.warning("game %s: place of seat %s is gone; opening it again", info.id, seat)
            self.bot.private_index.pop(thread_id, None)
            await self._patch(info, place_key(seat), None)
            thread_id, _ = await self.ensure_place(info, seat, holder)
            content = mention(holder) + " " + t("places.welcome", lang,
                                                title=user_text(info.title[:100]))
            await self._send(thread_id, content, embeds, holder, entry)
        self._sent.add(key)

    @staticmethod
    def _embed(event: Event, mine: Card | None, lang: str) -> discord.Embed:
        """An event as an embed; a dealt role as the holder's whole card (his own view)."""
        if event.kind is EventKind.ROLE_DEALT and mine is not None:
            return card_embed(mine, lang)
        return event_embed(event, lang)

    async def _send(self, thread_id: int, content: str, embeds: list[discord.Embed],
                    holder: int, entry: OutboxEntry) -> None:
        """Through the shared `post` (Discord's limits, nonces), pinging the holder alone."""
        key = entry_key(entry)
        if await self._seen(thread_id, key, embeds):
            return
        await self._in_thread(thread_id, lambda: post(
            self.bot.get_partial_messageable(thread_id), key, content=content, embeds=embeds,
            mentions=only_users([holder])))

    async def _seen(self, thread_id: int, key: str, embeds: list[discord.Embed]) -> bool:
        """Whether this push is in the thread already: looked up once per thread after a
        start (a crash between posting and marking the entry delivered). A message of ours
        matches by its nonce or, where Discord does not return nonces, by the reference
        in its last embed's footer."""
        if thread_id in self._checked:
            return False
        self._checked.add(thread_id)
        me = self.bot.user.id if self.bot.user else None
        ref = embeds[-1].footer.text
        for message in await self.bot.http.logs_from(thread_id, HISTORY):
            if me is not None and int(message["author"]["id"]) != me:
                continue
            raw: dict[str, Any] = dict(message)
            if str(raw.get("nonce") or "").startswith(key + "."):
                return True
            footers = [(e.get("footer") or {}).get("text") for e in raw.get("embeds", [])]
            if ref and ref in footers:
                return True
        return False

    # --- the end ------------------------------------------------------------------------------
    async def close(self, info: GameInfo, archive: bool) -> None:
        """With the game's channels: the role is deleted; the places are archived and
        locked (read-only history) or deleted, as the channels are."""
        current = await self.service.info(info.id)
        reason = t("places.reason", info.language, title=info.title[:80])
        role_id = current.private_channels.get(ROLE_KEY)
        if role_id is not None:
            with contextlib.suppress(discord.NotFound):  # an admin deleted it already
                await self.bot.http.delete_role(info.guild_id, role_id, reason=reason)
            await self._patch(info, ROLE_KEY, None)
        for seat in range(await self.bot.observe.seat_count(info.id)):
            thread_id = current.private_channels.get(place_key(seat))
            if thread_id is None:
                continue
            try:
                if archive:
                    await self.bot.http.edit_channel(thread_id, archived=True, locked=True,
                                                     reason=reason)
                else:
                    await self.bot.http.delete_channel(thread_id, reason=reason)
                    self.bot.private_index.pop(thread_id, None)
            except discord.NotFound:
                pass
