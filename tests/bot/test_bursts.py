"""A burst costs one request per channel (issue 30, item 1): the master's desk gathers
the lines of a few seconds into one post, and the live count is edited at most once per
`interval` (the other counts coalesce), each going out with every line or vote in it.

The windows run on the wall clock (entries carry their commit time): the tests set them
short and wait for the result, never for nothing."""

from __future__ import annotations

import asyncio
from typing import Any

from core.game.roles import Role
from tests.bot.helpers import ROLES, checkin_all, open_table, start
from tests.harness import Harness

POST = "POST /channels/{channel_id}/messages"
EDIT = "PATCH /channels/{channel_id}/messages/{message_id}"


def texts(h: Harness, channel: int) -> str:
    return "\n".join(e.get("description", "") for m in h.messages_in(channel)
                     for e in m.embeds)


async def until(check: Any, h: Harness, seconds: float = 10.0) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + seconds
    while not check():
        assert loop.time() < end, "timed out"
        await asyncio.sleep(0.05)
        await h.settle()


async def test_night_orders_in_a_burst_are_one_desk_post(h: Harness) -> None:
    bot: Any = h.bot
    t = await open_table(h, 8, roles=ROLES)
    await start(t)
    await checkin_all(t)
    await t.advance()  # night 1
    desk = (await bot.service.info(t.game_id)).private_channels["desk"]
    bot.delivery.gathering.desk_window = 0.5
    first = len(h.fake.requests)
    state = await t.state()
    citizen = (await t.holders(Role.CITIZEN))[0]
    mafioso = (await t.holders(Role.MAFIOSO))[0]
    actors = [t.member(state.clans[0].acting), *await t.holders(Role.INVESTIGATOR)]  # type: ignore[arg-type]
    targets = [citizen, *[mafioso] * (len(actors) - 1)]
    for actor, target in zip(actors, targets, strict=True):
        assert (await t.do(actor, "night", target=str(target.id))).ephemeral

    def all_in() -> bool:
        return all(f"<@{a.id}>" in texts(h, desk) for a in actors)

    await until(all_in, h)
    await t.settle()
    posts = [r for r in h.fake.requests[first:] if r.kind == "rest" and r.route == POST
             and int(r.params["channel_id"]) == desk]
    assert len(actors) >= 2 and len(posts) == 1  # one post, every order in it


async def test_a_burst_of_votes_is_one_edit_of_the_live_count(h: Harness) -> None:
    bot: Any = h.bot
    t = await open_table(h, 8)
    await start(t)
    await checkin_all(t)
    await t.advance()  # night 0
    await t.advance()  # day 1
    target = t.players[0]
    voters = t.players[1:5]
    assert (await t.do(t.players[5], "vote", player=str(target.id))).embeds
    await t.settle()  # the day's count is posted (a first post, not an edit)
    bot.delivery.tallies.interval = 0.5
    first = len(h.fake.requests)
    for voter in voters:
        assert (await t.do(voter, "vote", player=str(target.id))).embeds

    live = (await bot.service.info(t.game_id)).live_messages

    def latest() -> bool:
        message = h.world.message(next(iter(live.values())))
        body = "\n".join(e.get("description", "") for e in message.payload["embeds"])
        return all(f"<@{v.id}>" in body for v in voters)

    await until(latest, h)
    await t.settle()
    edits = [r for r in h.fake.requests[first:] if r.kind == "rest" and r.route == EDIT
             and int(r.params["channel_id"]) == t.channel]
    assert 1 <= len(edits) <= 2  # the first vote at once, the rest together
