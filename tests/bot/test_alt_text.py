"""Issue 34, point 4: every file the bot attaches carries Discord's description (alt
text) saying in words what it shows, in the game's language: the day's vote pictures,
the archive at the end, the master's log file."""

from __future__ import annotations

from datetime import datetime

from archive.alt import LIMIT, day_alt
from core.sight.timeline import DayTimeline, Step
from core.text.i18n import t as tr
from tests.bot.helpers import open_table
from tests.bot.test_archive_delivery import play
from tests.bot.test_full_game import ROLES
from tests.harness import Harness


async def test_every_attachment_has_a_description(h: Harness) -> None:
    t = await open_table(h, roles=ROLES)
    await t.do(t.master, "game start")
    await t.settle()
    await t.do(t.master, "master advance")  # day 0 -> night 0: the log has entries
    await t.settle()
    res = await t.do(t.master, "master log", file=True)
    assert res.ephemeral and res.message is not None and res.message.files
    await play(t, h)
    await t.settle()
    attachments = [(m, a) for stored in h.world.messages.values()
                   for m in [h.world.message_record(stored.id)]
                   for a in m.payload.get("attachments") or []]
    names = [a["filename"] for _, a in attachments]
    assert any(n.endswith(".png") for n in names) and any(n.endswith(".html") for n in names)
    assert any(n.endswith("-log.txt") for n in names)
    for _, a in attachments:
        assert a.get("description"), a["filename"]
        assert len(a["description"]) <= LIMIT
    state = await t.state()
    first = next(d for d in state.days if d.tally)
    [picture] = [a for _, a in attachments if a["filename"] == f"day-{first.number}-votes.png"]
    text = picture["description"]  # the game is Russian (the guild's language)
    assert text.startswith(f"День {first.number}, голоса по времени"), text
    if first.hanged is not None:
        hanged = state.player(first.hanged)
        assert hanged is not None and f"повешение: {hanged.name}" in text, text
    [archive] = [a for _, a in attachments if a["filename"].endswith(".html")]
    assert archive["description"] == tr("alt.archive", "ru", title="Palermo")


def test_the_day_alt_text_reads_the_count() -> None:
    at = datetime(2026, 1, 1, 18, 5)
    names = {1: "Don", 2: "Anna", 3: "Boris"}.__getitem__
    tl = DayTimeline(day=2, candidates=[1, 3], final={1: 10, 3: 2}, hanged=1,
                     hammer_by=2, hammer_at=at,
                     steps=[Step(seq=i, at=at, voter=2, target=1, previous=None, weight=2)
                            for i in range(6)])
    assert day_alt(tl, names, "en") == (
        "Day 2, votes over time (6 votes and withdrawals): Don hanged with 5 votes of 6 votes"
        " (the deciding vote by Anna at 18:05 UTC). Final count: Don 5 votes, Boris 1 vote.")
    assert day_alt(DayTimeline(day=3), names, "ru") == "День 3: в этот день никто не голосовал."
