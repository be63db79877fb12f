"""An announcement never waits long for its picture (issue 30: announcements first).

Drawing a day's vote picture takes a tenth of a second or more, one at a time: when many
days end together the pictures queue. The day's result goes out after `wait` seconds
without it; the picture follows right under it as a message of its own, exactly once,
and only then is the entry delivered. Drawing here is held by a gate the test opens:
nothing is timed."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from types import SimpleNamespace
from typing import Any

import pytest

import cogs.delivery.pictures
from archive.build import Made
from cogs.delivery import posting
from cogs.delivery.pictures import AHEAD, Files
from core.storage.models import PENDING, Outbox
from core.storage.outbox import OutboxEntry
from tests.bot.helpers import ROLES, Lives, checkin_all, open_table, rebind, start
from tests.bot.test_archive_delivery import assert_real_png
from tests.bot.test_bursts import until
from tests.harness import Harness

POST = "POST /channels/{channel_id}/messages"


@pytest.mark.parametrize("language, caption", [
    ("en", "For the announcement above: day-1-votes.png"),
    ("ru", "К объявлению выше: day-1-votes.png"),
])
async def test_a_late_picture_follows_its_announcement(
        h: Harness, monkeypatch: pytest.MonkeyPatch, language: str, caption: str) -> None:
    bot: Any = h.bot
    gate = asyncio.Event()
    drawn = cogs.delivery.pictures.attachments

    async def slow(*args: Any) -> Any:
        await gate.wait()
        return await drawn(*args)

    monkeypatch.setattr(cogs.delivery.pictures, "attachments", slow)
    t = await open_table(h, 8, roles=ROLES)
    assert (await t.do(t.master, "game options", language=language)).ephemeral
    await start(t)
    await checkin_all(t)
    await t.advance()  # night
    await t.advance()  # day 1
    target, voters = t.players[0], t.players[1:]
    for voter in voters:
        await t.do(voter, "vote", player=str(target.id))
    await t.settle()
    bot.delivery.attached.wait = 0.05
    before = len(h.messages_in(t.channel))
    first = len(h.fake.requests)
    res = await t.do(t.master, "master advance")  # dusk: the lynch, day 1's picture
    assert res.ephemeral

    def announced() -> bool:
        return len(h.messages_in(t.channel)) > before

    await until(announced, h)
    result = h.messages_in(t.channel)[before]
    assert result.embeds and not result.files  # the day's result, without its picture
    assert await Outbox.filter(game_id=t.game_id, status=PENDING).exists()  # still owed
    assert bot.delivery.attached.late == 0

    gate.set()

    def pictured() -> bool:
        return any(m.files for m in h.messages_in(t.channel)[before:])

    await until(pictured, h)
    await t.settle()
    after = h.messages_in(t.channel)[before:]
    with_files = [m for m in after if m.files]
    assert len(with_files) == 1  # exactly once
    follow = with_files[0]
    assert [name for name, _ in follow.files] == ["day-1-votes.png"]
    assert_real_png(follow.files[0][1])
    assert follow.content == caption
    # right under the result: nothing of this game came between them in the channel
    assert after.index(follow) == after.index(result) + 1
    assert bot.delivery.attached.late == 1
    assert not await Outbox.filter(game_id=t.game_id, status=PENDING).exists()
    posts = [r for r in h.fake.requests[first:] if r.kind == "rest" and r.route == POST
             and int(r.params["channel_id"]) == t.channel]
    assert len(posts) == len(after)  # one request for the picture, no retried post
    sent = [r for r in posts if (r.json or {}).get("content") == caption]
    assert len(sent) == 1 and sent[0].json["allowed_mentions"] == {"parse": []}  # no pings


async def test_a_picture_drawn_in_time_goes_on_its_announcement(h: Harness) -> None:
    bot: Any = h.bot
    t = await open_table(h, 8, roles=ROLES)
    await start(t)
    await checkin_all(t)
    await t.advance()
    await t.advance()
    for voter in t.players[1:]:
        await t.do(voter, "vote", player=str(t.players[0].id))
    await t.settle()
    bot.delivery.attached.wait = 60.0  # a generous wait: drawn within it
    before = len(h.messages_in(t.channel))
    await t.advance()
    after = h.messages_in(t.channel)[before:]
    carrying = [m for m in after if m.files]
    assert len(carrying) == 1 and carrying[0].embeds  # on the result itself
    assert bot.delivery.attached.late == 0


async def test_behind_other_drawings_an_announcement_does_not_wait(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """With `AHEAD` drawings queued before its own, an announcement goes at once: a wait
    would only hold its lane's slot from other games' announcements."""
    gate = asyncio.Event()
    offered: list[int] = []

    async def gated(*_: Any) -> list[Made]:
        await gate.wait()
        return [Made("day-1-votes.png", b"png", "alt")]

    monkeypatch.setattr(cogs.delivery.pictures, "attachments", gated)
    bot: Any = SimpleNamespace(service=None,
                               outbox=SimpleNamespace(offer=offered.append))
    files = Files(bot, wait=3600.0)  # a wait nobody sits out: the gate opens first
    info: Any = SimpleNamespace(id=7, language="en")

    def entry(ordinal: int) -> OutboxEntry:
        return OutboxEntry(id=ordinal, game_id=7, ordinal=ordinal, kind="event",
                           payload={"files": [{"kind": "timeline", "day": 1}]}, attempts=0)

    waiting = [asyncio.create_task(files.now(info, [entry(i)])) for i in range(AHEAD)]
    await asyncio.sleep(0)
    late = entry(AHEAD)
    assert await asyncio.wait_for(files.now(info, [late]), 5) == [] and files.owes(late)
    assert not any(task.done() for task in waiting)  # the first ones still wait
    gate.set()
    drawn = await asyncio.gather(*waiting)
    assert [[f.filename for f in made] for made in drawn] == [["day-1-votes.png"]] * AHEAD
    assert not any(files.owes(entry(i)) for i in range(AHEAD))
    await asyncio.sleep(0)
    assert offered == [7]  # the held lane is offered again once the late one is drawn


async def test_files_owed_by_a_failed_try_go_on_the_next_one(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The announcement's post failed after its files were found late: the next try,
    the files drawn by then, carries them on the announcement and owes nothing."""
    gate = asyncio.Event()

    async def gated(*_: Any) -> list[Made]:
        await gate.wait()
        return [Made("day-1-votes.png", b"png", "alt")]

    monkeypatch.setattr(cogs.delivery.pictures, "attachments", gated)
    bot: Any = SimpleNamespace(service=None, outbox=SimpleNamespace(offer=lambda _: None))
    files = Files(bot, wait=0.01)
    info: Any = SimpleNamespace(id=7, language="en")
    entry = OutboxEntry(id=1, game_id=7, ordinal=1, kind="event",
                        payload={"files": [{"kind": "timeline", "day": 1}]}, attempts=0)
    assert await files.now(info, [entry]) == [] and files.owes(entry)
    gate.set()  # (the post failed; drawn before the next try)
    files.wait = 5.0
    assert [f.filename for f in await files.now(info, [entry])] == ["day-1-votes.png"]
    assert not files.owes(entry)
    await files.follow(info, SimpleNamespace(), [entry])  # nothing owed: nothing posted
    assert files.late == 0


