"""A vote typed in the game channel is recorded by its own reply (issue 30, item 1).

The interaction's response is exempt from Discord's global limit and is the public record
everyone reads; the outbox entry written with the vote is held meanwhile and marked
delivered after the response, so it costs no REST request. It stands by: a vote typed
elsewhere is posted by the outbox as before, and a response that failed (or a process
that stopped before marking the entry) leaves the record to the outbox, which looks for
the response in the channel first, by the interaction's id Discord puts on it (never by
its text: the same vote cast again reads the same): exactly once either way."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta
from typing import Any

import pytest

import core.storage.commit
from cogs.delivery.places import place_key
from core.sight.narrate import votes
from core.storage.models import DELIVERED, Outbox
from core.storage.outbox import OutboxEntry
from core.text.i18n import t as tr
from tests.bot.helpers import Table, checkin_all, open_table, start
from tests.harness import Harness
from tests.harness.errors import InteractionNotAcknowledged

POST = "POST /channels/{channel_id}/messages"
CALLBACK = "POST /interactions/{webhook_id}/{webhook_token}/callback"


async def day_one(h: Harness) -> Table:
    t = await open_table(h, 8)
    await start(t)
    await checkin_all(t)
    await t.advance()  # night 0
    await t.advance()  # day 1
    return t


def vote_line(t: Table, voter: Any, target: Any) -> str:
    return tr("event.vote_cast", "ru", voter=f"<@{voter.id}>", target=f"<@{target.id}>",
              total=votes(2, "ru"))


def records(h: Harness, channel: int, line: str) -> int:
    """How many messages everyone sees in the channel carry the line."""
    return sum(1 for m in h.messages_in(channel)
               if any(line in (e.get("description") or "") for e in m.embeds))


def posted(h: Harness, channel: int, line: str) -> int:
    """How many REST posts (not interaction responses) carried the line."""
    return sum(1 for c in h.requests_to(POST, channel_id=channel)
               if any(line in (e.get("description") or "") for e in c.json.get("embeds") or []))


async def vote_entries(t: Table) -> list[Outbox]:
    rows = await Outbox.filter(game_id=t.game_id, kind="event").order_by("ordinal")
    return [r for r in rows if '"vote_cast"' in r.payload]


async def until(check: Any, h: Harness, seconds: float = 10.0) -> None:
    """Wait (real time: the hold is on the wall clock) until `check()` holds."""
    loop = asyncio.get_running_loop()
    end = loop.time() + seconds
    while not await check():
        assert loop.time() < end, "timed out"
        await asyncio.sleep(0.05)
        await h.settle()


async def test_the_reply_is_the_public_record(h: Harness) -> None:
    t = await day_one(h)
    voter, target = t.players[0], t.players[1]
    await t.do(t.players[2], "vote", player=str(t.players[3].id))  # posts the live count
    await t.settle()
    first = len(h.fake.requests)
    res = await t.do(voter, "vote", player=str(target.id))
    await t.settle()
    line = vote_line(t, voter, target)
    assert not res.ephemeral and any(line in (e.get("description") or "")
                                     for e in res.embeds)
    assert res.message is not None and res.message.channel_id == t.channel
    assert records(h, t.channel, line) == 1  # the author sees it once, like everyone
    assert posted(h, t.channel, line) == 0
    assert all(e.status == DELIVERED for e in await vote_entries(t))
    # the vote cost no REST request in the game channel (the live count may be edited)
    rest = [r for r in h.fake.requests[first:] if r.kind == "rest" and r.route == POST
            and int(r.params["channel_id"]) == t.channel]
    assert rest == []
    assert res.response_data["allowed_mentions"] == {"parse": []}  # pings nobody


async def test_a_vote_typed_elsewhere_is_posted_by_the_outbox(h: Harness) -> None:
    t = await day_one(h)
    voter, target = t.players[0], t.players[1]
    state = await t.state()
    seat = next(i for i, p in enumerate(state.players) if p.uid == voter.id)
    thread = (await t.bot.service.info(t.game_id)).private_channels[place_key(seat)]
    res = await h.slash(voter, "vote", channel=thread, player=str(target.id))
    await t.settle()
    line = vote_line(t, voter, target)
    assert res.ephemeral  # the sender alone is answered where he typed
    assert posted(h, t.channel, line) == 1 and records(h, t.channel, line) == 1


@pytest.fixture
def short_hold(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(core.storage.commit, "ANSWER_HOLD", timedelta(seconds=0.3))


async def test_a_failed_reply_leaves_the_record_to_the_outbox(h: Harness,
                                                               short_hold: None) -> None:
    t = await day_one(h)
    voter, target = t.players[0], t.players[1]
    h.fake.fail(CALLBACK, status=400, code=50035, message="Invalid Form Body", times=1)
    with pytest.raises(InteractionNotAcknowledged):  # Discord: "interaction failed"
        await t.do(voter, "vote", player=str(target.id))
    line = vote_line(t, voter, target)
    assert records(h, t.channel, line) == 0

    async def out() -> bool:
        return all(e.status == DELIVERED for e in await vote_entries(t))

    await until(out, h)
    await t.settle()
    assert posted(h, t.channel, line) == 1 and records(h, t.channel, line) == 1


async def test_a_reply_not_marked_is_found_not_posted_again(
        h: Harness, short_hold: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """The process stops between the reply and marking its entry: the outbox finds the
    reply in the channel by its interaction's id and posts nothing."""
    t = await day_one(h)
    voter, target = t.players[0], t.players[1]

    async def lost(game_id: int, ordinals: Any) -> None:
        return None

    monkeypatch.setattr(t.bot.service, "answered", lost)
    res = await t.do(voter, "vote", player=str(target.id))
    assert not res.ephemeral
    line = vote_line(t, voter, target)

    async def out() -> bool:
        return all(e.status == DELIVERED for e in await vote_entries(t))

    await until(out, h)
    await t.settle()
    assert posted(h, t.channel, line) == 0 and records(h, t.channel, line) == 1


