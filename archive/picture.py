"""The day's vote timeline as a PNG (matplotlib, Agg: no display needed).

Made for Discord's preview: a 16:9 picture, large type, at most `SHOWN`
candidates in colour (Okabe-Ito, with a line style and a marker each, so the
lines differ without colour too), the others thin and grey. Deterministic: the
same timeline gives the same bytes (no timestamps in the PNG's metadata).
"""

from __future__ import annotations

import struct
import threading
import zlib
from collections.abc import Callable
from datetime import datetime, timedelta

import numpy as np
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.dates import AutoDateLocator, DateFormatter, date2num
from matplotlib.figure import Figure

from core.sight.timeline import DayTimeline
from core.text.i18n import t

from .layout import ranked, span
from .palette import SHOWN, style_of

Names = Callable[[int], str]

_PER_THREAD = threading.local()


def _canvas() -> tuple[Figure, Axes]:
    """This thread's figure, emptied of the last picture's data.

    Building a Figure and its Axes (ticks, spines, fonts) cost a third of a picture:
    one per thread is made once and redrawn. Everything a picture adds (lines,
    annotations, the legend) is removed here and every limit is set again, so the
    bytes are those of a fresh figure."""
    made: tuple[Figure, Axes] | None = getattr(_PER_THREAD, "canvas", None)
    if made is None:
        fig = Figure(figsize=(9.6, 5.4), dpi=100)
        FigureCanvasAgg(fig)
        # Fixed margins: tight_layout would lay the text out twice (half the time).
        fig.subplots_adjust(left=0.08, right=0.70, top=0.90, bottom=0.14)
        ax = fig.add_subplot()
        ax.grid(True, color="#dddddd", linewidth=0.8)
        ax.tick_params(labelsize=14)
        made = _PER_THREAD.canvas = (fig, ax)
    fig, ax = made
    for artist in [*ax.lines, *ax.texts, *ax.patches, *ax.collections]:
        artist.remove()
    if ax.legend_ is not None:
        ax.legend_.remove()
    return fig, ax


def timeline_png(tl: DayTimeline, names: Names, lang: str) -> bytes:
    fig, ax = _canvas()
    start, end = span(tl)
    order = ranked(tl)
    handles: list[object] = []
    for i, uid in enumerate(reversed(order)):
        rank = len(order) - 1 - i
        xs, ys = _steps(tl, uid, start, end)
        if rank < SHOWN:
            colour, dash, marker = style_of(rank)
            every = max(1, (len(xs) - 2) // 10)  # at most about ten markers a line
            [line] = ax.step(xs, ys, where="post", color=colour, linestyle=dash, linewidth=3,
                    marker=marker, markersize=8,
                    markevery=list(range(1, len(xs) - 1, every)) or None,
                    label=_label(tl, uid, names, lang), zorder=3 + SHOWN - rank)
            handles.insert(0, line)
        else:
            ax.step(xs, ys, where="post", color="#999999", linewidth=1.0, zorder=2)
    if tl.deadline is not None:
        ax.axvline(date2num(tl.deadline), color="#000000", linestyle=":", linewidth=1.5)
        ax.annotate(t("archive.chart.deadline", lang), (date2num(tl.deadline), 1.0),
                    xycoords=("data", "axes fraction"), xytext=(-4, -4),
                    textcoords="offset points", ha="right", va="top", fontsize=14)
    if tl.hanged is not None and tl.hammer_at is not None:
        votes = tl.final.get(tl.hanged, 0) / 2
        ax.plot([date2num(tl.hammer_at)], [votes], marker="*", markersize=22,
                color="#D55E00", markeredgecolor="#000000", zorder=20, linestyle="none")
        key = "archive.chart.hammer_tie" if tl.tied else "archive.chart.hammer"
        left = tl.hammer_at - start < (end - start) / 2  # the label goes toward the middle
        ax.annotate(t(key, lang, name=_short(names(tl.hanged), 24), votes=_num(votes, lang)),
                    (date2num(tl.hammer_at), votes), xytext=(10 if left else -10, 12),
                    ha="left" if left else "right",
                    textcoords="offset points", fontsize=14, fontweight="bold", zorder=21,
                    bbox={"boxstyle": "round", "fc": "#ffffff", "ec": "#D55E00", "alpha": 0.9})
    # A fixed y: placing the title automatically measures every tick label (a fifth
    # of the time) to find what this chart never has, labels above the axes.
    ax.set_title(t("archive.chart.title", lang, number=tl.day), fontsize=19, loc="left",
                 y=1.0)
    ax.set_ylabel(t("archive.chart.votes", lang), fontsize=15)
    ax.set_xlabel(t("archive.chart.time", lang), fontsize=15)
    ax.set_xlim(date2num(start), date2num(end + (end - start) * 0.02))
    top = max([v / 2 for s in tl.steps for v in s.totals.values()] + [1])
    ax.set_ylim(0, top * 1.25 + 0.5)
    ax.xaxis.set_major_locator(AutoDateLocator(maxticks=6))
    long = end - start > timedelta(days=1)
    ax.xaxis.set_major_formatter(DateFormatter("%d.%m %H:%M" if long else "%H:%M"))
    if not tl.steps:
        ax.text(0.5, 0.5, t("archive.chart.no_votes", lang), transform=ax.transAxes,
                ha="center", va="center", fontsize=16)
    else:
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=14,
                  frameon=False, handlelength=3)
    return _png(fig)


def _png(fig: Figure) -> bytes:
    """The drawn figure as an RGB PNG with no metadata (the bytes are deterministic).

    Written here rather than by Pillow: Pillow filters every row (adaptive filtering),
    which cost four fifths of the encoding; a chart is mostly flat colour, so unfiltered
    rows and zlib's fastest level give the same size (about 46 KB) in a third of the
    time. The figure is opaque, so the alpha channel is left out."""
    canvas = fig.canvas
    assert isinstance(canvas, FigureCanvasAgg)
    canvas.draw()
    rgba = np.asarray(canvas.buffer_rgba())
    height, width = rgba.shape[:2]
    rows = np.zeros((height, 1 + 3 * width), dtype=np.uint8)  # each row: filter 0, pixels
    rows[:, 1:] = rgba[:, :, :3].reshape(height, 3 * width)
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8-bit RGB
    return b"".join([b"\x89PNG\r\n\x1a\n", _chunk(b"IHDR", header),
                     _chunk(b"IDAT", zlib.compress(rows.tobytes(), 1)), _chunk(b"IEND", b"")])


def _chunk(kind: bytes, data: bytes) -> bytes:
    return (struct.pack(">I", len(data)) + kind + data
            + struct.pack(">I", zlib.crc32(kind + data)))


def _steps(tl: DayTimeline, uid: int, start: datetime, end: datetime
           ) -> tuple[list[float], list[float]]:
    moments, ys = [start], [0.0]
    for at, halves in tl.series(uid):
        moments.append(at or start)
        ys.append(halves / 2)
    moments.append(end)
    ys.append(ys[-1])
    return [float(x) for x in date2num(moments)], ys  # one conversion, not one a point


def _num(votes: float, lang: str) -> str:
    text = f"{votes:g}"
    return text.replace(".", ",") if lang == "ru" else text


def _short(name: str, most: int = 18) -> str:
    """A name cut to fit the legend beside the chart."""
    return name if len(name) <= most else name[: most - 1] + "…"


def _label(tl: DayTimeline, uid: int, names: Names, lang: str) -> str:
    return f"{_short(names(uid))} — {_num(tl.final.get(uid, 0) / 2, lang)}"
