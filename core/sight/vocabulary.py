"""The game's words the Discord layer may name: value types for slash-command choices
and for reading views (roles, sides, teams, phases, options, item and
spell kinds).

Cogs import these from here, never from core.game.rules or core.game.state: this module is the
whole of what the rules hand to the surface besides the views (core.sight.views,
core.sight.visibility, read through core.storage.observer), so the house test can allow the
cogs a short list of modules (tests/test_house.py).
"""

from __future__ import annotations

from core.game.roles import Action, Role, Side
from core.game.rules.owing import REMINDER
from core.game.rules.shop import DAY_SPELLS, ITEMS, NIGHT_SPELLS
from core.game.state import Options, PhaseKind
from core.game.team import Team

#: Every spell a player may /cast, in the order the choices list them.
SPELLS: tuple[str, ...] = tuple(sorted(DAY_SPELLS | NIGHT_SPELLS))

__all__ = ["ITEMS", "REMINDER", "SPELLS", "Action", "Options", "PhaseKind", "Role", "Side", "Team"]
