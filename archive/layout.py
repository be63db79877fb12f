"""What the PNG and the SVG chart share: the candidates' order and the chart's time span.

Apart from picture.py so the HTML archive (and `mafia-bot web`) measure a chart
without importing matplotlib.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from core.sight.timeline import DayTimeline


def ranked(tl: DayTimeline) -> list[int]:
    """Candidates by importance: the hanged first, then by final and by highest count."""
    peak = {uid: max((s.totals.get(uid, 0) for s in tl.steps), default=0)
            for uid in tl.candidates}
    return sorted(tl.candidates, key=lambda u: (u != tl.hanged, -tl.final.get(u, 0),
                                                -peak[u], tl.candidates.index(u)))


def span(tl: DayTimeline) -> tuple[datetime, datetime]:
    moments = [s.at for s in tl.steps if s.at is not None]
    start = tl.start or (min(moments) if moments else None)
    end_candidates = [x for x in (tl.deadline, tl.end, *moments) if x is not None]
    end = max(end_candidates) if end_candidates else None
    if start is None or end is None:
        base = datetime(2000, 1, 1)
        return base, base + timedelta(hours=1)
    if end <= start:
        end = start + timedelta(minutes=1)
    return start, end
