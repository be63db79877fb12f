"""Players who follow each role's obvious strategy: the balance estimate's table.

Random legal agents (core/play/sim.py) say what the rules allow; an estimate of a setup's
balance needs players who try to win. Each agent acts on what its seat knows (its
role, its clan or the police's checks, and what is public), never on the state's
hidden roles. The strategies, and what they leave out, are written down in
docs/balance.md; every figure the master sees rests on them.

  * the acting mafioso kills a non-member of his clan: an investigator his clan knows
    (public claim, the advocate's check) first, else anybody at random;
  * the investigator checks a living player he has not checked; once he finds a
    negative he says so in public the next day (honestly: nobody lies here);
  * the town hangs a publicly named negative; without one it follows the leading
    candidate half the time, else votes at random, never for whom it knows is good;
  * the mafia vote for the claimed investigator or follow the leader (never a clan mate);
  * the bouncer protects the claimed investigator while a mafioso lives, else himself
    (when the option allows it), else anybody;
  * the killer kills anybody; the operative shoots only a negative the police know;
    the advocate checks non-members; the occultist strikes out dead negatives;
  * every voter votes at random instead with probability NOISE;
  * everybody votes every day, so nobody is removed for inactivity (the day 0 check-in
    is left out: missing it only warns, and no agent misses another turn); nobody
    buys, casts, posts anonymously or goes away.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from core.game import commands as c
from core.game.engine import legal_targets, night_move
from core.game.errors import RuleError
from core.game.roles import Action, Circle, Role, Side, info
from core.game.rules.voting import base_weight
from core.game.state import GameState, PhaseKind, Player
from core.play.sim import Table

NOISE = 0.15  # share of votes cast at random whatever the voter knows
FOLLOW = 0.5  # without a named negative, how often a voter joins the leading candidate


@dataclass
class Knowledge:
    """What the table has learned beyond the state's public part."""

    named: set[int] = field(default_factory=set)  # negatives the investigator made public
    claimed: int | None = None  # the investigator who went public
    to_name: set[int] = field(default_factory=set)  # negatives he will name next morning
    clan_knows: dict[int, set[int]] = field(default_factory=dict)  # clan -> police found


def _police(p: Player) -> bool:
    return p.role is not None and info(p.role).circle is Circle.POLICE


def _negative(p: Player) -> bool:
    return p.side is Side.NEGATIVE


def _checks(s: GameState, p: Player) -> dict[int, str]:
    """The checks his seat knows: his own, and the police's for a police member."""
    seats = [q for q in s.players if _police(q)] if _police(p) else [p]
    return {int(str(n.data["target"])): str(n.data["role"]) for q in seats for n in q.notices
            if n.kind in ("check", "shared_check") and n.data.get("target") is not None}


def _bad(role: str) -> bool:
    return info(Role(role)).side is Side.NEGATIVE


def strategic_phase(table: Table, know: Knowledge) -> None:
    """Every seat plays its phase as docs/balance.md says, then the phase ends."""
    s = table.state
    order = list(s.players)
    table.rng.shuffle(order)
    serial = s.serial
    if s.phase is PhaseKind.DAY and s.number > 0:
        _morning(table, know)
        tally: dict[int, int] = {}
        for p in order:
            if table.state.serial != serial:
                return  # a vote ended the day (house option "hammer"): a phase of its own
            _vote(table, know, p.uid, tally)
        if table.state.serial != serial:
            return
    if table.state.phase is PhaseKind.NIGHT:
        for p in order:
            _night(table, know, p.uid)
    _occult(table)
    deadline = table.state.deadline or table.clock
    table.clock = max(table.clock, deadline)
    table.advance(c.Advance(by=0, at=table.clock, deadline=True))


def _morning(table: Table, know: Knowledge) -> None:
    """The investigator names the negatives he found (and so names himself)."""
    s = table.state
    for p in s.living():
        if p.role is None or info(p.role).action is not Action.CHECK or _negative(p):
            continue
        found = {t for t, role in _checks(s, p).items() if _bad(role)}
        alive = {t for t in found if (q := s.player(t)) is not None and q.alive}
        if alive - know.named:
            know.named |= alive
            know.claimed = p.uid


