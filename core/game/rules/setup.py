"""Role composition: presets by player count and a text format masters write.

Text format (one entry per ';' or line; a count as 'x2', '×2' or '2x'):
    clan A: mafioso x2, advocate; investigator; sergeant; bouncer; killer; citizen x4
Roles may be named in English or Russian. Mafiosi and advocates outside any
'clan' entry join clan 1. Missing seats are filled with honest citizens.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from core.game.errors import ErrorCode, SetupError
from core.game.roles import Role, Side, by_alias, info, rows

MIN_PLAYERS = 6
MAX_PLAYERS = 30
FILLER = Role.CITIZEN  # spare seats: no power, no company

_COUNT = re.compile(r"^(?:(?P<pre>\d+)\s*[x×х*]\s*)?(?P<name>.+?)(?:\s*[x×х*]\s*(?P<post>\d+))?$")
_CLAN = re.compile(r"^(?:clan|клан)\s+(?P<label>[\w-]+)\s*:\s*(?P<rest>.*)$", re.IGNORECASE)


@dataclass
class Composition:
    """Roles by seat-independent slot; `clans` holds the clan number of clan roles."""

    roles: list[Role] = field(default_factory=list)
    clans: list[int | None] = field(default_factory=list)

    def add(self, role: Role, clan: int | None, count: int = 1) -> None:
        for _ in range(count):
            self.roles.append(role)
            self.clans.append(clan if info(role).in_clan else None)

    @property
    def size(self) -> int:
        return len(self.roles)

    def counts(self) -> Counter[Role]:
        return Counter(self.roles)

    def clan_numbers(self) -> list[int]:
        return sorted({c for c in self.clans if c is not None})

    def describe(self) -> list[tuple[str, int, int | None]]:
        """(role, count, clan) rows in a stable order, for announcements."""
        rows: Counter[tuple[str, int | None]] = Counter(
            (str(r), c) for r, c in zip(self.roles, self.clans, strict=True)
        )
        order = {r: i for i, r in enumerate(Role)}
        return [
            (role, n, clan)
            for (role, clan), n in sorted(
                rows.items(), key=lambda kv: (kv[0][1] or 0, order[Role(kv[0][0])])
            )
        ]


def _role_named(name: str) -> Role:
    key = " ".join(name.strip().lower().split())
    aliases = by_alias()
    if key in aliases:
        return aliases[key]
    if key.endswith("s") and key[:-1] in aliases:
        return aliases[key[:-1]]
    raise SetupError(ErrorCode.SETUP_UNKNOWN_ROLE, name=name.strip())


def parse(text: str) -> Composition:
    comp = Composition()
    labels: dict[str, int] = {}
    entries = [e.strip() for e in re.split(r"[;\n]", text) if e.strip()]
    if not entries:
        raise SetupError(ErrorCode.SETUP_EMPTY)
    for entry in entries:
        clan: int | None = None
        m = _CLAN.match(entry)
        if m:
            label = m.group("label").lower()
            clan = labels.setdefault(label, len(labels) + 1)
            entry = m.group("rest")
        for part in (p.strip() for p in entry.split(",") if p.strip()):
            cm = _COUNT.match(part)
            if not cm:
                raise SetupError(ErrorCode.SETUP_UNREADABLE, entry=part)
            count = int(cm.group("pre") or cm.group("post") or 1)
            if not 1 <= count <= MAX_PLAYERS:
                raise SetupError(ErrorCode.SETUP_BAD_COUNT, entry=part)
            role = _role_named(cm.group("name"))
            if clan is not None and not info(role).in_clan:
                raise SetupError(ErrorCode.SETUP_NOT_CLAN_ROLE, role=str(role))
            comp.add(role, clan if clan is not None else 1, count)
    return comp


def validate(comp: Composition, players: int, *, extra_roles: bool) -> Composition:
    """Check a composition against the player count; fill spare seats with citizens."""
    if not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise SetupError(ErrorCode.SETUP_PLAYER_COUNT, count=players, min=MIN_PLAYERS,
                         max=MAX_PLAYERS)
    if comp.size > players:
        raise SetupError(ErrorCode.SETUP_TOO_MANY_ROLES, roles=comp.size, players=players)
    counts = comp.counts()
    for role in counts:
        if info(role).extra and not extra_roles:
            raise SetupError(ErrorCode.SETUP_NEEDS_EXTRA_ROLES, role=str(role))
    for ri in rows():
        if ri.unique and counts[ri.role] > 1:
            raise SetupError(ErrorCode.SETUP_UNIQUE_ROLE, role=str(ri.role))
    # The clan's turn-takers (the mafiosi): a game needs one, and so does every clan.
    leaders = {ri.role for ri in rows() if ri.rotates}
    if not any(counts[r] for r in leaders):
        raise SetupError(ErrorCode.SETUP_NO_MAFIA)
    for clan in comp.clan_numbers():
        members = [r for r, c in zip(comp.roles, comp.clans, strict=True) if c == clan]
        if not leaders & set(members):
            raise SetupError(ErrorCode.SETUP_CLAN_WITHOUT_MAFIOSO, clan=clan)
    for ri in rows():
        for needed in ri.requires:
            if counts[ri.role] and not counts[needed]:  # the investigator's has its own words
                code = ErrorCode.SETUP_NEEDS_INVESTIGATOR if needed is Role.INVESTIGATOR \
                    else ErrorCode.SETUP_NEEDS_ROLE
                raise SetupError(code, role=str(ri.role), needed=str(needed))
    full = Composition(list(comp.roles), list(comp.clans))
    full.add(FILLER, None, players - comp.size)
    if already_won(full):
        raise SetupError(ErrorCode.SETUP_ALREADY_WON)
    return full


def already_won(comp: Composition) -> bool:
    """Whether a side's goal already holds at the deal: every seat in one clan ("уничтожить
    всех, кроме представителей своего клана"). The positives and the neutrals cannot have
    won while a mafioso lives, and one is always dealt."""
    clans = set(comp.clans)
    return len(clans) == 1 and None not in clans


def negatives(comp: Composition) -> int:
    return sum(1 for r in comp.roles if info(r).side is Side.NEGATIVE)


def lopsided(comp: Composition) -> bool:
    """Negatives at half the seats or more: allowed (rival clans must still destroy each
    other), but likely decided early, so the master confirms it (RULES.md, composition)."""
    return negatives(comp) * 2 >= comp.size


def check_written(text: str, signed_up: int, *, extra_roles: bool) -> Composition:
    """/game setup: refuse at once, in /game start's own words, what the start would refuse
    with the players signed up so far (at least the minimum); only "more roles than
    players" is judged against the most players a game can have, since the signup is
    still open and the missing players may yet come."""
    comp = parse(text)
    if comp.size > MAX_PLAYERS:
        raise SetupError(ErrorCode.SETUP_TOO_MANY_ROLES, roles=comp.size, players=MAX_PLAYERS)
    validate(comp, max(signed_up, comp.size, MIN_PLAYERS), extra_roles=extra_roles)
    return comp


def preset(players: int, *, extra_roles: bool = False) -> Composition:
    """A balanced default for 6 to 30 players (RULES.md, 'Presets')."""
    if not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise SetupError(ErrorCode.SETUP_PLAYER_COUNT, count=players, min=MIN_PLAYERS,
                         max=MAX_PLAYERS)
    comp = Composition()
    dealt = [ri for ri in rows() if ri.preset_from is not None and players >= ri.preset_from
             and (extra_roles or not ri.extra)]
    # A quarter of the seats go to the clans (two from 20 players): their other roles
    # (the advocate, in clan 1) first, the turn-takers (mafiosi) fill the rest.
    clan_seats = max(1, players // 4)
    clans = 2 if players >= 20 else 1
    helpers = [ri.role for ri in dealt if ri.in_clan and not ri.rotates]
    leader = next(ri.role for ri in rows() if ri.rotates)
    for i in range(clan_seats - len(helpers)):
        comp.add(leader, 1 + i % clans)
    for role in helpers:
        comp.add(role, 1)
    for ri in dealt:
        if not ri.in_clan:
            comp.add(ri.role, None)
    return validate(comp, players, extra_roles=extra_roles)


def composition_for(text: str | None, players: int, *, extra_roles: bool) -> Composition:
    if text is None:
        return preset(players, extra_roles=extra_roles)
    return validate(parse(text), players, extra_roles=extra_roles)
