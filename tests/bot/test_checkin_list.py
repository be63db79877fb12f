"""Day 0's check-ins fold into one live list (issue 32 point 7): one public message,
edited as players check in, instead of one post per check-in; it closes with the day."""

from __future__ import annotations

from typing import Any

import pytest

from core.game.state import PhaseKind
from core.sight.narrate import phase_words
from core.text.i18n import t as tr
from tests.harness import Harness

from .helpers import Table, checkin_all, confirmed, open_table, posted, start, wait_for

pytestmark = pytest.mark.asyncio

ROLES = "mafioso; investigator; bouncer; killer; citizen x4"


def lists(t: Table, lang: str = "en") -> list[Any]:
    """The bot's check-in list messages in the game channel (open or closed)."""
    titles = (tr("tally.checkin.title", lang, **phase_words(0, lang)),)
    return [m for m in posted(t.h, t.channel)
            if any(e.get("title", "").startswith(titles) for e in m.embeds)]


def checkin_posts(t: Table, uid: int) -> list[Any]:
    """Single public posts announcing one player's check-in (there must be none)."""
    return [m for m in posted(t.h, t.channel) if m not in lists(t)
            and f"<@{uid}>" in m.text and "checks in" in m.text]


async def test_day_zero_check_ins_make_one_list_message_that_shows_all_eight(
        h: Harness) -> None:
    t = await open_table(h, 8, roles=ROLES)
    assert (await t.do(t.master, "game options", language="en")).ephemeral
    await start(t)
    opened = lists(t)
    assert len(opened) == 1  # the list opens with day 0, nobody in it yet
    message = opened[0]
    assert tr("tally.checkin.none", "en") in message.text
    assert all(f"<@{p.id}>" in message.embeds[0]["fields"][0]["value"] for p in t.players)
    t.bot.delivery.tallies.interval = 0.5  # a burst: edits coalesce
    posts = len(posted(h, t.channel))
    for p in t.players:
        res = await t.do(p, "checkin")
        assert confirmed(res), res.text
        assert res.message is not None and res.message.ephemeral_for == p.id
    await t.settle()
    assert len(posted(h, t.channel)) == posts  # no new post: the one list was edited
    assert [m.id for m in lists(t)] == [message.id]
    edits = len([r for r in h.requests_to(
        "PATCH /channels/{channel_id}/messages/{message_id}", message_id=message.id)
        if r.status < 300])
    print(f"8 check-ins: 1 list message, {edits} edits")
    assert 1 <= edits < 8  # coalesced: fewer edits than check-ins
    current = h.world.message_record(message.id)
    embed = current.embeds[0]
    assert embed["description"].splitlines()[0] == tr(
        "tally.checkin.count", "en", count=8, total=8)
    assert embed["description"].splitlines()[1:] == [
        f"<@{p.id}>" for p in t.players]  # all eight, in seat order, unnumbered
    assert embed["footer"]["text"] == tr("tally.checkin.order", "en")
    assert tr("tally.checkin.not_yet", "en") not in current.text
    assert all(checkin_posts(t, p.id) == [] for p in t.players)
    assert current.payload["allowed_mentions"]["parse"] == []  # a list never pings
    await t.advance()  # night 0: the list closes
    assert await t.phase() == (PhaseKind.NIGHT, 0)
    final = h.world.message_record(message.id)
    assert final.embeds[0]["title"] == tr("tally.checkin.final_title", "en", **phase_words(0, "en"))


async def test_a_check_in_edits_the_list_and_a_refused_one_changes_nothing(
        h: Harness) -> None:
    t = await open_table(h, 8, roles=ROLES)  # the guild speaks Russian
    await start(t)
    first, second = t.players[0], t.players[1]
    assert confirmed(await t.do(first, "checkin"))
    await t.settle()
    [message] = lists(t, "ru")
    shown = h.world.message_record(message.id)
    assert shown.embeds[0]["description"].splitlines() == [
        tr("tally.checkin.count", "ru", count=1, total=8), f"<@{first.id}>"]
    assert shown.embeds[0]["footer"]["text"] == tr("tally.checkin.order", "ru")
    assert f"<@{second.id}>" in shown.embeds[0]["fields"][0]["value"]
    before = list(shown.embeds)
    res = await t.do(first, "checkin")  # twice: refused, nothing changes
    assert res.ephemeral and not res.embeds
    assert res.text == tr("error.already_checked_in", "en")
    await t.settle()
    assert h.world.message_record(message.id).embeds == before
    assert len(lists(t, "ru")) == 1


