"""The after-game archive: one self-contained HTML file (inline style, SVG, script).

Everything a reader needs is in the file: no external script, style, font or
image, so it opens offline and can be shared as it is. It reads fully without
JavaScript; the script only drives the "hide roles" toggle, which hides every
element marked `secret` (roles, teams, the private channels, the nights, the
hidden traffic) so a reader can step through the days without spoilers.

The markup is templates/archive.html.j2; this module only answers its questions
(`Reader`) in plain text. The template escapes every answer (autoescape), so user
text (names, stories, whispers, reasons, the title) and catalogue text alike are
text on the page, whatever a template forgets.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from core.game.events import Event
from core.game.rules.items import ware
from core.game.team import Team
from core.sight.desk import DESK_ONLY, desk_text
from core.sight.narrate import describe, item_name, role_name, team_name, votes
from core.sight.record import GameRecord, PayLine, PlayerRow, Secret
from core.sight.timeline import DayTimeline
from core.text.i18n import has_key, t

from .svg import Chart, chart
from .templating import render_template

Names = Callable[[int], str]
Parts = list[tuple[str, bool]]  # a text in pieces, each bold or not (Markdown's **bold**)
SECTIONS = ("setup", "players", "feed", "days", "nights", "secrets", "payouts")
_BOLD = re.compile(r"\*\*(.+?)\*\*")


def when(value: datetime | str | None) -> str:
    if value is None:
        return "—"
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    # to the second when it has any: a deadline sits at its game's own second
    return value.strftime("%Y-%m-%d %H:%M:%S UTC" if value.second else "%Y-%m-%d %H:%M UTC")


def _clock(at: datetime | None, start: datetime | None) -> str:
    """A vote's moment within its day: to the second (votes often share a minute), the
    date only past the day's first date (the day's heading gives it)."""
    if at is None:
        return "—"
    same_day = start is None or at.date() == start.date()
    return at.strftime("%H:%M:%S" if same_day else "%d.%m %H:%M:%S")


def render(record: GameRecord, lang: str) -> str:
    return render_template("archive.html.j2", r=record, v=Reader(record, lang),
                           sections=SECTIONS)


def bold_parts(text: str) -> Parts:
    """`a **b** c` as [("a ", False), ("b", True), (" c", False)] (empty pieces left out)."""
    pieces = _BOLD.split(text)  # the captured bold text at every odd index
    return [(p, i % 2 == 1) for i, p in enumerate(pieces) if p]


@dataclass(frozen=True, slots=True)
class VoteRow:
    """A line of the day's votes table: the chart in words, for screen readers and search."""

    seq: int
    at: str  # UTC, to the second
    iso: str  # the moment for machines (<time datetime>)
    voter: str
    what: str
    void: bool
    weight: str
    note: str


@dataclass(frozen=True, slots=True)
class SecretBody:
    """A hidden message's content cell: a first line, a second one, the results."""

    text: str | None = None
    more: str | None = None
    results: list[Parts] = field(default_factory=list)


