"""Setups as played: the key that makes "the same roles typed differently" one setup,
and a server's history per setup (/stats setups, the line beside the estimate).

A setup is what was dealt, not what was typed: the roles with their counts and clans,
the seats (citizens included) and the modules. "mafia x2; detective" and
"мафиози ×2; следователь" on six seats are one setup.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from core.game.roles import Role
from core.game.rules.setup import Composition, composition_for
from core.game.state import GameState, Options, PhaseKind
from core.play.balance import DRAW, SIDE_ORDER, side_name, winners_of
from core.text.i18n import t

MODULES = ("extra_roles", "currency", "shop", "crypto")
MODULE_NAMES = {"extra_roles": "additional_roles", "currency": "currency", "shop": "inventory",
                "crypto": "cryptography"}  # the `module.<name>.name` catalogue keys


@dataclass(frozen=True, order=True)
class SetupKey:
    """A dealt composition, normalised: (role, clan, count) rows and the modules."""

    rows: tuple[tuple[str, int, int], ...]
    modules: tuple[str, ...]

    @property
    def seats(self) -> int:
        return sum(n for _, _, n in self.rows)


def key_of(comp: Composition, options: Options) -> SetupKey:
    rows = tuple((role, clan or 0, n) for role, n, clan in comp.describe())
    return SetupKey(rows, tuple(m for m in MODULES if getattr(options, m)))


def key_of_setup(roles: str | None, seats: int, options: Options) -> SetupKey:
    """The key of a setup about to be dealt on `seats` seats."""
    return key_of(composition_for(roles, seats, extra_roles=options.extra_roles), options)


def key_of_game(state: GameState) -> SetupKey:
    """The key of a dealt game: its seats' roles and clans (the deal, whoever typed it)."""
    comp = Composition()
    for p in state.players:
        if p.role is not None:
            comp.add(p.role, p.clan)
    return key_of(comp, state.options)


@dataclass
class History:
    games: int = 0
    wins: dict[str, int] = field(default_factory=dict)  # side key (core.play.balance) -> games
    days: int = 0

    @property
    def mean_days(self) -> float:
        return self.days / self.games if self.games else 0.0


def histories(states: Iterable[GameState]) -> dict[SetupKey, History]:
    """Finished games (ended, never cancelled) by setup."""
    out: dict[SetupKey, History] = {}
    for s in states:
        if s.phase is not PhaseKind.ENDED:
            continue
        h = out.setdefault(key_of_game(s), History())
        h.games += 1
        h.days += s.number
        for side in winners_of(s, len(s.clans) > 1):
            h.wins[side] = h.wins.get(side, 0) + 1
    return out


def history_line(h: History, lang: str) -> str:
    """"Played here 12 times: town won 7 (58%), mafia won 5 (42%); about 4.5 days long"."""
    return t("balance.history", lang, count=h.games, wins=wins_text(h, lang),
             days=days_text(h, lang))


def days_text(h: History, lang: str) -> str:
    """The mean length with its own plural ("about 1 day", "около 1,5 дня"): the games'
    count and the days' count need not agree."""
    return t("balance.mean_days", lang, count=round(h.mean_days, 1))


def win_share(h: History, side: str) -> int:
    """A side's share of the games, in whole per cent (a game may have several winners,
    so the shares need not add to 100)."""
    return round(100 * h.wins.get(side, 0) / h.games) if h.games else 0


def wins_text(h: History, lang: str) -> str:
    """Each side's wins and share of the games: "Town won 7 (58%)"."""
    keys = sorted(h.wins, key=lambda k: (SIDE_ORDER.get(k.split(":")[0], 2), k))
    return ", ".join(t("balance.history_win", lang, side=side_name(k, lang), count=h.wins[k],
                       share=win_share(h, k))
                     for k in keys if k != DRAW or h.wins[k])


def setup_text(key: SetupKey, lang: str) -> str:
    """The setup in words: "mafioso ×2 (clan 1), investigator, citizen ×3; modules: …"."""
    order = {r: i for i, r in enumerate(Role)}
    clans = {clan for _, clan, _ in key.rows if clan}
    parts = []
    for role, clan, n in sorted(key.rows, key=lambda r: (order[Role(r[0])], r[1])):
        name = t(f"role.{role}.name", lang)
        count = f" ×{n}" if n > 1 else ""
        where = f" ({t('balance.side.clan', lang, number=clan)})" if len(clans) > 1 else ""
        parts.append(f"{name}{count}{where}")
    text = ", ".join(parts)
    if key.modules:
        names = ", ".join(t(f"module.{MODULE_NAMES[m]}.name", lang) for m in key.modules)
        text += "; " + t("stats.setups.modules", lang, names=names)
    return text
