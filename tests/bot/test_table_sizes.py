"""Whole games at the sizes forums play (6, 12, 20 and 30 seats), every module on, two
games starting at once in one guild, through the real command tree with Discord's
limits enforced on a virtual clock (issue 40).

Before issue 40, seats 11 and up never got the game's ping role: the ping-role entry
added the role to every member in a row, the guild's member-role window (10 per 10 s)
made the 11th add back off, and the entry started again from the first member, forever;
the game's end waited behind it and never closed. Each game here is played to its end
and checked as a table would: every seat holds the role before day 0 ends; every phase
announcement notifies every living seat and every ghost voter; every vote that counts has
exactly one public record; the game closes (team channels archived and opened to the
players, places locked, the role deleted) and the /thank posts appear; no member-role or
overwrite request is sent twice for the same member and game; nothing stays pending.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from cogs.delivery.places import ROLE_KEY, is_place_key
from core.game.roles import Role
from core.game.rules.owing import owing
from core.game.state import GameState, PhaseKind
from core.storage.models import PENDING, Outbox
from tests.bot.helpers import EVERYTHING, Table, _migrated_template, on_virtual_time
from tests.harness import Harness, virtualtime
from tests.harness.virtualtime import VirtualTimeLoop, virtual_time

MODULES = {"extra_roles": True, "currency": True, "shop": True, "crypto": True}
RECORDED = frozenset({"checkin", "vote", "unvote"})
OVERWRITES = frozenset({"PATCH /channels/{channel_id}",
                        "PUT /channels/{channel_id}/permissions/{target}",
                        "DELETE /channels/{channel_id}/permissions/{target}"})
MEMBER_ROLE = re.compile(r"^(PUT|DELETE) /guilds/\{guild_id\}/members/\{user_id\}/roles/")
ROLE_MENTION = re.compile(r"<@&(\d+)>")
USER_MENTION = re.compile(r"<@!?(\d+)>")
VOTED = " голосует против игрока "  # event.vote_cast in the game's language (ru)
SETTLE = 1800.0  # virtual seconds the outbox gets to empty after a phase change


class Watch:
    """What the fake Discord saw: for each message that mentions a role, who held that
    role when it was posted (who was notified)."""

    def __init__(self, h: Harness) -> None:
        self.h = h
        self.notified: dict[int, set[int]] = {}
        world = h.world
        original = world.create_message

        def create_message(channel_id: int, author_id: int, body: Any, **kw: Any) -> Any:
            stored = original(channel_id, author_id, body, **kw)
            content = str(body.get("content") or "")
            allowed = body.get("allowed_mentions") or {}
            may_roles = {int(r) for r in allowed.get("roles") or []}
            may_users = {int(u) for u in allowed.get("users") or []}
            roles = {int(r) for r in ROLE_MENTION.findall(content)} & may_roles
            if roles:
                ch = world.channel(channel_id)
                gid = int(ch.get("guild_id") or 0)
                holders = {uid for uid in world.guild(gid).members
                           if roles & set(world.member_role_ids(gid, uid))}
                named = {int(u) for u in USER_MENTION.findall(content)} & may_users
                self.notified[int(stored.payload["id"])] = holders | named
            return stored

        world.create_message = create_message  # type: ignore[method-assign]


async def quiet(t: Table, loop: VirtualTimeLoop, within: float = SETTLE) -> None:
    """Let the virtual clock run until nothing of the game is pending (or `within`)."""
    end = loop.elapsed() + within
    while loop.elapsed() < end and await Outbox.filter(  # noqa: ASYNC110
            game_id=t.game_id, status=PENDING).exists():
        await asyncio.sleep(1.0)


async def do(t: Table, who: Any, command: str, **options: Any) -> Any:
    res = await t.do(who, command, **options)
    assert res.ephemeral or (command in RECORDED and res.embeds), (command, res.text)
    return res


async def night(t: Table, state: GameState) -> None:
    """Every player with a move gives one: the clan's mover kills a citizen, the others
    aim at the first living player of another side who takes the order."""
    for uid in owing(state):
        me = state.player(uid)
        assert me is not None
        others = [p for p in state.living() if p.uid != uid
                  and (me.clan is None or p.clan != me.clan)]
        for target in others[:4]:
            await do(t, t.member(uid), "night", target=str(target.uid))
            if uid not in owing(await t.state()):
                break


async def day(t: Table, state: GameState, votes: Counter[int]) -> None:
    """The town hangs a mafioso; the mafia votes against a citizen."""
    mafia = [p for p in state.living() if p.clan is not None]
    town = [p for p in state.living() if p.clan is None]
    target = (mafia or town)[0]
    for p in state.living():
        aim = target if p.clan is None or not town else town[-1]
        if aim.uid == p.uid:
            aim = town[0] if town and town[0].uid != p.uid else state.living()[0]
        res = await do(t, t.member(p.uid), "vote", player=str(aim.uid))
        if res.embeds:
            votes[state.number] += 1


async def play(t: Table, loop: VirtualTimeLoop) -> dict[str, Any]:
    """One game from its sign-up to its end, then /thank from every player."""
    h = t.h
    seen: dict[str, Any] = {"day0_holders": set(), "announcements": [], "votes": Counter()}
    await do(t, t.master, "game create", title=f"Table {len(t.players)}", **MODULES)
    await quiet(t, loop, 60)
    t.game_id = (await t.bot.service.game_in_channel(t.channel)).id  # type: ignore[union-attr]
    for p in t.players:
        await do(t, p, "game join")
    res = await t.do(t.master, "game start", confirm=True)
    assert res.ephemeral, res.text
    for p in t.players:
        await do(t, p, "checkin")
    # day 0 runs a day: the role has a day to reach every seat; it needs far less
    await quiet(t, loop, 600)
    info = await t.bot.service.info(t.game_id)
    role_id = info.private_channels.get(ROLE_KEY)
    assert role_id is not None
    gid = h.default_guild.id
    seen["day0_holders"] = {p.id for p in t.players
                            if role_id in h.world.member_role_ids(gid, p.id)}
    seen["role_id"] = role_id
    for _ in range(80):
        state = await t.state()
        if state.over:
            break
        if state.phase is PhaseKind.NIGHT:
            await night(t, state)
        elif state.phase is PhaseKind.DAY and state.number > 0:
            await day(t, state, seen["votes"])
        await do(t, t.master, "master advance")
        await quiet(t, loop)
    state = await t.state()
    assert state.over, "the game did not end"
    for p in t.players:
        await do(t, p, "thank")
    await quiet(t, loop)
    return seen


async def table_sizes(tmp_path: Path, loop: VirtualTimeLoop, seats: int) -> None:
    h = await on_virtual_time(tmp_path, loop)
    try:
        h.add_guild("Mafia Club", locale="ru")
        h.set_bot_permissions(EVERYTHING)
        watch = Watch(h)
        tables = []
        for g in range(2):
            channel = h.add_text_channel(f"game-{g}").id
            master = h.add_member(f"Master{g}")
            players = [h.add_member(f"G{g}P{k}") for k in range(1, seats + 1)]
            tables.append(Table(h, master, players, channel=channel))
        # two games at once in one guild: their member-role changes share its window
        results = await asyncio.gather(*(play(t, loop) for t in tables))
        assert h.world.ratelimits.limited == 0, h.world.ratelimits.hits[:5]
        for t, seen in zip(tables, results, strict=True):
            await check(h, t, watch, seen)
    finally:
        await h.close()


async def check(h: Harness, t: Table, watch: Watch, seen: dict[str, Any]) -> None:
    bot: Any = h.bot
    state = await t.state()
    seats = {p.id for p in t.players}
    # every seat held the ping role before day 0 ended
    assert seen["day0_holders"] == seats, (len(seen["day0_holders"]), len(seats))
    # every phase announcement of the game channel notified every living seat and every
    # ghost voter (the dead keep the role to the end: RULES.md)
    phases = [m for m in h.messages_in(t.channel)
              if m.content and str(seen["role_id"]) in m.content]
    assert len(phases) >= 4
    for m in phases:
        assert m.id in watch.notified, (m.text[:200], m.payload.get("mention_roles"))
        assert watch.notified[m.id] >= seats, (m.text[:80], len(watch.notified[m.id]))
    # every vote that counts has exactly one public record: one red record a vote
    records = [m for m in h.messages_in(t.channel) for e in m.embeds
               if e.get("color") == 0xE74C3C and VOTED in e.get("description", "")]
    assert len(records) == sum(seen["votes"].values()), (len(records), seen["votes"])
    # the game closed: the role deleted, places locked, team channels archived and
    # opened to the players
    info = await bot.service.info(t.game_id)
    gid = h.default_guild.id
    assert seen["role_id"] not in h.world.guild(gid).roles
    assert all(seen["role_id"] not in h.world.member_role_ids(gid, uid) for uid in seats)
    for key, channel_id in info.private_channels.items():
        if key in (ROLE_KEY, "desk"):  # the desk stays the master's
            continue
        channel = h.world.channel(channel_id)
        if is_place_key(key):
            assert channel["thread_metadata"]["locked"], key
            continue
        for p in t.players:  # archived: everybody reads (open_team_channels), nobody writes
            assert h.visible_channels(p).can_view(channel_id), (key, p.name)
            assert not h.permissions_in(p.id, channel_id).send_messages, (key, p.name)
    # the /thank posts appeared in the game channel after the end, one a player
    master = f"<@{t.master.id}>"
    posts = [m for m in h.messages_in(t.channel) if "interaction_metadata" not in m.payload]
    ends = [i for i, m in enumerate(posts)
            if any(str(seen["role_id"]) in m.content for _ in [0]) and m.content]
    after = posts[ends[-1] + 1:] if ends else []
    thanks = [m for m in after for e in m.embeds if master in e.get("description", "")]
    assert len(thanks) == len(t.players), (len(thanks), [m.text[:60] for m in after][:5])
    # no member-role request twice for the same member and game
    changes = Counter((r.method, r.params.get("user_id")) for r in h.requests
                      if r.status < 300 and MEMBER_ROLE.match(str(r.route))
                      and str(r.params.get("role_id")) == str(seen["role_id"]))
    assert all(n == 1 for n in changes.values()), changes.most_common(3)
    # no overwrite written twice alike: the same channel given the same overwrites again
    writes = Counter((r.route, r.params.get("channel_id"), r.params.get("target"),
                      json.dumps(r.json, sort_keys=True)) for r in h.requests
                     if r.status < 300 and r.route in OVERWRITES
                     and (r.route != "PATCH /channels/{channel_id}"
                          or "permission_overwrites" in (r.json or {})))
    assert all(n == 1 for n in writes.values()), [w[:3] for w, n in writes.items() if n > 1]
    assert not await Outbox.filter(game_id=t.game_id, status=PENDING).exists()
    assert state.over


@pytest.mark.parametrize("seats", [6, 12, 20, 30])
def test_two_games_at_every_table_size(tmp_path: Path, seats: int,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    _migrated_template()  # in real time, before the virtual clock runs (test_crowded_guild)
    # a loaded machine's SQLite thread may take seconds to answer: the clock must not
    # jump past the harness's timeouts meanwhile (only a real stall should move it)
    monkeypatch.setattr(virtualtime, "REAL_PATIENCE", 10.0)
    with virtual_time() as loop:
        loop.run_until_complete(table_sizes(tmp_path, loop, seats))


__all__ = ["Role"]
