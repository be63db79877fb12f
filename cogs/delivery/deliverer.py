"""Outbox delivery: committed events become Discord messages and channel changes.

Runs in the OutboxWorker, after the command's transaction: a crash delays a
message, never loses it. Every public announcement of a game goes to the game's
channel, wherever the command was typed (the interaction reply only confirms).

Exactly once to the eye: every message is posted through `post`, which splits it to
Discord's limits and gives each part a `nonce` derived from the outbox entry (with
`enforce_nonce`), so a delivery repeated after a crash between posting and marking the
entry returns the message already posted instead of posting it again (Discord keeps
nonces for a few minutes; README "Delivery guarantees"). Edits are idempotent by nature;
a private channel or the category carries a marker and is looked up before it is
created, so a creation repeated after a crash adopts the channel made the first time.
What keeps failing is parked by the worker and reported to the master by DM, or in the
game channel when his DMs are closed.

A new kind of outbox message (a private push, a desk feed line) posts through `post`
(or `_post_pieces` for events) with a key from `entry_key(entry, step)`: splitting,
nonces and mentions then hold for it too, with nothing to add per kind.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Collection
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import TYPE_CHECKING, Any

import discord

from core.game.events import Event, EventKind
from core.settings import Settings
from core.sight.destinations import Where
from core.sight.destinations import of as destination_of
from core.sight.narrate import team_name
from core.sight.visibility import RecordCount
from core.sight.vocabulary import Team
from core.storage.kinds import (
    CLOSE_KIND,
    PING_KIND,
    Coalescing,
    batching,
    latest_only,
    same_command,
)
from core.storage.kinds import SIGNUP_EVENTS as SIGNUP_EVENTS
from core.storage.observer import (
    DiscordPatch,
    GameInfo,
    GameService,
    Observer,
    OutboxItem,
)
from core.storage.outbox import Hold, OutboxEntry, RetryAfter
from core.text.i18n import t

from ..ui.components import day_view, role_view
from ..ui.limits import CONTENT, EMBEDS, TOTAL, clip, split_embed
from ..ui.lobby import signup_embed
from ..ui.markup import no_pings, only_users, user_text
from ..ui.render import event_embed
from . import catalogue, ratelimits
from .catalogue import LANE_ANNOUNCE as LANE_ANNOUNCE
from .catalogue import LANE_CHANNELS as LANE_CHANNELS
from .catalogue import LANE_COSMETIC as LANE_COSMETIC
from .catalogue import LANE_DESK as LANE_DESK
from .catalogue import LANE_NAMES as LANE_NAMES
from .catalogue import LANE_PRIVATE as LANE_PRIVATE
from .catalogue import LANE_ROLES as LANE_ROLES
from .catalogue import LANE_WEIGHTS as LANE_WEIGHTS
from .catalogue import LANES as LANES
from .catalogue import lane as lane
from .gathering import DESK, GATHERED_BATCH, Gathering, channel_of
from .overwrites import (
    MEMBER,
    ROLE,
    Written,
    as_entry,
    cached_overwrites,
    member_overwrite,
    with_members,
    write,
)
from .pictures import Files
from .places import Places, is_place_key
from .posting import (
    BOT_ALLOW,
    HIDDEN,
    NONCE_MAX,
    RECHECK,
    Recheck,
    channel_marker,
    entry_key,
    find_marked,
    legacy_marker,
    marked_topic,
    nonce,
    post,
    recheck_since,
    replied,
    retry_after,
)
from .posting import translated as _translated
from .tally import LiveTallies

if TYPE_CHECKING:
    from cogs.utils.bot import MafiaBot

log = logging.getLogger(__name__)

# Public events a game's scheduled event follows (cogs/delivery/scheduled.py).
EVENT_TURNS = {EventKind.GAME_STARTED: "started", EventKind.CANCELLED: "cancelled",
               EventKind.GAME_OVER: "over"}
# Public events after which the desk's overwrites follow the game's hosts.
HOSTS_CHANGED = frozenset({EventKind.COHOST_NAMED, EventKind.COHOST_REMOVED,
                           EventKind.MASTER_HANDED_OVER})


#: seconds an outbox request may wait for its channel's or guild's window in the budget
#: before its entry backs off instead (cogs/delivery/ratelimits.py PATIENCE)
PATIENCE = 5.0


def outbox_settings(settings: Settings) -> dict[str, Any]:
    """The OutboxWorker's operator settings (core/settings.py; docs/delivery.md)."""
    days = settings.outbox_retention_days
    # a lane whose lines wait for a window on purpose is late only past that window
    late = [settings.outbox_late_seconds] * LANES
    late[LANE_DESK] += settings.desk_window_seconds
    late[LANE_CHANNELS] += settings.team_window_seconds
    late[LANE_COSMETIC] += settings.tally_interval
    return {"retention": timedelta(days=days) if days > 0 else None,
            "late_after": late,
            "health_interval": settings.outbox_health_seconds}


