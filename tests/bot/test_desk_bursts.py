"""The desk and the team channels at production windows (issue 30): a night end's desk
lines (its step-by-step and every missed turn) are one post; night orders a minute
apart wait on the desk and go with the line that pings the master; the clan's order
lines wait the team window. Issue 40: a pinged line and a phase change's go at once
however many gathered lines stand before them, and a re-sent clan order says it
replaces the earlier one. Played on the virtual-time loop (tests/harness/virtualtime.py):
the windows pass in virtual seconds, and "nothing was posted yet" is asserted when the
clock could only have moved because every task waited."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cogs.delivery.gathering import GATHERED_BATCH, Gathering
from cogs.delivery.outbox import wire
from core.game.events import Audience, Event, EventKind
from core.game.roles import Role
from core.game.rules.night import missed_night
from core.storage.models import PENDING, Outbox
from core.storage.outbox import OutboxEntry
from tests.bot.helpers import (
    EVERYTHING,
    ROLES,
    TIMEOUT,
    Lives,
    Table,
    _migrated_template,
    new_bot,
    open_table,
    posted,
    rebind,
    start,
    started,
    wait_for,
)
from tests.bot.test_team_overwrites import assert_access
from tests.harness import Harness
from tests.harness.virtualtime import VirtualTimeLoop, virtual_time

POST = "POST /channels/{channel_id}/messages"
Body = Callable[[Harness, VirtualTimeLoop], Awaitable[None]]


def on_virtual_time(tmp_path: Path, body: Body) -> None:
    """`body` with a bot whose service, outbox and windows read the virtual clock, the
    windows at their production defaults (60 s the desk, 10 s a team)."""
    _migrated_template()  # made in real time (see test_crowded_guild)
    with virtual_time() as loop:
        loop.run_until_complete(_run(tmp_path, loop, body))


async def _run(tmp_path: Path, loop: VirtualTimeLoop, body: Body) -> None:
    bot: Any = new_bot(tmp_path)
    wire(bot)
    for part in (bot.service, bot.scheduler, bot.outbox):
        part.set_clock(loop.utcnow)
    h = Harness(bot, timeout=TIMEOUT)
    await started(bot, h)
    gathering = bot.delivery.gathering
    gathering.clock = loop.utcnow
    gathering.desk_window, gathering.team_window = 60.0, 10.0  # core/settings.py defaults
    try:
        h.add_guild("Mafia Club")
        h.set_bot_permissions(EVERYTHING)
        await body(h, loop)
    finally:
        await h.close()


async def drained(h: Harness, within: float = 120.0) -> None:
    """Every outbox entry delivered (held ones wait out their window in virtual time)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + within
    while await Outbox.filter(status=PENDING).exists():
        assert loop.time() < end, "outbox still busy"
        await asyncio.sleep(0.5)
    await h.settle()


async def soon(check: Callable[[], bool], what: str, seconds: float = 3.0) -> float:
    """Wait until `check()` holds, at most `seconds` of virtual time (a hold the bot
    should not make runs out the clock and fails); returns the virtual time taken."""
    loop = asyncio.get_running_loop()
    began = loop.time()
    while not check():
        assert loop.time() - began < seconds, f"not within {seconds} s: {what}"
        await asyncio.sleep(0.1)
    return loop.time() - began


def posts_to(h: Harness, channel: int, first: int) -> list[Any]:
    return [r for r in h.fake.requests[first:] if r.kind == "rest" and r.route == POST
            and r.status < 300 and int(r.params["channel_id"]) == channel]


def text_of(h: Harness, channel: int) -> str:
    return "\n".join(e.get("description", "") for m in h.messages_in(channel)
                     for e in m.embeds)


async def advance(t: Table, h: Harness) -> None:
    res = await t.do(t.master, "master advance")
    assert res.ephemeral, res.text
    await drained(h)


