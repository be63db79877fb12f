"""OutboxWorker: delivers what the service committed, in order, at least once.

Entries are written in the command's own transaction (see service.py), so a
crash can delay a message but never lose it. Per game the order is strict:
entry N+1 is not tried before N is delivered or parked. Games are served by
separate tasks, so a slow or failing channel does not hold back other games.
Delivery is at-least-once (a crash between sending and marking repeats the
send); `OutboxEntry.key` names the message stably, and the Discord deliverer turns it
into the message nonce Discord deduplicates by (cogs/delivery/deliverer.py), so a repeated post
returns the first one instead of posting twice.

Coalescing: an entry whose payload names a `coalesce` key (e.g. the edits of one
live message) is dropped, unsent, while a later pending entry of the same kind has
the same key: only the latest version of a message goes out, however many commands
changed it meanwhile.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cached_property
from typing import Any

from tortoise.queryset import QuerySet

from core.game.events import Event
from core.storage import statements
from core.storage.db import background, reader
from core.storage.kinds import EventHead, head
from core.storage.models import DELIVERED, PARKED, PENDING, Outbox
from core.storage.service import ANSWERED, EVENT_KIND, GameService, GuildFilter
from core.storage.statements import Script
from core.storage.timing import cancel_all, doze, utcnow
from core.storage.turns import FairSlots, shares

log = logging.getLogger(__name__)
COALESCE_RECHECK = 0.2  # seconds: how often a held-back coalescable head is looked at
MIN_RETRY = 0.05  # seconds: the shortest wait a RetryAfter sets


class RetryAfter(Exception):
    """Raised by `deliver` when the destination says to wait: try again after `seconds`.

    Not counted as a failed attempt: being told to wait says nothing about the message.
    """

    def __init__(self, seconds: float) -> None:
        super().__init__(f"retry after {seconds}s")
        self.seconds = max(0.0, float(seconds))


class Hold(Exception):
    """Raised by `deliver`: the head gathers the entries committed after it into one post
    (the master's desk window, docs/delivery.md); offer the lane again after `seconds`, or
    as soon as an entry is committed behind it. Nothing is stored: a new process works
    the hold out again from the commit times."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"held {seconds}s")
        self.seconds = max(MIN_RETRY, float(seconds))


class Undeliverable(Exception):
    """Raised by `deliver` when retrying cannot help (the channel is gone): the entry is
    parked at once and the master told, instead of after every backoff."""


@dataclass(frozen=True)
class OutboxEntry:
    id: int
    game_id: int
    ordinal: int
    kind: str
    payload: dict[str, Any]
    attempts: int  # failed attempts so far
    created_at: datetime | None = None  # when its command committed it
    #: steps of a multi-request entry that went out in an earlier try (durable: a try
    #: that stopped half-way, in this process or before a restart, resumes after them)
    progress: frozenset[str] = frozenset()

    @property
    def key(self) -> tuple[int, int]:
        """Stable identity of the message: (game, ordinal)."""
        return (self.game_id, self.ordinal)

    @property
    def answered(self) -> bool:
        """Held for its command's own response: delivered here only if that failed (or
        the process stopped before marking it), so it may be in its channel already."""
        return bool(self.payload.get("answered"))

    @property
    def reply(self) -> str | None:
        """The identity of the response that may have answered it (an interaction's id,
        core/storage/commit.py): how that response is found, and nothing else."""
        value = self.payload.get("reply")
        return None if value is None else str(value)

    def files(self) -> list[dict[str, Any]]:
        """Files to attach to this entry's message (core.sight.record.files_for), if any."""
        return list(self.payload.get("files") or [])

    @cached_property
    def head(self) -> EventHead | None:
        """An event entry's kind, audience and log number, read once per entry (lanes
        and the desk's gathering ask it many times); None for other kinds."""
        return head(self)

    def event(self) -> Event | None:
        """The engine event of an 'event' entry (else None)."""
        if self.kind != EVENT_KIND:
            return None
        return Event.model_validate(self.payload["event"])


Deliver = Callable[[OutboxEntry], Awaitable[None]]
# Given a game's next due entries in order, deliver a prefix of them (at least the first)
# and say how many: lets the deliverer send one message for several entries.
DeliverBatch = Callable[[list[OutboxEntry]], Awaitable[int]]
NotifyParked = Callable[[OutboxEntry, str], Awaitable[None]]


def exponential_backoff(base: float = 2.0, cap: float = 600.0) -> Callable[[int], float]:
    """Seconds to wait after the n-th failure: base, 2*base, 4*base ... up to cap."""
    return lambda failures: min(cap, base * 2 ** max(0, failures - 1))


class OutboxWorker:
    def __init__(
        self, deliver: Deliver, *, notify_parked: NotifyParked | None = None,
        max_attempts: int = 8, backoff: Callable[[int], float] | None = None,
        now: Callable[[], datetime] = utcnow, poll_interval: float = 30.0,
        max_concurrent: int = 16, service: GameService | None = None,
        deliver_batch: DeliverBatch | None = None, batch_size: int | Sequence[int] = 10,
        owns: GuildFilter | None = None, lane: Callable[[OutboxEntry], int] | None = None,
        lanes: int = 1, weights: Sequence[float] | None = None,
        names: Sequence[str] | None = None, late_after: float | Sequence[float] = 60.0,
        health_interval: float = 300.0, retention: timedelta | None = timedelta(days=7),
        prune_interval: float = 3600.0, stuck_after: float = 1800.0,
    ) -> None:
        """`service`, if given, wakes the worker whenever it commits new entries;
        `max_concurrent` bounds deliveries in flight across all games. With
        `deliver_batch`, up to `batch_size` due entries of a game are offered at once
        and those it consumed are marked delivered together (given per lane: a lane
        whose deliverer gathers a window's lines into one post must see them all).
        `owns` (default: the service's) limits the worker to games of the guilds this
        process serves: shards sharing one database never deliver (or reorder) each
        other's entries.
        Lanes: `_setup_lanes`; lateness, health log and pruning: `_setup_watch`.
        An entry told to wait (RetryAfter) that has made no progress for `stuck_after`
        seconds is parked with its reason (a window that never opens must not hold its
        lane, its game's end or other games for ever)."""
        self._deliver = deliver
        self._setup_batches(deliver_batch, batch_size, lanes)
        self._notify_parked = notify_parked
        self._max_attempts = max_attempts
        self._backoff = backoff or exponential_backoff()
        self._now = now
        self._poll = poll_interval
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._serving: dict[tuple[int, int], asyncio.Task[None]] = {}
        # lane of each pending entry seen (by row id): payloads are read once
        self._lane_of: dict[int, int] = {}
        # (game, lane) pairs a scan found due while they were being served: their task
        # asks for a rescan when it ends (the others need none: a commit wakes the scan)
        self._skipped: set[tuple[int, int]] = set()
        # lanes held by their deliverer (Hold): the newest entry each had seen, the
        # event a scan sets when a newer one is committed, and when the hold ends (the
        # worker's clock); the newest entry per lane
        self._holds: dict[tuple[int, int], tuple[int, asyncio.Event, datetime]] = {}
        self._seen: dict[tuple[int, int], int] = {}
        self._newest: dict[tuple[int, int], int] = {}
        self._setup_lanes(lane, lanes, max_concurrent, weights, names)
        self._setup_watch(late_after, health_interval, retention, prune_interval)
        self._setup_progress(stuck_after)
        self.delivered = 0
        self.parked = 0
        self.superseded = 0  # coalesced entries dropped unsent
        self._started = now()
        self._owns = owns if owns is not None or service is None else service.owns
        self._service = service
        if service is not None:
            self._listen(service)

    def _setup_lanes(
        self, lane: Callable[[OutboxEntry], int] | None, lanes: int, max_concurrent: int,
        weights: Sequence[float] | None, names: Sequence[str] | None,
    ) -> None:
        """`lane` sorts entries into `lanes` lanes (0: public announcements, then private
        pushes, ..., see cogs/delivery/deliverer.py): each game's lanes are served separately,
        each in strict ordinal order. The `max_concurrent` slots are split between the
        lanes by `weights` (core/storage/turns.py): the urgent lane gets the largest
        pool, but every lane has its own, which no other lane's work can hold, so no
        lane starves (the deliverer may share what it sends by the same kind of
        weights); within a lane, games take turns (longest waiter first).
        `names` name the lanes in the health log."""
        self._lane = lane or (lambda entry: 0)
        self._lanes = max(1, lanes)
        # each lane its own slots, sized by weight: a lane whose deliveries wait long
        # never holds another's (within a lane, games take turns: FairSlots)
        self._slots = [FairSlots(n) for n in shares(
            max_concurrent, list(weights or [1.0] * self._lanes))]
        self._names = list(names or [str(i) for i in range(self._lanes)])

    def _listen(self, service: GameService) -> None:
        """Woken by the service's commits; with lanes, fed their rows (no re-read of
        every pending row after each commit)."""
        service.outbox_listeners.append(self.wake)
        if self._lanes > 1:
            service.outbox_feeds.append(self.fed)

    def _setup_feed(self) -> None:
        """What the commits fed since the last look, and whether a scan of the whole
        table is owed (a start, a plain wake, the poll interval)."""
        self._fed_pairs: set[tuple[int, int]] = set()
        self._fed_seen: set[tuple[int, int]] = set()
        self._scan_all = True

    def _setup_batches(self, deliver_batch: DeliverBatch | None,
                       batch_size: int | Sequence[int], lanes: int) -> None:
        self._deliver_batch = deliver_batch
        sizes = [batch_size] * max(1, lanes) if isinstance(batch_size, int) \
            else list(batch_size)
        self._batch_sizes = [max(1, n) if deliver_batch is not None else 1 for n in sizes]
        self._batch_size = self._batch_sizes[0]

    def _setup_progress(self, stuck_after: float) -> None:
        """Steps done per entry id in this process, when each entry last moved, and how
        long an entry may be told to wait without moving before it is parked; and what
        the commits fed (`_setup_feed`)."""
        self._setup_feed()
        self._stuck_after = stuck_after
        self._steps: dict[int, set[str]] = {}
        self._moved: dict[int, datetime] = {}

    def _setup_watch(
        self, late_after: float | Sequence[float], health_interval: float,
        retention: timedelta | None, prune_interval: float,
    ) -> None:
        """An entry delivered more than `late_after` seconds after its commit is logged
        and counted (`late`, per lane); every `health_interval` seconds the worker logs
        each lane's backlog and the age of its oldest entry.

        Every `prune_interval` seconds, delivered entries older than `retention` are
        deleted (None: kept forever); pending and parked ones stay. Nothing reads a
        delivered entry again: the archive and replays read the command log.
        `late_after` may be given per lane (a lane that waits for a window on purpose)."""
        self._late_after = [float(late_after)] * self._lanes \
            if isinstance(late_after, int | float) else [float(x) for x in late_after]
        self._health_interval = health_interval
        self._health_at: datetime | None = None
        self._retention = retention
        self._prune_interval = prune_interval
        self._pruned_at: datetime | None = None
        self.pruned = 0  # delivered entries deleted by the periodic prune
        #: per lane: entries delivered later than `late_after`, and the longest wait seen
        self.late = [0] * self._lanes
        self.worst = [0.0] * self._lanes

    async def start(self) -> None:
        """Run in the background; anything left pending by a previous run is resumed."""
        if self._task is None:
            self._started = self._now()
            self._task = asyncio.create_task(self._run(), name="outbox-worker")

    async def stop(self) -> None:
        tasks = [t for t in (self._task, *self._serving.values()) if t is not None]
        self._task = None
        await cancel_all(tasks)
        self._serving.clear()

    def wake(self) -> None:
        """Look at every pending row (a scan of the table)."""
        self._scan_all = True
        self._wake.set()

    def fed(self, game_id: int, guild_id: int, rows: list[tuple[str, str]]) -> None:
        """A commit's rows, as it wrote them: their lanes are served without a scan of
        the table (the scan after every commit was a fifth to a half of a busy shard's
        time). A periodic scan (`poll_interval`) still finds what no feed told."""
        if self._owns is not None and not self._owns(guild_id):
            return
        for kind, payload in rows:
            entry = OutboxEntry(id=0, game_id=game_id, ordinal=0, kind=kind,
                                payload=json.loads(payload), attempts=0)
            self._fed_pairs.add((game_id, self._lane(entry)))
        self._wake.set()

    def recheck(self) -> None:
        """Offer every held lane again now and scan (a test moved its clock past a hold:
        a hold waits in the loop's time, not the worker's clock)."""
        for _, event, _ in self._holds.values():
            event.set()
        self._wake.set()

    def offer(self, game_id: int) -> None:
        """Offer `game_id`'s held lanes again now: what a deliverer held them for is ready
        (a picture drawn), sooner than the hold's end."""
        for (game, _), (_, event, _) in self._holds.items():
            if game == game_id:
                event.set()

    def holding(self, game_id: int) -> frozenset[int]:
        """The lanes of `game_id` whose head a deliverer holds now (`Hold`), by the
        worker's clock."""
        now = self._now()
        return frozenset(lane for (game, lane), (_, _, until) in self._holds.items()
                         if game == game_id and until > now)

    def done(self, entry: OutboxEntry) -> frozenset[str]:
        """The steps of `entry` that went out, in an earlier try or earlier in this one."""
        return frozenset(self._steps.get(entry.id, entry.progress))

    async def progressed(self, entry: OutboxEntry, step: str) -> None:
        """Record that `step` of a multi-request entry went out (a member given the ping
        role, a part posted), durably and at once: no later try, in this process or the
        next, sends it again, and a try cut short by a window resumes after it."""
        steps = self._steps.setdefault(entry.id, set(entry.progress))
        if step in steps:
            return
        steps.add(step)
        self._moved[entry.id] = self._now()
        with background(False):
            await Outbox.filter(id=entry.id).update(progress=json.dumps(sorted(steps)))

    def pending_in(self, game_id: int, lane: int) -> bool:
        """Whether the game had entries pending in `lane` at the worker's last scan (a
        scan sees a command's rows together: an entry committed with the one being
        delivered is known). Lets a deliverer skip a read when there is nothing."""
        pair = (game_id, lane)
        return self._lanes == 1 or pair in self._newest or pair in self._serving \
            or pair in self._fed_seen or pair in self._fed_pairs

    async def pending_of(self, game_id: int, kind: str) -> list[OutboxEntry]:
        """The game's pending entries of one kind, in order, with their progress (what
        an announcement must know of the ping role's changes still under way)."""
        rows = await _read(Outbox.filter(game_id=game_id, status=PENDING, kind=kind)
                           .order_by("ordinal"))
        return [_entry(row) for row in rows]

    async def has_after(self, entry: OutboxEntry, kind: str) -> bool:
        """Whether the entry's game has a row of `kind` after it (pending or delivered)."""
        return await _read(Outbox.filter(game_id=entry.game_id, kind=kind,
                                         ordinal__gt=entry.ordinal)).exists()

    async def drop(self, game_id: int, kinds: Sequence[str]) -> int:
        """Mark the game's pending entries of `kinds` delivered unsent: what they would
        do is moot (the ping role's changes of a game whose role is being deleted)."""
        rows = await _read(Outbox.filter(game_id=game_id, status=PENDING, kind__in=kinds))
        ids = [row.id for row in rows]
        if ids:
            await self._mark_delivered(ids)
            self.superseded += len(ids)
        return len(ids)

    @property
    def owns(self) -> GuildFilter | None:
        """Whose entries this worker delivers (None: every guild's)."""
        return self._owns

    def set_clock(self, now: Callable[[], datetime]) -> None:
        """Read the time from `now` from here on (a test's virtual clock), and look now."""
        self._now = now
        self._wake.set()

    async def idle(self, within: float = 10.0) -> None:
        """Wait until nothing is due (tests, shutdown); entries waiting on backoff count."""
        loop = asyncio.get_running_loop()
        end = loop.time() + within
        while loop.time() < end:
            due = await self._pending_games(next_attempt_at__lte=self._now())
            if not due and not self._serving:
                return
            self.wake()
            await asyncio.sleep(0.005)
        raise TimeoutError("outbox still busy")

    async def pending_elsewhere(self, entry: OutboxEntry, ignore: Sequence[int] = (),
                                lanes: Collection[int] | None = None, *,
                                replies: bool = True) -> bool:
        """Whether an earlier entry of the entry's game waits in another lane (of
        `lanes` alone, if given; lanes in `ignore` not waited for), so what must follow
        it, like closing a game's private channels, waits too. `replies=False`: an entry
        held for its command's own reply (a vote's record) is not waited for."""
        if self._lanes == 1:
            return False
        mine = self._lane(entry)
        rows = await _read(Outbox.filter(game_id=entry.game_id, status=PENDING,
                                         ordinal__lt=entry.ordinal))
        if not replies:
            now = self._now()
            rows = [row for row in rows if not (row.payload.startswith(ANSWERED)
                                                and _aware(row.next_attempt_at) > now)]
        return any(lane != mine and lane not in ignore and (lanes is None or lane in lanes)
                   for lane in (self._lane_of_row(row) for row in rows))

    async def behind(self, game_id: int, ordinal: int) -> bool:
        """Whether an earlier entry of the game waits in the lane of the entry `ordinal`
        (an entry answered out of band would then overtake it)."""
        rows = await _read(Outbox.filter(game_id=game_id, status=PENDING,
                                         ordinal__lte=ordinal))
        mine = [row for row in rows if row.ordinal == ordinal]
        if not mine:
            return False
        lane = self._lane(_entry(mine[0]))
        return any(self._lane(_entry(row)) == lane for row in rows if row.ordinal < ordinal)

    async def prune(self, keep: timedelta = timedelta(days=7)) -> int:
        """Delete delivered entries older than `keep` (parked ones stay for the master)."""
        cutoff = self._now() - keep
        return await Outbox.filter(status=DELIVERED, delivered_at__lt=cutoff).delete()

    async def _run(self) -> None:
        with background():  # its scans and reads (and its serving tasks') yield to commands
            try:
                await self._release_held()
            except Exception:
                log.exception("outbox: releasing held entries failed")
            await self._loop()

    async def _release_held(self) -> None:
        """Entries held for a caller's own response (core/storage/commit.py ANSWERED)
        by an earlier process are due now: that caller is gone. (The deliverer looks for
        them in their channel first: the response may have gone out.)"""
        now = self._now()
        rows = await _read(Outbox.filter(status=PENDING, next_attempt_at__gt=now,
                                         payload__startswith=ANSWERED))
        ids = [row.id for row in rows if _aware(row.created_at) < self._started]
        if ids:
            await Outbox.filter(id__in=ids).update(next_attempt_at=now)

    async def _loop(self) -> None:
        while True:
            self._wake.clear()
            if self._lanes == 1:
                try:
                    games = await self._pending_games()
                except Exception:
                    log.exception("outbox scan failed")
                    games = []
                for gid in games:
                    if (gid, 0) not in self._serving:
                        self._serving[gid, 0] = asyncio.create_task(self._serve(gid, 0))
                    else:
                        self._skipped.add((gid, 0))
            else:
                fed, self._fed_pairs = self._fed_pairs, set()
                scan, self._scan_all = self._scan_all or not fed, False
                try:
                    pending = await self._pending_lanes() if scan else sorted(
                        fed, key=lambda p: (p[1], p[0]))
                except Exception:
                    log.exception("outbox scan failed")
                    pending = []
                if scan:
                    self._fed_seen.clear()
                self._fed_seen |= fed
                for gid, lane in pending:
                    if (gid, lane) not in self._serving:
                        self._serving[gid, lane] = asyncio.create_task(self._serve(gid, lane))
                    else:
                        self._skipped.add((gid, lane))
                        self._nudge((gid, lane), fed=(gid, lane) in fed)
            await self._health_check()
            await self._prune_check()
            await doze(self._wake, self._poll)
            if not self._wake.is_set():
                self._scan_all = True  # the poll interval: look at the whole table

    async def _pending_games(self, **filters: Any) -> list[int]:
        """Games (of owned guilds) with pending entries matching `filters`."""
        query = _read(Outbox.filter(status=PENDING, **filters).distinct())
        if self._owns is None:
            return [int(g) for g in await query.values_list("game_id", flat=True)]  # type: ignore[call-overload]
        owns = self._owns
        rows = await query.values_list("game_id", "game__guild_id")
        return [int(g) for g, guild in rows if owns(int(guild))]

    async def _pending_lanes(self) -> list[tuple[int, int]]:
        """(game, lane) pairs with pending entries, urgent lanes first; each entry's
        payload is read once to learn its lane."""
        query = _read(Outbox.filter(status=PENDING))
        if self._owns is None:
            rows = [(int(i), int(g), 0) for i, g in
                    await query.values_list("id", "game_id")]
        else:
            owns = self._owns
            rows = [(int(i), int(g), 0) for i, g, guild in
                    await query.values_list("id", "game_id", "game__guild_id")
                    if owns(int(guild))]
        unknown = [i for i, _, _ in rows if i not in self._lane_of]
        for start in range(0, len(unknown), 500):
            for row in await _read(Outbox.filter(id__in=unknown[start:start + 500])):
                self._lane_of[row.id] = self._lane(_entry(row))
        live = {i for i, _, _ in rows}
        self._lane_of = {i: lane for i, lane in self._lane_of.items() if i in live}
        pairs = {(g, self._lane_of[i]) for i, g, _ in rows if i in self._lane_of}
        newest: dict[tuple[int, int], int] = {}
        for i, g, _ in rows:
            if i in self._lane_of:
                pair = (g, self._lane_of[i])
                newest[pair] = max(newest.get(pair, 0), i)
        self._newest = newest
        return sorted(pairs, key=lambda p: (p[1], p[0]))

    async def _due_rows(self, game_id: int, lane: int) -> tuple[list[Outbox], bool]:
        """The game's next pending entries of `lane` (up to a batch) in ordinal order, and
        whether that is all the game has pending in the lane."""
        if self._lanes == 1:
            rows = await _read(Outbox.filter(game_id=game_id, status=PENDING)
                               .order_by("ordinal").limit(self._batch_size))
            return rows, len(rows) < self._batch_size
        rows = await _read(Outbox.filter(game_id=game_id, status=PENDING).order_by("ordinal"))
        mine = [row for row in rows if self._lane_of_row(row) == lane]
        self._seen[game_id, lane] = max((row.id for row in mine), default=0)
        size = self._batch_sizes[lane] if lane < len(self._batch_sizes) else self._batch_size
        return mine[:size], len(mine) <= size

    def _lane_of_row(self, row: Outbox) -> int:
        """The row's lane, its payload parsed only the first time (the scan keeps them)."""
        known = self._lane_of.get(row.id)
        if known is None:
            known = self._lane_of[row.id] = self._lane(_entry(row))
        return known

    async def _serve(self, game_id: int, lane: int = 0) -> None:
        """Deliver one game's entries of one lane strictly in ordinal order until none is
        due (a slot is held only while an attempt runs, not while waiting out a backoff)."""
        done = False
        try:
            while True:
                rows, complete = await self._due_rows(game_id, lane)
                if not rows:
                    done = True
                    return
                head = rows[0]
                if await self._superseded(head, rows, complete):
                    await self._mark_delivered([head.id])
                    self.superseded += 1
                    continue
                wait = (head.next_attempt_at - self._now()).total_seconds()
                if wait > 0:
                    # A message held back (an edit made too soon) may meanwhile be
                    # superseded by a newer version: look again soon, not at `wait`'s end.
                    # So may an entry its caller answers (held) be marked delivered.
                    soon = COALESCE_RECHECK if _coalesce_key(head.payload) \
                        or head.payload.startswith(ANSWERED) else self._poll
                    await asyncio.sleep(min(wait, soon))
                    continue
                due = [head]
                for row in rows[1:]:
                    if row.next_attempt_at > self._now():
                        break
                    due.append(row)
                try:
                    if len(due) > 1:
                        sent = await self._attempt_batch(due, lane)
                    else:
                        sent = await self._attempt(head, lane)
                except Hold as hold:
                    await self._held((game_id, lane), hold.seconds)
                    continue
                if complete and sent == len(rows):
                    done = True
                    return  # all there was went out; the scan finds newer ones
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("outbox of game %s stalled; will rescan", game_id)
            await asyncio.sleep(min(self._poll, 1.0))
        finally:
            self._serving.pop((game_id, lane), None)
            if (game_id, lane) in self._skipped or not done:
                # look again: a scan or a feed passed this lane over while it was served
                # (entries may have arrived as it was finishing), or it stopped early
                self._skipped.discard((game_id, lane))
                self._fed_pairs.add((game_id, lane))
                self._wake.set()

    async def _held(self, pair: tuple[int, int], seconds: float) -> None:
        """Wait out a deliverer's hold (no slot held): `seconds`, or until a scan finds an
        entry committed behind the held ones (`_nudge`)."""
        event = asyncio.Event()
        self._holds[pair] = (self._seen.get(pair, 0), event,
                             self._now() + timedelta(seconds=seconds))
        try:
            await doze(event, min(seconds, self._poll))
        finally:
            self._holds.pop(pair, None)

    def _nudge(self, pair: tuple[int, int], *, fed: bool = False) -> None:
        """A held lane with a newer entry than it had seen (a scan's, or one a commit
        fed just now) is offered again at once."""
        held = self._holds.get(pair)
        if held is not None and (fed or self._newest.get(pair, 0) > held[0]):
            held[1].set()

    async def _superseded(self, head: Outbox, rows: list[Outbox], complete: bool) -> bool:
        """Whether a later pending entry carries a newer version of the head's message."""
        key = _coalesce_key(head.payload)
        if key is None:
            return False
        if any(r.kind == head.kind and _coalesce_key(r.payload) == key for r in rows[1:]):
            return True
        if complete:
            return False  # the rows fetched were all there is
        later = await _read(Outbox.filter(game_id=head.game_id, status=PENDING,  # type: ignore[attr-defined]
                                          kind=head.kind, ordinal__gt=head.ordinal)
                            ).values_list("payload", flat=True)
        return any(_coalesce_key(str(p)) == key for p in later)

    async def _attempt(self, row: Outbox, lane: int = 0) -> int:
        """Deliver one entry; how many went out (0 or 1)."""
        entry = _entry(row)
        try:
            async with self._slots[lane]:
                await self._deliver(entry)
        except (asyncio.CancelledError, Hold):
            raise
        except Exception as exc:
            await self._not_delivered(row, entry, exc)
            return 0
        await self._mark_delivered([row.id])
        self.delivered += 1
        self._waited([row], lane)
        return 1

    async def _attempt_batch(self, rows: list[Outbox], lane: int = 0) -> int:
        """Offer several due entries; a failure counts against the first one only.
        Returns how many went out."""
        assert self._deliver_batch is not None
        entries = [_entry(row) for row in rows]
        head, first = rows[0], entries[0]
        try:
            async with self._slots[lane]:
                taken = max(1, min(len(rows), await self._deliver_batch(entries)))
        except (asyncio.CancelledError, Hold):
            raise
        except Exception as exc:
            await self._not_delivered(head, first, exc)
            return 0
        await self._mark_delivered([row.id for row in rows[:taken]])
        self.delivered += taken
        self._waited(rows[:taken], lane)
        return taken

    def _waited(self, rows: list[Outbox], lane: int) -> None:
        """Count and log entries that waited longer than `late_after` since their commit."""
        now = self._now()
        for row in rows:
            waited = (now - _aware(row.created_at)).total_seconds()
            self.worst[lane] = max(self.worst[lane], waited)
            if waited > self._late_after[lane]:
                self.late[lane] += 1
                log.warning("outbox: entry %s of game %s (%s) delivered after %.0f s in "
                            "lane %s (over %.0f s)", row.ordinal, row.game_id,  # type: ignore[attr-defined]
                            row.kind, waited, self._names[lane], self._late_after[lane])

    async def health(self) -> list[LaneHealth]:
        """Each lane's pending entries (of owned guilds) and the age of its oldest."""
        return await backlog(self._lane, self._lanes, self._now(), self._owns, self._names)

    async def _prune_check(self) -> None:
        now = self._now()
        if self._retention is None or (self._pruned_at is not None and (
                now - self._pruned_at).total_seconds() < self._prune_interval):
            return
        self._pruned_at = now
        try:
            with background(False):
                removed = await self.prune(self._retention)
        except Exception:
            log.exception("outbox prune failed")
            return
        self.pruned += removed
        if removed:
            log.info("outbox: pruned %s delivered entries older than %s", removed,
                     self._retention)

    async def _health_check(self) -> None:
        now = self._now()
        if self._health_at is not None and \
                (now - self._health_at).total_seconds() < self._health_interval:
            return
        self._health_at = now
        try:
            lanes = await self.health()
        except Exception:
            log.exception("outbox health check failed")
            return
        log.info("%s", health_line(lanes, self.late, await parked_count(self._owns)))

    async def _mark_delivered(self, ids: list[int]) -> None:
        """In a transaction shared with commands committing meanwhile (if the service is
        known): a delivery then costs no sync of its own."""
        now = self._now()
        for i in ids:
            self._steps.pop(i, None)
            self._moved.pop(i, None)
        with background(False):  # commands may share this commit: it is not theirs to wait on
            if self._service is not None:
                await self._service.write(Script(None, (
                    statements.outbox_delivered(statements.default_dialect(), ids, now),)))
            else:
                await Outbox.filter(id__in=ids).update(status=DELIVERED, delivered_at=now)

    async def _not_delivered(self, row: Outbox, entry: OutboxEntry, exc: Exception) -> None:
        """Wait as the deliverer asks (RetryAfter: no attempt counted), park at once
        (Undeliverable), or count a failed attempt."""
        if isinstance(exc, RetryAfter) and self._stalled(row, entry):
            await self._failed(row, entry, f"no progress for {self._stuck_after:.0f} s, "
                               f"still told to wait: {exc}", final=True)
            return
        if isinstance(exc, RetryAfter):
            # at least MIN_RETRY: a wait of microseconds (a clock's rounding) would make
            # the entry come straight back, over and over
            row.next_attempt_at = self._now() + timedelta(seconds=max(exc.seconds, MIN_RETRY))
            row.last_error = str(exc)
            await row.save(update_fields=["next_attempt_at", "last_error"])
            return
        await self._failed(row, entry, f"{type(exc).__name__}: {exc}",
                           final=isinstance(exc, Undeliverable))

    def _stalled(self, row: Outbox, entry: OutboxEntry) -> bool:
        """Whether an entry told to wait has made no progress for `stuck_after` (since
        its commit, or its last step in this process)."""
        since = self._moved.get(entry.id) or max(_aware(row.created_at), self._started)
        return (self._now() - since).total_seconds() > self._stuck_after

    async def _failed(self, row: Outbox, entry: OutboxEntry, error: str, *,
                      final: bool = False) -> None:
        row.attempts += 1
        row.last_error = error[:2000]
        if row.attempts < self._max_attempts and not final:
            row.next_attempt_at = self._now() + timedelta(seconds=self._backoff(row.attempts))
            log.warning("outbox %s of game %s failed (attempt %s): %s",
                        entry.ordinal, entry.game_id, row.attempts, error)
            await row.save(update_fields=["attempts", "last_error", "next_attempt_at"])
            return
        row.status = PARKED
        await row.save(update_fields=["attempts", "last_error", "status"])
        self._steps.pop(entry.id, None)
        self._moved.pop(entry.id, None)
        self.parked += 1
        log.error("outbox %s of game %s parked after %s attempts: %s",
                  entry.ordinal, entry.game_id, row.attempts, error)
        if self._notify_parked is not None:
            parked = OutboxEntry(id=entry.id, game_id=entry.game_id, ordinal=entry.ordinal,
                                 kind=entry.kind, payload=entry.payload, attempts=row.attempts)
            try:
                await self._notify_parked(parked, error)
            except Exception:
                log.exception("notify_parked failed for outbox %s of game %s",
                              entry.ordinal, entry.game_id)


def _read(query: QuerySet[Outbox]) -> QuerySet[Outbox]:
    """A read of the outbox on the reader connection (core.storage.db.reader), if any:
    it does not wait for the writer (commands, commits) nor make them wait."""
    connection = reader()
    return query if connection is None else query.using_db(connection)


def _coalesce_key(payload: str) -> str | None:
    if '"coalesce"' not in payload:  # most entries: no parse needed
        return None
    key = json.loads(payload).get("coalesce")
    return key if isinstance(key, str) else None


def _entry(row: Outbox) -> OutboxEntry:
    return OutboxEntry(id=row.id, game_id=row.game_id, ordinal=row.ordinal,  # type: ignore[attr-defined]
                       kind=row.kind, payload=json.loads(row.payload), attempts=row.attempts,
                       created_at=row.created_at,
                       progress=frozenset(json.loads(row.progress)) if row.progress
                       else frozenset())


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


@dataclass(frozen=True)
class LaneHealth:
    """One lane's backlog: pending entries and the age of the oldest (seconds)."""

    name: str
    pending: int
    oldest: float | None


async def backlog(lane: Callable[[OutboxEntry], int], lanes: int, now: datetime,
                  owns: GuildFilter | None = None, names: Sequence[str] | None = None
                  ) -> list[LaneHealth]:
    """The outbox's pending entries per lane, read from the database (the worker's health
    line, and `mafia-bot status` without a running bot)."""
    names = list(names or [str(i) for i in range(lanes)])
    count = [0] * lanes
    oldest: list[datetime | None] = [None] * lanes
    rows = await _read(Outbox.filter(status=PENDING).prefetch_related("game")) \
        if owns is not None else await _read(Outbox.filter(status=PENDING))
    for row in rows:
        if owns is not None and not owns(int(row.game.guild_id)):
            continue
        i = min(max(0, lane(_entry(row))), lanes - 1) if lanes > 1 else 0
        count[i] += 1
        created = _aware(row.created_at)
        current = oldest[i]
        if current is None or created < current:
            oldest[i] = created
    return [LaneHealth(names[i], count[i],
                       None if oldest[i] is None
                       else max(0.0, (now - oldest[i]).total_seconds()))  # type: ignore[operator]
            for i in range(lanes)]


async def parked_count(owns: GuildFilter | None = None) -> int:
    """Entries parked (given up on, the master told) of owned guilds: the health line
    and `mafia-bot status` count them, so a stuck kind of work is seen."""
    if owns is None:
        return await _read(Outbox.filter(status=PARKED)).count()
    rows = await _read(Outbox.filter(status=PARKED)).values_list("game__guild_id")
    return sum(1 for (guild,) in rows if owns(int(guild)))


def health_line(lanes: list[LaneHealth], late: Sequence[int] | None = None,
                parked: int | None = None, stuck: float | None = None) -> str:
    """"outbox: announce 0 pending; places 3 pending, oldest 12 s (late 1); roles 1
    pending, oldest 1000 s, stuck (over 900 s); ...; parked 1": with `stuck`, a lane
    whose oldest entry is older than that is called stuck, so nobody has to know the
    threshold to read the line."""
    parts = []
    for i, h in enumerate(lanes):
        part = f"{h.name} {h.pending} pending"
        if h.oldest is not None:
            part += f", oldest {h.oldest:.0f} s"
            if stuck is not None and h.oldest > stuck:
                part += f", stuck (over {stuck:.0f} s)"
        if late is not None and i < len(late) and late[i]:
            part += f" (late {late[i]})"
        parts.append(part)
    if parked:
        parts.append(f"parked {parked}")
    return "outbox: " + "; ".join(parts)
