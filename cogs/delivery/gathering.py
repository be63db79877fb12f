"""Bursts cost one request per channel (issue 30): the master's desk and the team
channels gather their lines into one post (docs/delivery.md).

A line that only keeps its reader informed (a night order, a purchase, the clan's "X
orders the kill of Y") waits up to its channel's window for the lines committed after
it; a line that asks for attention (one the master chose to be pinged for, the clan's
turn) or that closes a phase goes at once and carries the lines gathered before it. A
run is the same on every try (fixed by commit times and order, never by when it is
tried), so its post keeps the first entry's nonce across a crash.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from datetime import UTC, datetime

from core.game.events import EventKind
from core.sight.deskpings import ping_kind
from core.sight.destinations import destination
from core.storage.outbox import OutboxEntry
from core.storage.timing import utcnow

#: seconds added to a window for the commits stamped inside it still under way
MARGIN = 0.5
#: how many pending entries the worker offers a gathering lane (the desk, the team
#: channels) at once: a run can only close on a line it is shown, so the offer must
#: hold a window's lines. With the default 10 a night of 12 orders, a prod and the
#: re-sent ones hid "every order is in" and the phase change behind ten gathered lines,
#: and the desk sat out its minute (issue 40). An offer this full never waits: what
#: stands behind it is unseen, and may be a line that does not wait.
GATHERED_BATCH = 200
DESK = "desk"
#: desk lines that keep the master informed while the phase runs: they wait for the
#: window. Everything else on the desk (the phase change's summary, missed turns,
#: absences, the deal, replacements) goes at once with what was gathered before it.
DESK_GATHERED: frozenset[str] = frozenset({
    EventKind.DESK_ORDER, EventKind.DESK_PURCHASE, EventKind.DESK_SPELL,
    EventKind.DESK_SPELL_BLOCKED, EventKind.DESK_BUY_ORDERED, EventKind.ANON_SENDER,
    EventKind.DESK_STANDBY, EventKind.DESK_SIGHT, EventKind.AWAY_NOTED,
    EventKind.ALL_ORDERS_IN, EventKind.REMINDED})
#: team lines that wait for the team window (the clan coordinates on them)
TEAM_GATHERED: frozenset[str] = frozenset({EventKind.CLAN_ORDER})


def channel_of(entry: OutboxEntry) -> str | None:
    """Which gathering channel an entry posts to: the desk, a team's channel ("team:"
    and its name), or None (not gathered: public, private places, channel set-up)."""
    h = entry.head
    return None if h is None else destination(h.event.kind, h.event.audience).gathered


def _kind(entry: OutboxEntry) -> str:
    h = entry.head
    return "" if h is None else h.event.kind


def _when(entry: OutboxEntry) -> datetime:
    created = entry.created_at
    assert created is not None
    return created if created.tzinfo else created.replace(tzinfo=UTC)


@dataclass
class Gathering:
    """The windows (seconds; 0: each commit's lines as they come) and the clock."""

    desk_window: float = 60.0
    team_window: float = 10.0
    clock: Callable[[], datetime] = field(default=utcnow)

    def window(self, channel: str) -> float:
        return self.desk_window if channel == DESK else self.team_window

    def waits(self, entry: OutboxEntry, pinged: Collection[str]) -> bool:
        """Whether the line may wait for others (the master's chosen pings never do)."""
        kind = _kind(entry)
        if channel_of(entry) == DESK:
            return kind in DESK_GATHERED and ping_kind(kind) not in pinged
        return kind in TEAM_GATHERED

    def run(self, entries: list[OutboxEntry], pinged: Collection[str]
            ) -> list[OutboxEntry]:
        """The leading lines for the head's channel committed within its window, up to
        the end of the first command with a line that does not wait ([] if the head is
        not gathered). Every command's lines stay together."""
        head = entries[0]
        channel = channel_of(head)
        if channel is None or head.created_at is None:
            return []
        window = self.window(channel)
        run: list[OutboxEntry] = []
        closing: object = None  # the command (log number) that closes the run
        for entry in entries:
            seq = entry.payload.get("seq")
            if closing is not None and seq != closing:
                break
            if channel_of(entry) != channel or entry.created_at is None:
                break
            same = bool(run) and seq == run[-1].payload.get("seq")
            if not same and (_when(entry) - _when(head)).total_seconds() > window:
                break
            run.append(entry)
            if closing is None and not self.waits(entry, pinged):
                closing = seq
        return run

    def wait(self, run: list[OutboxEntry], rest: list[OutboxEntry],
             pinged: Collection[str], *, full: bool = False) -> float:
        """Seconds the run still waits: none once a line in it does not wait, once
        any line waits behind it (a later command's beyond the window, the next command
        after the closing one, another channel's: a channel never holds another back),
        once the offer was `full` (what is behind it is unseen), or once its window (and
        the margin) has passed."""
        channel = channel_of(run[0])
        assert channel is not None
        window = self.window(channel)
        if window <= 0 or any(not self.waits(e, pinged) for e in run) or rest or full:
            return 0.0
        age = (self.clock() - _when(run[0])).total_seconds()
        return max(0.0, window + MARGIN - age)
