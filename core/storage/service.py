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
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import secrets
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict
from tortoise.backends.base.client import BaseDBAsyncClient
from tortoise.exceptions import IntegrityError
from tortoise.expressions import F
from tortoise.transactions import in_transaction

from core import engine
from core.access import GameLimits, open_game_refusal
from core.archive import files_for
from core.commands import COMMAND_ADAPTER, Command
from core.errors import ErrorCode, RuleError
from core.events import EVENTS_ADAPTER, Event
from core.rules.owing import REMINDER, reminder_at
from core.state import GameState, Options, PhaseKind
from core.storage import statements
from core.storage.groupcommit import GroupCommitter
from core.storage.hooks import Commit as Commit
from core.storage.hooks import CommitHook as CommitHook
from core.storage.models import EventLog, Game, GamePlayer, GuildSettings, UserStats
from core.storage.timing import utcnow
from core.storage.wallets import currency_hook, stamp_funds

log = logging.getLogger(__name__)

DeadlineListener = Callable[[int, datetime | None], None]
# Given a command's (old state, new state, events): Discord work it makes due beyond its
# events (e.g. an edit of a live message), written in the same transaction.
OutboxDeriver = Callable[[GameState, GameState, list[Event]], list["OutboxItem"]]
GuildFilter = Callable[[int], bool]  # guild id -> does this process serve it?
OutboxListener = Callable[[], None]
EVENT_KIND = "event"  # Outbox.kind of entries made from engine events
ATTEMPTS = 5  # tries of one command when another writer or a lock conflict intervenes
# PostgreSQL SQLSTATEs that mean "run the transaction again": serialization failure,
# deadlock detected.
_RETRY_SQLSTATES = frozenset({"40001", "40P01"})
T = TypeVar("T")


def default_route(event: Event) -> bool:
    """Events that must reach Discord even across a crash: channel posts (public, team),
    and reminders (no interaction is there to answer them: the scheduler sends them).

    Other private notes ('players', 'master') are answered by the Discord layer from
    the returned events; it can make any of them durable with `extra_outbox`.
    """
    return event.audience.kind in ("public", "team") or event.kind == REMINDER


class OutboxItem(BaseModel):
    """An outbox payload the caller adds to a command's transaction (e.g. 'edit signup')."""

    model_config = ConfigDict(frozen=True)
    kind: str
    payload: dict[str, Any]