def _vote(table: Table, know: Knowledge, uid: int, tally: dict[int, int]) -> None:
    s = table.state
    p = s.player(uid)
    if p is None or base_weight(s, uid) == 0:
        return
    rng = table.rng
    living = [q for q in s.living() if q.uid != uid]
    if not living:
        return
    if _negative(p):
        pool = [q.uid for q in living if q.clan != p.clan]
    else:
        good = {t for t, role in _checks(s, p).items() if not _bad(role)}
        pool = [q.uid for q in living if q.uid not in good]
    pool = pool or [q.uid for q in living]
    target = _choose_vote(know, p, pool, tally, rng)
    _send(table, c.Vote(by=uid, at=table.tick(), target=target))
    tally[target] = tally.get(target, 0) + base_weight(s, uid)


def _choose_vote(know: Knowledge, p: Player, pool: list[int], tally: dict[int, int],
                 rng: random.Random) -> int:
    if rng.random() < NOISE:
        return rng.choice(pool)
    if _negative(p):
        if know.claimed in pool:
            return know.claimed
    else:
        named = [t for t in pool if t in know.named]
        if named:
            return named[0]
    leaders = sorted((t for t in pool if tally.get(t)), key=lambda t: -tally[t])
    if leaders and rng.random() < FOLLOW:
        return leaders[0]
    return rng.choice(pool)


def _night(table: Table, know: Knowledge, uid: int) -> None:
    s = table.state
    p = s.player(uid)
    if p is None or not p.alive:
        return
    action = night_move(s, uid)
    if action is None:
        return
    targets = legal_targets(s, uid, "night")
    if not targets:
        return
    rng = table.rng
    target: int | None
    if action is Action.KILL and p.clan is not None:
        known = know.clan_knows.get(p.clan, set())
        wanted = [t for t in targets if t in known or t == know.claimed]
        target = wanted[0] if wanted else rng.choice(targets)
    elif action is Action.CHECK:
        done = set(_checks(s, p))
        fresh = [t for t in targets if t not in done]
        if _negative(p):
            fresh = [t for t in fresh if (q := s.player(t)) is not None and q.clan != p.clan]
        target = rng.choice(fresh) if fresh else None
    elif action is Action.PROTECT:
        target = _protect(s, know, p, targets, rng)
    elif action is Action.SHOOT:
        bad = [t for t, role in _checks(s, p).items() if _bad(role) and t in targets]
        target = bad[0] if bad else None
    else:
        target = rng.choice(targets)
    if target is None:
        return
    rest = [t for t in targets if t != target]
    fallback = rng.choice(rest) if rest and action is not Action.SHOOT else None
    _send(table, c.NightOrder(by=uid, at=table.tick(), target=target, fallback=fallback))
    if action is Action.CHECK and _negative(p):
        _advocate_learns(table, know, p)


def _advocate_learns(table: Table, know: Knowledge, p: Player) -> None:
    """The advocate's check of tonight is read at dawn; what he learned last night his
    clan knows now (an investigator, the operative)."""
    if p.clan is None:
        return
    for t, role in _checks(table.state, p).items():
        if role in ("investigator", "operative"):
            know.clan_knows.setdefault(p.clan, set()).add(t)


def _protect(s: GameState, know: Knowledge, p: Player, targets: list[int],
             rng: random.Random) -> int:
    mafia_alive = any(_negative(q) for q in s.living())
    if mafia_alive and know.claimed in targets:
        return know.claimed
    if p.uid in targets:
        return p.uid
    return rng.choice(targets)


def _occult(table: Table) -> None:
    s = table.state
    if not s.options.reveal_roles:
        return
    for p in s.living():
        if p.role is None or not info(p.role).raises_ghosts:
            continue
        for t in legal_targets(s, p.uid, "occult"):
            q = s.player(t)
            if q is not None and _negative(q):
                _send(table, c.OccultExclude(by=p.uid, at=table.tick(), target=t))


def _send(table: Table, cmd: c.Command) -> None:
    try:
        table.send(cmd)
    except RuleError:
        table.played.rejected += 1


def play_strategic(table: Table, max_phases: int = 200) -> Table:
    """Start the game at `table` (its signup done) and play it to the end with strategic
    agents, or for `max_phases` phases."""
    table.send(c.Start(by=table.state.master, at=table.clock, confirm=True))
    know = Knowledge()
    for _ in range(max_phases):
        if table.state.over:
            break
        strategic_phase(table, know)
    return table
