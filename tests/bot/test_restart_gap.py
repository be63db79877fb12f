"""Exactly once to the eye after a LATE restart (issue 28).

Discord's `enforce_nonce` returns the earlier message only for a few minutes (the fake
Discord keeps `world.nonce_window`, 300 s). A bot that dies between posting and marking
an entry and comes back later than that would post it again: the bot's own record (the
entry, pending since before this process started and older than the window) makes it
look in the channel's recent history first, where real Discord returns no nonce, so the
part is recognised by its text, among the messages no other entry took (issue 40)."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from cogs.delivery import posting
from core.storage.models import PENDING, Outbox
from core.storage.outbox import OutboxEntry
from tests.bot.helpers import ROLES, Lives, checkin_all, open_table, posted, rebind, start


@pytest.mark.parametrize("late", [False, True], ids=["within-window", "after-window"])
async def test_an_announcement_posted_before_a_crash_is_not_posted_again(
        lives: Lives, monkeypatch: pytest.MonkeyPatch, late: bool) -> None:
    h = lives.h
    t = await open_table(h, 8, roles=ROLES)
    await start(t)
    await checkin_all(t)
    await t.settle()
    bot = t.bot
    await bot.outbox.stop()  # what follows is committed, not yet delivered
    assert (await t.do(t.master, "master advance")).ephemeral  # night 0 falls
    rows = await Outbox.filter(game_id=t.game_id, status=PENDING).order_by("ordinal")
    public = [r for r in rows if r.kind == "event"
              and json.loads(r.payload)["event"]["audience"]["kind"] == "public"]
    assert public
    before = len(posted(h, t.channel))
    for row in public:  # posted, never marked: then the process is killed
        await bot.delivery.deliver(OutboxEntry(
            id=row.id, game_id=t.game_id, ordinal=row.ordinal, kind=row.kind,
            payload=json.loads(row.payload), attempts=row.attempts))
    shown = [m.text for m in posted(h, t.channel)[before:]]
    assert shown
    for stored in h.world.messages.values():  # real Discord returns no nonce in history
        stored.payload.pop("nonce", None)
    if late:  # the bot comes back after Discord forgot the nonces
        h.world.pass_time(h.world.nonce_window + 60)
        monkeypatch.setattr(posting, "NONCE_WINDOW", timedelta(0))
    h = await lives.restart()
    t = rebind(t, h)
    await t.settle()
    again = [m.text for m in posted(h, t.channel)[before:]]
    assert again == shown  # each once, none twice
    assert not await Outbox.filter(game_id=t.game_id, status=PENDING).count()


def test_recheck_only_what_an_earlier_process_may_have_posted_long_ago() -> None:
    from datetime import UTC, datetime

    start = datetime(2026, 1, 1, 12, tzinfo=UTC)
    old = start - timedelta(minutes=10)
    assert posting.recheck_since(old, start, now=start) == old
    assert posting.recheck_since(start + timedelta(seconds=1), start, now=start) is None
    fresh = start - timedelta(seconds=30)
    assert posting.recheck_since(fresh, start, now=start) is None  # the nonce covers it
    assert posting.recheck_since(None, start) is None


async def test_records_that_read_alike_are_each_posted_once_after_a_late_restart(
        lives: Lives, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 40: a player votes X, withdraws and votes X again (typed in his place: the
    outbox posts the records); the first is posted, the bot dies before marking it and
    comes back after Discord forgot the nonces. The recheck finds the first record by
    its text, and must not take the same message for the third, which reads alike."""
    from cogs.delivery.deliverer import recorded_count
    from cogs.delivery.places import place_key
    from cogs.ui.render import event_embed
    from core.game.events import Event, EventKind

    h = lives.h
    t = await open_table(h, 8, roles=ROLES)
    await start(t)
    await checkin_all(t)
    await t.advance()  # night 0
    await t.advance()  # day 1
    await t.settle()
    voter, target = t.players[0], t.players[1]
    state = await t.state()
    seat = next(i for i, p in enumerate(state.players) if p.uid == voter.id)
    thread = (await t.bot.service.info(t.game_id)).private_channels[place_key(seat)]
    bot = t.bot
    await bot.outbox.stop()  # what follows is committed, not yet delivered
    for command, options in (("vote", {"player": str(target.id)}), ("unvote", {}),
                             ("vote", {"player": str(target.id)})):
        assert (await h.slash(voter, command, channel=thread, **options)).ephemeral
    rows = await Outbox.filter(game_id=t.game_id, status=PENDING).order_by("ordinal")
    own: list[tuple[Outbox, str | None]] = []
    for row in rows:
        payload = json.loads(row.payload)
        event = Event.model_validate(payload["event"]) if row.kind == "event" else None
        if event is not None and event.audience.kind == "public" and event.kind in (
                EventKind.VOTE_CAST, EventKind.VOTE_WITHDRAWN):
            entry = OutboxEntry(id=row.id, game_id=t.game_id, ordinal=row.ordinal,
                                kind=row.kind, payload=payload, attempts=row.attempts)
            own.append((row, event_embed(event, "ru", recorded_count(entry)).description))
    lines = [line for _, line in own]
    assert len(lines) == 3 and lines[0] == lines[2]  # the first and the third read alike
    first = own[0][0]
    await bot.delivery.deliver(OutboxEntry(  # posted, never marked: then the bot dies
        id=first.id, game_id=t.game_id, ordinal=first.ordinal, kind=first.kind,
        payload=json.loads(first.payload), attempts=first.attempts))
    for stored in h.world.messages.values():  # real Discord returns no nonce in history
        stored.payload.pop("nonce", None)
    h.world.pass_time(h.world.nonce_window + 60)  # back after Discord forgot the nonces
    monkeypatch.setattr(posting, "NONCE_WINDOW", timedelta(0))
    h = await lives.restart()
    t = rebind(t, h)
    await t.settle()
    shown = [e.get("description") for m in h.messages_in(t.channel) for e in m.embeds
             if e.get("description") in lines]
    assert shown == lines  # each once, in order
    assert not await Outbox.filter(game_id=t.game_id, status=PENDING).count()