PATCH = "PATCH /channels/{channel_id}/messages/{message_id}"
POST = "POST /channels/{channel_id}/messages"


async def _board_before_the_list(t: Table, board: int, owing: Any, lang: str,
                                 key: str) -> None:
    """The master prods: the public list of who still owes names `owing` alone, and the
    board beside it was edited up to date before that list was posted."""
    h = t.h
    before = len(h.requests)
    res = await t.do(t.master, "master prod")
    assert res.ephemeral, res.text
    head = tr(key, lang, owing=f"<@{owing.id}>", deadline="")[:12]

    def lists_posted() -> list[Any]:
        return [m for m in posted(h, t.channel) if head in m.text and m.id != board]

    # the held count keeps the outbox busy: wait for the list itself, not for idle
    await wait_for(lambda: bool(lists_posted()), "the prod's public list")
    [listed] = lists_posted()
    assert f"<@{owing.id}>" in listed.text
    steps = [(r.method, r.path) for r in h.requests[before:]
             if r.status < 300 and f"/channels/{t.channel}/messages" in r.path]
    edit = next(i for i, (m, p) in enumerate(steps) if m == "PATCH" and str(board) in p)
    sent = next(i for i, (m, p) in enumerate(steps) if m == "POST")
    assert edit < sent, steps
    body = next(r for r in h.requests[before:] if (r.method, r.path) == steps[sent]).json
    assert body["allowed_mentions"]["parse"] == []  # a public list names, never pings


@pytest.mark.parametrize("lang", ["en", "ru"])
async def test_the_prods_list_finds_the_check_in_board_up_to_date(
        h: Harness, lang: str) -> None:
    """Seven of eight have checked in while the board's edits are held (a long interval):
    the master's prod names the last one publicly, and the board says seven of eight
    before that list goes out, not "nobody yet" (issue 42 point 4)."""
    t = await open_table(h, 8, roles=ROLES)
    if lang == "en":
        assert (await t.do(t.master, "game options", language="en")).ephemeral
    await start(t)
    [board] = lists(t, lang)
    t.bot.delivery.tallies.interval = 3600.0  # every later edit is held
    for p in t.players[:7]:
        assert confirmed(await t.do(p, "checkin"))
    await _board_before_the_list(t, board.id, t.players[7], lang,
                                 "event.reminder_public.checkin")
    shown = h.world.message_record(board.id)
    assert shown.embeds[0]["description"].splitlines()[0] == tr(
        "tally.checkin.count", lang, count=7, total=8)
    assert shown.embeds[0]["fields"][0]["value"] == f"<@{t.players[7].id}>"


@pytest.mark.parametrize("lang", ["en", "ru"])
async def test_the_prods_list_finds_the_live_count_up_to_date(h: Harness, lang: str) -> None:
    """Day 1: the first vote posts the live count, later ones are held (a long interval);
    the master's prod lists who has not voted, and the count beside it shows every vote
    cast, not the first one only."""
    t = await open_table(h, 8, roles=ROLES)
    if lang == "en":
        assert (await t.do(t.master, "game options", language="en")).ephemeral
    await start(t)
    await checkin_all(t)
    await t.advance()  # night 0
    await t.advance()  # day 1
    living = await t.living()
    target, late = living[0], living[-1]
    assert confirmed(await t.do(living[1], "vote", player=str(target.id)))
    await t.settle()
    [board] = [m for m in posted(h, t.channel) if any(e.get("title", "").startswith(
        tr("tally.live.title", lang, **phase_words(1, lang))) for e in m.embeds)]
    t.bot.delivery.tallies.interval = 3600.0
    voters = [p for p in living[2:] if p is not late]
    for p in voters:
        assert confirmed(await t.do(p, "vote", player=str(target.id)))
    await _board_before_the_list(t, board.id, late, lang, "event.reminder_public.vote")
    shown = h.world.message_record(board.id)
    for p in [living[1], *voters]:
        assert f"<@{p.id}>" in shown.embeds[0]["description"], p
    t.bot.delivery.tallies.interval = 0.0  # a newer count goes out at once
    assert confirmed(await t.do(late, "vote", player=str(target.id)))
    await t.settle()
    assert f"<@{late.id}>" in h.world.message_record(board.id).embeds[0]["description"]
