"""The vote timeline as inline SVG, for the HTML archive (no script, no external file).

Hand-written rather than matplotlib's SVG: a day's chart is a few kilobytes, so a
15-day archive stays far below its 1 MB budget, and the text stays selectable.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from html import escape

from core.i18n import t
from core.timeline import DayTimeline

from .palette import OKABE_ITO, SHOWN, SVG_DASHES
from .picture import ranked, span

Names = Callable[[int], str]
W, H = 760, 300
LEFT, RIGHT, TOP, BOTTOM = 44, 560, 16, 262  # the plot area; the legend goes right of it
SVG_MARKERS = ["circle", "rect", "tri", "diamond", "circle", "rect", "tri"]


def timeline_svg(tl: DayTimeline, names: Names, lang: str) -> str:
    start, end = span(tl)
    total = (end - start).total_seconds() or 1.0
    top = max([v / 2 for s in tl.steps for v in s.totals.values()] + [1.0])
    ymax = top * 1.15 + 0.5

    def x(at: datetime | None) -> float:
        at = at or start
        return LEFT + (RIGHT - LEFT) * (at - start).total_seconds() / total

    def y(votes: float) -> float:
        return BOTTOM - (BOTTOM - TOP) * votes / ymax

    label = escape(t("archive.chart.title", lang, number=tl.day))
    out = [f'<svg class="chart" viewBox="0 0 {W} {H}" width="{W}" height="{H}" role="img" '
           f'aria-label="{label}" xmlns="http://www.w3.org/2000/svg">',
           f'<rect x="{LEFT}" y="{TOP}" width="{RIGHT - LEFT}" height="{BOTTOM - TOP}" '
           'fill="#fff" stroke="#888"/>']
    step = 1 if ymax <= 8 else 2 if ymax <= 16 else 5
    v = 0
    while v <= ymax:
        out.append(f'<line x1="{LEFT}" x2="{RIGHT}" y1="{y(v):.1f}" y2="{y(v):.1f}" '
                   f'stroke="#e4e4e4"/><text x="{LEFT - 6}" y="{y(v) + 4:.1f}" '
                   f'text-anchor="end" font-size="12">{v}</text>')
        v += step
    for i in range(5):
        at = start + (end - start) * i / 4
        fmt = "%d.%m %H:%M" if total > 86400 else "%H:%M"
        out.append(f'<text x="{x(at):.1f}" y="{BOTTOM + 16}" text-anchor="middle" '
                   f'font-size="12">{at.strftime(fmt)}</text>')
    out.append(f'<text x="{(LEFT + RIGHT) / 2}" y="{H - 4}" text-anchor="middle" '
               f'font-size="12">{escape(t("archive.chart.time", lang))}</text>')
    if tl.deadline is not None:
        dx = x(tl.deadline)
        out.append(f'<line x1="{dx:.1f}" x2="{dx:.1f}" y1="{TOP}" y2="{BOTTOM}" stroke="#000" '
                   f'stroke-dasharray="2 3"/><text x="{dx - 4:.1f}" y="{TOP + 14}" '
                   f'text-anchor="end" font-size="12">'
                   f'{escape(t("archive.chart.deadline", lang))}</text>')
    order = ranked(tl)
    for rank in reversed(range(len(order))):
        uid = order[rank]
        points = [(x(start), y(0))]
        for moment, halves in tl.series(uid):
            px = x(moment)
            points += [(px, points[-1][1]), (px, y(halves / 2))]
        points.append((x(end), points[-1][1]))
        path = " ".join(f"{px:.1f},{py:.1f}" for px, py in points)
        if rank < SHOWN:
            colour, dash = OKABE_ITO[rank], SVG_DASHES[rank]
            dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
            out.append(f'<polyline points="{path}" fill="none" stroke="{colour}" '
                       f'stroke-width="2.5"{dash_attr}/>')
            ly = TOP + 14 + 20 * rank
            votes = _num(tl.final.get(uid, 0) / 2, lang)
            out.append(f'<line x1="{RIGHT + 10}" x2="{RIGHT + 40}" y1="{ly - 4}" y2="{ly - 4}" '
                       f'stroke="{colour}" stroke-width="2.5"{dash_attr}/>'
                       f'{_marker(SVG_MARKERS[rank], RIGHT + 25, ly - 4, colour)}'
                       f'<text x="{RIGHT + 46}" y="{ly}" font-size="13">'
                       f'{escape(names(uid))} — {votes}</text>')
        else:
            out.append(f'<polyline points="{path}" fill="none" stroke="#aaa" '
                       'stroke-width="1"/>')
    if tl.hanged is not None and tl.hammer_at is not None:
        votes_f = tl.final.get(tl.hanged, 0) / 2
        hx, hy = x(tl.hammer_at), y(votes_f)
        key = "archive.chart.hammer_tie" if tl.tied else "archive.chart.hammer"
        text = t(key, lang, name=names(tl.hanged), votes=_num(votes_f, lang))
        out.append(f'<g class="hammer"><polygon points="{_star(hx, hy)}" fill="#D55E00" '
                   f'stroke="#000"/><text x="{min(hx + 10, RIGHT - 4):.1f}" y="{hy - 10:.1f}" '
                   f'font-size="13" font-weight="bold" '
                   f'text-anchor="{"start" if hx < (LEFT + RIGHT) / 2 else "end"}">'
                   f'{escape(text)}</text></g>')
    if not tl.steps:
        out.append(f'<text x="{(LEFT + RIGHT) / 2}" y="{(TOP + BOTTOM) / 2}" '
                   f'text-anchor="middle" font-size="15">'
                   f'{escape(t("archive.chart.no_votes", lang))}</text>')
    out.append("</svg>")
    return "".join(out)


def _num(votes: float, lang: str) -> str:
    text = f"{votes:g}"
    return text.replace(".", ",") if lang == "ru" else text


def _marker(kind: str, cx: float, cy: float, colour: str) -> str:
    if kind == "rect":
        return f'<rect x="{cx - 4}" y="{cy - 4}" width="8" height="8" fill="{colour}"/>'
    if kind == "tri":
        return f'<polygon points="{cx},{cy - 5} {cx - 5},{cy + 4} {cx + 5},{cy + 4}" ' \
               f'fill="{colour}"/>'
    if kind == "diamond":
        return f'<polygon points="{cx},{cy - 5} {cx - 5},{cy} {cx},{cy + 5} {cx + 5},{cy}" ' \
               f'fill="{colour}"/>'
    return f'<circle cx="{cx}" cy="{cy}" r="4" fill="{colour}"/>'


def _star(cx: float, cy: float, r: float = 10) -> str:
    import math

    pts = []
    for i in range(10):
        rad = r if i % 2 == 0 else r * 0.45
        a = math.pi / 2 + i * math.pi / 5
        pts.append(f"{cx + rad * math.cos(a):.1f},{cy - rad * math.sin(a):.1f}")
    return " ".join(pts)