class DiscordPatch(BaseModel):
    """Discord-side columns of a game; only the fields explicitly set are written."""

    signup_message_id: int | None = None
    category_id: int | None = None
    private_channels: dict[str, int] | None = None
    live_messages: dict[str, int] | None = None
    language: str | None = None

    def columns(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name in self.model_fields_set:
            value = getattr(self, name)
            if name in ("private_channels", "live_messages"):
                value = json.dumps(value or {}, sort_keys=True)
            elif name == "language" and value is None:
                continue
            out[name] = value
        return out


@dataclass(frozen=True)
class GameInfo:
    """What the bot needs to route a message to a game, without parsing its state."""

    id: int
    guild_id: int
    channel_id: int
    master_id: int
    title: str
    phase: PhaseKind
    active: bool
    deadline: datetime | None
    seq: int
    language: str
    signup_message_id: int | None
    category_id: int | None
    private_channels: dict[str, int]
    live_messages: dict[str, int] = field(default_factory=dict)  # key -> message id
    # The phase (GameState.serial, .number) the game was in when the bot looked it up
    # for an interaction (MafiaBot.find_game): the cog stamps it on phase-bound commands
    # (core.commands.stamped). None when not looked up for one.
    seen: tuple[int, int] | None = None

    @classmethod
    def of(cls, row: Game) -> GameInfo:
        return cls(
            id=row.id, guild_id=row.guild_id, channel_id=row.channel_id,
            master_id=row.master_id, title=row.title, phase=PhaseKind(row.phase),
            active=row.active, deadline=row.deadline, seq=row.seq, language=row.language,
            signup_message_id=row.signup_message_id, category_id=row.category_id,
            private_channels={k: int(v) for k, v in json.loads(row.private_channels).items()},
            live_messages={k: int(v) for k, v in json.loads(row.live_messages).items()},
        )


@dataclass(frozen=True)
class Applied:
    """A committed command: the new state (read-only!), its events and its log number."""

    state: GameState
    events: list[Event]
    game_id: int
    seq: int


# Extra outbox entries derived from a command (e.g. core.places: pushes to the players'
# private places): (kind, payload) rows to write before the command's event rows, and
# rows to write after them. Pure: it runs inside the command's transaction.
OutboxRows = list[tuple[str, dict[str, Any]]]
Bundler = Callable[[Command, GameState, GameState, list[Event]], tuple[OutboxRows, OutboxRows]]


class GameNotFound(RuleError):
    def __init__(self, game_id: int) -> None:
        super().__init__(ErrorCode.GAME_NOT_FOUND, game=game_id)


class ReplayMismatch(AssertionError):
    """The stored state is not what the log replays to: a bug, never a user error."""


class _Stale(Exception):
    """Another writer (another process) changed the game since we loaded it, or the
    database refused the transaction for a conflict a retry resolves (__cause__)."""


def _conflict(exc: BaseException) -> bool:
    """A failure that running the same transaction again can cure."""
    seen: BaseException | None = exc
    for _ in range(5):
        if seen is None:
            return False
        if isinstance(seen, IntegrityError):
            return True  # e.g. two games opening the same wallet at once
        if getattr(seen, "sqlstate", None) in _RETRY_SQLSTATES:
            return True
        if "database is locked" in str(seen):  # SQLite busy beyond its timeout
            return True
        seen = seen.__cause__ or seen.__context__
    return False


async def _backoff(attempt: int) -> None:
    await asyncio.sleep(random.uniform(0, 0.005 * 2 ** attempt))


@dataclass
class _Slot:
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    state: GameState | None = None
    state_json: str | None = None  # `state` as stored, when known (saves a dump per command)
    outbox_seq: int = 0
    guild_id: int = 0
    # The game's row as GameInfo, valid only while `state` is cached: both are read
    # together (under the lock) and written through on every commit of this service.
    info: GameInfo | None = None


class GameService:
    """Create games, apply commands durably, answer the bot's lookups, replay the log."""

    def __init__(self, *, route: Callable[[Event], bool] = default_route,
                 clock: Callable[[], datetime] = utcnow, owns: GuildFilter | None = None,
                 limits: GameLimits | None = None) -> None:
        """`owns` (None: every guild) limits what this process serves: active_games,
        pending_deadlines and the deadline listeners see only games of guilds it owns,
        and an OutboxWorker built on this service delivers only their entries
        (see core.storage.sharding.guild_filter for Discord's shard rule)."""
        self._route = route
        self._clock = clock
        self.limits = limits  # None: no cap on open games (the bot passes its settings')
        self.owns = owns
        self._slots: dict[int, _Slot] = {}
        self._channels: dict[int, int] = {}  # channel id -> id of a game seen running there
        self._create_lock = asyncio.Lock()
        self.deadline_listeners: list[DeadlineListener] = []
        self.reminder_listeners: list[DeadlineListener] = []
        self.outbox_derivers: list[OutboxDeriver] = []
        self.outbox_listeners: list[OutboxListener] = []
        self.commit_hooks: list[CommitHook] = [currency_hook]
        self.bundlers: list[Bundler] = []
        # Commands of different games committed together share a transaction (one sync).
        self._group = GroupCommitter()

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
        rows_json = [(i.kind, _dumps(i.payload)) for i in extra_outbox]
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
                    deadline=state.deadline, seq=state.seq, outbox_seq=len(rows_json),
                    language=language or state.options.language,
                )
                await statements.insert_outbox(conn, game.id, 0, rows_json, now)
                return game.id

        async with self._create_lock:
            if self.limits is not None:
                await self._check_limits(guild_id, master_id, self.limits)
            try:
                game_id, cancelled = await _settle(insert())
            except IntegrityError as exc:  # the channel has a running game
                existing = await Game.get_or_none(active_channel_id=channel_id)
                if existing is None:
                    raise  # another constraint: a bug or a broken database, not a refusal
                raise RuleError(ErrorCode.CHANNEL_HAS_GAME, game=existing.id) from exc
        slot = self._slot(game_id)
        slot.state, slot.outbox_seq, slot.guild_id = state, len(rows_json), guild_id
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
        """Refuse a game beyond the open-games limits (core.access decides)."""
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
        discord: DiscordPatch | None = None,
    ) -> Applied:
        """Apply `command` and commit it; RuleError (nothing written) if the rules refuse.

        `extra_outbox` and `discord` are written in the same transaction.
        """
        extra = [(i.kind, _dumps(i.payload)) for i in extra_outbox]
        columns = discord.columns() if discord else {}
        slot = self._slot(game_id)
        async with slot.lock:
            for attempt in range(ATTEMPTS):
                old = await self._loaded(game_id, slot)
                if old.options.currency:
                    command = await stamp_funds(slot.guild_id, old, command)
                try:
                    out = engine.apply(old, command, as_json=slot.state_json)
                except RuleError:
                    raise  # the engine never touches its input: the cache stays valid
                except BaseException:
                    slot.state = None
                    raise
                try:
                    stored_json = out.state.model_dump_json()
                    written, cancelled = await _settle(self._commit(
                        game_id, slot, old, out, command, extra, columns, stored_json))
                except _Stale as stale:
                    slot.state = None
                    if stale.__cause__ is not None:  # a database conflict, not a new seq
                        if attempt == ATTEMPTS - 1:
                            raise stale.__cause__ from None
                        await _backoff(attempt)
                    continue
                except RuleError as refusal:  # a commit hook refused; nothing was written
                    if refusal.code == "not_enough_lira" and attempt < ATTEMPTS - 1 \
                            and command.reads_funds() \
                            and (await stamp_funds(slot.guild_id, old, command)).funds \
                            != command.funds:
                        continue  # another game spent the wallet since we read it: decide anew
                    slot.state = None
                    raise
                except BaseException:
                    slot.state = None
                    raise
                slot.state, slot.state_json = out.state, stored_json
                slot.outbox_seq += written
                if slot.info is not None:
                    slot.info = _patched(replace(
                        slot.info, phase=out.state.phase, active=not out.state.over,
                        deadline=out.state.deadline, seq=out.state.seq), discord)
                break
            else:
                raise RuntimeError(f"game {game_id} keeps changing under us")
        new = out.state
        if (new.deadline != old.deadline or new.over != old.over) \
                and self.owned(slot.guild_id):
            self._notify_deadline(game_id, None if new.over else new.deadline)
        if self.reminder_listeners and self.owned(slot.guild_id):
            due = reminder_at(new)
            if due != reminder_at(old):
                self._notify(self.reminder_listeners, game_id, due)
        if written:
            self._notify_outbox()
        if cancelled:  # committed all the same: the caller just stopped waiting
            raise asyncio.CancelledError()
        return Applied(state=new, events=out.events, game_id=game_id, seq=new.seq)

    async def set_discord(self, game_id: int, patch: DiscordPatch, *,
                          extra_outbox: Sequence[OutboxItem] = ()) -> None:
        """Store Discord-side ids (and optional outbox entries) in one transaction."""
        extra = [(i.kind, _dumps(i.payload)) for i in extra_outbox]
        columns = patch.columns()
        slot = self._slot(game_id)

        async def write() -> None:
            try:
                async with in_transaction() as conn:
                    n = await Game.filter(id=game_id, outbox_seq=slot.outbox_seq) \
                        .using_db(conn).update(outbox_seq=slot.outbox_seq + len(extra),
                                               updated_at=self._clock(), **columns)
                    if n != 1:
                        raise _Stale()
                    await statements.insert_outbox(conn, game_id, slot.outbox_seq, extra,
                                                   self._clock())
            except Exception as exc:
                if _conflict(exc):
                    raise _Stale() from exc
                raise

        async with slot.lock:
            for attempt in range(ATTEMPTS):
                await self._loaded(game_id, slot)
                try:
                    _, cancelled = await _settle(write())
                except _Stale as stale:
                    slot.state = None
                    if stale.__cause__ is not None:
                        if attempt == ATTEMPTS - 1:
                            raise stale.__cause__ from None
                        await _backoff(attempt)
                    continue
                except BaseException:
                    slot.state = None
                    raise
                slot.outbox_seq += len(extra)
                if slot.info is not None:
                    slot.info = _patched(slot.info, patch)
                break
            else:
                raise RuntimeError(f"game {game_id} keeps changing under us")
        if extra:
            self._notify_outbox()
        if cancelled:
            raise asyncio.CancelledError()

    async def _commit(self, game_id: int, slot: _Slot, old: GameState, out: engine.Outcome,
                      command: Command, extra: list[tuple[str, str]],
                      columns: dict[str, Any], state_json: str) -> int:
        new, now = out.state, self._clock()
        rows = [(EVENT_KIND, _dumps(event_payload(new.seq, e)))
                for e in out.events if self._route(e)]
        for derive in self.outbox_derivers:
            rows += [(i.kind, _dumps(i.payload)) for i in derive(old, new, out.events)]
        for bundle in self.bundlers:
            first, last = bundle(command, old, new, out.events)
            rows = [(k, _dumps(p)) for k, p in first] + rows + [(k, _dumps(p)) for k, p in last]
        rows += extra
        command_json = COMMAND_ADAPTER.dump_json(command).decode()
        events_json = EVENTS_ADAPTER.dump_json(out.events).decode()
        values: dict[str, Any] = {
            "state": state_json, "deadline": new.deadline, "seq": new.seq,
            "outbox_seq": slot.outbox_seq + len(rows), "updated_at": now, **columns,
        }
        # Indexed columns only when they change: an unchanged index entry costs nothing
        # to keep, while SET rewrites it (pages in the WAL, synced on every commit).
        if new.phase is not old.phase:
            values["phase"] = str(new.phase)
        if new.over != old.over:
            values["active"] = not new.over
        if new.over:
            values["active_channel_id"] = None  # frees the channel for the next game
        hooks = list(self.commit_hooks)

        async def write(conn: BaseDBAsyncClient) -> None:
            n = await statements.update_game(conn, game_id, values, seq=old.seq,
                                             outbox_seq=slot.outbox_seq)
            if n != 1:
                raise _Stale()
            await statements.insert_log(conn, game_id, new.seq, command_json, events_json, now)
            await statements.insert_outbox(conn, game_id, slot.outbox_seq, rows, now)
            if [p.uid for p in old.players] != [p.uid for p in new.players]:
                await _seat_players(conn, game_id, slot.guild_id, new)
            if new.phase is PhaseKind.ENDED and old.phase is not PhaseKind.ENDED:
                await _count_stats(conn, slot.guild_id, new)
            if hooks:
                commit = Commit(game_id=game_id, guild_id=slot.guild_id, command=command,
                                old=old, new=new, events=out.events)
                for hook in hooks:
                    await hook(conn, commit)

        try:
            await self._group.run(write)
        except (_Stale, RuleError):
            raise
        except Exception as exc:
            if _conflict(exc):
                raise _Stale() from exc
            raise
        return len(rows)

    async def close(self) -> None:
        """Let the commits in flight finish (call before closing the database)."""
        await self._group.idle()

    async def write(self, work: Callable[[BaseDBAsyncClient], Awaitable[T]]) -> T:
        """Run `work` (database writes only, through the connection it is given) in a
        transaction it may share with commands committing at the same time."""
        return await self._group.run(work)

    # --- reading ---------------------------------------------------------------
    async def state(self, game_id: int) -> GameState:
        """The current state (shared with the cache: treat it as read-only)."""
        slot = self._slot(game_id)
        if slot.state is not None:
            return slot.state
        async with slot.lock:
            return await self._loaded(game_id, slot)

    async def info(self, game_id: int) -> GameInfo:
        cached = self._cached_info(game_id)
        if cached is not None:
            return cached
        row = await Game.get_or_none(id=game_id)
        if row is None:
            raise GameNotFound(game_id)
        return self._seen(GameInfo.of(row))

    async def game_in_channel(self, channel_id: int) -> GameInfo | None:
        """The game running in this channel, if any."""
        game_id = self._channels.get(channel_id)
        cached = self._cached_info(game_id) if game_id is not None else None
        if cached is not None and cached.active and cached.channel_id == channel_id:
            return cached
        row = await Game.get_or_none(active_channel_id=channel_id)
        return self._seen(GameInfo.of(row)) if row else None

    async def last_game_in_channel(self, channel_id: int) -> GameInfo | None:
        """The latest game of this channel, running or over (for /thank, /role after it)."""
        row = await Game.filter(channel_id=channel_id).order_by("-id").first()
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
        rows = await Game.filter(active=True).order_by("id")
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
        guild) is due: derived from the stored state, so it survives restarts."""
        rows = await Game.filter(active=True, deadline__isnull=False) \
            .values_list("id", "guild_id", "state")
        out: dict[int, datetime] = {}
        for gid, guild, text in rows:
            if not self.owned(int(guild)):
                continue
            slot = self._slots.get(int(gid))
            state = slot.state if slot is not None and slot.state is not None \
                else GameState.model_validate_json(str(text))
            due = reminder_at(state)
            if due is not None:
                out[int(gid)] = due
        return out

    async def log(self, game_id: int) -> list[tuple[int, Command, list[Event]]]:
        """The game's EventLog in order: (seq, command, events)."""
        rows = await EventLog.filter(game_id=game_id).order_by("seq") \
            .values_list("seq", "command", "events")
        return [(int(seq), COMMAND_ADAPTER.validate_json(cmd), EVENTS_ADAPTER.validate_json(ev))
                for seq, cmd, ev in rows]

    async def replay(self, game_id: int) -> GameState:
        """Rebuild the state from the seed and the logged commands alone."""
        row = await Game.get_or_none(id=game_id)
        if row is None:
            raise GameNotFound(game_id)
        state = engine.create_game(seed=row.seed, master=row.master_id, title=row.title,
                                   plot=row.plot, options=Options.model_validate_json(row.options))
        for seq, command, _ in await self.log(game_id):
            state = engine.apply(state, command).state
            if state.seq != seq:
                raise ReplayMismatch(f"game {game_id}: log seq {seq} replays to {state.seq}")
        return state

    async def verify(self, game_id: int) -> GameState:
        """Replay and compare with the stored state byte for byte; raise ReplayMismatch."""
        replayed = await self.replay(game_id)
        row = await Game.get(id=game_id)
        if replayed.model_dump_json() != row.state or replayed.seq != row.seq:
            raise ReplayMismatch(f"game {game_id}: stored state differs from its replay")
        return replayed

    # --- guild preferences -----------------------------------------------------
    async def guild_language(self, guild_id: int, default: str = "ru") -> str:
        row = await GuildSettings.get_or_none(guild_id=guild_id)
        return row.language if row else default

    async def set_guild_language(self, guild_id: int, language: str) -> None:
        # Single statements, no read-then-write transaction: safe beside other processes
        # (two inserts of one guild meet ON CONFLICT DO NOTHING, then the UPDATE wins).
        values = {"language": language, "updated_at": self._clock()}
        if await GuildSettings.filter(guild_id=guild_id).update(**values):
            return
        await GuildSettings.bulk_create([GuildSettings(guild_id=guild_id, language=language)],
                                        ignore_conflicts=True)
        await GuildSettings.filter(guild_id=guild_id).update(**values)

    # --- internals -------------------------------------------------------------
    def forget(self, game_id: int | None = None) -> None:
        """Drop cached states (all, or one game's) so the next access reads the database."""
        slots = self._slots.values() if game_id is None else [self._slot(game_id)]
        for slot in slots:
            slot.state = None

    def _cached_info(self, game_id: int) -> GameInfo | None:
        """The cached GameInfo, while the game's state is cached too (else None)."""
        slot = self._slots.get(game_id)
        if slot is None or slot.state is None:
            return None
        return slot.info

    def _seen(self, info: GameInfo) -> GameInfo:
        if info.active:
            self._channels[info.channel_id] = info.id
        return info

    def _slot(self, game_id: int) -> _Slot:
        slot = self._slots.get(game_id)
        if slot is None:
            slot = self._slots[game_id] = _Slot()
        return slot

    async def _loaded(self, game_id: int, slot: _Slot) -> GameState:
        if slot.state is None:
            row = await Game.get_or_none(id=game_id)
            if row is None:
                raise GameNotFound(game_id)
            slot.state, slot.state_json = GameState.model_validate_json(row.state), row.state
            slot.outbox_seq, slot.guild_id = row.outbox_seq, row.guild_id
            slot.info = self._seen(GameInfo.of(row))
        return slot.state

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