def test_a_night_end_with_missed_turns_is_one_desk_post(tmp_path: Path) -> None:
    async def body(h: Harness, loop: VirtualTimeLoop) -> None:
        t = await open_table(h, 8, roles=ROLES)
        await start(t)
        await drained(h)
        for p in t.players[:3]:  # five players idle through day 0 and the night
            assert (await t.do(p, "checkin")).ephemeral is not None
        await advance(t, h)  # night 1: nobody orders
        desk = (await t.bot.service.info(t.game_id)).private_channels["desk"]
        first = len(h.fake.requests)
        await advance(t, h)  # the night ends: its step-by-step and every missed turn
        state = await t.state()
        missed = [p.uid for p in state.players if p.turns and p.turns[-1].missed]
        posts = posts_to(h, desk, first)
        print(f"desk posts at the night end: {len(posts)} ({len(missed)} missed turns)")
        assert len(missed) >= 3
        assert len(posts) == 1
        body_text = "\n".join(e.get("description", "") for e in posts[0].json["embeds"])
        assert all(f"<@{uid}>" in body_text for uid in missed)

    on_virtual_time(tmp_path, body)


def test_orders_wait_on_the_desk_and_go_with_the_line_that_pings(tmp_path: Path) -> None:
    async def body(h: Harness, loop: VirtualTimeLoop) -> None:
        t = await open_table(h, 8, roles=ROLES)
        await start(t)
        for p in await t.living():
            assert (await t.do(p, "checkin")).ephemeral is not None
        await advance(t, h)  # night 1
        info = await t.bot.service.info(t.game_id)
        desk, clan = info.private_channels["desk"], info.private_channels["clan:1"]
        state = await t.state()
        owing = missed_night(state)
        citizen = (await t.holders(Role.CITIZEN))[0]
        mafioso = (await t.holders(Role.MAFIOSO))[0]
        assert len(owing) >= 2 and any(state.player(u).clan for u in owing)  # type: ignore[union-attr]
        first, start_at = len(h.fake.requests), loop.time()
        for i, uid in enumerate(owing):
            in_clan = state.player(uid).clan is not None  # type: ignore[union-attr]
            target = citizen if in_clan else mafioso
            assert (await t.do(t.member(uid), "night", target=str(target.id))).ephemeral
            if in_clan:  # the clan's order line waits its team window, then goes alone
                assert posts_to(h, clan, first) == []
                await asyncio.sleep(11.0)
                assert len(posts_to(h, clan, first)) == 1
            if i < len(owing) - 1:
                await asyncio.sleep(15.0)  # orders far apart, all within the minute
                assert posts_to(h, desk, first) == []  # gathered, not posted
        # the last order brings "all orders are in", which pings the master by default:
        # it goes at once, with the orders gathered before it
        await drained(h)
        posts = posts_to(h, desk, first)
        print(f"desk posts for {len(owing)} orders: {len(posts)}")
        assert len(posts) == 1 and posts[0].json.get("content") == f"<@{t.master.id}>"
        assert loop.time() - start_at < 60.0
        assert all(f"<@{uid}>" in text_of(h, desk) for uid in owing)

    on_virtual_time(tmp_path, body)


async def test_a_gathered_desk_post_is_posted_once_across_a_crash(lives: Lives) -> None:
    """The night end's desk post went out, then the process died before marking its
    entries: the next life tries the same run again, under the same nonce (its first
    entry's), and Discord returns the post made before: one post, every line in it."""
    h = lives.h
    t = await open_table(h, 8, roles=ROLES)
    await start(t)
    for p in t.players[:3]:
        assert (await t.do(p, "checkin")).ephemeral is not None
    await t.advance()  # night 1: nobody orders
    bot: Any = h.bot
    desk = (await bot.service.info(t.game_id)).private_channels["desk"]
    before = len(posted(h, desk))
    hit: list[list[int]] = []
    real = bot.outbox._mark_delivered

    async def die(ids: list[int]) -> None:  # posted, then dead before marking
        payloads = await Outbox.filter(id__in=ids).values_list("payload", flat=True)
        if not any('"turn_missed"' in str(p) for p in payloads):
            await real(ids)
            return
        hit.append(ids)
        await asyncio.Event().wait()

    bot.outbox._mark_delivered = die
    assert (await t.do(t.master, "master advance")).ephemeral
    await wait_for(lambda: bool(hit), "the night end's desk post")
    assert len(hit[0]) >= 4  # the step-by-step and the missed turns, one run
    assert len(posted(h, desk)) == before + 1
    h = await lives.restart()
    t = rebind(t, h)
    await t.settle()
    assert len(posted(h, desk)) == before + 1  # not posted again
    assert not await Outbox.filter(id__in=hit[0], status=PENDING).exists()


