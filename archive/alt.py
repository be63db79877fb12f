"""Alt text: what each picture and file the bot posts shows, in words (Discord's
attachment description), for screen readers and search (issue 34, point 4)."""

from __future__ import annotations

from collections.abc import Callable

from core.sight.timeline import DayTimeline
from core.text.i18n import t

#: Discord's limit on an attachment's description.
LIMIT = 1024
LISTED = 12  # candidates named with their count; the rest summed up


def _votes(halves: int, lang: str) -> str:
    count: int | float = halves // 2 if halves % 2 == 0 else halves / 2
    return t("vote.count", lang, count=count)


def day_alt(tl: DayTimeline, names: Callable[[int], str], lang: str) -> str:
    """"Day 2, votes over time: Don hanged with 5 votes of 9 (the deciding vote by Anna
    at 18:05 UTC). Final count: Don 5 votes, Anna 3 votes, Boris 1 vote."."""
    if not tl.steps:
        return t("alt.day_no_votes", lang, number=tl.day)
    total = sum(tl.final.values())
    if tl.hanged is not None:
        key = "alt.day_hanged_tie" if len(tl.tied) > 1 else "alt.day_hanged"
        result = t(key, lang, name=names(tl.hanged), votes=_votes(tl.final.get(tl.hanged, 0),
                                                                   lang),
                   total=_votes(total, lang))
        if tl.hammer_by is not None and tl.hammer_at is not None:
            result += " " + t("alt.day_hammer", lang, name=names(tl.hammer_by),
                              time=tl.hammer_at.strftime("%H:%M"))
    else:
        result = t("alt.day_nobody", lang, total=_votes(total, lang))
    ranked = sorted(tl.final.items(), key=lambda kv: (-kv[1], tl.candidates.index(kv[0])
                                                       if kv[0] in tl.candidates else 0))
    counts = [t("alt.day_count", lang, name=names(uid), votes=_votes(n, lang))
              for uid, n in ranked[:LISTED] if n]
    if len(ranked) > LISTED:
        counts.append(t("alt.day_more", lang, count=len(ranked) - LISTED))
    text = t("alt.day", lang, number=tl.day, result=result,
             counts=", ".join(counts) or "—", count=len(tl.steps))
    return text if len(text) <= LIMIT else text[: LIMIT - 1] + "…"


def archive_alt(title: str, lang: str) -> str:
    text = t("alt.archive", lang, title=title)
    return text if len(text) <= LIMIT else text[: LIMIT - 1] + "…"
