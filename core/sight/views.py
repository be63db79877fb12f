"""The rule questions the Discord layer asks, answered by the engine side.

The Discord layer never holds a game's state: the facade (core/storage/observer.py)
passes it here (or to core.sight.visibility) and hands the cogs back views and plain values.
So a cog never decides a rule (who may be named, what the shop sells, who reads a
channel, whether a menu is stale) and a renderer never receives the state: everything
it draws is in the view it is given.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, Field

from core.game import engine
from core.game.errors import ErrorCode, RuleError
from core.game.rules import shop
from core.game.rules.channels import team_access
from core.game.rules.setup import composition_for
from core.game.state import GameState, Options, PhaseKind
from core.sight.visibility import player_labels

_MENTION = re.compile(r"^<@!?(\d+)>$")


# --- naming players -----------------------------------------------------------------------
def parse_player(value: str, state: GameState) -> int:
    """A player option: an id (what autocomplete sends), a mention or a name."""
    text = value.strip()
    m = _MENTION.match(text)
    if m:
        return int(m.group(1))
    if text.isdigit():
        return int(text)
    folded = text.casefold()
    matches = [p.uid for p in state.players if p.name.casefold() == folded]
    if len(matches) == 1:
        return matches[0]
    raise RuleError(ErrorCode.UNKNOWN_PLAYER, name=text[:50])


def target_choices(state: GameState, uid: int, kind: str,
                   shown: dict[int, str]) -> list[tuple[int, str]]:
    """The players `uid` may name in an option of `kind` ('vote', 'night', 'occult',
    'living', 'any'), labelled for a menu: the name shown (`shown`, current display
    names), look-alikes told apart (core.sight.visibility.player_labels)."""
    labels = player_labels(state, shown)
    return [(u, labels.get(u, str(u))) for u in engine.legal_targets(state, uid, kind)]


def seat_uids(state: GameState) -> list[int]:
    """Every seat's current holder, in seat order (whose display names to look up)."""
    return [p.uid for p in state.players]


def phase_seen(state: GameState) -> tuple[int, int]:
    """The phase a command's sender is looking at (core.game.commands.stamped)."""
    return state.serial, state.number


def menu_seen(state: GameState, day: int) -> tuple[int, int]:
    """The phase a vote menu of `day` was sent in, or a refusal once that day is over."""
    if state.phase is not PhaseKind.DAY or state.number != day:
        raise RuleError(ErrorCode.MENU_EXPIRED)
    return phase_seen(state)


# --- signup ---------------------------------------------------------------------------------
class LobbyView(BaseModel):
    """The signup message: what the game is, its options, who signed up, the roles."""

    title: str
    plot: str
    master: int
    phase: PhaseKind
    started: bool
    options: Options
    players: list[int]
    roles_text: str | None
    #: (role, count, clan) rows of the composition the game would be dealt now; None
    #: when the master's list does not fit (the signup shows his text as typed).
    composition: list[tuple[str, int, int | None]] | None


def lobby_view(state: GameState) -> LobbyView:
    try:
        comp: list[tuple[str, int, int | None]] | None = composition_for(
            state.roles_text, max(len(state.players), 6),
            extra_roles=state.options.extra_roles).describe()
    except Exception:
        comp = None
    return LobbyView(title=state.title, plot=state.plot, master=state.master,
                     phase=state.phase, started=state.started, options=state.options,
                     players=[p.uid for p in state.players], roles_text=state.roles_text,
                     composition=comp)


# --- the shop -------------------------------------------------------------------------------
class ShopRow(BaseModel):
    what: str
    against: str | None = None
    price: int


class ShopView(BaseModel):
    """What /shop shows one player: items and spells at his current prices."""

    items: list[ShopRow] = Field(default_factory=list)
    spells: list[ShopRow] = Field(default_factory=list)


def open_shop(state: GameState, uid: int) -> ShopView:
    """/shop: the caller's shop, refused when the game is over or has no shop."""
    if state.over:  # the channel's last game: say it is over, not "no game here"
        raise RuleError(ErrorCode.GAME_OVER)
    if not state.options.shop:
        raise RuleError(ErrorCode.MODULE_OFF, module="shop")
    return shop_view(state, uid)


def shop_view(state: GameState, uid: int) -> ShopView:
    """The catalogue at `uid`'s current prices, items apart from spells."""
    view = ShopView()
    for what, against, price in shop.catalogue(state, uid):
        row = ShopRow(what=what, against=against, price=price)
        (view.items if what in shop.ITEMS else view.spells).append(row)
    return view


def attacker_choices(state: GameState) -> list[str]:
    """What 'Protection from X' can be bought against in this game."""
    return shop.attacker_kinds(state)


def parse_attacker(text: str | None, state: GameState) -> str | None:
    """What a player typed for 'Protection from X', as a kind id (core.game.rules.shop)."""
    return shop.parse_attacker(text, state)


# --- private channels -----------------------------------------------------------------------
def channel_access(state: GameState, team: str) -> tuple[list[int], list[int]]:
    """A team channel's readers and writers now (the rules decide: core.game.rules.channels)."""
    return team_access(state, team)
