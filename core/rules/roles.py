"""The role catalogue: sides, night powers and who acts on night 0.

Kept as data so modules (additional roles, shop) extend behaviour by adding
rows, not branches.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Side(StrEnum):
    NEGATIVE = "negative"
    POSITIVE = "positive"
    NEUTRAL = "neutral"
    CITIZENS = "citizens"


class Role(StrEnum):
    MAFIOSO = "mafioso"
    INVESTIGATOR = "investigator"
    SERGEANT = "sergeant"
    BOUNCER = "bouncer"
    KILLER = "killer"
    CITIZEN = "citizen"
    ADVOCATE = "advocate"
    OPERATIVE = "operative"
    OCCULTIST = "occultist"


class Action(StrEnum):
    """What a night order does to its target."""

    KILL = "kill"
    CHECK = "check"
    PROTECT = "protect"
    SHOOT = "shoot"


@dataclass(frozen=True)
class RoleInfo:
    role: Role
    side: Side
    action: Action | None
    first_night: int  # first night number with a move (rules: investigator from night 1)
    extra: bool = False  # belongs to the module "Additional roles"
    in_clan: bool = False


CATALOGUE: dict[Role, RoleInfo] = {
    info.role: info
    for info in (
        RoleInfo(Role.MAFIOSO, Side.NEGATIVE, Action.KILL, 0, in_clan=True),
        RoleInfo(Role.INVESTIGATOR, Side.POSITIVE, Action.CHECK, 1),
        RoleInfo(Role.SERGEANT, Side.POSITIVE, None, 0),
        RoleInfo(Role.BOUNCER, Side.NEUTRAL, Action.PROTECT, 0),
        RoleInfo(Role.KILLER, Side.NEUTRAL, Action.KILL, 0),
        RoleInfo(Role.CITIZEN, Side.CITIZENS, None, 0),
        RoleInfo(Role.ADVOCATE, Side.NEGATIVE, Action.CHECK, 0, extra=True, in_clan=True),
        RoleInfo(Role.OPERATIVE, Side.POSITIVE, Action.SHOOT, 1, extra=True),
        RoleInfo(Role.OCCULTIST, Side.NEUTRAL, None, 0, extra=True),
    )
}

# Night resolution order (rules, "Порядок хода"): bouncer, then investigator,
# then everybody else by the dice.
FIXED_NIGHT_ORDER: tuple[Role, ...] = (Role.BOUNCER, Role.INVESTIGATOR)

LETHAL: frozenset[Action] = frozenset({Action.KILL, Action.SHOOT})


def info(role: Role) -> RoleInfo:
    return CATALOGUE[role]


def is_role_player(role: Role) -> bool:
    """'Ролевик': anyone who is not an honest citizen."""
    return role is not Role.CITIZEN
