"""Who shares which private channel, and whom a card names: pure functions of the state.

The rules ('Роли'): "Все отрицательные герои одного клана знают друг друга.
Следователь знает сержанта. Остальные игроки друг друга не знают." and, for the
operative, "знает следователя и следователь знает его. Становясь следователем,
сержант узнает опера, равно как и опер его." Knowing is one way for the
investigator and the sergeant, so they share no channel (unless the master's
option `sergeant_in_police` says so); the police channel holds whoever holds or
held the investigator's role, and the operative. The Discord layer calls these
for overwrites; the engine calls them for `team_changed` events and cards.
"""

from __future__ import annotations

from core.game.roles import Circle, Role, info, rows
from core.game.state import GameState
from core.game.team import Team, TeamKind

GRAVEYARD = Team.of(TeamKind.GRAVEYARD)  # the dead's channel: no team anyone knows the roles of
POLICE = Team.of(TeamKind.POLICE)


def teams(state: GameState) -> dict[Team, list[int]]:
    """Every private channel's members, dead members included (they keep reading)."""
    out: dict[Team, list[int]] = {}
    for clan in state.clans:
        out[Team.clan(clan.number)] = [p.uid for p in state.clan_members(clan.number)]
    # The police circle's roles in the catalogue's order, then those in it by a master
    # option (the sergeant). A promoted sergeant holds the investigator's role: he is
    # among the first.
    police = [ri for ri in rows() if ri.circle is Circle.POLICE]
    police = [ri for ri in police if ri.circle_option is None] + [
        ri for ri in police
        if ri.circle_option is not None and getattr(state.options, ri.circle_option)]
    members = [p.uid for ri in police for p in state.with_role(ri.role, alive=False)]
    if members:
        out[POLICE] = members
    if state.options.graveyard or state.spectators:  # the dead talk among themselves
        dead = [p.uid for p in state.players if not p.alive]
        if dead or state.spectators:  # a spectator opens it (team_access adds him)
            out[GRAVEYARD] = dead
    return out


SPECTATED_KINDS = frozenset({TeamKind.CLAN, TeamKind.POLICE})  # with spectators_see_teams


def spectated(state: GameState) -> list[Team]:
    """The channels a spectator reads (RULES.md, "Spectators"): the dead players'
    channel, and with the master's option the team channels; never a seat's place."""
    return [team for team in teams(state) if team == GRAVEYARD or (
        state.options.spectators_see_teams and team.kind in SPECTATED_KINDS)]


def team_access(state: GameState, team: str) -> tuple[list[int], list[int]]:
    """A private channel's readers and writers (the dead read only, unless allowed);
    `team` is a Team or its stored string (the Discord layer's channel key)."""
    parsed = Team.parse(team)
    members = teams(state).get(parsed, []) if parsed is not None else []
    writers = list(members) if team == GRAVEYARD else [
        uid for uid in members
        if (p := state.player(uid)) and (p.alive or state.options.dead_write)
    ]
    if parsed is not None and parsed in spectated(state):
        # Spectators talk with the dead (no living player reads their channel); the
        # team channels, where the living write, they only read.
        watching = [s.uid for s in state.spectators]
        members = [*members, *watching]
        if parsed == GRAVEYARD:
            writers = [*writers, *watching]
    if state.options.master_reads_teams and members and state.master not in members:
        members = [*members, state.master]  # master option: reads, never writes
    return members, writers


def known_to(state: GameState, uid: int) -> list[int]:
    """Whom the rules let this player know by role: his channel mates, and for whoever
    holds the investigator's role the sergeants too ("Следователь знает сержанта", one
    way: a sergeant's card names nobody)."""
    out: list[int] = []
    for team, members in teams(state).items():
        if team == GRAVEYARD or uid not in members:
            continue
        out += [m for m in members if m != uid and m not in out]
    p = state.player(uid)
    for role in (knows(p.role) if p is not None else ()):
        out += [q.uid for q in state.with_role(role, alive=False)
                if q.uid != uid and q.uid not in out]
    return out


def known_by(state: GameState, uid: int) -> list[int]:
    """Who knows this player by role: every q (in seat order) with `uid in known_to(q)`,
    the channels worked out once (asking known_to of each player did it per player:
    a death at 30 players cost more than the rest of the night)."""
    target = state.player(uid)
    shared = {m for team, members in teams(state).items()
              if team != GRAVEYARD and uid in members for m in members}
    return [q.uid for q in state.players if q.uid != uid and (
        q.uid in shared or (target is not None and target.role in knows(q.role)))]


def knows(role: Role | None) -> tuple[Role, ...]:
    """The roles whose holders this role learns at the deal beyond his channel mates."""
    return info(role).knows if role is not None else ()