@pytest.mark.parametrize("late", [False, True], ids=["within-window", "after-window"])
async def test_a_picture_owed_across_a_restart_follows_its_announcement(
        lives: Lives, monkeypatch: pytest.MonkeyPatch, late: bool) -> None:
    """Issue 40: the bot dies between the day's result (posted without its late picture)
    and the picture's post. The next process tries the entry again: Discord returns the
    earlier result for its repeated nonce (within its window), or a recheck finds it
    (after it), and a picture sent on that post would be dropped. It goes as its own
    post right under the result, once."""
    h = lives.h
    gate = asyncio.Event()
    drawn = cogs.delivery.pictures.attachments

    async def slow(*args: Any) -> Any:  # the first life never finishes drawing
        await gate.wait()
        return await drawn(*args)

    monkeypatch.setattr(cogs.delivery.pictures, "attachments", slow)
    t = await open_table(h, 8, roles=ROLES)
    await start(t)
    await checkin_all(t)
    await t.advance()  # night
    await t.advance()  # day 1
    for voter in t.players[1:]:
        await t.do(voter, "vote", player=str(t.players[0].id))
    await t.settle()
    bot: Any = h.bot
    bot.delivery.attached.wait = 0.05
    before = len(h.messages_in(t.channel))
    assert (await t.do(t.master, "master advance")).ephemeral  # dusk: day 1's picture

    def announced() -> bool:
        return len(h.messages_in(t.channel)) > before

    await until(announced, h)
    result = h.messages_in(t.channel)[before]
    assert result.embeds and not result.files  # posted without its picture: owed
    assert await Outbox.filter(game_id=t.game_id, status=PENDING).exists()
    drawing = list(bot.delivery.attached._drawing.values())
    monkeypatch.setattr(cogs.delivery.pictures, "attachments", drawn)  # the next life draws
    if late:  # back after Discord forgot the nonces: a recheck finds the result
        for stored in h.world.messages.values():  # no nonce in history (real Discord)
            stored.payload.pop("nonce", None)
        h.world.pass_time(h.world.nonce_window + 60)
        monkeypatch.setattr(posting, "NONCE_WINDOW", timedelta(0))
    h = await lives.restart()
    for task in drawing:  # the first life's drawing died with it
        task.cancel()
    t = rebind(t, h)

    def pictured() -> bool:
        return any(m.files for m in h.messages_in(t.channel)[before:])

    await until(pictured, h)
    await t.settle()
    after = h.messages_in(t.channel)[before:]
    with_files = [m for m in after if m.files]
    assert len(with_files) == 1  # exactly once
    follow = with_files[0]
    assert [name for name, _ in follow.files] == ["day-1-votes.png"]
    assert follow.content == "К объявлению выше: day-1-votes.png" and not follow.embeds
    assert after[0].id == result.id and after.index(follow) == 1  # right under the result
    assert len([m for m in after if m.embeds == result.embeds]) == 1  # result not repeated
    assert not await Outbox.filter(game_id=t.game_id, status=PENDING).exists()
