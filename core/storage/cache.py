"""The service's per-game slots: the lock that serializes a game's commands, and the
cached state of the games touched most recently (a bounded LRU).

A bot with thousands of live games holds the states of the few in play right now; any
other is read from the database at its next command (one row, one parse). Deadlines
and reminders are re-armed from columns, so nothing needs every state in memory.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from dataclasses import dataclass, field

from core.state import GameState
from core.storage.patches import GameInfo

DEFAULT_SIZE = 1000  # cached states: a few MB, the games played in the last minutes


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


class Slots:
    """game id -> Slot, with at most `size` cached states (least recently used go first).

    A slot is removed with its state only while its lock is free: whoever holds or
    waits for a game's lock holds that game's one slot. Between taking a slot and
    locking it there is no await (the service's rule), so no second slot can appear.
    """

    def __init__(self, size: int | None = DEFAULT_SIZE) -> None:
        self.size = None if size is None else max(1, size)  # None: unbounded
        self.slots: dict[int, Slot] = {}
        self._recent: OrderedDict[int, None] = OrderedDict()  # cached, oldest first

    def __call__(self, game_id: int) -> Slot:
        slot = self.slots.get(game_id)
        if slot is None:
            slot = self.slots[game_id] = Slot()
        return slot

    def get(self, game_id: int) -> Slot | None:
        return self.slots.get(game_id)

    def cached(self, game_id: int) -> None:
        """The game's state was just read or written: it is the most recent now."""
        self._recent[game_id] = None
        self._recent.move_to_end(game_id)
        while self.size is not None and len(self._recent) > self.size:
            victim, _ = self._recent.popitem(last=False)
            slot = self.slots.get(victim)
            if slot is None:
                continue
            slot.forget()
            if not slot.lock.locked():
                del self.slots[victim]

    def drop(self, game_id: int) -> None:
        """Forget the game's cached state (its slot and lock stay)."""
        self._recent.pop(game_id, None)
        slot = self.slots.get(game_id)
        if slot is not None:
            slot.forget()

    def drop_all(self) -> None:
        for game_id in list(self.slots):
            self.drop(game_id)

    def __len__(self) -> int:
        """Games whose state is cached."""
        return len(self._recent)