class Reader:
    """The record read in one language: every answer is plain text for the template."""

    def __init__(self, record: GameRecord, lang: str) -> None:
        self.record = record
        self.lang = lang
        self._master = t("term.master", lang)
        self._roles = {p.uid: p.role for p in record.players}

    def t(self, key: str, **values: Any) -> str:
        return t(key, self.lang, **values)

    def name(self, uid: int | None) -> str:
        if uid is None:
            return "—"
        if uid == self.record.master:
            return self._master
        return self.record.names.get(uid, f"#{uid}")

    def when(self, value: datetime | str | None) -> str:
        return when(value)

    def role(self, role: str | None) -> str:
        return role_name(role, self.lang)

    def team(self, team: str | None) -> str:
        return team_name(team, self.lang) if team else "—"

    def rich(self, event: Event) -> Parts:
        """An event as the bot wrote it (the desk accounts in the desk's words)."""
        try:
            text = desk_text(event, self.name, self.lang) if event.kind in DESK_ONLY \
                else describe(event, self.name, self.lang, when)
        except (KeyError, ValueError):
            text = event.kind
        return bold_parts(text)

    # --- setup and players ---------------------------------------------------------

    def setup_rows(self) -> list[tuple[str, str]]:
        r, lang = self.record, self.lang
        rows = [(t("archive.html.started", lang), when(r.started)),
                (t("archive.html.ended", lang), when(r.ended)),
                (t("archive.html.players_count", lang), str(len(r.players)))]
        if r.roles_text:
            rows.append((t("archive.html.roles_text", lang), r.roles_text))
        if r.composition:
            rows.append((t("archive.html.composition", lang),
                         ", ".join(self._dealt(row) for row in r.composition)))
        return rows

    def _dealt(self, row: list[object]) -> str:
        role, count, clan = row[0], int(str(row[1])), row[2]
        text = role_name(str(role), self.lang) + (f" ×{count}" if count > 1 else "")
        if clan:
            text += f" ({team_name(Team.clan(int(str(clan))), self.lang)})"
        return text

    def options(self) -> list[tuple[str, str, str]]:
        return [(key, self._option_label(key), self._value(value))
                for key, value in self.record.options.model_dump().items()]

    def _option_label(self, key: str) -> str:
        for label in (f"signup.module.{key}", f"archive.html.option.{key}",
                      f"cmd.game.options.param.{key}.description"):
            if has_key(label):
                return self.t(label)
        return key

    def _value(self, value: object) -> str:
        if isinstance(value, bool):
            return self.t("archive.html.yes" if value else "archive.html.no")
        return str(value)

    def fate(self, p: PlayerRow) -> str:
        if p.death_cause is None:
            return self.t("term.alive")
        return self.t("archive.html.fate", cause=self.t(f"cause.{p.death_cause}"),
                      phase=self.t(f"archive.html.phase.{p.death_phase}",
                                   number=p.death_number or 0))

    def result(self) -> str:
        if self.record.draw:
            return self.t("archive.html.draw")
        return self.t("archive.html.winners", winners=", ".join(
            team_name(w, self.lang) for w in self.record.winners) or "—")

    # --- days ----------------------------------------------------------------------

    def chart(self, tl: DayTimeline) -> Chart:
        """The day's chart, described for a screen reader by the votes' table beside it."""
        return chart(tl, self.name, self.lang, described_by=f"votes-{tl.day}")

    def day_times(self, tl: DayTimeline) -> str:
        return self.t("archive.html.day_times", start=when(tl.start),
                      deadline=when(tl.deadline), end=when(tl.end))

    def vote_rows(self, tl: DayTimeline) -> list[VoteRow]:
        """Every vote, change and withdrawal of the day, in order."""
        rows = []
        for step in tl.steps:
            if step.target is None:
                what = self.t("archive.html.withdrawn", name=self.name(step.previous))
            elif step.previous is not None:
                what = self.t("archive.html.changed", name=self.name(step.target),
                              previous=self.name(step.previous))
            else:
                what = self.name(step.target)
            notes = []
            if step.shouts:
                notes.append(self.t("archive.html.shout", count=step.shouts))
            if step.void:
                notes.append(self.t("archive.html.void"))
            if step.seq == tl.hammer_seq:
                notes.append(self.t("archive.html.hammer"))
            weight = votes(step.weight, self.lang) if step.target is not None else "—"
            rows.append(VoteRow(seq=step.seq, at=_clock(step.at, tl.start),
                                iso=step.at.isoformat() if step.at else "",
                                voter=self.name(step.voter),
                                what=what, void=step.void, weight=weight,
                                note="; ".join(notes)))
        return rows

    def final(self, tl: DayTimeline) -> list[tuple[str, str]]:
        return [(self.name(uid), votes(n, self.lang))
                for uid, n in sorted(tl.final.items(), key=lambda kv: -kv[1])]

    def verdict(self, tl: DayTimeline) -> str:
        if tl.hanged is None:
            return self.t("archive.html.nobody_hanged")
        return self.t("archive.html.hanged", name=self.name(tl.hanged))

    def tie(self, tl: DayTimeline, decider: int | None) -> str:
        return self.t("archive.html.tie", tied=", ".join(self.name(u) for u in tl.tied),
                      name=self.name(tl.hanged or 0), decider=self.name(decider),
                      at=when(tl.hammer_at))

    # --- nights and the hidden traffic -----------------------------------------------

    def actor(self, uid: int) -> str:
        return f"{self.name(uid)} ({role_name(self._roles.get(uid), self.lang)})"

    def action(self, action: str | None) -> str:
        return self.t(f"action.{action}") if action else "—"

    def audience(self, event: Event) -> str:
        a = event.audience
        if a.kind == "public":
            return self.t("archive.html.to_all")
        if a.kind == "team":
            return team_name(a.team or "", self.lang)
        if a.kind == "master":
            return self._master
        return ", ".join(self.name(u) for u in a.players)

    def secret(self, s: Secret) -> SecretBody:
        if s.kind in ("whisper", "anon"):
            sig = self.role(s.signature) if s.signature else self.t("archive.html.unsigned")
            to = self.role(s.role) if s.role else self.t("archive.html.to_all")
            return SecretBody(text=self.t("archive.html.post", to=to, signature=sig),
                              more=s.text or "")
        results = [self.rich(ev) for ev in s.results]
        if s.kind == "effect":
            return SecretBody(results=results)
        if s.kind == "shout":
            return SecretBody(text=self.name(s.target or 0))
        what = s.what or ""
        extra = [item_name(what, None, self.lang) if ware(what) is not None else what]
        if s.target is not None:
            extra.append(self.name(s.target))
        if s.against:
            extra.append(s.against)
        if s.if_hanged is not None:
            extra.append(self.t("archive.html.if_hanged", name=self.name(s.if_hanged)))
        return SecretBody(text=" — ".join(extra), results=results)

    # --- payouts -------------------------------------------------------------------

    def arithmetic(self, line: PayLine) -> str:
        if line.reason == "prize" and line.pool is not None:
            return self.t("archive.html.pay.prize", pool=line.pool, shares=line.shares or 0,
                          amount=line.amount)
        if line.unit is not None:
            return self.t("archive.html.pay.times", count=line.count, unit=line.unit,
                          amount=line.amount)
        return self.t("archive.html.pay.plain", amount=line.amount)

    def totals(self) -> list[tuple[int, int]]:
        totals: dict[int, int] = {}
        for line in self.record.payouts:
            totals[line.uid] = totals.get(line.uid, 0) + line.amount
        return list(totals.items())