def test_after_a_prod_the_pinged_line_and_the_night_end_go_at_once(tmp_path: Path) -> None:
    """Issue 40: a night of many desk lines (orders changed several times, a /master
    prod) hid the pinged "every order is in" and the night's step-by-step behind ten
    gathered lines (the worker offered ten at a time, and a run closes only on a line it
    is shown): the desk sat out its minute, 44 s after the morning post. Now the pinged
    line goes at once with every line before it, and the night end's with the morning."""
    async def body(h: Harness, loop: VirtualTimeLoop) -> None:
        t = await open_table(h, 8, roles=ROLES)
        await start(t)
        for p in await t.living():
            assert (await t.do(p, "checkin")).ephemeral is not None
        await advance(t, h)  # night 0
        desk = (await t.bot.service.info(t.game_id)).private_channels["desk"]
        state = await t.state()
        owing = missed_night(state)
        citizens = await t.holders(Role.CITIZEN)
        mafioso = (await t.holders(Role.MAFIOSO))[0]
        assert len(owing) >= 2 and len(citizens) >= 2

        def target(uid: int, k: int) -> Any:
            clan = state.player(uid).clan is not None  # type: ignore[union-attr]
            return citizens[k % 2] if clan else mafioso

        first = len(h.fake.requests)
        first_order, last = owing[0], owing[-1]
        for k in range(11):  # he changes his mind: eleven desk lines within the minute
            assert (await t.do(t.member(first_order), "night",
                               target=str(target(first_order, k).id))).ephemeral
            await asyncio.sleep(2.0)
        for uid in owing[1:-1]:
            assert (await t.do(t.member(uid), "night", target=str(target(uid, 0).id))
                    ).ephemeral
        res = await t.do(t.master, "master prod")  # the master nudges the last one
        assert res.ephemeral and f"<@{last}>" in res.text, res.text
        await asyncio.sleep(3.0)
        assert posts_to(h, desk, first) == []  # informative lines: gathered, still
        assert (await t.do(t.member(last), "night", target=str(target(last, 0).id))
                ).ephemeral  # "every order is in": it pings the master (his default)

        def pinged() -> bool:
            return any(r.json.get("content") == f"<@{t.master.id}>"
                       for r in posts_to(h, desk, first))

        await soon(pinged, "the pinged line on the desk")
        posts = posts_to(h, desk, first)
        assert len(posts) == 1  # every gathered line went with it, in one post
        text = "\n".join(e.get("description", "") for e in posts[0].json["embeds"])
        assert text.count(f"<@{first_order}> (") == 11 and f"<@{last}> (" in text
        assert text.index(f"<@{first_order}> (") < text.index(f"<@{last}> (")
        mark = len(h.fake.requests)
        assert (await t.do(t.master, "master advance")).ephemeral  # the night ends
        began = loop.time()
        await soon(lambda: bool(posts_to(h, t.channel, mark)), "the morning post")
        morning = loop.time()
        await soon(lambda: bool(posts_to(h, desk, mark)), "the night's step-by-step")
        print(f"morning after {morning - began:.1f} s, desk after {loop.time() - began:.1f} s")
        assert loop.time() - morning < 3.0
        await drained(h)

    on_virtual_time(tmp_path, body)


