"""The working copy a command mutates, and the events it emits."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from core.game.events import Audience, Event, EventKind
from core.game.state import GameState


@dataclass
class Ctx:
    state: GameState
    events: list[Event] = field(default_factory=list)

    def emit(self, kind: EventKind, audience: Audience | None = None, **data: Any) -> None:
        self.events.append(Event(kind=kind, audience=audience or Audience.public(), data=data))

    def rng(self, purpose: str) -> random.Random:
        """Seeded by game seed, command counter and purpose: replays draw the same dice."""
        return random.Random(f"{self.state.seed}:{self.state.seq}:{purpose}")