async def test_a_vote_cast_again_while_the_channel_is_behind_keeps_every_record(
        h: Harness) -> None:
    """Issue 40: while the game channel's outbox is behind, a player votes X, withdraws
    and votes X again. Each reply is ephemeral (it must not overtake the held posts) and
    the outbox posts the three records; the third reads exactly as the first (the same
    vote, the same count), and must not be taken for it. Every record once, in order."""
    from cogs.delivery.deliverer import recorded_count
    from cogs.ui.render import event_embed
    from core.game.events import Event
    from tests.bot.helpers import wait_for
    from tests.bot.test_faults import fast_outbox

    t = await day_one(h)
    await fast_outbox(t)
    voter, target, other = t.players[0], t.players[1], t.players[2]
    state = await t.state()
    seat = next(i for i, p in enumerate(state.players) if p.uid == other.id)
    thread = (await t.bot.service.info(t.game_id)).private_channels[place_key(seat)]
    limit = h.fake.rate_limit(POST, retry_after=7.5, times=None, channel_id=t.channel)
    # a vote typed in a private place: its record is the outbox's, held back by Discord
    assert (await h.slash(other, "vote", channel=thread,
                          player=str(t.players[3].id))).ephemeral
    await wait_for(lambda: limit.hits > 0, "the outbox to meet the limit")
    for command, options in (("vote", {"player": str(target.id)}), ("unvote", {}),
                             ("vote", {"player": str(target.id)})):
        res = await t.do(voter, command, **options)
        assert res.ephemeral  # behind: the record waits its turn in the outbox
    limit.times = limit.hits  # Discord recovers
    await t.settle()
    rows = await Outbox.filter(game_id=t.game_id, kind="event").order_by("ordinal")
    assert {r.status for r in rows} == {DELIVERED}
    own = []
    for row in rows:
        entry = json.loads(row.payload)
        event = Event.model_validate(entry["event"])
        if event.kind.value in ("vote_cast", "vote_withdrawn") \
                and event.data.get("voter") == voter.id:
            own.append(event_embed(event, "ru", recorded_count(
                OutboxEntry(id=row.id, game_id=t.game_id, ordinal=row.ordinal,
                            kind=row.kind, payload=entry, attempts=0))).description)
    assert len(own) == 3 and own[0] == own[2]  # the first and the third read alike
    shown = [e.get("description") for m in h.messages_in(t.channel) for e in m.embeds
             if e.get("description") in own]
    assert shown == own  # each record once, in the order they were cast
