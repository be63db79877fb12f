"""The table talks (issue 18 part B) through the real command tree: /game options
reminder_minutes and early_night, /master prod, the live vote count, the early end."""

from __future__ import annotations

from typing import Any

import pytest

from core.game.roles import Role
from core.game.state import PhaseKind
from core.storage.models import Outbox
from tests.harness import Harness

from .helpers import Table, checkin_all, open_table, start

pytestmark = pytest.mark.asyncio

ROLES = "mafioso; investigator; bouncer; killer; citizen x4"


async def open_en(h: Harness, **options: Any) -> Table:
    """A table whose game speaks English (the guild's own language is Russian)."""
    t = await open_table(h, 8, roles=ROLES)
    res = await t.do(t.master, "game options", language="en", **options)
    assert res.ephemeral, res.text
    return t


async def place_of(t: Table, player: Any) -> list[Any]:
    """The bot's messages in a player's private place (his seat's private thread)."""
    state = await t.state()
    seat = next(i for i, p in enumerate(state.players) if p.uid == player.id)
    info = await t.bot.service.info(t.game_id)
    thread = info.private_channels.get(f"place:{seat}")
    return [] if thread is None else t.h.messages_in(thread)


def reminders_in(messages: list[Any], command: str) -> list[Any]:
    return [m for m in messages if "Reminder" in m.text and command in m.text]


def live_counts(t: Table) -> list[Any]:
    """The bot's live-count messages in the game channel."""
    return [m for m in t.h.messages_in(t.channel)
            if any("live count" in e.get("title", "") or "final count" in e.get("title", "")
                   for e in m.embeds)]


def edits_of(t: Table, message_id: int) -> int:
    return len([r for r in t.h.requests_to("PATCH /channels/{channel_id}/messages/{message_id}",
                                           message_id=message_id) if r.status < 300])


async def to_day_one(t: Table) -> None:
    await checkin_all(t)
    await t.advance()  # night 0
    await t.advance()  # day 1
    assert await t.phase() == (PhaseKind.DAY, 1)


async def test_options_set_reminder_minutes_and_early_night(h: Harness) -> None:
    t = await open_en(h)
    res = await t.do(t.master, "game options", reminder_minutes=15, early_night=True)
    assert res.ephemeral, res.text
    assert "15 minutes" in res.text and "every order is in" in res.text
    options = (await t.state()).options
    assert (options.reminder_minutes, options.early_night) == (15, True)
    res = await t.do(t.players[0], "game options", reminder_minutes=5)
    assert res.ephemeral and (await t.state()).options.reminder_minutes == 15
    await start(t)
    # during the game the lead time may still change, the early end may not
    res = await t.do(t.master, "game options", reminder_minutes=0)
    assert res.ephemeral and (await t.state()).options.reminder_minutes == 0
    res = await t.do(t.master, "game options", early_night=False)
    assert res.ephemeral and (await t.state()).options.early_night is True


async def test_master_prod_by_day_reminds_privately_and_lists_publicly(h: Harness) -> None:
    t = await open_en(h)
    await start(t)
    done = t.players[0]
    await t.do(done, "checkin")
    assert (await t.state()).player(done.id).checked_in  # type: ignore[union-attr]
    await t.settle()
    before = len(h.messages_in(t.channel))
    res = await t.do(t.master, "master prod")
    await t.settle()
    assert res.ephemeral
    owing = [p for p in t.players if p is not done]
    assert all(f"<@{p.id}>" in res.text for p in owing) and f"<@{done.id}>" not in res.text
    for p in owing:
        got = reminders_in(await place_of(t, p), "/checkin")
        assert len(got) == 1 and got[0].content.startswith(f"<@{p.id}>")  # the ping
        thread = h.channel(got[0].channel_id)
        assert thread.id != t.channel  # private: his seat's thread, not the game channel
    assert reminders_in(await place_of(t, done), "/checkin") == []
    public = h.messages_in(t.channel)[before:]
    assert len(public) == 1 and "Not checked in yet" in public[0].text
    # a player cannot prod
    res = await t.do(done, "master prod")
    assert res.ephemeral and reminders_in(await place_of(t, done), "/checkin") == []


async def test_master_prod_by_night_names_nobody_in_public(h: Harness) -> None:
    t = await open_en(h)
    await start(t)
    await checkin_all(t)
    await t.advance()  # night 0
    mafioso = (await t.holders(Role.MAFIOSO))[0]
    victim = (await t.holders(Role.CITIZEN))[0]
    res = await t.do(mafioso, "night", target=str(victim.id))
    assert res.ephemeral, res.text
    await t.settle()
    before = len(h.messages_in(t.channel))
    res = await t.do(t.master, "master prod")
    await t.settle()
    movers = [*(await t.holders(Role.BOUNCER)), *(await t.holders(Role.KILLER))]
    reminded = {p.id for p in t.players if reminders_in(await place_of(t, p), "/night")}
    assert reminded == {p.id for p in movers}
    assert len(h.messages_in(t.channel)) == before  # nothing public at night
    assert all(f"<@{p.id}>" in res.text for p in movers)


