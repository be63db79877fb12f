"""The role catalogue: sides, night powers and who acts on night 0.

Kept as data so modules (additional roles, shop) extend behaviour by adding
rows, not branches: the deal, the night order, the channels and what a role
knows, the composition rules, the shop's attacker kinds and the rules reference
all read `info(role)`. A new role that reuses an existing night action needs a
row here and its names in the two locale catalogues (``role.<id>.*``,
``help.role.<id>.duty``); `registered` adds one for the span of a test.
It sits beside state.py, not in rules/: the state names roles and sides, and every
rule reads the rows, so the rows are the ground both stand on.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from core.text.i18n import get_catalogue


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


class Circle(StrEnum):
    """The private company a role belongs to: a mafia clan (its channel, its turns, its
    win), the police channel, or none."""

    CLAN = "clan"
    POLICE = "police"
    NONE = "none"


@dataclass(frozen=True)
class RoleInfo:
    """A role's rules as data (RULES.md, 'Роли')."""

    role: Role
    side: Side
    action: Action | None
    first_night: int  # first night number with a move (rules: investigator from night 1)
    extra: bool = False  # belongs to the module "Additional roles"
    circle: Circle = Circle.NONE
    # The circle only when this master option is on (the sergeant in the police channel).
    circle_option: str | None = None
    # Fixed slot in the night order ("Порядок хода": bouncer 0, investigator 1); None: dice.
    order: int | None = None
    # Clan members of this role give the clan's night move in turn by rank; a game needs
    # one and so does every clan.
    rotates: bool = False
    knows: tuple[Role, ...] = ()  # learns their holders, beyond his circle ("знает сержанта")
    heir_of: Role | None = None  # takes that role when its last holder leaves the game
    unique: bool = False  # at most one in a game
    requires: tuple[Role, ...] = ()  # only dealt together with these
    can_reveal: bool = False  # may publish his latest check (crypto, public moves)
    attacker: str | None = None  # what a 'Protection from X' names him by (clan: per clan)
    punished_sides: frozenset[Side] = frozenset()  # killing these costs him (the operative)
    raises_ghosts: bool = False  # while he lives, the dead vote (the occultist)
    aliases: tuple[str, ...] = ()  # other names a master may write, in Russian and English
    # The presets deal one from this many players (RULES.md, 'Presets'); None: never
    # (the mafiosi fill the clans' seats, citizens the spare ones).
    preset_from: int | None = None

    @property
    def in_clan(self) -> bool:
        return self.circle is Circle.CLAN

    @property
    def module(self) -> str | None:
        """The module that must be on for this role to be dealt."""
        return "extra_roles" if self.extra else None


CATALOGUE: dict[Role, RoleInfo] = {
    info.role: info
    for info in (
        RoleInfo(Role.MAFIOSO, Side.NEGATIVE, Action.KILL, 0, circle=Circle.CLAN,
                 rotates=True, attacker="mafia", aliases=("mafia", "мафиози", "мафия")),
        RoleInfo(Role.INVESTIGATOR, Side.POSITIVE, Action.CHECK, 1, circle=Circle.POLICE,
                 order=1, knows=(Role.SERGEANT,), unique=True, can_reveal=True, preset_from=0,
                 aliases=("detective", "следователь")),
        RoleInfo(Role.SERGEANT, Side.POSITIVE, None, 0, circle=Circle.POLICE,
                 circle_option="sergeant_in_police", heir_of=Role.INVESTIGATOR,
                 requires=(Role.INVESTIGATOR,), aliases=("сержант",), preset_from=8),
        RoleInfo(Role.BOUNCER, Side.NEUTRAL, Action.PROTECT, 0, order=0, attacker="bouncer",
                 aliases=("вышибала",), preset_from=0),
        RoleInfo(Role.KILLER, Side.NEUTRAL, Action.KILL, 0, attacker="killer",
                 aliases=("убийца", "маньяк"), preset_from=9),
        RoleInfo(Role.CITIZEN, Side.CITIZENS, None, 0,
                 aliases=("honest citizen", "житель", "честный житель", "жители",
                          "честные жители")),
        RoleInfo(Role.ADVOCATE, Side.NEGATIVE, Action.CHECK, 0, extra=True,
                 circle=Circle.CLAN, can_reveal=True, aliases=("адвокат",), preset_from=10),
        RoleInfo(Role.OPERATIVE, Side.POSITIVE, Action.SHOOT, 1, extra=True,
                 circle=Circle.POLICE, unique=True, requires=(Role.INVESTIGATOR,),
                 attacker="operative", punished_sides=frozenset({Side.CITIZENS, Side.POSITIVE}),
                 aliases=("опер",), preset_from=10),
        RoleInfo(Role.OCCULTIST, Side.NEUTRAL, None, 0, extra=True, unique=True,
                 raises_ghosts=True, aliases=("оккультист",), preset_from=12),
    )
}

LETHAL: frozenset[Action] = frozenset({Action.KILL, Action.SHOOT})


def info(role: Role) -> RoleInfo:
    return CATALOGUE[role]


def rows() -> list[RoleInfo]:
    """Every role's row, in the catalogue's order (the order of `Role`: `registered`
    appends to both)."""
    return list(CATALOGUE.values())


def by_alias() -> dict[str, Role]:
    """Every name a master may write for a role (its id and its aliases)."""
    return {name: ri.role for ri in rows() for name in (str(ri.role), *ri.aliases)}


def is_role_player(role: Role) -> bool:
    """'Ролевик': anyone who is not an honest citizen."""
    return info(role).side is not Side.CITIZENS


# --- registration (tests; a module adding roles at run time) ----------------------------
@contextmanager
def registered(value: str, make_row: Callable[[Role], RoleInfo],
               texts: Mapping[str, Mapping[str, str]]) -> Iterator[Role]:
    """Add a role for the span of a `with`: a `Role` member named `value`, its row
    (`make_row(member)`) and its catalogue texts (`{lang: {"role.<id>.name": ...}}`);
    all removed on exit. What a module adding a role does, and the proof that a role is
    a row: nothing else in the rules needs to know it (tests/engine/test_role_as_row.py)."""
    if value in Role._value2member_map_:
        raise ValueError(f"role {value!r} exists")
    member = _add_member(value)
    try:
        CATALOGUE[member] = make_row(member)
        if CATALOGUE[member].role is not member:
            raise ValueError(f"the row of {value!r} names another role")
        with get_catalogue().extended(texts):
            yield member
    finally:
        CATALOGUE.pop(member, None)
        _remove_member(member)


def _add_member(value: str) -> Role:
    """Append a member to `Role` the way `enum` itself stores one (CPython 3.11+)."""
    member = str.__new__(Role, value)
    name = value.upper()
    member._name_ = name
    member._value_ = value
    attrs: dict[str, Any] = member.__dict__
    attrs["__objclass__"] = Role
    attrs["_sort_order_"] = len(Role._member_names_)
    Role._member_map_[name] = member
    Role._value2member_map_[value] = member
    Role._member_names_.append(name)
    return member


def _remove_member(member: Role) -> None:
    Role._member_names_.remove(member.name)
    del Role._member_map_[member.name]
    del Role._value2member_map_[member.value]

