"""Files built at delivery time from committed data: a day's vote picture, the archive.

The work is CPU-bound (a replay, matplotlib, the HTML), so the Discord layer runs
`attachments` off the event loop (a worker thread of its own): interactions keep
flowing while a 15-day archive is built.
"""

from __future__ import annotations

import asyncio
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, NamedTuple

from core.game.state import GameState
from core.sight.record import (
    FILES_KIND_ARCHIVE,
    FILES_KIND_TIMELINE,
    LogRow,
    build,
    names_of,
    timeline_of,
)
from core.storage.archive import finished_input, initial_and_log
from core.storage.service import GameService

from .html import render

File = tuple[str, bytes]


class Made(NamedTuple):
    """A file to attach: its name, its bytes, and what it shows in words (the
    attachment's description: alt text for a picture)."""

    name: str
    data: bytes
    description: str

# matplotlib's own caches (fonts, text layout) are not meant for concurrent use: one
# build at a time (two games ending together wait their turn, off the event loop).
_ONE_AT_A_TIME = threading.Lock()
# ... in one thread of their own: a picture's canvas is made once per thread (about 1 s,
# archive/picture.py), and the loop's default threads would each make one while
# waiting for the lock, and hold threads others need.
_BUILDER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mafia-files")


def day_picture(initial: GameState, log: list[LogRow], day: int, lang: str) -> File | None:
    made = described_day(initial, log, day, lang)
    return None if made is None else (made.name, made.data)


def described_day(initial: GameState, log: list[LogRow], day: int, lang: str) -> Made | None:
    """Day `day`'s vote picture and its alt text."""
    from .alt import day_alt
    from .picture import timeline_png  # matplotlib: imported in the worker, not on the loop

    tl = timeline_of(initial, log, day)
    if tl is None:
        return None
    names = names_of(log)

    def name(uid: int) -> str:
        return names.get(uid, f"#{uid}")

    png = timeline_png(tl, name, lang)
    return Made(f"day-{day}-votes.png", png, day_alt(tl, name, lang))


def archive_file(initial: GameState, log: list[LogRow], lang: str) -> File:
    html = render(build(initial, log), lang)
    return f"{slug(initial.title)}-archive.html", html.encode()


def slug(title: str) -> str:
    """A file name from a title: letters and digits kept (Cyrillic too), the rest '-'."""
    text = re.sub(r"[^\w]+", "-", title, flags=re.UNICODE).strip("-_")[:40]
    return text or "game"


def files_now(initial: GameState, log: list[LogRow], specs: list[dict[str, Any]],
              lang: str) -> list[Made]:
    """Build the files `specs` ask for, each with its description (CPU-bound: call it
    off the event loop)."""
    from .alt import archive_alt

    out: list[Made] = []
    with _ONE_AT_A_TIME:
        for spec in specs:
            if spec.get("kind") == FILES_KIND_TIMELINE:
                made = described_day(initial, log, int(spec["day"]), lang)
                if made is not None:
                    out.append(made)
            elif spec.get("kind") == FILES_KIND_ARCHIVE:
                name, data = archive_file(initial, log, lang)
                out.append(Made(name, data, archive_alt(initial.title, lang)))
    return out


async def attachments(service: GameService, game_id: int, specs: list[dict[str, Any]],
                      lang: str) -> list[Made]:
    """The files `specs` ask for. The archive only for a finished game (NotFinished)."""
    if not specs:
        return []
    if any(s.get("kind") == FILES_KIND_ARCHIVE for s in specs):
        initial, log, _ = await finished_input(service, game_id)
    else:
        initial, log = await initial_and_log(service, game_id)
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(_BUILDER, files_now, initial, log, specs, lang)
