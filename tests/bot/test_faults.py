"""Fault injection through the Discord harness: what a flaky or hostile Discord, and a
failing database, do to a running game.

Discord: 429s with a retry-after, 5xx and timeouts (discord.py retries some by itself, the
outbox the rest), a game channel or a private channel deleted by an admin, permissions
revoked mid-game, the master's DMs closed. The database: "database is locked" and a full
disk at commit. Every time: the game state stays what the command log replays to, nothing
is lost or reordered, and what could not be done is reported to someone.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import discord
import pytest
from tortoise.exceptions import OperationalError

from cogs.delivery.deliverer import SIGNUP_EVENTS
from cogs.ui.lobby import SIGNUP_POST
from cogs.ui.render import event_embed
from core.game import commands as c
from core.game.events import Event
from core.game.roles import Role
from core.game.state import PhaseKind
from core.sight.places import PING_KIND, SILENCE_KIND
from core.storage import groupcommit, statements
from core.storage.models import DELIVERED, PARKED, PENDING, Outbox
from core.storage.outbox import OutboxEntry, OutboxWorker, RetryAfter
from core.text.i18n import t as tr
from tests.bot.helpers import (
    EVERYTHING,
    Table,
    checkin_all,
    confirmed,
    open_table,
    posted,
    start,
    wait_for,
)
from tests.harness import Harness

ROLES = "mafioso x2; investigator; sergeant; bouncer"
POST = "POST /channels/{channel_id}/messages"
EDIT_CHANNEL = "PATCH /channels/{channel_id}"


# --- a quick outbox that reports what it did ------------------------------------------------
@dataclass
class Tap:
    delivered: list[tuple[int, int]] = field(default_factory=list)
    asked: list[float] = field(default_factory=list)  # retry-after delays Discord asked for


async def fast_outbox(t: Table, max_attempts: int = 3) -> Tap:
    """The bot's outbox with millisecond back-off (same delivery code, batches and
    parking as MafiaBot wires them)."""
    bot, tap = t.bot, Tap()

    async def deliver(entry: OutboxEntry) -> None:
        try:
            await bot.delivery.deliver(entry)
        except RetryAfter as exc:
            tap.asked.append(exc.seconds)
            raise RetryAfter(0.005) from exc
        tap.delivered.append(entry.key)

    async def deliver_batch(entries: list[OutboxEntry]) -> int:
        try:
            taken = await bot.delivery.deliver_batch(entries)
        except RetryAfter as exc:
            tap.asked.append(exc.seconds)
            raise RetryAfter(0.005) from exc
        tap.delivered += [e.key for e in entries[:max(1, min(len(entries), taken))]]
        return taken

    old = bot.outbox
    await old.stop()
    bot.service.outbox_listeners.remove(old.wake)
    bot.outbox = OutboxWorker(deliver, notify_parked=bot.delivery.parked, service=bot.service,
                              max_attempts=max_attempts, backoff=lambda _n: 0.005,
                              poll_interval=0.05, deliver_batch=deliver_batch)
    await bot.outbox.start()
    return tap




async def rows(t: Table) -> list[Outbox]:
    return await Outbox.filter(game_id=t.game_id).order_by("ordinal")


def announcements(h: Harness, channel: int) -> list[str]:
    """The outbox's embeds in a channel, in order (several may share one message), with
    the public replies that record a vote or a check-in typed there."""
    return [e.get("description") or "" for m in h.messages_in(channel) for e in m.embeds]


def no_repeats(h: Harness, *channels: int) -> None:
    """At-least-once must not become twice when nothing crashed: no message posted twice
    (welcome texts and embeds compared as a whole)."""
    for channel in channels:
        texts = [m.text for m in posted(h, channel)]
        assert len(texts) == len(set(texts)), texts


def expected_posts(entries: list[Outbox], lang: str = "ru") -> list[str]:
    """The game channel, as the outbox entries say it should read, in ordinal order (a
    day's live vote count where its first vote opened it, as its latest entry says it
    reads now; day 0's check-in list from its first entry)."""
    from cogs.delivery.tally import TALLY_KIND, tally_message_embed
    from core.sight.visibility import LiveTally

    latest = {json.loads(r.payload)["coalesce"]: json.loads(r.payload)["tally"]
              for r in entries if r.kind == TALLY_KIND}
    out = []
    opened: set[str] = set()
    for row in entries:
        if row.kind == SIGNUP_POST:  # the signup board: its description is the plot (none)
            out.append("")
            continue
        if row.kind == TALLY_KIND:  # posted by the first count with a vote in it
            payload = json.loads(row.payload)
            key = payload["coalesce"]
            if key not in opened and (payload["tally"]["rows"]
                                      or payload["tally"].get("checkin")):
                opened.add(key)
                count = LiveTally.model_validate(latest[key])
                out.append(tally_message_embed(count, lang).description or "")
            continue
        event = Event.model_validate(json.loads(row.payload)["event"]) \
            if row.kind == "event" else None
        if event is None or event.audience.kind != "public" or event.kind in SIGNUP_EVENTS:
            continue
        out.append(event_embed(event, lang).description or "")
    return out


async def consistent(t: Table) -> None:
    """The stored state is exactly what the command log replays to."""
    replayed = await t.bot.service.verify(t.game_id)
    assert replayed.model_dump() == (await t.state()).model_dump()


async def master_command(t: Table, cmd: type[c._Cmd], **fields: Any) -> None:
    """A command straight to the service (when the game channel is gone)."""
    info = await t.bot.service.info(t.game_id)
    await t.bot.apply(info, cmd(by=t.master.id, at=datetime.now(UTC), **fields))  # type: ignore[arg-type]


def mute_bot(h: Harness, channel_id: int, muted: bool = True) -> None:
    """An admin denies the bot Send Messages in a channel (or lifts the denial)."""
    deny = discord.PermissionOverwrite(send_messages=False)
    h.set_overwrite(channel_id, h.world.bot_id, deny if muted else None)


def delete_channel(h: Harness, channel_id: int) -> None:
    """An admin deletes a channel (Discord then sends CHANNEL_DELETE)."""
    payload = h.world.channel_payload(channel_id)
    h.world.delete_channel(channel_id)
    h.world.emit("CHANNEL_DELETE", payload)


# --- 429, 5xx, timeouts ---------------------------------------------------------------------
async def test_short_faults_are_retried_and_nothing_is_lost_or_reordered(h: Harness) -> None:
    # the sleeps counted below are the injected faults' only: with the fake's limits off
    # from the first request, discord.py never learns a bucket it would wait on (a bucket
    # learned while the table opened made it sleep out the reset, a real-time race)
    h.world.ratelimits.enabled = False
    t = await open_table(h, 8, roles=ROLES)
    # live-count edits spaced as in production: bursts of them would make the bot's own
    # budget wait (a sleep on the fake clock) between the injected faults' retries
    h.bot.delivery.tallies.interval = 2.0  # type: ignore[attr-defined]
    h.fake.sleeps.clear()
    tap = await fast_outbox(t, max_attempts=5)
    faults = [h.fake.rate_limit(POST, retry_after=0.25, times=3, channel_id=t.channel),
              h.fake.server_error(POST, times=2, channel_id=t.channel),
              h.fake.timeout(POST, times=2, channel_id=t.channel)]
    await start(t)
    await checkin_all(t)
    await t.advance()
    assert all(f.exhausted for f in faults)
    # discord.py slept as Discord asked (429) and backed off (5xx) by itself...
    assert h.fake.sleeps.count(0.25) == 3 and len([x for x in h.fake.sleeps if x >= 1]) == 2, (
        h.fake.sleeps)
    entries = await rows(t)
    # ...the outbox retried the rest: the first post failed three times, then went out once
    assert {r.status for r in entries} == {DELIVERED}
    assert sorted(r.attempts for r in entries if r.attempts) == [3]
    assert tap.delivered == sorted(set(tap.delivered))
    assert announcements(h, t.channel) == expected_posts(entries)
    await consistent(t)


async def test_a_long_rate_limit_holds_messages_back_then_they_arrive_in_order(
        h: Harness) -> None:
    t = await open_table(h, 8, roles=ROLES)
    tap = await fast_outbox(t)
    await start(t)
    before = len(posted(h, t.channel))
    limit = h.fake.rate_limit(POST, retry_after=7.5, times=None, channel_id=t.channel)
    # the game goes on: replies to commands are not channel posts
    await checkin_all(t)
    res = await t.do(t.master, "master advance")
    assert res.ephemeral
    res = await t.do(t.master, "master advance")
    assert res.ephemeral
    state = await t.state()
    assert (state.phase, state.number) == (PhaseKind.DAY, 1)
    # no sleep: wait until the outbox met the limit, then look at what it held back
    await wait_for(lambda: bool(tap.asked) and limit.hits > 0, "the outbox to meet the limit")
    held = [r for r in await rows(t) if r.status == PENDING]
    assert held and all(r.attempts == 0 for r in held)  # a rate limit is not a failure
    assert len(posted(h, t.channel)) == before
    assert tap.asked and min(tap.asked) >= 7.5  # the delay Discord asked for, not a guess
    # Discord recovers: everything arrives, once, in the order it happened
    limit.times = limit.hits
    await t.settle()
    entries = await rows(t)
    assert {r.status for r in entries} == {DELIVERED}
    assert tap.delivered == sorted(set(tap.delivered))
    assert announcements(h, t.channel) == expected_posts(entries)
    await consistent(t)


# --- channels deleted, permissions revoked ---------------------------------------------------
async def test_deleted_game_channel_parks_posts_and_tells_the_master(
        h: Harness, caplog: pytest.LogCaptureFixture) -> None:
    t = await open_table(h, 8, roles=ROLES, locale="ru")
    await fast_outbox(t)
    await start(t)
    await checkin_all(t)
    clan = h.channel_named(tr("channel.clan", "ru", number=1))
    before = len(posted(h, clan.id))
    delete_channel(h, t.channel)
    with caplog.at_level(logging.WARNING):
        await master_command(t, c.Advance)  # day 0 -> night 0
        await t.settle()
    entries = await rows(t)
    parked = [r for r in entries if r.status == PARKED]
    # the game channel's posts: public events and day 0's closing check-in list
    assert parked and all(r.kind == "tally" or json.loads(r.payload)["event"]["audience"][
        "kind"] == "public" for r in parked)
    assert any(r.kind == "tally" for r in parked)
    assert all(r.attempts == 1 for r in parked)  # 404: parked at once, no retries
    assert {r.status for r in entries} <= {DELIVERED, PARKED}
    # the clan still got its night message, once; the master hears of the public posts only
    assert len(posted(h, clan.id)) > before
    no_repeats(h, clan.id)
    dms = h.dms_to(t.master)
    assert len(dms) == len(parked)
    assert all("Palermo" in m.text and "10003" in m.text for m in dms)
    assert any("phase_started" in m.text for m in dms)
    assert any("parked" in r.getMessage() for r in caplog.records)
    await consistent(t)
    # the game goes on from the private channels
    mafioso = (await t.holders(Role.MAFIOSO))[0]
    state = await t.state()
    acting = state.clans[0].acting
    res = await h.slash(t.member(acting or mafioso.id), "role", channel=clan.id)
    assert res.ephemeral


async def test_deleted_private_channel_is_opened_again(h: Harness) -> None:
    t = await open_table(h, 8, roles=ROLES)
    await fast_outbox(t)
    await start(t)
    await checkin_all(t)
    name = tr("channel.clan", "ru", number=1)
    old = h.channel_named(name)
    delete_channel(h, old.id)
    await t.advance()  # night 0: the clan is told who acts
    new = h.channel_named(name)
    assert new.id != old.id
    info = await t.bot.service.info(t.game_id)
    assert info.private_channels["clan:1"] == new.id and new.parent_id == info.category_id
    state = await t.state()
    for p in state.players:
        assert h.visible_channels(p.uid).can_view(new.id) == (p.clan == 1), p.name
    assert len(posted(h, new.id)) == 2  # the welcome, then the night's message
    assert {r.status for r in await rows(t)} == {DELIVERED}
    assert not h.dms_to(t.master)
    # orders given in the new channel work
    res = await h.slash(t.member(state.clans[0].acting or 0), "role", channel=new.id)
    assert res.ephemeral
    await consistent(t)


async def test_send_messages_revoked_mid_game(h: Harness) -> None:
    t = await open_table(h, 8, roles=ROLES)
    await fast_outbox(t)
    await start(t)
    await checkin_all(t)
    mute_bot(h, t.channel)
    await t.advance()  # the reply is an interaction response: still allowed
    entries = await rows(t)
    parked = [r for r in entries if r.status == PARKED]
    assert parked, [r.status for r in entries]
    dms = h.dms_to(t.master)
    assert dms and all("50013" in m.text for m in dms)
    # private channels keep working: the bot's own overwrite lets it write there
    clan = h.channel_named(tr("channel.clan", "ru", number=1))
    assert any(r.status == DELIVERED and '"team"' in r.payload and "clan_turn" in r.payload
               for r in entries)
    assert posted(h, clan.id)
    no_repeats(h, clan.id)
    await consistent(t)
    # permissions back: the next phase is announced again
    mute_bot(h, t.channel, muted=False)
    count = len(posted(h, t.channel))
    await t.advance()
    assert len(posted(h, t.channel)) > count
    assert all(r.status == DELIVERED for r in await rows(t) if r.ordinal > entries[-1].ordinal)


async def test_manage_channels_revoked_mid_game(h: Harness) -> None:
    t = await open_table(h, 8, roles=ROLES)
    await fast_outbox(t)
    await start(t)
    h.set_bot_permissions(discord.Permissions(EVERYTHING.value & ~discord.Permissions(
        manage_channels=True, manage_roles=True).value))
    mafioso = (await t.holders(Role.MAFIOSO))[0]
    res = await t.do(t.master, "master kick", player=str(mafioso.id))
    assert res.ephemeral
    await t.settle()
    entries = await rows(t)
    parked = {json.loads(r.payload)["event"]["kind"] if r.kind == "event" else r.kind
              for r in entries if r.status == PARKED}
    # the channels, the ping role and the dead's silence in the game channel (overwrites)
    assert parked == {"team_changed", PING_KIND, SILENCE_KIND}
    assert any("team_changed" in m.text for m in h.dms_to(t.master))
    # the death itself was announced
    assert any(f"<@{mafioso.id}>" in m.text for m in posted(h, t.channel))
    await consistent(t)


async def test_master_with_closed_dms_is_told_in_the_game_channel(
        h: Harness, caplog: pytest.LogCaptureFixture) -> None:
    t = await open_table(h, 8, roles=ROLES)
    await fast_outbox(t)
    await start(t)
    h.close_dms(t.master)
    h.fake.forbid(EDIT_CHANNEL, times=None)  # private channels can no longer be changed
    mafioso = (await t.holders(Role.MAFIOSO))[0]
    with caplog.at_level(logging.WARNING):
        await t.do(t.master, "master kick", player=str(mafioso.id))
        await t.settle()
    assert not h.dms_to(t.master)
    notices = [m for m in posted(h, t.channel) if tr("delivery.parked_public", "ru",
                                                     master="\x00", game="x")[3:15] in m.text]
    assert notices and all(f"<@{t.master.id}>" in m.text for m in notices)
    # no details in public: which team's channel failed is nobody's business
    assert all("team_changed" not in m.text and "clan" not in m.text for m in notices)
    assert not [r for r in caplog.records if "notify_parked failed" in r.getMessage()]
    await consistent(t)


async def test_nobody_reachable_is_logged_and_the_outbox_moves_on(
        h: Harness, caplog: pytest.LogCaptureFixture) -> None:
    t = await open_table(h, 8, roles=ROLES)
    await fast_outbox(t)
    await start(t)
    await checkin_all(t)
    h.close_dms(t.master)
    mute_bot(h, t.channel)
    with caplog.at_level(logging.WARNING):
        await t.advance()
    assert [r for r in await rows(t) if r.status == PARKED]
    assert any("could not tell the master" in r.getMessage() for r in caplog.records)
    assert not [r for r in caplog.records if "notify_parked failed" in r.getMessage()]
    mute_bot(h, t.channel, muted=False)
    count = len(posted(h, t.channel))
    await t.advance()
    assert len(posted(h, t.channel)) > count
    await consistent(t)


# --- the database refuses to commit ------------------------------------------------------------
def failing_commit(monkeypatch: pytest.MonkeyPatch, message: str) -> None:
    """Every commit commands go through (core/storage/groupcommit.py) fails: the
    transaction is rolled back and the error raised, whether the work is a function of
    the connection (`in_transaction`) or writes decided in advance (`commit_scripts`:
    the commit runs, then the error rolls it back)."""
    real = groupcommit.in_transaction

    @asynccontextmanager
    async def broken(*args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        async with real(*args, **kwargs) as conn:
            yield conn
            raise OperationalError(message)

    async def broken_scripts(scripts: Any) -> list[bool]:
        async with real() as conn:
            for script in scripts:
                await statements.run_script(conn, script)
            raise OperationalError(message)

    monkeypatch.setattr(groupcommit, "in_transaction", broken)
    monkeypatch.setattr(groupcommit, "commit_scripts", broken_scripts)


@pytest.mark.parametrize("message", ["database is locked", "database or disk is full"])
async def test_database_errors_are_reported_not_swallowed(
        h: Harness, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch,
        message: str) -> None:
    t = await open_table(h, 8, roles=ROLES)
    await start(t)
    p = t.players[0]
    before = len(await rows(t))
    failing_commit(monkeypatch, message)
    with caplog.at_level(logging.ERROR):
        res = await t.do(p, "checkin")
    assert res.ephemeral and res.text == tr("error.internal_error", "en")
    assert not res.embeds  # not the public "checked in" announcement
    failures = [r for r in caplog.records if r.exc_info and message in str(r.exc_info[1])]
    assert failures, [r.getMessage() for r in caplog.records]
    state = await t.state()
    assert not state.player(p.id).checked_in  # type: ignore[union-attr]
    assert len(await rows(t)) == before
    await consistent(t)
    # the same through a button: the user is told, not left with "interaction failed"
    caplog.clear()
    with caplog.at_level(logging.ERROR):
        res = await h.click(p, h.find_component_message(f"mafia:role:{t.game_id}"))
    assert res.ephemeral  # reading works: only commits fail
    # the database is back: the bot keeps working
    monkeypatch.undo()
    res = await t.do(p, "checkin")
    assert confirmed(res), res.text
    assert (await t.state()).player(p.id).checked_in  # type: ignore[union-attr]
    await consistent(t)


async def test_database_error_behind_the_vote_menu_is_reported(
        h: Harness, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    t = await open_table(h, 8, roles=ROLES)
    await start(t)
    await checkin_all(t)
    await t.advance()
    await t.advance()  # day 1: the announcement carries the vote menu
    voter, target = (await t.living())[:2]
    menu = h.find_component_message(f"mafia:vote:{t.game_id}:1")
    failing_commit(monkeypatch, "database is locked")
    with caplog.at_level(logging.ERROR):
        res = await h.select(voter, menu, [str(target.id)], f"mafia:vote:{t.game_id}:1")
    assert res.ephemeral and res.text == tr("error.internal_error", "en")
    assert any(r.exc_info and "database is locked" in str(r.exc_info[1])
               for r in caplog.records)
    monkeypatch.undo()
    res = await h.select(voter, menu, [str(target.id)], f"mafia:vote:{t.game_id}:1")
    assert confirmed(res)
    await consistent(t)