async def test_live_count_is_created_once_edited_coalesced_and_closed(h: Harness) -> None:
    t = await open_en(h)
    await start(t)
    assert live_counts(t) == []  # day 0 has no vote
    await to_day_one(t)
    assert live_counts(t) == []  # nothing to count yet: the day's first vote posts it
    voters = (await t.living())[:5]
    target = voters[-1]
    await t.do(voters[0], "vote", player=str(target.id))
    await t.settle()
    counts = live_counts(t)
    assert len(counts) == 1
    message = counts[0]
    info = await t.bot.service.info(t.game_id)
    assert info.live_messages == {"tally:1": message.id}  # stored with the game
    assert "Not voted yet" in message.text
    # a burst of votes: the count follows, in fewer edits than votes
    t.bot.delivery.tallies.interval = 0.5
    posts = len(h.messages_in(t.channel))
    for v in voters[1:4]:
        await t.do(v, "vote", player=str(target.id))
    await t.settle()
    assert len((await t.state()).vote_log) == 4
    red = [m for m in h.messages_in(t.channel)[posts:] if m.embeds
           and m.embeds[0].get("color") == 0xE74C3C]
    assert len(red) == 3  # each vote is still its own public red post
    current = h.world.message_record(message.id)
    assert "4 votes" in current.text
    assert f"<@{voters[0].id}>" not in current.embeds[0]["fields"][0]["value"]
    edits = edits_of(t, message.id)
    assert 1 <= edits < 3
    assert t.bot.outbox.superseded >= 1
    assert len(live_counts(t)) == 1  # never a second message for the day
    await t.advance()  # the day ends: the count shows the result
    final = h.world.message_record(message.id)
    assert "final count" in final.text and "Result" in final.text
    assert f"<@{target.id}>" in final.embeds[0]["fields"][0]["value"]
    assert "Not voted yet" not in final.text
    assert await Outbox.filter(game_id=t.game_id, kind="tally", status="pending").count() == 0


async def test_live_count_survives_a_restart_of_the_deliverer(h: Harness) -> None:
    """Edits after a restart address the stored message (the id is in the database)."""
    t = await open_en(h)
    await start(t)
    await to_day_one(t)
    voter, other, target = (await t.living())[:3]
    await t.do(voter, "vote", player=str(target.id))
    await t.settle()
    message = live_counts(t)[0]
    from cogs.delivery.tally import LiveTallies

    t.bot.delivery.tallies = LiveTallies(t.bot)  # forgets everything held in memory
    t.bot.service.forget()
    await t.do(other, "vote", player=str(target.id))
    await t.settle()
    assert len(live_counts(t)) == 1
    assert "2 votes" in h.world.message_record(message.id).text


async def test_night_ends_early_when_every_order_is_in(h: Harness) -> None:
    t = await open_en(h, early_night=True)
    await start(t)
    await checkin_all(t)
    await t.advance()  # night 0: the mafioso, the bouncer and the killer move
    citizens = await t.holders(Role.CITIZEN)
    orders = [(Role.MAFIOSO, citizens[0]), (Role.BOUNCER, citizens[1]),
              (Role.KILLER, citizens[2])]
    for role, target in orders:
        assert await t.phase() == (PhaseKind.NIGHT, 0)
        actor = (await t.holders(role))[0]
        res = await t.do(actor, "night", target=str(target.id))
        assert res.ephemeral, res.text
    await t.settle()
    assert await t.phase() == (PhaseKind.DAY, 1)
    texts = [m.text for m in h.messages_in(t.channel)]
    assert any("Every night order is in" in x for x in texts)
    assert any("Vote" in x and "/vote" in x for x in texts)  # day 1's call to action


async def test_phase_announcements_carry_the_call_to_action(h: Harness) -> None:
    t = await open_en(h)
    await start(t)
    text = "\n".join(m.text for m in h.messages_in(t.channel))
    deadline = (await t.state()).deadline
    assert deadline is not None
    unix = int(deadline.timestamp())  # the real moment, to the game's second
    assert "/checkin" in text and f"<t:{unix}:T> (<t:{unix}:R>)" in text
    await checkin_all(t)
    await t.advance()
    night = h.messages_in(t.channel)[-1].text
    assert "Players with a night move: /night" in night