async def _settle(commit: Coroutine[Any, Any, T]) -> tuple[T, bool]:
    """Run a transaction to its end even if our caller is cancelled meanwhile.

    A cancellation inside the ORM's BEGIN can leave its connection lock taken for
    good (tortoise 1.1.9, SQLite), and a cancelled commit leaves us not knowing
    whether the command landed. So the commit runs in its own task; the caller
    learns of its own cancellation (True) only once the outcome is known.
    """
    task = asyncio.ensure_future(commit)
    cancelled = False
    while not task.done():
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            cancelled = True
        except BaseException:
            pass  # the task's own error: task.result() re-raises it
    return task.result(), cancelled


def _patched(info: GameInfo, patch: DiscordPatch | None) -> GameInfo:
    """`info` after writing `patch` (the same columns DiscordPatch.columns() writes)."""
    if patch is None:
        return info
    changes: dict[str, Any] = {}
    for name in patch.model_fields_set:
        value = getattr(patch, name)
        if name in ("private_channels", "live_messages"):
            value = {str(k): int(v) for k, v in (value or {}).items()}
        elif name == "language" and value is None:
            continue
        changes[name] = value
    return replace(info, **changes)


def event_payload(seq: int, event: Event) -> dict[str, Any]:
    """An event's outbox payload; `files` (if any) say what files to attach when it is
    delivered (built then from committed data: core.archive.files_for)."""
    payload: dict[str, Any] = {"seq": seq, "event": event.model_dump(mode="json")}
    files = files_for(event)
    if files:
        payload["files"] = files
    return payload