async def outbox_status(url: str, stuck: float | None = None) -> str:
    """`mafia-bot status`: the outbox's health line read from the database (no bot); a
    lane whose oldest entry waits longer than `stuck` seconds is called stuck, as
    /healthz calls it (settings.outbox_stuck_seconds)."""
    from core.storage.db import close_db, init_db
    from core.storage.outbox import backlog, health_line, parked_count
    from core.storage.timing import utcnow

    await init_db(url)
    try:
        return health_line(await backlog(lane, LANES, utcnow(), names=LANE_NAMES),
                           parked=await parked_count(), stuck=stuck)
    finally:
        await close_db()


class Delivery:
    def __init__(self, bot: MafiaBot) -> None:
        self.bot = bot
        # Parts of a batch that went out before a later part failed, as (game, ordinal,
        # step): a retry does not post them again, and the failure is charged to the
        # entry that failed. In memory only: after a crash they may be posted twice.
        self._done: set[tuple[int, int, str]] = set()
        self._categories: dict[int, asyncio.Lock] = {}  # per game: ensure_category
        self.places = Places(bot)  # the players' private places and the game's ping role
        self._written = Written()  # team channels' overwrites written, over a lagging cache
        self.tallies = LiveTallies(bot)
        #: an announcement's files: drawn within a second, else they follow it
        self.attached = Files(bot, bot.settings.files_wait_seconds)
        #: the desk's and the team channels' windows (a burst costs one post, issue 30;
        #: cogs/delivery/gathering.py); 0: each command's lines as they come (the tests' default)
        self.gathering = Gathering(bot.settings.desk_window_seconds,
                                   bot.settings.team_window_seconds)
        # Entries committed before this moment may have been posted by an earlier process
        # (utils/posting.py RECHECK: Discord forgets nonces after minutes).
        self.started = datetime.now(UTC)
        #: messages a recheck took for an entry (or posted under one): never taken for
        #: another that reads the same (utils/posting.py Recheck)
        self._claimed: set[int] = set()

    @property
    def service(self) -> GameService:
        return self.bot.service

    @property
    def observe(self) -> Observer:
        """The game as the Discord layer may read it (core/storage/observer.py)."""
        return self.bot.observe

    async def deliver(self, entry: OutboxEntry) -> None:
        # the desk's or a team's line: maybe gathered (gathered lines go by their
        # commit times; an entry built by hand without one goes on its own)
        if channel_of(entry) is not None and entry.created_at is not None \
                and await self._gathered([entry]):
            return
        await self._guarded(self._deliver(entry), [entry])
        self._done = {k for k in self._done if k[:2] != entry.key}

    async def _guarded(self, work: Awaitable[None], entries: list[OutboxEntry]) -> None:
        """Deliver with the recheck and the patience set, Discord's errors translated
        for the worker."""
        recheck = RECHECK.set(self._recheck(entries))
        patience = ratelimits.PATIENCE.set(PATIENCE)
        try:
            await work
        except discord.RateLimited as exc:  # discord.py gave up waiting (max_ratelimit_timeout)
            raise RetryAfter(exc.retry_after) from exc
        except discord.HTTPException as exc:
            raise _translated(exc) from exc
        finally:
            RECHECK.reset(recheck)
            ratelimits.PATIENCE.reset(patience)

    async def _gathered(self, entries: list[OutboxEntry]) -> int:
        """The desk's or a team channel's leading lines as one post, once their window
        is closed (or a line that does not wait came); 0 if the head is not such a line.
        Raises Hold while the window is open."""
        if channel_of(entries[0]) is None:
            return 0
        info = await self.service.info(entries[0].game_id)
        pinged: Collection[str] = ()
        if channel_of(entries[0]) == DESK:
            pinged = await self.service.readers.desk_pings(info.id, info.master_id)
        run = self.gathering.run(entries, pinged)
        if not run:  # an entry without its commit time (built by hand) is not gathered
            return 0
        wait = self.gathering.wait(run, entries[len(run):], pinged,
                                   full=len(entries) >= GATHERED_BATCH)
        if wait > 0:
            raise Hold(wait)
        lines = [(entry, event) for entry in run if (event := entry.event()) is not None]
        if channel_of(run[0]) == DESK:
            from .desk import master_events

            await self._guarded(master_events(self, info, lines), run)
        else:
            await self._guarded(self.team_events(info, lines), run)
        done = {e.ordinal for e in run}
        self._done = {k for k in self._done if k[0] != info.id or k[1] not in done}
        return len(run)

    async def deliver_batch(self, entries: list[OutboxEntry]) -> int:
        """The OutboxWorker's batch hook: the leading entries made by one command go out
        together, its announcements in the game channel as ONE message (one embed each)
        instead of one message per event; the master's desk lines of a few seconds go as
        one post, and a team channel's (cogs/delivery/gathering.py). Returns how many entries were
        delivered."""
        rule = batching(entries[0])  # the catalogue's rule for the head's kind
        if rule is Coalescing.GATHERED:
            gathered = await self._gathered(entries)
            if gathered:
                return gathered
        if rule is Coalescing.LATEST and all(latest_only(e) for e in entries):
            # edits of one message coalesce: it shows the current state, once
            await self.deliver(entries[-1])
            return len(entries)
        run = same_command(entries) \
            if rule in (Coalescing.BUNDLED, Coalescing.GATHERED, Coalescing.LATEST) \
            else entries[:1]
        if len(run) < 2:
            await self.deliver(entries[0])
            return 1
        game = run[0].game_id
        recheck = RECHECK.set(self._recheck(run))
        patience = ratelimits.PATIENCE.set(PATIENCE)
        try:
            await self._deliver_run(run)
        except Exception as exc:
            lead = 0
            for entry in run:
                if not self._finished(entry):
                    break
                lead += 1
            if lead:  # those went out: the failing part is tried again as the head
                done = {e.ordinal for e in run[:lead]}
                self._done = {k for k in self._done if k[0] != game or k[1] not in done}
                log.warning("game %s: batch stopped after %s of %s entries: %s",
                            game, lead, len(run), exc)
                return lead
            if isinstance(exc, discord.RateLimited):
                raise RetryAfter(exc.retry_after) from exc
            if isinstance(exc, discord.HTTPException):
                raise _translated(exc) from exc
            raise
        finally:
            RECHECK.reset(recheck)
            ratelimits.PATIENCE.reset(patience)
        return len(run)

    def _recheck(self, entries: list[OutboxEntry]) -> Recheck | None:
        """Whether the channel is looked at before these entries are posted, and since
        when: they were pending when this process started, longer ago than Discord
        remembers nonces. An entry its command answered itself (a vote in the game
        channel) is looked for by its interaction instead (`_replied`)."""
        since = recheck_since(entries[0].created_at, self.started)
        return None if since is None else Recheck(since, self._claimed)

    async def _replied(self, channel: discord.abc.Messageable,
                       todo: list[tuple[OutboxEntry, Event]]
                       ) -> list[tuple[OutboxEntry, Event]]:
        """`todo` without the entries their command's interaction answered publicly
        (the response went, but the process stopped before marking them, or Discord
        failed to say so): found by the interaction's id on the response, never by
        their text, which another record may share (the same vote cast again)."""
        replies = {x.reply for x, _ in todo if x.answered and x.reply}
        found = await replied(channel, replies) if replies else set()
        if not found:
            return todo
        for entry, _ in todo:
            if entry.reply in found:
                log.warning("game %s: entry %s was answered by its interaction: not posted",
                            entry.game_id, entry.ordinal)
                self._mark([entry], "post")
        return [(x, e) for x, e in todo if x.reply not in found]

    def _did(self, entry: OutboxEntry, step: str) -> bool:
        return (entry.game_id, entry.ordinal, step) in self._done

    def _mark(self, entries: list[OutboxEntry], step: str) -> None:
        self._done.update((e.game_id, e.ordinal, step) for e in entries)

    def _finished(self, entry: OutboxEntry) -> bool:
        event = entry.event()
        if event is None:
            return False
        where = destination_of(event)
        if where.private:
            steps = ["team"]
        elif where.where is Where.SIGNUP:
            steps = ["signup"]
        else:
            steps = ["post"] + (["signup"] if event.kind is EventKind.GAME_STARTED else [])
        return all(self._did(entry, step) for step in steps) and not self.attached.owes(entry)

    async def _post_pieces(self, channel: discord.abc.Messageable,
                           todo: list[tuple[OutboxEntry, Event]], lang: str,
                           view: discord.ui.View | None, *, content: str | None = None,
                           mentions: discord.AllowedMentions | None = None,
                           game: GameInfo | None = None) -> None:
        """The events' embeds, each split to Discord's limits, posted as the fewest
        messages (10 embeds, 6,000 characters each), the view on the last. Every message
        is named by its first piece (entry and piece number): the same nonce when a crash
        makes us post it again. Pieces already posted by an interrupted try are skipped.
        `content` (at most 2,000 characters, e.g. a role mention) goes on the first
        message, with `mentions` saying exactly whom it may ping (default: nobody; a
        phase announcement pinging a game's role passes `markup.only_role(role_id)`).
        With `game`, the files an entry carries (its day's vote picture, the archive) go
        on the message holding the entry's first piece."""
        todo = await self._replied(channel, todo)
        await self._boards_first(game, channel, todo)
        pieces: list[tuple[OutboxEntry, int, discord.Embed]] = []
        count: dict[int, int] = {}
        for entry, event in todo:
            split = split_embed(event_embed(event, lang, recorded_count(entry)))
            count[entry.ordinal] = len(split)
            pieces += [(entry, k, embed) for k, embed in enumerate(split)
                       if not self._did(entry, f"post:{k}")]
        messages: list[list[tuple[OutboxEntry, int, discord.Embed]]] = []
        size = 0
        for piece in pieces:
            n = len(piece[2])
            if not messages or len(messages[-1]) >= EMBEDS or size + n > TOTAL:
                messages.append([])
                size = 0
            messages[-1].append(piece)
            size += n
        for i, message in enumerate(messages):
            head, k0, _ = message[0]
            files = await self.attached.now(game, [x for x, k, _ in message if k == 0]) \
                if game is not None else []
            unfiled = partial(self.attached.again, game, channel, head) \
                if game is not None and files else None
            await post(channel, entry_key(head), embeds=[e for _, _, e in message],
                       view=view if i == len(messages) - 1 else None, first=k0,
                       content=clip(content, CONTENT) if content and i == 0 else None,
                       mentions=mentions if i == 0 else None, files=files,
                       unfiled=unfiled)
            for entry, k, _ in message:
                self._mark([entry], f"post:{k}")
                if all(self._did(entry, f"post:{j}") for j in range(count[entry.ordinal])):
                    self._mark([entry], "post")

    async def _boards_first(self, game: GameInfo | None, channel: discord.abc.Messageable,
                            todo: list[tuple[OutboxEntry, Event]]) -> None:
        """A public list of who still owes a move (the master's prod, the deadline's
        reminder) goes out under a board that agrees with it: the day's live board is
        brought up to date first (cogs/tally.py `refresh`), once per entry."""
        lists = [x for x, e in todo if e.kind is EventKind.REMINDER_PUBLIC
                 and not self._did(x, "board")]
        if game is None or not lists or getattr(channel, "id", None) != game.channel_id:
            return
        await self.tallies.refresh(await self.service.info(game.id), channel)
        self._mark(lists, "board")

    async def _deliver_run(self, run: list[OutboxEntry]) -> None:
        """What `public_event`/`team_event` do for each event, with the public ones merged:
        team events first (in order), then the signup refresh, then one message. Parts
        already done by an earlier, interrupted try are skipped; a failing private channel
        stops the team events after it, not the game channel's announcements (the error
        is raised at the end, so it is charged to the entry that failed)."""
        info = await self.service.info(run[0].game_id)
        public, failed = await self._run_private(info, run)
        signup = [x for x, e in public
                  if destination_of(e).where is Where.SIGNUP
                  or e.kind is EventKind.GAME_STARTED]
        if signup and not all(self._did(x, "signup") for x in signup):
            await self.refresh_signup(info, signup[0])
            self._mark(signup, "signup")
        await self._run_public(info, public)
        if failed is not None:
            raise failed
        done = {e.ordinal for e in run}
        self._done = {k for k in self._done if k[0] != info.id or k[1] not in done}

    async def _run_private(self, info: GameInfo, run: list[OutboxEntry]
                           ) -> tuple[list[tuple[OutboxEntry, Event]], Exception | None]:
        """A run's private events delivered in order (the first failure stops the rest of
        them, and is returned); its public ones returned for the game channel."""
        public: list[tuple[OutboxEntry, Event]] = []
        failed: Exception | None = None
        for entry in run:
            event = entry.event()
            assert event is not None
            if not destination_of(event).private:
                public.append((entry, event))
            elif failed is None and not self._did(entry, "team"):
                try:
                    await self.private_event(info, event, entry)
                except Exception as exc:
                    failed = exc
                    continue
                self._mark([entry], "team")
        return public, failed

    async def _run_public(self, info: GameInfo, public: list[tuple[OutboxEntry, Event]]
                          ) -> None:
        """A run's announcements not posted yet, merged into as few messages as fit, with
        the day's vote menu (or the role button) on the last; then the files that were
        too slow to go with them (cogs/delivery/pictures.py)."""
        todo = [(x, e) for x, e in public
                if destination_of(e).where is Where.GAME and not self._did(x, "post")]
        await self._follow(info, [e for _, e in todo])
        await self._older_end(info, [(x, e) for x, e in public])
        if todo:
            await self._post_public(info, todo, started=any(
                e.kind is EventKind.GAME_STARTED for _, e in public))
        await self.attached.follow(info, self._channel(info.channel_id),
                                   [x for x, _ in public])

    async def _post_public(self, info: GameInfo, todo: list[tuple[OutboxEntry, Event]], *,
                           started: bool) -> None:
        lang = info.language
        view: discord.ui.View | None = None
        phase = next((e for _, e in reversed(todo) if e.kind is EventKind.PHASE_STARTED), None)
        if phase is not None:
            living = await self.observe.living(info.id)
            view = day_view(self.bot, info.id, phase.data["number"]
                            if phase.data["phase"] == "day" else 0, living, lang)
        elif started:
            view = role_view(info.id, lang)
        # The end is its own message, pinging the game's role: never folded into the
        # day's result or the morning that decided it (posted before the role is
        # deleted with the channels).
        end = next((i for i, (_, e) in enumerate(todo) if e.kind is EventKind.GAME_OVER),
                   len(todo))
        if todo[:end]:
            ping = await self.places.ping(info) if phase is not None else {}
            await self._post_pieces(self._channel(info.channel_id), todo[:end], lang,
                                    view, game=info, **ping)
        if todo[end:]:
            ping = await self.places.ping(info, make=False)
            await self._post_pieces(self._channel(info.channel_id), todo[end:], lang,
                                    None, game=info, **ping)

    async def _deliver(self, entry: OutboxEntry) -> None:
        """One entry, by its kind's deliverer (cogs/delivery/catalogue.py)."""
        await catalogue.deliver(self, await self.service.info(entry.game_id), entry)

    async def deliver_tally(self, info: GameInfo, entry: OutboxEntry) -> None:
        """The live vote count (cogs/delivery/tally.py), posted through `post` (its nonce)."""
        channel = self._channel(info.channel_id)

        async def send(embed: discord.Embed) -> discord.Message:
            return (await post(channel, entry_key(entry), embeds=[embed]))[0]

        await self.tallies.deliver(entry, channel, send)

    async def deliver_event(self, info: GameInfo, entry: OutboxEntry) -> None:
        """An engine event: the desk's or a team's line, or a post in the game channel."""
        event = entry.event()
        assert event is not None
        if destination_of(event).private:
            await self.private_event(info, event, entry)
        else:
            await self.public_event(info, event, entry)

    async def private_event(self, info: GameInfo, event: Event, entry: OutboxEntry) -> None:
        if destination_of(event).where is Where.DESK:
            from .desk import master_event

            await master_event(self, info, event, entry)
        else:
            await self.team_event(info, event, entry)

    # --- the game channel ---------------------------------------------------------------
    def _channel(self, channel_id: int) -> discord.abc.Messageable:
        channel = self.bot.get_channel(channel_id)
        if channel is None:
            return self.bot.get_partial_messageable(channel_id)
        return channel  # type: ignore[return-value]

    async def public_event(self, info: GameInfo, event: Event, entry: OutboxEntry) -> None:
        lang = info.language
        if destination_of(event).where is Where.SIGNUP:
            await self.refresh_signup(info, entry)
            return
        view: discord.ui.View | None = None
        ping: dict[str, Any] = {}
        if event.kind is EventKind.GAME_STARTED:
            await self.refresh_signup(info, entry)
            view = role_view(info.id, lang)
        elif event.kind is EventKind.PHASE_STARTED:
            living = await self.observe.living(info.id)
            view = day_view(self.bot, info.id,
                            event.data["number"] if event.data["phase"] == "day" else 0,
                            living, lang)
            ping = await self.places.ping(info)
        elif event.kind is EventKind.GAME_OVER:  # the role is deleted only after this post
            ping = await self.places.ping(info, make=False)
        await self._follow(info, [event])
        await self._older_end(info, [(entry, event)])
        channel = self._channel(info.channel_id)
        await self._post_pieces(channel, [(entry, event)], lang, view, game=info, **ping)
        await self.attached.follow(info, channel, [entry])

    async def _follow(self, info: GameInfo, events: list[Event]) -> None:
        """What follows the game's public turns outside its channel: the planned start's
        scheduled event (cogs/delivery/scheduled.py) and the desk's doors (the hosts of now)."""
        for event in events:
            if event.kind in EVENT_TURNS:
                from .scheduled import follow

                await follow(self.bot, info, EVENT_TURNS[event.kind])
            if event.kind in HOSTS_CHANGED:
                from .desk import follow_hosts

                await follow_hosts(self, info)

    async def _older_end(self, info: GameInfo, public: list[tuple[OutboxEntry, Event]]
                         ) -> None:
        """An end stored by a version before the `close` row (a game that ended across an
        upgrade) has none after it: one is added now, last, and closes the game the
        usual way (`close_game`)."""
        ends = [x for x, e in public if e.kind in (EventKind.GAME_OVER, EventKind.CANCELLED)]
        if not ends or await self.bot.outbox.has_after(ends[0], CLOSE_KIND):
            return
        log.warning("game %s: its end has no close row (stored by an older version); "
                    "adding one", info.id)
        await self.service.set_discord(info.id, DiscordPatch(), extra_outbox=[
            OutboxItem(kind=CLOSE_KIND, payload={"seq": info.seq})])

    async def close_game(self, info: GameInfo, entry: OutboxEntry) -> None:
        """The end's CLOSE_KIND row: the game's private channels, places and role close
        only after everything committed before it (the end's announcement pings the
        role before it is deleted; the places' last news). While an earlier entry waits
        in another lane this row is tried again; it sits in the team channels' lane, so
        the game channel's later posts (the /thank lines) never wait for it. The role's
        changes still under way are moot once the role is deleted: dropped first."""
        outbox = self.bot.outbox
        await outbox.drop(info.id, [PING_KIND])
        if await outbox.pending_elsewhere(entry, ignore=(LANE_ROLES, LANE_COSMETIC)):
            raise RetryAfter(0.5)
        await self.close_channels(info)

    async def post_signup(self, info: GameInfo, entry: OutboxEntry) -> None:
        """The signup board (written by /game create), posted in the game channel with
        the entry's nonce and its id stored for the edits; it shows the game as it is now,
        so the joins that came before it are on it."""
        if info.signup_message_id is not None:  # posted and stored before a crash
            return
        from ..ui.components import signup_view
        from .notify import signup_ping

        signup = await self.observe.lobby(info.id)
        view = signup_view(info.id, info.language) if not signup.started else None
        ping: Any = signup_ping(self.bot.get_guild(info.guild_id))  # the opt-in list
        sent = await post(self._channel(info.channel_id), entry_key(entry),
                          embeds=[signup_embed(signup, info.language)], view=view, **ping)
        await self.service.set_discord(info.id, DiscordPatch(signup_message_id=sent[0].id))

    async def refresh_signup(self, info: GameInfo, entry: OutboxEntry) -> None:
        """The signup board shows the game as it is now. An edit that falls due before
        the board is posted (the post waits in the announcements' lane) waits for it."""
        if info.signup_message_id is None:
            if await self.bot.outbox.pending_elsewhere(entry):
                raise RetryAfter(0.5)
            info = await self.service.info(info.id)  # posted meanwhile?
            if info.signup_message_id is None:
                return  # never posted (parked: the master was told)
        signup = await self.observe.lobby(info.id)
        message = self._channel(info.channel_id).get_partial_message(  # type: ignore[attr-defined]
            info.signup_message_id)
        from ..ui.components import signup_view

        view = signup_view(info.id, info.language) if not signup.started else None
        await message.edit(embed=signup_embed(signup, info.language), view=view,
                           allowed_mentions=no_pings())

    # --- private channels -------------------------------------------------------------------
    async def team_event(self, info: GameInfo, event: Event, entry: OutboxEntry) -> None:
        if destination_of(event).where is Where.TEAM_SETUP:
            await self.ensure_team_channel(info, event.audience.team or "",
                                           event.data["members"], event.data["writers"],
                                           entry, left=event.data.get("left") or [])
            return
        await self.team_events(info, [(entry, event)])

    async def team_events(self, info: GameInfo, lines: list[tuple[OutboxEntry, Event]]
                          ) -> None:
        """Lines of one team's channel as one post (as few as Discord's limits allow),
        named by the first entry; the clan's turn pings the mover."""
        entry, event = lines[0]
        team = event.audience.team or ""
        channel_id = (await self.service.info(info.id)).private_channels.get(team)
        if channel_id is None:
            log.warning("game %s: no channel for team %s yet", info.id, team)
            return
        guild = self.bot.get_guild(info.guild_id)
        if guild is not None and guild.get_channel(channel_id) is None:
            # deleted by someone mid-game: the team still needs its channel
            log.warning("game %s: channel of %s is gone; opening it again", info.id, team)
            members, writers = await self.observe.channel_access(info.id, team)
            await self.ensure_team_channel(info, team, members, writers, entry)
            channel_id = (await self.service.info(info.id)).private_channels[team]
        ping: dict[str, Any] = {}
        movers = list(dict.fromkeys(int(e.data["actor"]) for _, e in lines
                                    if e.kind is EventKind.CLAN_TURN))
        if movers:  # the mover is told it is his turn, with a ping
            ping = {"content": " ".join(f"<@{u}>" for u in movers),
                    "mentions": only_users(movers)}
        await self._post_pieces(self._channel(channel_id), lines, info.language, None,
                                **ping)

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
            out[discord.Object(id=uid)] = member_overwrite(uid in writers,
                                                           guild.me.guild_permissions)
        return out

    async def set_members(self, info: GameInfo, guild: discord.Guild,
                          channel: discord.TextChannel,
                          overwrites: dict[Any, discord.PermissionOverwrite],
                          left: Collection[int]) -> None:
        """A team channel's overwrites made `overwrites` for the targets the bot owns
        there (@everyone, itself, the members, those who `left`); every other overwrite
        (a server admin's on a role, on a member outside the game) is kept bit for bit,
        as the dead's silence keeps them in the game channel, and so is a moderator's
        deny on a member (cogs/delivery/overwrites.py `with_members`)."""
        current = self._written.recall(channel.id, cached_overwrites(channel))
        wanted = {target.id: as_entry(o, ROLE if isinstance(target, discord.Role) else MEMBER)
                  for target, o in overwrites.items()}
        members = [u for u, e in wanted.items() if e[0] == MEMBER and u != guild.me.id]
        after = with_members(current, left, wanted, members, guild.me.guild_permissions)
        touched = await write(self.bot.http, channel, guild, channel.id, current, after,
                              t("places.reason", info.language, title=info.title[:80]))
        self._written.note(channel.id, after, touched)

    async def ensure_team_channel(self, info: GameInfo, team: str, members: list[int],
                                  writers: list[int], entry: OutboxEntry | None = None,
                                  *, left: Collection[int] = ()) -> None:
        """The team's channel with exactly these members (`left`: who lost it by this
        change): edited if it exists, else adopted if an interrupted earlier try created
        it (found by its marker), else created; the id is stored before the welcome is
        posted (with a nonce)."""
        guild = self._guild(info)
        current = await self.service.info(info.id)
        overwrites = self.overwrites(guild, members, writers)
        channel_id = current.private_channels.get(team)
        channel = guild.get_channel(channel_id) if channel_id else None
        if isinstance(channel, discord.TextChannel):
            before = {o.id for o in channel.overwrites if not isinstance(o, discord.Role)}
            await self.set_members(info, guild, channel, overwrites, left)
            if team == "graveyard" and entry is not None:  # every newcomer is welcomed
                await self.welcome_the_dead(info, channel,
                                            [u for u in members if u not in before], entry)
            return
        category = await self.ensure_category(current, guild)
        marker = channel_marker(info.id, team)
        found = find_marked(guild, marker, exclude=set(current.private_channels.values()),
                            legacy=legacy_marker(info.id, team))
        if found is not None:  # created by a try that crashed before storing its id
            log.warning("game %s: adopting channel %s of %s from an interrupted try",
                        info.id, found.id, team)
            channel = found
            await channel.edit(overwrites=overwrites, category=category)
        else:
            parsed = Team.parse(team)
            name = t(f"channel.{parsed.kind if parsed else team}", info.language,
                     number=parsed.number if parsed and parsed.number is not None else "")
            topic = t("channel.topic", info.language, team=team_name(team, info.language),
                      title=user_text(info.title))
            channel = await guild.create_text_channel(
                name[:100], category=category, overwrites=overwrites,
                topic=marked_topic(topic, marker))
        if team == "graveyard":
            await self.record_channel(info, team, channel, None, t(
                "channel.welcome", info.language, team=team_name(team, info.language)))
            if entry is not None:
                await self.welcome_the_dead(info, channel, members, entry)
            return
        await self.record_channel(info, team, channel, entry, t(
            "channel.welcome", info.language, team=team_name(team, info.language)))

    async def welcome_the_dead(self, info: GameInfo, channel: discord.TextChannel,
                               newcomers: list[int], entry: OutboxEntry) -> None:
        """The graveyard greets each player who joins it, with a ping of just them (the
        master, reading along by an option, is not a newcomer to greet)."""
        dead = await self.observe.dead_among(info.id, newcomers)
        if not dead:
            return
        # a shared channel: the game's language (a later reader of another client reads
        # it too), never the newcomers' own (RULES.md, "Languages")
        await post(channel, entry_key(entry, "g"), content=t(
            "channel.graveyard_welcome", info.language,
            names=", ".join(f"<@{u}>" for u in dead)), mentions=only_users(dead))

    async def record_channel(self, info: GameInfo, key: str, channel: discord.TextChannel,
                             entry: OutboxEntry | None, welcome: str) -> None:
        """A private place made (or adopted) for the game: its id stored under `key` and
        indexed before its welcome is posted (with a nonce), so a crash in between adopts
        the channel and posts the welcome once."""
        await self.places.patch_channels(info.id, {key: channel.id})
        self.bot.private_index[channel.id] = info.id
        nonce = entry_key(entry, "w") if entry is not None else f"g{info.id}w{channel.id}"
        await post(channel, nonce, content=welcome)

    async def ensure_category(self, info: GameInfo, guild: discord.Guild
                              ) -> discord.CategoryChannel:
        """The game's category: stored, else adopted (an interrupted try made it: same
        name, hidden from @everyone, not another game's), else created and stored. One
        at a time per game: the desk's lane and the teams' open channels side by side."""
        async with self._categories.setdefault(info.id, asyncio.Lock()):
            return await self._ensure_category(await self.service.info(info.id), guild)

    async def _ensure_category(self, info: GameInfo, guild: discord.Guild
                               ) -> discord.CategoryChannel:
        existing = guild.get_channel(info.category_id) if info.category_id else None
        if isinstance(existing, discord.CategoryChannel):
            return existing
        name = t("channel.category", info.language, title=info.title)[:100]
        taken = await self.service.categories_in_use(guild.id)
        for candidate in guild.categories:
            hidden = candidate.overwrites.get(guild.default_role)
            if candidate.name == name and candidate.id not in taken and hidden is not None \
                    and hidden.view_channel is False:
                log.warning("game %s: adopting category %s from an interrupted try",
                            info.id, candidate.id)
                await self.service.set_discord(info.id,
                                               DiscordPatch(category_id=candidate.id))
                return candidate
        category = await guild.create_category(
            name, overwrites={guild.default_role: HIDDEN, guild.me: BOT_ALLOW})
        await self.service.set_discord(info.id, DiscordPatch(category_id=category.id))
        return category

    async def close_channels(self, info: GameInfo) -> None:
        """After the game: private channels become read-only archives, or are removed."""
        current = await self.service.info(info.id)
        archive = await self.observe.archive_channels(info.id)
        guild = self._guild(current)
        people = {*await self.observe.seats(info.id), current.master_id} if archive else set()
        for team, channel_id in current.private_channels.items():
            if is_place_key(team):
                continue
            channel = guild.get_channel(channel_id)
            if not isinstance(channel, discord.TextChannel):
                continue
            if archive:  # the game's people read it; an admin's overwrites stay as they are
                members = [o.id for o in channel.overwrites
                           if not isinstance(o, discord.Role) and o.id in people]
                readers = await self.observe.team_channel_readers(info.id, team, members)
                await self.set_members(current, guild, channel,
                                       self.overwrites(guild, readers, []), ())
            else:
                await channel.delete(reason=t("channel.closed_reason", current.language))
                self.bot.private_index.pop(channel_id, None)
            log.info("game %s: closed %s", info.id, team)
        if not archive and current.category_id:
            category = guild.get_channel(current.category_id)
            if category is not None:
                await category.delete()
        await self.places.close(current, archive)

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
            lang = await self.service.readers.language(info.id, info.master_id,
                                                        info.language)  # his DM: his words
            await post(user, entry_key(entry, "x"), content=t(
                "delivery.parked", lang, game=user_text(info.title), what=what,
                error=error[:200]))
            return
        except discord.HTTPException as exc:
            log.warning("game %s: cannot DM the master (%s); trying the game channel",
                        entry.game_id, exc)
        try:
            await post(self._channel(info.channel_id), entry_key(entry, "y"), content=t(
                "delivery.parked_public", info.language, master=f"<@{info.master_id}>",
                game=user_text(info.title)), mentions=only_users([info.master_id]))
        except discord.HTTPException:
            log.error("game %s: could not tell the master about parked entry %s (%s)",
                      entry.game_id, entry.key, what)


def recorded_count(entry: OutboxEntry) -> RecordCount | None:
    """The day's count a vote's record carries, as its command left it (issue 30)."""
    count = entry.payload.get("count")
    return None if count is None else RecordCount.model_validate(count)


__all__ = ["BOT_ALLOW", "HIDDEN", "NONCE_MAX", "Delivery", "channel_marker", "entry_key",
           "find_marked", "nonce", "post", "retry_after"]
