"""The bot under Discord's rate limits (the fake enforces them, tests/harness/ratelimits.py).

A storm: many games change phase while the outbox is held back, then it runs.  The bot
must send no request Discord would refuse (zero 429s); announcements get the largest
share of the budget, but private pushes and edits get theirs meanwhile (weighted turns,
issue 27: strict priority starved them); edits of one message go once.
"""

from __future__ import annotations

from typing import Any

from cogs.delivery.deliverer import (
    LANE_ANNOUNCE,
    LANE_CHANNELS,
    LANE_COSMETIC,
    LANE_DESK,
    LANE_PRIVATE,
    LANE_ROLES,
    lane,
)
from cogs.delivery.ratelimits import CHANNEL_CREATIONS
from core.storage.outbox import OutboxEntry
from tests.bot.helpers import Table, checkin_all
from tests.harness import Harness

ROLES = "mafioso x2; investigator; sergeant; bouncer"
POST = "POST /channels/{channel_id}/messages"
EDIT = "PATCH /channels/{channel_id}/messages/{message_id}"


async def table(h: Harness, i: int, *, setup: bool = True) -> Table:
    """Game `i` in its own channel with its own eight members."""
    channel = h.add_text_channel(f"game-{i}").id
    master = h.add_member(f"Master{i}")
    players = [h.add_member(f"G{i}P{k}") for k in range(1, 9)]
    t = Table(h, master, players, channel=channel)
    res = await t.do(master, "game create", title=f"Game {i}")
    assert res.ephemeral, res.text
    t.game_id = (await t.bot.service.game_in_channel(channel)).id  # type: ignore[union-attr]
    if not setup:
        return t
    for p in players:
        assert (await t.do(p, "game join")).ephemeral
    assert (await t.do(master, "game setup", roles=ROLES)).ephemeral
    assert (await t.do(master, "game start")).ephemeral
    await t.settle()
    await checkin_all(t)
    await t.settle()
    return t


async def test_a_storm_of_phase_changes_gets_no_429_and_announcements_go_first(
        h: Harness) -> None:
    bot: Any = h.bot
    # a Discord (and a bot budget) with a global limit of 5/s: six games' storm is over it
    h.world.ratelimits.global_limit = 5
    bot.budget.global_limit = 5
    tables = [await table(h, i) for i in range(6)]
    signup = await table(h, 6, setup=False)
    await bot.outbox.idle(within=20)

    await bot.outbox.stop()  # the deadlines fall in the same second...
    for t in tables:
        res = await t.do(t.master, "master advance")
        assert res.ephemeral, res.text
    for p in signup.players[:4]:  # ...while a signup message changes four times
        assert (await signup.do(p, "game join")).ephemeral
    first = len(h.fake.requests)
    await bot.outbox.start()
    await bot.outbox.idle(within=60)
    await h.settle()

    assert h.world.ratelimits.limited == 0, h.world.ratelimits.hits  # storm and set-up alike
    sent = [r for r in h.fake.requests[first:] if r.kind == "rest" and r.status < 300]
    games = {t.channel: t for t in tables}
    announce = [i for i, r in enumerate(sent)
                if r.matches(POST) and int(r.params["channel_id"]) in games]
    private = [i for i, r in enumerate(sent)
               if r.matches(POST) and int(r.params["channel_id"]) in bot.private_index]
    edits = [i for i, r in enumerate(sent) if r.matches(EDIT)]
    # every game announced its phase; private channels heard of the night; one edit
    assert {int(sent[i].params["channel_id"]) for i in announce} == set(games)
    assert private and edits
    # announcements first by weight, not by starving the rest: they are all out before
    # the private pushes are, on average earlier, and the pushes did not wait for them all
    assert max(announce) < max(private)
    assert sum(announce) / len(announce) < sum(private) / len(private)
    # each game's check-in list closed with day 0: one edit each (cogs/delivery/tally.py)
    closed = [i for i in edits if int(sent[i].params["channel_id"]) in games]
    assert sorted(int(sent[i].params["channel_id"]) for i in closed) == sorted(games)
    # the four joins: one edit of the signup message, showing all four
    edits = [i for i in edits if i not in closed]
    assert len(edits) == 1
    signup_message = h.world.message(int(sent[edits[0]].params["message_id"]))
    text = str(signup_message.payload)
    assert all(str(p.id) in text or p.name in text for p in signup.players[:4])
    # announcements took turns: one per game before any game's second
    order = [int(sent[i].params["channel_id"]) for i in announce]
    assert len(set(order[:len(games)])) == len(games)


def test_the_outbox_lanes_are_named_by_what_entries_hold() -> None:
    def entry(kind: str, audience: str = "public", team: str | None = None) -> OutboxEntry:
        event = {"kind": kind, "audience": {"kind": audience, "team": team}, "data": {}}
        return OutboxEntry(1, 1, 1, "event", {"seq": 1, "event": event}, 0)

    assert lane(entry("phase_started")) == LANE_ANNOUNCE
    assert lane(entry("game_over")) == LANE_ANNOUNCE
    assert lane(entry("clan_turn", "team", "clan:1")) == LANE_CHANNELS
    assert lane(entry("desk_opened", "master")) == LANE_DESK  # its window holds no team
    assert lane(OutboxEntry(1, 1, 1, "place", {}, 0)) == LANE_PRIVATE
    assert lane(OutboxEntry(1, 1, 1, "ping_role", {}, 0)) == LANE_ROLES
    assert lane(entry("reminder", "players")) == LANE_PRIVATE
    assert lane(entry("joined")) == LANE_COSMETIC
    assert lane(OutboxEntry(1, 1, 1, "signup", {}, 0)) == LANE_COSMETIC


async def test_discord_py_bucket_clean_up_is_amortized(h: Harness) -> None:
    """Past 256 buckets discord.py looked through every bucket at each new one (a fifth of
    the bot's CPU in a deadline storm): now only when their number has doubled."""
    http: Any = h.bot.http
    looked = [0]

    class Busy:
        def is_inactive(self) -> bool:
            looked[0] += 1
            return False

    for i in range(300):
        http._buckets[f"busy:{i}"] = Busy()
    for i in range(200):  # 200 new buckets: at most one look at the 300 (and its own)
        http.get_ratelimit(f"new:{i}")
    assert 0 < looked[0] <= 300
    for i in range(200, 400):  # past twice the count of the last clean-up: one more look
        http.get_ratelimit(f"new:{i}")
    assert 300 < looked[0] <= 600


async def test_a_guild_creating_many_channels_waits_instead_of_collecting_429s(
        h: Harness) -> None:
    """Discord allows about 50 channel creations per guild in 10 minutes beside the 5 per
    5 s bucket, and says so in no header: a guild opening many games at once (each
    with its category and team channels) waits in the bot's budget, it is not refused."""
    bot: Any = h.bot
    guild = h.default_guild.id
    clock = h.world.ratelimits.clock
    start = clock()
    created: list[float] = []
    for i in range(CHANNEL_CREATIONS[0] + 3):
        await bot.http.create_channel(guild, 0, name=f"room-{i}")
        created.append(clock() - start)
    assert h.world.ratelimits.limited == 0, h.world.ratelimits.hits
    assert len(h.world.guild(guild).channel_ids) >= CHANNEL_CREATIONS[0] + 3
    # the first 50 within the 5 per 5 s bucket; the 51st only once the long window moved
    assert created[CHANNEL_CREATIONS[0] - 1] < CHANNEL_CREATIONS[1]
    assert created[CHANNEL_CREATIONS[0]] >= CHANNEL_CREATIONS[1]
