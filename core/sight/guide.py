"""Help for players: what the reader may do now, and the rules reference's topics.

Pure functions over the game state, so /help and /rules say the same as the
engine: the commands listed are the ones the rules would accept from this
reader in this phase (their words come from the catalogue, `help.*`). The
guide is built from what the reader already knows (his own card and the public
view): it never tells one player anything about another's role.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from core.game.roles import Action, Role, Side, info
from core.game.rules.items import items, spells, ware
from core.game.rules.voting import base_weight, current_votes
from core.game.state import GameState, PhaseKind
from core.sight.legal import ALWAYS, legal_commands, master_only
from core.sight.visibility import card

MODULES = ("extra_roles", "currency", "shop", "crypto")
#: Master options shown in plain words (catalogue `signup.option.<id>.on|off`).
OPTIONS = ("reveal_roles", "votes_final", "bouncer_self", "dead_write", "dead_public",
           "public_moves",
           "master_sees_anon", "archive_channels", "graveyard", "sergeant_in_police",
           "inherit_checks", "removed_prize")
#: General topics of /rules (catalogue `help.topic.<id>.title|text`), in reading order.
__all__ = ["Guide", "guide", "master_only", "topic_ids"]

TOPICS = ("sides", "phases", "voting", "night_order", "inactivity", "currency", "payouts",
          "shop", "crypto", "master")


class Guide(BaseModel):
    """What /help shows one reader: the game in plain words and what he can do now."""

    has_game: bool = False
    title: str = ""
    phase: PhaseKind | None = None
    number: int = 0
    modules: list[str] = Field(default_factory=list)
    options: dict[str, bool] = Field(default_factory=dict)
    master: bool = False
    player: bool = False
    alive: bool = False
    role: Role | None = None
    #: What the phase asks of the reader (catalogue `help.duty.<id>`), most urgent first.
    duties: list[str] = Field(default_factory=list)
    #: Command paths the reader may use now ("vote", "game join", "master advance").
    commands: list[str] = Field(default_factory=list)


def guide(state: GameState | None, uid: int, *, admin: bool = False) -> Guide:
    """The reader's guide; `state` is None in a channel without a game."""
    if state is None:
        return Guide(duties=["no_game"], commands=["game create", *ALWAYS])
    g = Guide(has_game=True, title=state.title, phase=state.phase, number=state.number,
              modules=[m for m in MODULES if getattr(state.options, m)],
              options={o: bool(getattr(state.options, o)) for o in OPTIONS})
    seat = state.player(uid)
    g.master = uid in (state.master, state.cohost) or admin
    g.player = seat is not None
    g.alive = seat is not None and seat.alive
    if seat is not None and state.phase is not PhaseKind.SIGNUP:
        g.role = seat.role
    g.duties = _duties(state, uid, master=g.master)
    g.commands = legal_commands(state, uid, admin=admin)
    return g


def _duties(state: GameState, uid: int, *, master: bool) -> list[str]:
    """What the phase asks of the reader, most urgent first (the master's first)."""
    seat = state.player(uid)
    out: list[str] = []
    if master:
        out.append("master_signup" if state.phase is PhaseKind.SIGNUP else
                   "master_over" if state.over else "master_run")
    if seat is None and state.spectating(uid) and not state.over:
        # he spectates (from the signup on, never seated): where he reads and writes,
        # and who sees what he writes (RULES.md §14)
        return out + ["spectating"] + (["spectating_teams"] if
                                       state.options.spectators_see_teams else [])
    if state.phase is PhaseKind.SIGNUP:
        return out + (["signup_wait"] if seat is not None else
                      [] if uid in (state.master, state.cohost) else ["signup_join"])
    if state.over:
        return out + (["game_over"] if seat is not None else [])
    if seat is None:
        return out + ([] if master else ["spectator"])
    return out + _player_duties(state, uid)


def _player_duties(state: GameState, uid: int) -> list[str]:
    seat = state.player(uid)
    assert seat is not None
    mine = card(state, uid)
    day = state.phase is PhaseKind.DAY
    out: list[str] = []
    if not seat.alive:
        out.append("dead")
        if day and state.number > 0 and base_weight(state, uid):
            out.append("ghost_vote")
        return out
    if day and state.number == 0:
        out.append("checked_in" if seat.checked_in else "checkin")
    elif day:
        out.append("voted" if uid in current_votes(state) else "vote")
    if seat.role is not None and info(seat.role).action is not None:
        if state.phase is PhaseKind.NIGHT:
            out.append("night_move" if mine.moves else "no_move_tonight")
        else:
            out.append("pre_order")
    elif state.phase is PhaseKind.NIGHT:
        out.append("wait_morning")
    return out


# --- the rules reference --------------------------------------------------------------
def topic_ids() -> list[str]:
    """Every /rules topic: roles, items, spells, then the general topics."""
    return ([f"role:{r}" for r in Role] + [f"item:{i}" for i in items()]
            + [f"spell:{s}" for s in sorted(spells())]
            + [f"topic:{t}" for t in TOPICS])


class RoleFacts(BaseModel):
    """What the rules say of a role, for its /rules page."""

    side: Side
    action: Action | None
    first_night: int
    extra: bool
    in_clan: bool


def role_facts(role: Role) -> RoleFacts:
    ri = info(role)
    return RoleFacts(side=ri.side, action=ri.action, first_night=ri.first_night,
                     extra=ri.extra, in_clan=ri.in_clan)


def price_of(kind: str) -> int | None:
    """The base price of an item or a spell (Protection: its first purchase)."""
    w = ware(kind)
    return w.price if w is not None else None


def spell_time(spell: str) -> str:
    """When a spell is cast: 'day' (on a voting day), 'vote' (with a vote), 'night'."""
    w = ware(spell)
    return str(w.moment) if w is not None else "night"
