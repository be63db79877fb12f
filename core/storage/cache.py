"""The service's per-game slots: the lock that serializes a game's commands, and the
cached state of the games touched most recently, in two bounded LRU tiers.

The games touched last keep their state parsed (`size`). The next ones (`compact`) keep
it only as its JSON text: a seventh of the memory (4 KiB against 30 for a 12-player
day), and no object for the garbage collector to scan. A parsed state is a hundred
objects that live as long as they stay cached: thousands of them passing through the
young generations made the collector's pauses the largest part of the p99 at 5,000
games. A compact state costs one parse at its next command, no database read. Any
other game is read from the database then (one row, one parse). Deadlines and
reminders are re-armed from columns, so nothing needs every state in memory.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from dataclasses import dataclass, field

from core.game.state import GameState
from core.storage.patches import GameInfo

DEFAULT_SIZE = 256  # parsed states: the games in play this very minute
DEFAULT_COMPACT = 20_000  # states kept as JSON text: about 80 MB at most


@dataclass
class Slot:
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    state: GameState | None = None
    state_json: str | None = None  # `state` as stored, when known (saves a dump per command)
    stored_seq: int = 0  # seq of the state the game row holds (the log replays the rest)
    outbox_seq: int = 0
    guild_id: int = 0
    # The game's row as GameInfo, valid only while `state` is cached: both are read
    # together (under the lock) and written through on every commit of this service.
    info: GameInfo | None = None

    def forget(self) -> None:
        """The database may hold something else now: read it again next time."""
        self.state = self.state_json = None
        self.info = None

    def compact(self) -> None:
        """Keep the state only as its JSON text (parsed again at the next use)."""
        if self.state is not None:
            if self.state_json is None:
                self.state_json = self.state.model_dump_json()
            self.state = None

    @property
    def compacted(self) -> bool:
        """Whether the state is held as JSON text only (`info` is still valid then)."""
        return self.state is None and self.state_json is not None and self.info is not None


class Slots:
    """game id -> Slot, with at most `size` parsed states and `compact` more as JSON text
    (least recently used go first: parsed to compact, compact to forgotten).

    A slot is removed with its state only while its lock is free: whoever holds or
    waits for a game's lock holds that game's one slot. Between taking a slot and
    locking it there is no await (the service's rule), so no second slot can appear.
    """

    def __init__(self, size: int | None = DEFAULT_SIZE, compact: int = DEFAULT_COMPACT
                 ) -> None:
        self.size = None if size is None else max(1, size)  # None: unbounded
        self.compact_size = max(0, compact)
        self.slots: dict[int, Slot] = {}
        self._recent: OrderedDict[int, None] = OrderedDict()  # parsed, oldest first
        self._compact: OrderedDict[int, None] = OrderedDict()  # JSON text, oldest first

    def __call__(self, game_id: int) -> Slot:
        slot = self.slots.get(game_id)
        if slot is None:
            slot = self.slots[game_id] = Slot()
        return slot

    def get(self, game_id: int) -> Slot | None:
        return self.slots.get(game_id)

    def cached(self, game_id: int) -> None:
        """The game's state was just read or written: it is the most recent now."""
        self._compact.pop(game_id, None)
        self._recent[game_id] = None
        self._recent.move_to_end(game_id)
        while self.size is not None and len(self._recent) > self.size:
            victim, _ = self._recent.popitem(last=False)
            slot = self.slots.get(victim)
            if slot is None:
                continue
            if self.compact_size:
                slot.compact()
                self._compact[victim] = None
            else:
                self._evict(victim, slot)
        while len(self._compact) > self.compact_size:
            victim, _ = self._compact.popitem(last=False)
            slot = self.slots.get(victim)
            if slot is not None:
                self._evict(victim, slot)

    def _evict(self, game_id: int, slot: Slot) -> None:
        slot.forget()
        if not slot.lock.locked():
            del self.slots[game_id]

    def drop(self, game_id: int) -> None:
        """Forget the game's cached state (its slot and lock stay)."""
        self._recent.pop(game_id, None)
        self._compact.pop(game_id, None)
        slot = self.slots.get(game_id)
        if slot is not None:
            slot.forget()

    def drop_all(self) -> None:
        for game_id in list(self.slots):
            self.drop(game_id)

    def __len__(self) -> int:
        """Games whose state is cached parsed."""
        return len(self._recent)

    @property
    def compacted(self) -> int:
        """Games whose state is cached as JSON text."""
        return len(self._compact)
