"""What one phase change costs in REST requests (issue 30): a night end with a death and a
lynch day end, one game of eight through the real command tree, counted in the fake.

What a phase change says to one channel goes as one message (the outbox's bundler: one
command's announcements in the game channel together); the dead keep the game's ping
role, so a death costs no member-role request. The bounds are what this tree achieves;
docs/delivery.md has the figures before and after."""

from __future__ import annotations

from collections import Counter
from typing import Any

import discord

from core.game.roles import Role
from tests.bot.helpers import ROLES, Table, checkin_all, confirmed, open_table, start
from tests.harness import Harness

#: per phase change, non-interaction REST requests of one game of eight
# measured: 5 and 8 (the dead's silence now one PATCH of the game channel's overwrite
# list, not a PUT per death: the same count for one death). Before issue 30: 6 and 8,
# one member-role DELETE per death (the guild's scarce route, 10 per 10 s); then 5 and
# 7; issue 28's silence of the dead adds one permission overwrite per death on the game
# channel (a channel route) back; the new day's live count is no longer posted empty at
# dawn (the first vote posts it): 5.
# The lynch's 8: the announcement, the live count's final edit, the hanged's silence,
# his place, a second place, the desk, and his clan's channel (its permissions, a post).
NIGHT_END_BOUND = 5
LYNCH_BOUND = 8
# A night with two deaths (the clan's kill and the killer's): 8 before (two PUTs of the
# game channel's overwrites, one per death), 7 with the whole list in one PATCH
# (cogs/delivery/silence.py); the other 6 are posts (the announcement, places, the desk).
TWO_DEATHS_ROLES = "mafioso x2; investigator; sergeant; bouncer; killer"
TWO_DEATHS_BOUND = 7
OVERWRITE_ROUTES = ("PUT /channels/{channel_id}/permissions/{target}",
                    "DELETE /channels/{channel_id}/permissions/{target}")


def rest_since(h: Harness, first: int) -> Counter[str]:
    return Counter(r.route or r.path for r in h.fake.requests[first:]
                   if r.kind == "rest" and r.status < 300)


async def test_a_night_end_and_a_lynch_cost_few_requests(h: Harness) -> None:
    bot: Any = h.bot
    t = await open_table(h, 8, roles=ROLES)
    await start(t)
    await checkin_all(t)
    await t.advance()  # night 1
    state = await t.state()
    citizen = (await t.holders(Role.CITIZEN))[0]
    assert (await t.do(t.member(state.clans[0].acting), "night",  # type: ignore[arg-type]
                       target=str(citizen.id))).ephemeral
    mafioso = (await t.holders(Role.MAFIOSO))[0]
    for investigator in await t.holders(Role.INVESTIGATOR):
        assert (await t.do(investigator, "night", target=str(mafioso.id))).ephemeral
    await t.settle()
    first = len(h.fake.requests)
    await t.advance()  # the night ends: a citizen killed, a check, day 1
    night = rest_since(h, first)
    assert not (await t.state()).player(citizen.id).alive  # type: ignore[union-attr]
    for p in await t.living():
        assert confirmed(await t.do(p, "vote", player=str(mafioso.id)))
    await t.settle()
    first = len(h.fake.requests)
    await t.advance()  # the lynch
    lynch = rest_since(h, first)
    print(f"REST per game: night end {sum(night.values())} {dict(night)}; "
          f"lynch {sum(lynch.values())} {dict(lynch)}")
    assert h.world.ratelimits.limited == 0
    member_roles = [k for k in (*night, *lynch) if "/members/" in k and "/roles/" in k]
    assert member_roles == []  # no member-role request for a death
    # the game channel hears each phase change as one message
    posts = "POST /channels/{channel_id}/messages"
    in_channel = [r for r in h.fake.requests[first:] if r.kind == "rest"
                  and r.route == posts and int(r.params["channel_id"]) == t.channel]
    assert len(in_channel) == 1
    assert sum(night.values()) <= NIGHT_END_BOUND
    assert sum(lynch.values()) <= LYNCH_BOUND
    assert bot is not None


async def two_killed(t: Table) -> list[Any]:
    """Night 0 of a game of TWO_DEATHS_ROLES: the clan and the killer each order a
    citizen's kill (the two citizens); the night is not over yet."""
    await start(t)
    await checkin_all(t)
    await t.advance()  # night 0
    state = await t.state()
    victims = await t.holders(Role.CITIZEN)
    assert len(victims) == 2
    killer = (await t.holders(Role.KILLER))[0]
    for actor, victim in ((t.member(state.clans[0].acting), victims[0]),  # type: ignore[arg-type]
                          (killer, victims[1])):
        assert (await t.do(actor, "night", target=str(victim.id))).ephemeral
    await t.settle()
    return victims


def overwrite_requests(h: Harness, channel: int, first: int) -> list[str]:
    """The requests after `first` that changed the channel's overwrites."""
    return [r.route or r.path for r in h.fake.requests[first:] if r.kind == "rest"
            and r.status < 300 and r.params.get("channel_id") == channel
            and (r.route in OVERWRITE_ROUTES or (r.route == "PATCH /channels/{channel_id}"
                                                 and "permission_overwrites" in r.json))]


async def test_a_night_with_two_deaths_costs_one_overwrite_request(h: Harness) -> None:
    """Both dead are silenced by one PATCH of the game channel's whole list: the living
    still post, an admin's overwrites (a role's, a guest's, one on a victim) stay."""
    t = await open_table(h, 8, roles=TWO_DEATHS_ROLES)
    guest = h.add_member("Guest")
    mods = h.add_role("Moderators")
    reactions = discord.Permissions(add_reactions=True).value
    threads = discord.Permissions(manage_threads=True).value
    send = discord.Permissions(send_messages=True).value
    victims = await two_killed(t)
    h.set_overwrite(t.channel, mods, (reactions, 0))
    h.set_overwrite(t.channel, guest, (0, send))
    h.set_overwrite(t.channel, victims[0], (0, threads))
    first = len(h.fake.requests)
    await t.advance()  # the night ends: two citizens killed, day 1
    night = rest_since(h, first)
    print(f"REST, a night end with two deaths: {sum(night.values())} {dict(night)}")
    state = await t.state()
    assert not any(state.player(v.id).alive for v in victims)  # type: ignore[union-attr]
    assert overwrite_requests(h, t.channel, first) == ["PATCH /channels/{channel_id}"]
    assert sum(night.values()) <= TWO_DEATHS_BOUND
    assert h.world.ratelimits.limited == 0
    listed = {int(o["id"]): (int(o["allow"]), int(o["deny"]))
              for o in h.world.channel(t.channel)["permission_overwrites"]}
    assert listed[mods.id] == (reactions, 0) and listed[guest.id] == (0, send)
    assert listed[victims[0].id][1] & threads  # the admin's deny on him is kept
    for victim in victims:
        perms = h.permissions_in(victim, t.channel)
        assert perms.view_channel and perms.read_message_history
        assert perms.use_application_commands  # a ghost's vote is a command
        assert not (perms.send_messages or perms.send_messages_in_threads
                    or perms.add_reactions or perms.create_public_threads)
    assert all(h.permissions_in(p, t.channel).send_messages for p in await t.living())
    assert not h.permissions_in(guest, t.channel).send_messages
    assert {int(o["id"]) for o in h.world.channel(t.channel)["permission_overwrites"]} \
        == {mods.id, guest.id, *(v.id for v in victims)}  # nothing else was added
