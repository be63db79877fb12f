"""What one phase change costs in REST requests (issue 30): a night end with a death and a
lynch day end, one game of eight through the real command tree, counted in the fake.

What a phase change says to one channel goes as one message (the outbox's bundler: one
command's announcements in the game channel together); the dead keep the game's ping
role, so a death costs no member-role request. The bounds are what this tree achieves;
docs/delivery.md has the figures before and after."""

from __future__ import annotations

from collections import Counter
from typing import Any

from core.game.roles import Role
from tests.bot.helpers import ROLES, checkin_all, confirmed, open_table, start
from tests.harness import Harness

#: per phase change, non-interaction REST requests of one game of eight
# measured: 5 and 8. Before issue 30: 6 and 8, one member-role DELETE per death (the
# guild's scarce route, 10 per 10 s); then 5 and 7; issue 28's silence of the dead adds
# one permission overwrite per death on the game channel (a channel route) back; the
# new day's live count is no longer posted empty at dawn (the first vote posts it): 5.
# The lynch's 8: the announcement, the live count's final edit, the hanged's silence,
# his place, a second place, the desk, and his clan's channel (its permissions, a post).
NIGHT_END_BOUND = 5
LYNCH_BOUND = 8


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
