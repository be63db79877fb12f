"""The shop's catalogue: every item and spell as one row (rules, 'Модуль «Инвентарь и
заклинания»').

The shop (core/game/rules/shop.py), the night (core/game/rules/night.py), the rules reference
(core/sight/guide.py) and the renderers read these rows, so a price or a limit lives in one
place. The enum values are the strings stored in games and typed in commands
(`Item.kind`, `SpellCast.spell`, `PendingBuy.what`, `/buy item:`), so old games load.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from core.game.roles import Role


class ItemKind(StrEnum):
    """Items are kept until they trigger."""

    PROTECTION = "protection"
    ALARM_CLOCK = "alarm_clock"
    CHEQUE_BOOK = "cheque_book"
    SPIKED_CLUB = "spiked_club"


class SpellKind(StrEnum):
    """Spells act at one moment."""

    SLEEP = "sleep"
    SILENCE = "silence"
    SHOUT = "shout"
    FREE_SPEECH = "free_speech"
    HELPLESSNESS = "helplessness"
    DOUBLING = "doubling"
    DESTRUCTION = "destruction"


class Moment(StrEnum):
    """When a ware is bought or cast, and so when it acts."""

    EVENING = "evening"  # items: bought at night, or ordered by day for after the lynch
    DAY = "day"  # day spells: on a voting day's votes (bought in the evening: the next day)
    VOTE = "vote"  # Shout: paid together with a vote
    NIGHT = "night"  # night spells: on the night being played (ordered by day: tonight)


@dataclass(frozen=True)
class Ware:
    """One row of the shop. `price` of Protection is its first purchase (later ones cost
    more, shop.protection_price); `per_day` limits casts per target and day acted on
    (Shout: per voter), `per_turn` per target and turn cast in (Silence: "Не может быть
    использовано более чем дважды за один ход"); `effect` names the function of
    core.game.rules that applies it (module.function, checked by
    tests/engine/test_items_catalogue.py); `holder` is the one role that may buy it (None:
    anyone)."""

    kind: ItemKind | SpellKind
    price: int
    moment: Moment
    effect: str
    per_day: int | None = None
    per_turn: int | None = None
    holder: Role | None = None

    @property
    def is_item(self) -> bool:
        return isinstance(self.kind, ItemKind)


WARES: dict[str, Ware] = {
    str(w.kind): w
    for w in (
        Ware(ItemKind.PROTECTION, 10, Moment.EVENING, "night._armour_stops"),
        Ware(ItemKind.ALARM_CLOCK, 20, Moment.EVENING, "shop.day_effects"),
        Ware(ItemKind.CHEQUE_BOOK, 30, Moment.EVENING, "shop._cast_night"),
        Ware(ItemKind.SPIKED_CLUB, 30, Moment.EVENING, "night._spiked_club",
             holder=Role.BOUNCER),
        Ware(SpellKind.SLEEP, 3, Moment.DAY, "shop.day_effects", per_day=2),
        Ware(SpellKind.SILENCE, 8, Moment.DAY, "shop.day_effects", per_turn=2),
        Ware(SpellKind.SHOUT, 5, Moment.VOTE, "shop.shout", per_day=2),
        Ware(SpellKind.FREE_SPEECH, 10, Moment.DAY, "shop.day_effects"),
        Ware(SpellKind.HELPLESSNESS, 40, Moment.NIGHT, "shop.moves"),
        Ware(SpellKind.DOUBLING, 80, Moment.NIGHT, "shop.moves"),
        Ware(SpellKind.DESTRUCTION, 15, Moment.NIGHT, "shop.ignores_bouncer"),
    )
}


def ware(kind: str) -> Ware | None:
    """The row of an item or spell by its stored or typed name, None if there is none."""
    return WARES.get(kind)


def items() -> tuple[ItemKind, ...]:
    """Every item, in the shop's order."""
    return tuple(ItemKind(k) for k, w in WARES.items() if w.is_item)


def spells(*moments: Moment) -> tuple[SpellKind, ...]:
    """The spells cast at one of `moments` (all of them if none is given)."""
    return tuple(SpellKind(k) for k, w in WARES.items()
                 if not w.is_item and (not moments or w.moment in moments))


def is_item(kind: str) -> bool:
    """Whether `kind` names an item (not a spell, nor nothing): the renderers' split."""
    w = WARES.get(kind)
    return w is not None and w.is_item
