"""The vote timeline as inline SVG, for the HTML archive (no script, no external file).

Hand-written rather than matplotlib's SVG: a day's chart is a few kilobytes, so a
15-day archive stays far below its 1 MB budget, and the text stays selectable.
Here the chart is measured (`chart`: every position and label, as text); the
markup is templates/timeline.svg.j2, escaped by default like every page.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import ClassVar

from core.sight.timeline import DayTimeline
from core.text.i18n import t

from .layout import ranked, span
from .palette import OKABE_ITO, SHOWN, SVG_DASHES
from .templating import render_template

Names = Callable[[int], str]
W, H = 760, 300
LEFT, RIGHT, TOP, BOTTOM = 44, 560, 16, 262  # the plot area; the legend goes right of it
SVG_MARKERS = ["circle", "rect", "tri", "diamond", "circle", "rect", "tri"]


@dataclass(frozen=True, slots=True)
class Legend:
    y: int  # the baseline of the legend's text
    marker: str  # circle, rect, tri, diamond
    text: str


@dataclass(frozen=True, slots=True)
class Line:
    """One candidate's count over the day: in colour with a legend, or thin and grey."""

    points: str
    colour: str | None = None  # None: a grey line
    dash: str = ""
    legend: Legend | None = None


@dataclass(frozen=True, slots=True)
class Hammer:
    star: str
    x: str
    y: str
    anchor: str
    text: str


@dataclass(frozen=True, slots=True)
class Chart:
    """A day's chart measured: positions as the SVG writes them, labels as plain text."""

    W: ClassVar[int] = W
    H: ClassVar[int] = H
    LEFT: ClassVar[int] = LEFT
    RIGHT: ClassVar[int] = RIGHT
    TOP: ClassVar[int] = TOP
    BOTTOM: ClassVar[int] = BOTTOM
    MIDDLE: ClassVar[float] = (LEFT + RIGHT) / 2

    label: str
    time_label: str
    grid: list[tuple[str, str, int]] = field(default_factory=list)  # y, text's y, count
    ticks: list[tuple[str, str]] = field(default_factory=list)  # x, moment
    deadline: tuple[str, str, str] | None = None  # x, text's x, "deadline"
    lines: list[Line] = field(default_factory=list)  # in drawing order: the first last
    hammer: Hammer | None = None
    empty: str | None = None  # "No votes this day"
    described_by: str | None = None  # the id of the votes' table, in the archive


class _Scale:
    """Moments and vote counts to positions in the plot area."""

    def __init__(self, tl: DayTimeline) -> None:
        self.start, self.end = span(tl)
        self.total = (self.end - self.start).total_seconds() or 1.0
        top = max([v / 2 for s in tl.steps for v in s.totals.values()] + [1.0])
        self.ymax = top * 1.15 + 0.5

    def x(self, at: datetime | None) -> float:
        at = at or self.start
        return LEFT + (RIGHT - LEFT) * (at - self.start).total_seconds() / self.total

    def y(self, votes: float) -> float:
        return BOTTOM - (BOTTOM - TOP) * votes / self.ymax


def chart(tl: DayTimeline, names: Names, lang: str, described_by: str | None = None
          ) -> Chart:
    """The chart measured; `described_by`: the element that says it in words."""
    s = _Scale(tl)
    deadline = None
    if tl.deadline is not None:
        dx = s.x(tl.deadline)
        deadline = (f"{dx:.1f}", f"{dx - 4:.1f}", t("archive.chart.deadline", lang))
    return Chart(label=t("archive.chart.title", lang, number=tl.day),
                 time_label=t("archive.chart.time", lang), grid=_grid(s), ticks=_ticks(s),
                 deadline=deadline, lines=_lines(tl, s, names, lang),
                 hammer=_hammer(tl, s, names, lang),
                 empty=None if tl.steps else t("archive.chart.no_votes", lang),
                 described_by=described_by)


def timeline_svg(tl: DayTimeline, names: Names, lang: str) -> str:
    return render_template("timeline.svg.j2", chart=chart(tl, names, lang))


def _grid(s: _Scale) -> list[tuple[str, str, int]]:
    step = 1 if s.ymax <= 8 else 2 if s.ymax <= 16 else 5
    return [(f"{s.y(v):.1f}", f"{s.y(v) + 4:.1f}", v) for v in range(0, int(s.ymax) + 1, step)]


def _ticks(s: _Scale) -> list[tuple[str, str]]:
    fmt = "%d.%m %H:%M" if s.total > 86400 else "%H:%M"
    moments = [s.start + (s.end - s.start) * i / 4 for i in range(5)]
    return [(f"{s.x(at):.1f}", at.strftime(fmt)) for at in moments]


def _lines(tl: DayTimeline, s: _Scale, names: Names, lang: str) -> list[Line]:
    order = ranked(tl)
    out = []
    for rank in reversed(range(len(order))):
        uid = order[rank]
        points = [(s.x(s.start), s.y(0))]
        for moment, halves in tl.series(uid):
            px = s.x(moment)
            points += [(px, points[-1][1]), (px, s.y(halves / 2))]
        points.append((s.x(s.end), points[-1][1]))
        path = " ".join(f"{px:.1f},{py:.1f}" for px, py in points)
        if rank >= SHOWN:
            out.append(Line(points=path))
            continue
        votes = _num(tl.final.get(uid, 0) / 2, lang)
        legend = Legend(y=TOP + 14 + 20 * rank, marker=SVG_MARKERS[rank],
                        text=f"{names(uid)} — {votes}")
        out.append(Line(points=path, colour=OKABE_ITO[rank], dash=SVG_DASHES[rank],
                        legend=legend))
    return out


def _hammer(tl: DayTimeline, s: _Scale, names: Names, lang: str) -> Hammer | None:
    if tl.hanged is None or tl.hammer_at is None:
        return None
    votes = tl.final.get(tl.hanged, 0) / 2
    hx, hy = s.x(tl.hammer_at), s.y(votes)
    key = "archive.chart.hammer_tie" if tl.tied else "archive.chart.hammer"
    return Hammer(star=_star(hx, hy), x=f"{min(hx + 10, RIGHT - 4):.1f}", y=f"{hy - 10:.1f}",
                  anchor="start" if hx < (LEFT + RIGHT) / 2 else "end",
                  text=t(key, lang, name=names(tl.hanged), votes=_num(votes, lang)))


def _num(votes: float, lang: str) -> str:
    text = f"{votes:g}"
    return text.replace(".", ",") if lang == "ru" else text


def _star(cx: float, cy: float, r: float = 10) -> str:
    pts = []
    for i in range(10):
        rad = r if i % 2 == 0 else r * 0.45
        a = math.pi / 2 + i * math.pi / 5
        pts.append(f"{cx + rad * math.cos(a):.1f},{cy - rad * math.sin(a):.1f}")
    return " ".join(pts)
