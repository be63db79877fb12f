"""GameService: the one door between the Discord layer and durable games.

Every accepted command is committed in ONE transaction together with the new
state, its EventLog row and its Outbox entries, before `apply` returns: a reply
the bot sends after `apply` can never describe a change that a crash undoes,
and nothing the players were told can be missing from the log. Commands on one
game are serialized by a per-game lock; different games never wait for each
other (except for the database's own short write lock).

Across processes (sharded bots on one database) each process serves only the
guilds it `owns`: its scheduler and outbox worker never touch another shard's
games, so in practice one game has one writer. Should two writers still meet
(a DM handled by shard 0 for a game of another shard, the CLI), the guarded
UPDATE on the game's `seq` turns the loser's commit into a retry, never a lost
or doubled command; lock conflicts the database reports (a unique key two
transactions raced for, a deadlock, a busy SQLite file) are retried the same way.

Split by concern: what a commit writes is core/storage/commit.py, the Discord-side
columns core/storage/patches.py, the one retry loop core/storage/retry.py; the
names callers import from here are re-exported.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any, TypeVar, overload

from tortoise.backends.base.client import BaseDBAsyncClient
from tortoise.exceptions import IntegrityError
from tortoise.transactions import in_transaction

from core.game import engine
from core.game.access import GameLimits, open_game_refusal
from core.game.commands import COMMAND_ADAPTER, Command
from core.game.errors import ErrorCode, RuleError
from core.game.events import EVENTS_ADAPTER, Event
from core.game.rules.owing import reminder_at
from core.game.state import GameState, Options
from core.storage import statements
from core.storage.cache import DEFAULT_COMPACT, DEFAULT_SIZE, Slot, Slots
from core.storage.commit import ANSWERED as ANSWERED
from core.storage.commit import EVENT_KIND as EVENT_KIND
from core.storage.commit import (
    SNAPSHOT_EVERY,
    Pending,
    dumps,
    held,
    outbox_rows,
    stores_state,
    writer,
)
from core.storage.commit import Applied as Applied
from core.storage.commit import OutboxItem as OutboxItem
from core.storage.commit import OutboxRows as OutboxRows
from core.storage.commit import default_route as default_route
from core.storage.commit import event_payload as event_payload
from core.storage.db import reader
from core.storage.groupcommit import GroupCommitter, Piece
from core.storage.hooks import Commit as Commit
from core.storage.hooks import CommitHook as CommitHook
from core.storage.kinds import BUNDLERS, DERIVERS, Bundler, OutboxDeriver, routed
from core.storage.models import EventLog, Game
from core.storage.patches import INFO_FIELDS, patch_writer, patched
from core.storage.patches import DiscordPatch as DiscordPatch
from core.storage.patches import GameInfo as GameInfo
from core.storage.readers import Readers
from core.storage.retry import ATTEMPTS as ATTEMPTS
from core.storage.retry import Stale, as_stale, retrying, settle
from core.storage.statements import Script
from core.storage.timing import utcnow
from core.storage.wallets import currency_hook, stamp_funds

log = logging.getLogger(__name__)

DeadlineListener = Callable[[int, datetime | None], None]
GuildFilter = Callable[[int], bool]  # guild id -> does this process serve it?
OutboxListener = Callable[[], None]
#: told the rows a commit just wrote (game, guild, [(kind, payload JSON)]): the worker
#: learns what is due from the commit instead of re-reading every pending row
OutboxFeed = Callable[[int, int, list[tuple[str, str]]], None]
T = TypeVar("T")


class GameNotFound(RuleError):
    def __init__(self, game_id: int) -> None:
        super().__init__(ErrorCode.GAME_NOT_FOUND, game=game_id)


class ReplayMismatch(AssertionError):
    """The stored state is not what the log replays to: a bug, never a user error."""


class GameService:
    """Create games, apply commands durably, answer the bot's lookups, replay the log."""

    def __init__(self, *, route: Callable[[Event], bool] = default_route,
                 clock: Callable[[], datetime] = utcnow, owns: GuildFilter | None = None,
                 limits: GameLimits | None = None,
                 cache_size: int | None = DEFAULT_SIZE,
                 compact_size: int = DEFAULT_COMPACT) -> None:
        """`owns` (None: every guild) limits what this process serves: active_games,
        pending_deadlines and the deadline listeners see only games of guilds it owns,
        and an OutboxWorker built on this service delivers only their entries
        (see core.storage.sharding.guild_filter for Discord's shard rule).

        `cache_size` (None: unbounded) caps the states kept parsed in memory, the games
        touched most recently, and `compact_size` the next ones kept as JSON text
        (core/storage/cache.py)."""
        self.route = route  # which events become outbox entries (the Discord layer's)
        self._clock = clock
        self.limits = limits  # None: no cap on open games (the bot passes its settings')
        self.owns = owns
        self._slot = Slots(cache_size, compact_size)
        self._slots = self._slot.slots  # game id -> Slot (a game's lock and cached state)
        self._channels: dict[int, int] = {}  # channel id -> id of a game seen running there
        self._create_lock = asyncio.Lock()
        self.deadline_listeners: list[DeadlineListener] = []
        self.reminder_listeners: list[DeadlineListener] = []
        self.outbox_derivers: list[OutboxDeriver] = []
        self.outbox_listeners: list[OutboxListener] = []
        self.outbox_feeds: list[OutboxFeed] = []
        self.commit_hooks: list[CommitHook] = [currency_hook]
        self.bundlers: list[Bundler] = []
        # Commands of different games committed together share a transaction (one sync).
        self._group = GroupCommitter()
        # Each reader's language and the master's desk pings (core/storage/readers.py).
        self.readers = Readers(self.write)

    def use_catalogue(self) -> None:
        """Make every command's rows as the catalogue lists them (core/storage/kinds.py:
        the route of events, the derivers, the bundlers); a bare service (the storage
        tests') keeps `default_route` and no others."""
        self.route = routed
        self.outbox_derivers = list(DERIVERS)
        self.bundlers = list(BUNDLERS)

    @property
    def committer(self) -> GroupCommitter:
        """The shared-transaction writer (its counters show how well commits group)."""
        return self._group

    def set_clock(self, clock: Callable[[], datetime]) -> None:
        """Read the time from `clock` from here on (a test's virtual clock)."""
        self._clock = clock

    # --- writing ---------------------------------------------------------------
    async def create(
        self, guild_id: int, channel_id: int, master_id: int, title: str, plot: str = "",
        options: Options | None = None, seed: int | None = None, *, language: str | None = None,
        extra_outbox: Sequence[OutboxItem] = (),
    ) -> int:
        """Open a game in signup; RuleError('channel_has_game') if the channel has one running."""
        seed = secrets.randbits(63) if seed is None else seed
        state = engine.create_game(seed=seed, master=master_id, title=title, plot=plot,
                                   options=options)
        rows_json = [(i.kind, dumps(i.payload)) for i in extra_outbox]
        now = self._clock()

        async def insert() -> int:
            # Insert first (the unique active_channel_id says whether the channel is
            # free): a transaction that starts by writing takes SQLite's write lock at
            # once, where read-then-write could fail when another process wrote between.
            async with in_transaction() as conn:
                game = await Game.create(
                    using_db=conn, guild_id=guild_id, channel_id=channel_id,
                    active_channel_id=channel_id, master_id=master_id, title=title,
                    plot=plot, options=state.options.model_dump_json(), seed=seed,
                    state=state.model_dump_json(), phase=str(state.phase), active=True,
                    deadline=state.deadline, reminder_at=reminder_at(state), seq=state.seq,
                    outbox_seq=len(rows_json),
                    language=language or state.options.language,
                )
                await statements.insert_outbox(conn, game.id, 0, rows_json, now)
                return game.id

        async with self._create_lock:
            if self.limits is not None:
                await self._check_limits(guild_id, master_id, self.limits)
            try:
                game_id, cancelled = await settle(insert())
            except IntegrityError as exc:  # the channel has a running game
                existing = await Game.get_or_none(active_channel_id=channel_id)
                if existing is None:
                    raise  # another constraint: a bug or a broken database, not a refusal
                raise RuleError(ErrorCode.CHANNEL_HAS_GAME, game=existing.id) from exc
        slot = self._slot(game_id)
        slot.state, slot.outbox_seq, slot.guild_id = state, len(rows_json), guild_id
        slot.stored_seq = state.seq
        self._slot.cached(game_id)
        slot.state_json = None
        slot.info = self._seen(GameInfo(
            id=game_id, guild_id=guild_id, channel_id=channel_id, master_id=master_id,
            title=title, phase=state.phase, active=True, deadline=state.deadline, seq=state.seq,
            language=language or state.options.language, signup_message_id=None,
            category_id=None, private_channels={}))
        if rows_json:
            self._notify_outbox()
        if cancelled:
            raise asyncio.CancelledError()
        return game_id

    async def _check_limits(self, guild_id: int, master_id: int, limits: GameLimits) -> None:
        """Refuse a game beyond the open-games limits (core.game.access decides)."""
        open_games = Game.filter(guild_id=guild_id, active=True)
        refusal = open_game_refusal(await open_games.filter(master_id=master_id).count(),
                                    await open_games.count(), limits)
        if refusal is not None:
            raise refusal

    async def channel_owner(self, channel_id: int) -> int | None:
        """The game whose private channel (or category) this is, running or over."""
        row = await Game.filter(category_id=channel_id).first()
        if row is not None:
            return int(row.id)
        for row in await Game.filter(private_channels__contains=str(channel_id)):
            if channel_id in json.loads(row.private_channels or "{}").values():
                return int(row.id)
        return None

    async def apply(
        self, game_id: int, command: Command, *, extra_outbox: Sequence[OutboxItem] = (),
        discord: DiscordPatch | None = None, answer: Callable[[Event], bool] | None = None,
        reply: str | None = None,
    ) -> Applied:
        """Apply `command` and commit it; RuleError (nothing written) if the rules refuse.

        `extra_outbox` and `discord` are written in the same transaction. The outbox
        entries of the events `answer` takes are held for the caller, who answers them
        itself and then calls `answered` (`Applied.answered` has their ordinals); one it
        does not answer goes out through the worker when its hold ends. `reply` is the
        identity of the caller's own response (an interaction's id), stored with them.
        """
        extra = [(i.kind, dumps(i.payload)) for i in extra_outbox]
        columns = discord.columns() if discord else {}
        slot = self._slot(game_id)
        refused: list[RuleError] = []  # the engine's refusal leaves the cache valid

        async def attempt(n: int) -> tuple[GameState, engine.Outcome, int, bool]:
            nonlocal command
            old = await self._loaded(game_id, slot)
            if old.options.currency:
                command = await stamp_funds(slot.guild_id, old, command)
            try:
                out = engine.apply(old, command, as_json=slot.state_json)
            except RuleError as exc:
                refused.append(exc)
                raise
            pending = Pending(game_id, slot.guild_id, slot.outbox_seq, old, out, command)
            stored_json = out.state.model_dump_json() \
                if stores_state(command, old, out.state, slot.stored_seq) else None
            try:
                (written, held, fresh), cancelled = await settle(self._commit(
                    pending, extra, columns, stored_json, answer, reply))
            except RuleError as refusal:  # a commit hook refused; nothing was written
                if refusal.code == "not_enough_lira" and n < ATTEMPTS - 1 \
                        and command.reads_funds() \
                        and (await stamp_funds(slot.guild_id, old, command)).funds \
                        != command.funds:
                    raise Stale() from None  # another game spent the wallet: decide anew
                raise
            ordinals[:] = [slot.outbox_seq + 1 + i for i in held]
            rows[:] = fresh
            self._settled(game_id, slot, out.state, stored_json, written, discord)
            return old, out, written, cancelled

        ordinals: list[int] = []
        rows: list[tuple[str, str]] = []
        async with slot.lock:
            old, out, written, cancelled = await retrying(
                game_id, attempt, forget=lambda: self._slot.drop(game_id),
                keeps=lambda exc: bool(refused) and exc is refused[-1])
        new = out.state
        self._announce(game_id, slot.guild_id, old, new, written, rows)
        if cancelled:  # committed all the same: the caller just stopped waiting
            raise asyncio.CancelledError()
        return Applied(state=new, events=out.events, game_id=game_id, seq=new.seq,
                       answered=tuple(ordinals))

    def _settled(self, game_id: int, slot: Slot, new: GameState, stored_json: str | None,
                 written: int, discord: DiscordPatch | None) -> None:
        """A command is committed: the cached slot takes its state, outbox count and row."""
        slot.state, slot.state_json = new, stored_json
        if stored_json is not None:
            slot.stored_seq = new.seq
        self._slot.cached(game_id)
        slot.outbox_seq += written
        if slot.info is not None:
            slot.info = patched(replace(
                slot.info, phase=new.phase, active=not new.over,
                deadline=new.deadline, seq=new.seq, master_id=new.master), discord)

    def _announce(self, game_id: int, guild_id: int, old: GameState, new: GameState,
                  written: int, rows: list[tuple[str, str]] | None = None) -> None:
        """Wake whoever waits on what the commit changed: the deadline, the reminder,
        the outbox (timers only on the shard that owns the guild)."""
        if (new.deadline != old.deadline or new.over != old.over) and self.owned(guild_id):
            self._notify_deadline(game_id, None if new.over else new.deadline)
        if self.reminder_listeners and self.owned(guild_id):
            due = reminder_at(new)
            if due != reminder_at(old):
                self._notify(self.reminder_listeners, game_id, due)
        if written and rows and self.outbox_feeds:
            self._feed(game_id, guild_id, rows)
        elif written:
            self._notify_outbox()

    def _feed(self, game_id: int, guild_id: int, rows: list[tuple[str, str]]) -> None:
        for feed in list(self.outbox_feeds):
            try:
                feed(game_id, guild_id, rows)
            except Exception:
                log.exception("outbox feed failed for game %s", game_id)

    async def answered(self, game_id: int, ordinals: Sequence[int], *,
                       release: bool = False) -> None:
        """The caller answered these held entries itself (`apply`'s `answer`): they are
        delivered, in a transaction shared with the commands committing meanwhile. With
        `release`, the caller leaves them to the worker: they are due now."""
        if ordinals:
            await self._group.run(Script(None, (statements.outbox_answered(
                statements.default_dialect(), game_id, ordinals, self._clock(),
                release=release),)))
            self._notify_outbox()  # they, or the entries after them, are due

    async def set_discord(self, game_id: int, patch: DiscordPatch, *,
                          extra_outbox: Sequence[OutboxItem] = ()) -> None:
        """Store Discord-side ids (and optional outbox entries) in one transaction."""
        extra = [(i.kind, dumps(i.payload)) for i in extra_outbox]
        slot = self._slot(game_id)

        async def attempt(n: int) -> bool:
            await self._loaded(game_id, slot)
            work = patch_writer(game_id, slot.outbox_seq, patch, extra, self._clock())
            _, cancelled = await settle(self._write(work))
            slot.outbox_seq += len(extra)
            if slot.info is not None:
                slot.info = patched(slot.info, patch)
            return cancelled

        async with slot.lock:
            cancelled = await retrying(game_id, attempt,
                                       forget=lambda: self._slot.drop(game_id))
        if extra:
            self._notify_outbox()
        if cancelled:
            raise asyncio.CancelledError()

    async def _commit(self, p: Pending, extra: list[tuple[str, str]],
                      columns: dict[str, Any], state_json: str | None,
                      answer: Callable[[Event], bool] | None = None,
                      reply: str | None = None
                      ) -> tuple[int, list[int], list[tuple[str, str]]]:
        """Write one command (the commit path, core/storage/commit.py); rows written,
        the indexes of those held for the caller, and the rows (for the worker's feed)."""
        rows = outbox_rows(p, extra, self.route, self.outbox_derivers, self.bundlers,
                           answer, reply)
        work = writer(p, rows, columns, state_json, self._clock(), self.commit_hooks)
        if isinstance(work, Script):
            if not await self._write(work):
                raise Stale()  # the game row moved under us: decide anew
        else:
            await self._write(work)
        return len(rows), held(rows), rows

    @overload
    async def _write(self, work: Script) -> bool: ...

    @overload
    async def _write(self, work: Callable[[BaseDBAsyncClient], Awaitable[T]]) -> T: ...

    async def _write(self, work: Piece) -> Any:
        """`work` committed (maybe with other games' commands); a conflict a retry can
        cure comes out as Stale."""
        try:
            return await self._group.run(work)
        except (Stale, RuleError):
            raise
        except Exception as exc:
            cured = as_stale(exc)
            if cured is exc:
                raise
            raise cured from exc  # `from None` would drop the cause retrying() reports

    async def close(self) -> None:
        """Let the commits in flight finish (call before closing the database)."""
        await self._group.idle()

    @overload
    async def write(self, work: Script) -> bool: ...

    @overload
    async def write(self, work: Callable[[BaseDBAsyncClient], Awaitable[T]]) -> T: ...

    async def write(self, work: Piece) -> Any:
        """Run `work` (database writes only, through the connection it is given, or a
        Script) in a transaction it may share with commands committing at the same time."""
        return await self._group.run(work)

    # --- reading ---------------------------------------------------------------
    async def state(self, game_id: int) -> GameState:
        """The current state (shared with the cache: treat it as read-only)."""
        slot = self._slot(game_id)
        if slot.state is not None:
            self._slot.cached(game_id)  # read: as recent as a write
            return slot.state
        async with slot.lock:
            return await self._loaded(game_id, slot)

    async def info(self, game_id: int) -> GameInfo:
        cached = self._cached_info(game_id)
        if cached is not None:
            return cached
        row = await Game.filter(id=game_id).using_db(reader()).only(*INFO_FIELDS).first()
        if row is None:
            raise GameNotFound(game_id)
        return self._seen(GameInfo.of(row))

    async def game_in_channel(self, channel_id: int) -> GameInfo | None:
        """The game running in this channel, if any."""
        game_id = self._channels.get(channel_id)
        cached = self._cached_info(game_id) if game_id is not None else None
        if cached is not None and cached.active and cached.channel_id == channel_id:
            return cached
        row = await Game.filter(active_channel_id=channel_id).using_db(reader()) \
            .only(*INFO_FIELDS).first()
        return self._seen(GameInfo.of(row)) if row else None

    async def last_game_in_channel(self, channel_id: int) -> GameInfo | None:
        """The latest game of this channel, running or over (for /thank, /role after it)."""
        row = await Game.filter(channel_id=channel_id).order_by("-id").only(*INFO_FIELDS) \
            .first()
        return GameInfo.of(row) if row else None

    async def games_of_user(self, guild_id: int | None, user_id: int) -> list[GameInfo]:
        """Running games the user plays in (any guild if guild_id is None), oldest first."""
        query = Game.filter(active=True, seats__user_id=user_id)
        if guild_id is not None:
            query = query.filter(guild_id=guild_id)
        return [GameInfo.of(r) for r in await query.order_by("id").distinct()]

    async def categories_in_use(self, guild_id: int) -> set[int]:
        """Channel categories some game of the guild has stored as its own."""
        rows = await Game.filter(guild_id=guild_id, category_id__isnull=False) \
            .values_list("category_id", flat=True)
        return {int(r) for r in rows}  # type: ignore[call-overload]

    def owned(self, guild_id: int) -> bool:
        """Whether this process serves the guild (always, unless sharded)."""
        return self.owns is None or self.owns(guild_id)

    async def active_games(self) -> list[GameInfo]:
        """Running games of the guilds this process owns, oldest first."""
        rows = await Game.filter(active=True).order_by("id").only(*INFO_FIELDS)
        return [GameInfo.of(r) for r in rows if self.owned(r.guild_id)]

    async def pending_deadlines(self) -> dict[int, datetime]:
        """game id -> deadline of every running game (of an owned guild) that has one:
        the scheduler's start."""
        rows = await Game.filter(active=True, deadline__isnull=False) \
            .values_list("id", "guild_id", "deadline")
        return {int(gid): dl for gid, guild, dl in rows
                if isinstance(dl, datetime) and self.owned(int(guild))}

    async def pending_reminders(self) -> dict[int, datetime]:
        """game id -> when the scheduled reminder of every running game (of an owned
        guild) is due: the `reminder_at` column each commit writes (no state is read),
        so it survives restarts."""
        rows = await Game.filter(active=True, reminder_at__isnull=False) \
            .values_list("id", "guild_id", "reminder_at")
        return {int(gid): due for gid, guild, due in rows
                if isinstance(due, datetime) and self.owned(int(guild))}

    async def log(self, game_id: int) -> list[tuple[int, Command, list[Event]]]:
        """The game's EventLog in order: (seq, command, events)."""
        rows = await EventLog.filter(game_id=game_id).order_by("seq") \
            .values_list("seq", "command", "events")
        return [(int(seq), COMMAND_ADAPTER.validate_json(cmd), EVENTS_ADAPTER.validate_json(ev))
                for seq, cmd, ev in rows]

    async def replay(self, game_id: int) -> GameState:
        """Rebuild the state from the seed and the logged commands alone."""
        return (await self._replay(game_id, -1))[0]

    async def _replay(self, game_id: int, at: int) -> tuple[GameState, str | None]:
        """The replayed state, and its JSON when its seq was `at` (None if never)."""
        row = await Game.get_or_none(id=game_id)
        if row is None:
            raise GameNotFound(game_id)
        state = engine.create_game(seed=row.seed, master=row.master_id, title=row.title,
                                   plot=row.plot, options=Options.model_validate_json(row.options),
                                   stored=True)
        seen = state.model_dump_json() if at == 0 else None
        for seq, command, _ in await self.log(game_id):
            state = engine.apply(state, command).state
            if state.seq != seq:
                raise ReplayMismatch(f"game {game_id}: log seq {seq} replays to {state.seq}")
            if seq == at:
                seen = state.model_dump_json()
        return state, seen

    async def verify(self, game_id: int) -> GameState:
        """Replay and compare with the stored state byte for byte (the replay at the
        stored state's seq: a day's votes may have left it a few commands behind, see
        core.storage.commit.stores_state); raise ReplayMismatch."""
        row = await Game.get(id=game_id)
        stored = GameState.model_validate_json(row.state).seq
        replayed, then = await self._replay(game_id, stored)
        if then != row.state or replayed.seq != row.seq or row.seq - stored >= SNAPSHOT_EVERY:
            raise ReplayMismatch(f"game {game_id}: stored state differs from its replay")
        return replayed

    @property
    def cache(self) -> Slots:
        """The games' locks and cached states (core/storage/cache.py), for tests and the
        bench to look at: what is kept, what was evicted, who waits for a game."""
        return self._slot

    # --- internals -------------------------------------------------------------
    def forget(self, game_id: int | None = None) -> None:
        """Drop cached states (all, or one game's) so the next access reads the database."""
        if game_id is None:
            self._slot.drop_all()
        else:
            self._slot.drop(game_id)

    def _cached_info(self, game_id: int) -> GameInfo | None:
        """The cached GameInfo, while the game's state is cached too (else None)."""
        slot = self._slots.get(game_id)
        if slot is None or (slot.state is None and not slot.compacted):
            return None
        return slot.info

    def _seen(self, info: GameInfo) -> GameInfo:
        if info.active:
            self._channels[info.channel_id] = info.id
        return info

    async def _loaded(self, game_id: int, slot: Slot) -> GameState:
        state = slot.state
        if state is None and slot.compacted:  # cached as JSON text: the same, parsed
            assert slot.state_json is not None
            state = slot.state = GameState.model_validate_json(slot.state_json)
            self._slot.cached(game_id)
        if state is None:
            # the last commit, read beside the writer (WAL): a command on a game the cache
            # let go does not queue its read behind other games' commits in flight; this
            # game's own commits are done (its lock is held, and eviction waits for it)
            row = await Game.filter(id=game_id).using_db(reader()).first()
            if row is None:
                raise GameNotFound(game_id)
            state = GameState.model_validate_json(row.state)
            slot.stored_seq, slot.state_json = state.seq, row.state
            if state.seq != row.seq:  # a day's last few votes and orders: from the log
                slot.state_json = None
                state = await self._caught_up(game_id, state, row.seq)
            slot.state = state
            slot.outbox_seq, slot.guild_id = row.outbox_seq, row.guild_id
            slot.info = self._seen(GameInfo.of(row))
            self._slot.cached(game_id)
        return state

    async def _caught_up(self, game_id: int, state: GameState, seq: int) -> GameState:
        """The stored state (ours: changed in place) with the logged commands after it
        applied, up to `seq` (the row's; anything else is a ReplayMismatch)."""
        rows = await EventLog.filter(game_id=game_id, seq__gt=state.seq, seq__lte=seq) \
            .using_db(reader()).order_by("seq").values_list("seq", "command")
        for logged, command in rows:
            engine.apply_in_place(state, COMMAND_ADAPTER.validate_json(command))
            if state.seq != logged:
                raise ReplayMismatch(f"game {game_id}: log seq {logged} replays to {state.seq}")
        if state.seq != seq:
            raise ReplayMismatch(f"game {game_id}: the log stops at {state.seq}, not {seq}")
        return state

    def _notify_deadline(self, game_id: int, deadline: datetime | None) -> None:
        self._notify(self.deadline_listeners, game_id, deadline)

    @staticmethod
    def _notify(listeners: list[DeadlineListener], game_id: int,
                moment: datetime | None) -> None:
        for listener in list(listeners):
            try:
                listener(game_id, moment)
            except Exception:
                log.exception("deadline/reminder listener failed for game %s", game_id)

    def _notify_outbox(self) -> None:
        for listener in list(self.outbox_listeners):
            try:
                listener()
            except Exception:
                log.exception("outbox listener failed")