def test_a_re_sent_clan_order_is_marked_and_comes_before_the_result(tmp_path: Path) -> None:
    """Issue 40: the clan read a re-sent order as a second order, with nothing saying it
    replaced the first. The clan channel, and only the clan, gets one post at the night's
    end: the first order, the re-sent one marked as replacing it, then the result."""
    async def body(h: Harness, loop: VirtualTimeLoop) -> None:
        t = await open_table(h, 8, roles=ROLES)
        await start(t)
        for p in await t.living():
            assert (await t.do(p, "checkin")).ephemeral is not None
        await advance(t, h)  # night 0: the clan's turn was posted (it pings the mover)
        clan = (await t.bot.service.info(t.game_id)).private_channels["clan:1"]
        state = await t.state()
        acting = t.member(state.clans[0].acting)  # type: ignore[arg-type]
        first_target, second_target = (await t.holders(Role.CITIZEN))[:2]
        mafiosi = {m.id for m in await t.holders(Role.MAFIOSO)}
        first = len(h.fake.requests)
        assert (await t.do(acting, "night", target=str(first_target.id))).ephemeral
        await asyncio.sleep(3.0)
        res = await t.do(acting, "night", target=str(second_target.id))
        assert res.ephemeral, res.text
        await asyncio.sleep(3.0)
        assert posts_to(h, clan, first) == []  # within the team window: gathered
        assert (await t.do(t.master, "master advance")).ephemeral  # the night ends
        await soon(lambda: bool(posts_to(h, clan, first)), "the clan's post")
        await drained(h)
        posts = posts_to(h, clan, first)
        assert len(posts) == 1  # one post for the phase change, every line in it
        lines = [e.get("description", "") for e in posts[0].json["embeds"]]
        orders = [i for i, line in enumerate(lines) if f"<@{acting.id}>" in line
                  and "kill of" in line]
        assert len(orders) == 2, lines
        assert "replaces" not in lines[orders[0]]
        assert lines[orders[1]] == (
            f"<@{acting.id}> changes the order: the kill of <@{second_target.id}> for night "
            "0. This replaces the earlier order.")
        result = next(i for i, line in enumerate(lines) if "kill succeeded" in line)
        assert orders[1] < result  # the orders before the night's result
        assert posts[0].json["allowed_mentions"]["parse"] == []
        assert_access(h, clan, [*t.players, t.master], mafiosi, mafiosi)

    on_virtual_time(tmp_path, body)


def test_a_clan_burst_beyond_ten_lines_still_goes_with_the_night_end(tmp_path: Path) -> None:
    """Issue 40: eleven clan lines within the team window (the acting mafioso changing
    his order again and again) filled the worker's offer of ten, so the run could not
    see the night end behind them and sat out its window: the orders landed after the
    morning post. Now the clan's lines go with the night end, in commit order."""
    async def body(h: Harness, loop: VirtualTimeLoop) -> None:
        t = await open_table(h, 8, roles=ROLES)
        await start(t)
        for p in await t.living():
            assert (await t.do(p, "checkin")).ephemeral is not None
        await advance(t, h)  # night 0
        clan = (await t.bot.service.info(t.game_id)).private_channels["clan:1"]
        state = await t.state()
        acting = t.member(state.clans[0].acting)  # type: ignore[arg-type]
        targets = (await t.holders(Role.CITIZEN))[:2]
        first = len(h.fake.requests)
        for k in range(11):
            assert (await t.do(acting, "night", target=str(targets[k % 2].id))).ephemeral
            await asyncio.sleep(0.5)
        assert posts_to(h, clan, first) == []  # within the team window: gathered
        mark = len(h.fake.requests)
        assert (await t.do(t.master, "master advance")).ephemeral  # the night ends
        await soon(lambda: bool(posts_to(h, t.channel, mark)), "the morning post")
        morning = loop.time()
        await soon(lambda: any("kill succeeded" in e.get("description", "")
                               for r in posts_to(h, clan, first) for e in r.json["embeds"]),
                   "the clan's result")
        assert loop.time() - morning < 3.0
        lines = [e.get("description", "") for r in posts_to(h, clan, first)
                 for e in r.json["embeds"]]
        orders = [i for i, line in enumerate(lines) if "kill of" in line]
        result = next(i for i, line in enumerate(lines) if "kill succeeded" in line)
        assert len(orders) == 11 and max(orders) < result, lines
        assert sum("replaces the earlier order" in lines[i] for i in orders) == 10
        await drained(h)

    on_virtual_time(tmp_path, body)


def test_a_full_offer_of_gathered_lines_never_waits() -> None:
    """The worker offers a gathering lane at most GATHERED_BATCH entries: a run that is
    the whole offer cannot see what stands behind it (maybe the line that pings), so it
    goes at once instead of sitting out its window."""
    now = datetime(2026, 1, 1, tzinfo=UTC)
    order = Event(kind=EventKind.DESK_ORDER, audience=Audience.master(), data={})
    entries = [OutboxEntry(id=i, game_id=1, ordinal=i, kind="event", attempts=0,
                           payload={"seq": i, "event": order.model_dump(mode="json")},
                           created_at=now) for i in range(1, GATHERED_BATCH + 1)]
    gathering = Gathering(60.0, 10.0, clock=lambda: now)
    run = gathering.run(entries, ())
    assert run == entries
    assert gathering.wait(run, [], ()) == 60.5  # an offer with room: all there is
    assert gathering.wait(run, [], (), full=True) == 0.0