def _dumps(payload: Any) -> str:
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))


async def _seat_players(conn: BaseDBAsyncClient, game_id: int, guild_id: int,
                        state: GameState) -> None:
    """Mirror the seating: few writes, only when someone joins, leaves or is replaced."""
    await GamePlayer.filter(game_id=game_id).using_db(conn).delete()
    seats = [GamePlayer(game_id=game_id, guild_id=guild_id, user_id=p.uid, seat=i)
             for i, p in enumerate(state.players)]
    if seats:
        await GamePlayer.bulk_create(seats, using_db=conn)


async def _count_stats(conn: BaseDBAsyncClient, guild_id: int, state: GameState) -> None:
    """One finished game (and a win, if the player's team won) for everybody seated.

    Safe beside other writers: missing rows are inserted with ON CONFLICT DO NOTHING
    (two games ending at once in one guild cannot both create a row), the rows are
    then locked in id order (PostgreSQL; SQLite holds its one write lock already) and
    the counters move by atomic `x = x + 1` updates.
    """
    uids = sorted({p.uid for p in state.players})
    if not uids:
        return
    await UserStats.bulk_create([UserStats(guild_id=guild_id, user_id=uid) for uid in uids],
                                ignore_conflicts=True, using_db=conn)
    rows = await UserStats.filter(guild_id=guild_id, user_id__in=uids).order_by("id") \
        .select_for_update().using_db(conn)
    await UserStats.filter(guild_id=guild_id, user_id__in=uids).using_db(conn) \
        .update(games=F("games") + 1)
    sides = {p.uid: str(p.side) for p in state.players
             if p.team is not None and p.team in state.winners and p.side is not None}
    for row in rows:
        side = sides.get(row.user_id)
        if side is None:
            continue
        by_side: dict[str, int] = json.loads(row.wins_by_side)
        by_side[side] = by_side.get(side, 0) + 1
        await UserStats.filter(id=row.id).using_db(conn).update(
            wins=F("wins") + 1, wins_by_side=json.dumps(by_side, sort_keys=True))
