"""Every command held to its guard (core.game.guards) both ways, over simulated games.

For each command kind and each sender: a guard that refuses is the engine's refusal,
word for word, whatever the arguments; a guard that passes lets the engine accept the
command for some argument, unless every argument is refused for a reason the arguments,
the clock or the wallet carry (ARGUMENT_CODES, by kind). /help lists a command path
exactly when the guard of the command it sends passes (core.sight.legal.HELP). A command kind
without a guard, or a guard that drifts from the engine, fails here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import get_args

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.game import commands as c
from core.game.engine import apply
from core.game.errors import ErrorCode, RuleError
from core.game.guards import GUARDS, Actor, Guard
from core.game.rules.crypto import roles_in_game
from core.game.rules.items import items, spells
from core.game.rules.owing import reminder_at
from core.game.rules.shop import attacker_kinds
from core.game.state import GameState, Options
from core.play.sim import MASTER, Table, random_phase
from core.sight.legal import HELP, legal_commands
from tests.conftest import slow_property

OUTSIDER, FAN, NEWCOMER, COHOST = 99, 98, 77, 76
E = ErrorCode
#: Refusals a passing guard leaves to the arguments (a target, an item, a text), the clock
#: (a burst of votes or posts, a reminder not yet due) or the wallet: /help lists the
#: command, and the handler's words tell what is wrong with this use of it.
ARGUMENT_CODES: dict[str, frozenset[ErrorCode]] = {
    "vote": frozenset({E.ALREADY_VOTED_FOR, E.VOTES_FINAL, E.VOTE_COOLDOWN,
                       E.SHOUT_NEEDS_SHOP, E.SPELL_LIMIT, E.NOT_ENOUGH_LIRA,
                       E.SPENDING_CAP, E.HELPLESS}),
    "unvote": frozenset({E.VOTE_COOLDOWN}),
    "night": frozenset({E.NO_SELF_TARGET, E.OWN_CLAN_TARGET, E.ALREADY_COVERED}),
    "occult_exclude": frozenset({E.TARGET_ALIVE, E.ALREADY_EXCLUDED}),
    "remind": frozenset({E.REMINDER_NOT_DUE}),
    "configure": frozenset(),
    "buy": frozenset({E.SPENDING_CAP, E.NOT_ENOUGH_LIRA, E.WRONG_ROLE}),
    "cast": frozenset({E.SPENDING_CAP, E.NOT_ENOUGH_LIRA, E.SPELL_LIMIT,
                       E.TARGET_DEAD, E.ALREADY_VOTED, E.TARGET_NO_VOTE}),
    "anon": frozenset({E.POST_LIMIT, E.POST_TOO_SOON}),
    "whisper": frozenset({E.POST_LIMIT, E.POST_TOO_SOON}),
}
#: Refusals of one argument the probes try (a dead target, a protection against nothing).
WRONG_ARGUMENT = frozenset({E.NOT_A_PLAYER_TARGET, E.TARGET_DEAD, E.NO_TARGET_NEEDED,
                            E.UNKNOWN_PROTECTION, E.UNKNOWN_ITEM, E.UNKNOWN_SPELL,
                            E.DESTRUCTION_ROLE, E.SELF_ONLY})


def command_kinds() -> set[str]:
    """Every kind of the Command union, read from the union itself."""
    union = get_args(c.Command)[0]
    return {get_args(t.model_fields["kind"].annotation)[0] for t in get_args(union)}


def missing_guards(registry: Mapping[str, Guard]) -> set[str]:
    return command_kinds() - set(registry)


def probes(state: GameState, a: Actor, kind: str, at: datetime) -> list[c.Command]:
    """Every way `a` may send a command of `kind` (one per target, item, spell...); none
    when the kind cannot carry what the actor is (the clock, a bot, his sight)."""
    if a.clock:
        if kind == "advance":
            return [c.Advance(by=a.uid, at=max(at, state.deadline or at), deadline=True)]
        if kind == "remind":
            return [c.Remind(by=a.uid, at=max(at, reminder_at(state) or at), scheduled=True)]
        return []
    if a.bot and kind not in ("join", "standby", "spectate"):
        return []
    if a.sight != "none" and kind not in ("join", "standby", "sight"):
        return []
    seats = [p.uid for p in state.players]
    funds = {u: 10**6 for u in [*seats, a.uid]}
    by = {"by": a.uid, "at": at, "admin": a.admin, "funds": funds}
    who = {"sight": a.sight, "bot": a.bot}
    made: dict[str, Callable[[], list[c.Command]]] = {
        "join": lambda: [c.Join(**by, **who, name="Newcomer")],
        "leave": lambda: [c.Leave(**by)],
        "configure": lambda: [c.Configure(
            **by, roles=f"mafioso; citizen x{max(len(seats), 6) - 1}")],
        "options": lambda: [c.SetOptions(**by)],
        "start": lambda: [c.Start(**by, confirm=True, confirm_sight=True)],
        "cancel": lambda: [c.Cancel(**by)],
        "checkin": lambda: [c.CheckIn(**by)],
        "vote": lambda: [c.Vote(**by, target=t, shout=s) for s in (False, True) for t in seats],
        "unvote": lambda: [c.Unvote(**by)],
        "night": lambda: [c.NightOrder(**by, target=t) for t in seats],
        "share": lambda: [c.Share(**by, note="x")],
        "away": lambda: [c.Away(**by)],
        "occult_exclude": lambda: [c.OccultExclude(**by, target=t) for t in seats],
        "advance": lambda: [c.Advance(**by)],
        "remind": lambda: [c.Remind(**by)],
        "extend": lambda: [c.Extend(**by, minutes=60)],
        "kick": lambda: [c.Kick(**by, target=t) for t in seats],
        "replace": lambda: [c.Replace(**by, old=t, new=NEWCOMER, name="Sub") for t in seats],
        "standby": lambda: [c.Standby(**by, **who, name="Sub")],
        "spectate": lambda: [c.Spectate(**by, bot=a.bot, name="Fan")],
        "bonus": lambda: [c.Bonus(**by, target=t, amount=1, reason="style") for t in seats],
        "thank": lambda: [c.Thank(**by)],
        "buy": lambda: [c.Buy(**by, item=i, against=x) for i in items()
                        for x in (None, *attacker_kinds(state))],
        "cast": lambda: [c.Cast(**by, spell=s, target=t) for s in spells() for t in seats],
        "anon": lambda: [c.Anon(**by, text="x")],
        "whisper": lambda: [c.Whisper(**by, role=r, text="x")
                            for r in roles_in_game(state) or ["citizen"]],
        "reveal": lambda: [c.Reveal(**by)],
        "last_words": lambda: [c.LastWords(**by, text="x")],
        "host": lambda: [c.Host(**by)],
        "cohost": lambda: [c.Cohost(**by, action="add", target=COHOST),
                           c.Cohost(**by, action="remove"), c.Cohost(**by, action="handover")],
        "sight": lambda: [c.Sight(**by, sight=a.sight)] if a.sight != "none" else [],
    }
    return made[kind]()


def senders(state: GameState) -> list[Actor]:
    """The master, outsiders (plain, stand-in host, bot, seeing the places), a spectator,
    seated ones with "Manage Server" or seeing the places, every seat, and the clock."""
    seats = [p.uid for p in state.players]
    first = [Actor(seats[0], admin=True), Actor(seats[0], sight="all")] if seats else []
    return [Actor(MASTER), Actor(OUTSIDER), Actor(OUTSIDER, admin=True),
            Actor(OUTSIDER, bot=True), Actor(OUTSIDER, sight="threads"), Actor(FAN),
            *first, *(Actor(u) for u in seats), Actor(0, clock=True)]


def refusal(state: GameState, cmd: c.Command) -> RuleError | None:
    try:
        apply(state, cmd)
    except RuleError as exc:
        return exc
    return None


def hold(state: GameState, at: datetime,
         registry: Mapping[str, Guard] = GUARDS) -> None:
    """Each guard of `registry` against the engine, both ways, for every sender."""
    for a in senders(state):
        for kind, guard in registry.items():
            tries = probes(state, a, kind, at)
            if not tries:
                continue
            assert all(Actor.of(cmd) == a for cmd in tries), (kind, a)
            try:
                guard(state, a)
            except RuleError as refused:
                for cmd in (tries[0], tries[-1]):  # the guard never reads the arguments
                    got = refusal(state, cmd)
                    assert got is not None, (kind, a, "guard refuses, engine accepts")
                    assert (got.code, got.params) == (refused.code, refused.params), \
                        (kind, a, got, refused)
                continue
            codes = set()
            for cmd in tries:
                got = refusal(state, cmd)
                if got is None:
                    break
                codes.add(got.code)
            else:
                allowed = ARGUMENT_CODES.get(kind, frozenset()) | WRONG_ARGUMENT
                assert codes <= allowed, (kind, a, state.phase, state.number, codes)


def listed_by_guards(state: GameState) -> None:
    """/help's list is the paths whose guard passes, the command paths by the engine's."""
    for a in senders(state):
        if a.clock or a.bot or a.sight != "none":
            continue
        listed = legal_commands(state, a.uid, admin=a.admin)
        for path in HELP:
            if path.kind is None:
                continue
            try:
                GUARDS[path.kind](state, a)
            except RuleError:
                assert path.name not in listed, (path.name, a)
            else:
                assert path.name in listed, (path.name, a)


def states(seed: int, players: int, options: Options,
           phases: int) -> list[tuple[GameState, datetime]]:
    """A signup too small to start, the signup (with a spectator), then each phase of a
    simulated game, each with a moment just after the last command."""
    early = Table(seed, 3, options)  # too few for any composition: no /game start yet
    table = Table(seed, players, options)
    table.send(c.Spectate(by=FAN, at=table.clock, name="Fan"))
    out = [(early.state, early.tick()), (table.state, table.tick())]
    table.send(c.Start(by=MASTER, at=table.tick(), confirm=True))
    for _ in range(phases):
        out.append((table.state, table.tick()))
        if table.state.over:
            break
        random_phase(table)
    out.append((table.state, table.tick()))
    return out


def test_every_command_kind_has_a_guard() -> None:
    """A new command without a guard fails here, and so does a guard of no command."""
    assert missing_guards(GUARDS) == set()
    assert set(GUARDS) == command_kinds()
    assert all(p.kind in GUARDS for p in HELP if p.kind is not None)
    assert missing_guards({k: g for k, g in GUARDS.items() if k != "vote"}) == {"vote"}


@pytest.mark.slow_property
@slow_property
@given(seed=st.integers(0, 10**6), players=st.integers(6, 9), votes_final=st.booleans(),
       shop=st.booleans(), crypto=st.booleans())
def test_every_guard_is_the_engine_both_ways(seed: int, players: int, votes_final: bool,
                                             shop: bool, crypto: bool) -> None:
    options = Options(votes_final=votes_final, shop=shop, currency=shop, crypto=crypto,
                      public_moves=crypto)
    for state, at in states(seed, players, options, phases=5):
        hold(state, at)
        listed_by_guards(state)


def test_the_check_sees_a_guard_that_drifts() -> None:
    """The property can fail: a guard that lets everybody vote, or one that refuses the
    master's /game start, is caught."""
    table = Table(1, 7, Options())
    signup = table.state
    at = table.tick()
    hold(signup, at)
    with pytest.raises(AssertionError):
        hold(signup, at, {"start": lambda s, a: None})
    with pytest.raises(AssertionError):
        def never(s: GameState, a: Actor) -> None:
            raise RuleError(ErrorCode.NOT_MASTER)
        hold(signup, at, {"start": never})
