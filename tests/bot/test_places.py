"""Private places and the game's ping role, through the real command tree.

Each seat's place is a private thread of the game channel: exactly its holder, the
master and the bot are members, nobody else can see it. Everything addressed to a
player alone is pushed there with a ping of just him; phase announcements ping the
game's role, which every seated player holds until the end, the dead too (only a
removed or replaced member loses it).
"""

from __future__ import annotations

import json
from typing import Any

import discord
import pytest

from cogs.delivery.places import ROLE_KEY, place_key
from core.game.roles import Role
from core.game.state import PhaseKind
from core.sight.narrate import role_name
from core.sight.places import PLACE_KIND
from core.storage.models import PENDING, Outbox
from core.storage.outbox import OutboxEntry
from core.text.i18n import t as tr
from tests.bot.helpers import (
    EVERYTHING,
    ROLES,
    Lives,
    Table,
    checkin_all,
    open_table,
    posted,
    rebind,
    start,
)
from tests.harness import Harness, MessageRecord
from tests.harness.world import PRIVATE_THREAD

POST = "POST /channels/{channel_id}/messages"


async def role_id(t: Table) -> int | None:
    return (await t.bot.service.info(t.game_id)).private_channels.get(ROLE_KEY)


async def role_holders(h: Harness, t: Table) -> set[int]:
    rid = await role_id(t)
    assert rid is not None
    gid = h.default_guild.id
    return {m.id for m in [*t.players, t.master] if rid in h.world.member_role_ids(gid, m.id)}


async def place(t: Table, uid: int) -> int:
    """The thread of the seat `uid` holds now."""
    state = await t.state()
    seat = next(i for i, p in enumerate(state.players) if p.uid == uid)
    return (await t.bot.service.info(t.game_id)).private_channels[place_key(seat)]


def pushes(h: Harness, thread: int) -> list[MessageRecord]:
    return h.messages_in(thread)


def viewers(h: Harness, t: Table, channel: int) -> set[int]:
    return {m.id for m in [*t.players, t.master] if h.visible_channels(m).can_view(channel)}


def posts_to(h: Harness, channel: int) -> list[Any]:
    return [c.json for c in h.requests_to(POST, channel_id=channel)]


async def assert_private(h: Harness, t: Table, uid: int) -> int:
    """The exact viewers of `uid`'s place: him and the master (and the bot)."""
    thread = await place(t, uid)
    ch = h.world.channels[thread]
    assert ch["type"] == PRIVATE_THREAD and int(ch["parent_id"]) == t.channel
    assert ch["thread_metadata"]["invitable"] is False
    assert h.world.thread_members[thread] == {uid, t.master.id, h.world.bot_id}
    assert viewers(h, t, thread) == {uid, t.master.id}
    return thread


def pinged_only(body: dict[str, Any], uid: int) -> None:
    assert body["content"].startswith(f"<@{uid}>")
    mentions = body["allowed_mentions"]
    assert mentions["parse"] == [] and [str(u) for u in mentions["users"]] == [str(uid)]
    assert not mentions.get("roles")


async def started(h: Harness, n: int = 8, **create: Any) -> Table:
    """Russian clients in a Russian guild: the pushes are in Russian (each reader's own)."""
    t = await open_table(h, n, roles=create.pop("roles", ROLES), locale="ru", **create)
    await start(t)
    return t


async def night_one(t: Table) -> None:
    """Day 0, night 0, day 1 (a citizen hanged), night 1: every role may move."""
    await checkin_all(t)
    await t.advance()  # night 0
    await t.advance()  # day 1
    hanged = (await t.holders(Role.CITIZEN))[-1]
    for p in await t.living():
        await t.do(p, "vote", player=str(hanged.id))
    await t.advance()
    assert await t.phase() == (PhaseKind.NIGHT, 1)


async def test_each_seat_gets_a_private_place_with_its_card(h: Harness) -> None:
    t = await started(h)
    state = await t.state()
    threads = set()
    for p in state.players:
        thread = await assert_private(h, t, p.uid)
        threads.add(thread)
        [card] = pushes(h, thread)  # the card, with a ping of just him
        [body] = posts_to(h, thread)
        pinged_only(body, p.uid)
        assert card.embeds[0]["title"] == tr("card.title", "ru", role=role_name(
            str(p.role), "ru"))
        assert tr("places.welcome", "ru", title="Palermo") in card.content
    assert len(threads) == len(state.players)
    # a command in one's place finds the game
    res = await h.slash(t.players[0], "role", channel=await place(t, t.players[0].id))
    assert res.ephemeral and res.embeds


async def test_the_role_pings_phases_and_follows_the_living(h: Harness) -> None:
    t = await started(h)
    rid = await role_id(t)
    assert rid is not None
    gid = h.default_guild.id
    assert h.world.role(gid, rid)["name"] == tr("places.role_name", "ru", title="Palermo",
                                                 game=t.game_id)
    assert await role_holders(h, t) == {p.id for p in t.players}
    # without "Mention @everyone, @here and All Roles" only a mentionable role notifies
    role = h.world.role(gid, rid)
    assert role["mentionable"] is True and int(role["permissions"]) == 0
    # the day-0 announcement pings the role, and by name the players the role has not
    # reached yet (it is made by this very post: issue 40), and nothing else
    day0 = [b for b in posts_to(h, t.channel)
            if str(b.get("content") or "").startswith(f"<@&{rid}>")]
    assert len(day0) == 1
    mentions = day0[0]["allowed_mentions"]
    assert mentions["parse"] == [] and [str(r) for r in mentions["roles"]] == [str(rid)]
    named = {int(u) for u in mentions.get("users") or []}
    assert named <= {p.id for p in t.players}
    assert day0[0]["content"] == " ".join([f"<@&{rid}>", *(f"<@{u}>" for u in sorted(named))])
    await checkin_all(t)
    await t.advance()  # night 0
    bodies = [b for b in posts_to(h, t.channel) if b.get("content") == f"<@&{rid}>"]
    assert len(bodies) == 1  # night 0: the role reached everyone, it alone pings
    # kicked: loses the role; his place stays his (read-only history)
    kicked = (await t.holders(Role.CITIZEN))[0]
    assert (await t.do(t.master, "master kick", player=str(kicked.id))).ephemeral
    await t.settle()
    assert await role_holders(h, t) == {p.id for p in t.players} - {kicked.id}
    thread = await assert_private(h, t, kicked.id)
    assert tr("event.you_died.kicked", "ru") in pushes(h, thread)[-1].text
    # replaced: the substitute takes the role and the seat's place; the old member loses both
    old = (await t.holders(Role.CITIZEN))[0]
    sub = h.add_member("Sub", locale="en-US")
    t.players.append(sub)
    thread = await place(t, old.id)
    res = await t.do(t.master, "master replace", old=str(old.id), new=str(sub.id))
    assert res.ephemeral, res.text
    await t.settle()
    assert await place(t, sub.id) == thread
    await assert_private(h, t, sub.id)
    assert old.id not in viewers(h, t, thread)
    assert await role_holders(h, t) == {p.id for p in t.players} - {kicked.id, old.id}
    assert sub.id in await role_holders(h, t) and old.id not in await role_holders(h, t)
    pinged_only(posts_to(h, thread)[-1], sub.id)  # the card of the seat, for him
    assert len(pushes(h, thread)) >= 2  # the history stays with the seat
    # the game ends: the role is deleted
    ending = [*await t.holders(Role.MAFIOSO), *await t.holders(Role.BOUNCER)]
    for out in ending:
        res = await t.do(t.master, "master kick", player=str(out.id))
        assert res.ephemeral, res.text
    await t.settle()
    assert (await t.state()).over, (await t.state()).phase
    assert rid not in h.world.guild(gid).roles
    assert await role_id(t) is None
    # the game over is posted pinging the role, and only then is the role deleted
    pings = [c for c in h.requests if c.method == "POST" and c.params.get("channel_id")
             == t.channel and isinstance(c.json, dict) and c.json.get("content") == f"<@&{rid}>"]
    deleted = [c for c in h.requests if c.route == "DELETE /guilds/{guild_id}/roles/{role_id}"]
    assert pings and deleted and pings[-1].seq < deleted[0].seq
    posts = [c for c in h.requests if c.method == "POST" and c.status < 300
             and c.params.get("channel_id") == t.channel and c.kind == "rest"]
    assert posts[-1].seq == pings[-1].seq  # the last post there: the end of the game
    for p in (await t.state()).players:  # archived and locked: read-only history
        meta = h.world.channels[await place(t, p.uid)]["thread_metadata"]
        assert meta["archived"] and meta["locked"]
    # the last removal's news went into the place before it was archived
    last = await place(t, ending[-1].id)
    assert tr("event.you_died.kicked", "ru") in pushes(h, last)[-1].text
    calls = [(c.method, c.seq) for c in h.requests if c.params.get("channel_id") == last]
    assert max(q for m, q in calls if m == "POST") < min(q for m, q in calls if m == "PATCH")


async def test_night_results_are_pushed_once_per_player(h: Harness) -> None:
    t = await started(h)
    await night_one(t)
    # the dead keep the role (ghost voters still need the phase pings): no member-role
    # request per death
    assert await role_holders(h, t) == {p.id for p in t.players}
    assert not [r for r in h.requests if r.method == "DELETE" and "/roles/" in r.path]
    assert len(await t.living()) == len(t.players) - 1
    state = await t.state()
    inv = (await t.holders(Role.INVESTIGATOR))[0]
    bouncer = (await t.holders(Role.BOUNCER))[0]
    acting = t.member(state.clans[0].acting)  # type: ignore[arg-type]
    target = next(p for p in await t.holders(Role.CITIZEN))
    checked = next(p for p in await t.living() if p.id not in (inv.id, target.id))
    assert (await t.do(inv, "night", target=str(checked.id))).ephemeral
    assert (await t.do(bouncer, "night", target=str(target.id))).ephemeral
    assert (await t.do(acting, "night", target=str(target.id))).ephemeral
    before = {p.id: len(pushes(h, await place(t, p.id))) for p in t.players}
    await t.advance()  # morning
    state = await t.state()
    after = {p.id: len(pushes(h, await place(t, p.id))) for p in t.players}
    assert all(after[u] - before[u] <= 1 for u in after)  # no burst: one message at most
    checked_role = role_name(str(state.player(checked.id).role), "ru")  # type: ignore[union-attr]
    last = pushes(h, await place(t, inv.id))[-1]
    assert tr("event.check_result", "ru", target=checked.mention, role=checked_role) \
        in last.text
    pinged_only(posts_to(h, await place(t, inv.id))[-1], inv.id)
    failed = pushes(h, await place(t, acting.id))[-1]
    assert tr("event.action_failed", "ru", action=tr("action.kill", "ru")) in failed.text
    used = pushes(h, await place(t, bouncer.id))[-1]
    assert tr("event.protection_used", "ru", target=target.mention) in used.text
    assert after[target.id] == before[target.id]  # the saved is not told (RULES.md)


async def test_promotion_and_a_mates_death_are_pushed(h: Harness) -> None:
    t = await started(h)
    inv = (await t.holders(Role.INVESTIGATOR))[0]
    sgt = (await t.holders(Role.SERGEANT))[0]
    assert (await t.do(t.master, "master kick", player=str(inv.id))).ephemeral
    await t.settle()
    text = pushes(h, await place(t, sgt.id))[-1].text
    assert tr("event.promoted", "ru", uid=sgt.mention) in text
    # "Следователь знает сержанта", not the other way: the sergeant was not told of a mate
    mate = tr("event.mate_died", "ru", death="\x00").split("\x00")[0]
    assert mate not in text
    # a mafioso's clan hears of his death once, in the clan channel (not in each mate's
    # place: one request, issue 30); a citizen hears nothing
    dons = await t.holders(Role.MAFIOSO)
    citizen = (await t.holders(Role.CITIZEN))[0]
    clan = h.channel_named(tr("channel.clan", "ru", number=1))
    n = len(pushes(h, await place(t, citizen.id)))
    mates_pushes = len(pushes(h, await place(t, dons[1].id)))
    clan_posts = len(posted(h, clan.id))
    assert (await t.do(t.master, "master kick", player=str(dons[0].id))).ephemeral
    await t.settle()
    # the public line's shape, no gender (issue 42, item 10)
    said = tr("event.mate_died", "ru",
              death=tr("event.died_hidden.kicked", "ru", uid=dons[0].mention))
    assert said == f"Потеря в вашей команде. Мастер исключает из игры игрока {dons[0].mention}."
    new_posts = posted(h, clan.id)[clan_posts:]
    assert len([m for m in new_posts if said in m.text]) == 1
    assert not any(said in m.text for m in pushes(h, await place(t, dons[1].id))
                   [mates_pushes:])
    assert len(pushes(h, await place(t, citizen.id))) == n


async def test_whisper_and_purchase_are_pushed(h: Harness) -> None:
    t = await started(h, crypto=True, currency=True, shop=True)
    sender = (await t.holders(Role.CITIZEN))[0]
    dons = await t.holders(Role.MAFIOSO)
    res = await t.do(sender, "whisper", role="mafioso", text="I know")
    assert res.ephemeral, res.text
    await t.settle()
    for don in dons:
        last = pushes(h, await place(t, don.id))[-1]
        assert "I know" in last.text
        pinged_only(posts_to(h, await place(t, don.id))[-1], don.id)
    assert all("I know" not in m.text for m in pushes(h, await place(t, sender.id)))
    # a day purchase is carried out in the evening: pushed then
    buyer = (await t.holders(Role.CITIZEN))[1]
    res = await t.do(buyer, "buy", item="cheque_book")
    assert res.ephemeral, res.text
    await t.settle()
    n = len(pushes(h, await place(t, buyer.id)))
    await checkin_all(t)
    await t.advance()
    assert (await t.state()).phase is PhaseKind.NIGHT
    assert len(pushes(h, await place(t, buyer.id))) == n + 1
    bought = pushes(h, await place(t, buyer.id))[-1].text
    assert tr("item.cheque_book.name", "ru") in bought


@pytest.mark.parametrize("nonces", [True, False], ids=["nonce", "footer"])
async def test_no_push_is_lost_or_repeated_across_a_crash(lives: Lives, nonces: bool
                                                          ) -> None:
    """The bot dies after posting some pushes of a command but before marking them
    delivered (SIGKILL between Discord's answer and the database): the new process posts
    the rest, and none twice. Real Discord does not return a message's nonce when it is
    read back: then the push's reference in its footer is what recognises it."""
    h = lives.h
    t = await open_table(h, 8, roles=ROLES, locale="ru")
    await start(t)
    await night_one(t)
    state = await t.state()
    inv = (await t.holders(Role.INVESTIGATOR))[0]
    acting = t.member(state.clans[0].acting)  # type: ignore[arg-type]
    bouncer = (await t.holders(Role.BOUNCER))[0]
    victim = (await t.holders(Role.CITIZEN))[0]
    assert (await t.do(inv, "night", target=str(acting.id))).ephemeral
    assert (await t.do(bouncer, "night", target=str(victim.id))).ephemeral
    assert (await t.do(acting, "night", target=str(victim.id))).ephemeral
    await t.settle()
    bot = t.bot
    await bot.outbox.stop()  # what follows is committed, not yet delivered
    assert (await t.do(t.master, "master advance")).ephemeral
    rows = await Outbox.filter(game_id=t.game_id, status=PENDING).order_by("ordinal")
    places = [r for r in rows if r.kind == PLACE_KIND]
    assert len(places) >= 3  # the check, the failed kill, the protection used
    half = places[len(places) // 2]
    for row in rows:  # posted, never marked: then the process is killed
        if row.ordinal > half.ordinal:
            break
        await bot.delivery.deliver(OutboxEntry(
            id=row.id, game_id=t.game_id, ordinal=row.ordinal, kind=row.kind,
            payload=json.loads(row.payload), attempts=row.attempts))
    if not nonces:
        for stored in h.world.messages.values():
            stored.payload.pop("nonce", None)
    before = {m.id for m in h.world.messages.values()}
    h = await lives.restart()
    t = rebind(t, h)
    await t.settle()
    for row in places:
        nonce = f"g{t.game_id}o{row.ordinal}."
        seat = json.loads(row.payload)["seat"]
        thread = (await t.bot.service.info(t.game_id)).private_channels[place_key(seat)]
        ref = tr("places.footer", "ru", title="Palermo", ref=row.ordinal)
        assert ref.endswith(f"№ {row.ordinal}") and "отметка" not in ref  # issue 42, item 10
        sent = [m for m in h.messages_in(thread)
                if str(m.payload.get("nonce") or "").startswith(nonce)
                or (m.id in before and ref in m.text)]
        assert len(sent) == 1, (row.ordinal, len(sent))
    for p in t.players:
        texts = [m.text for m in pushes(h, await place(t, p.id))]
        assert len(texts) == len(set(texts)), texts
    checked = pushes(h, await place(t, inv.id))[-1].text
    assert tr("event.check_result", "ru", target=acting.mention,
              role=role_name("mafioso", "ru")) in checked


async def test_a_deleted_place_or_role_is_made_again(h: Harness) -> None:
    """An admin deletes a player's thread or the game's role mid-game: the next delivery
    that needs it makes it again (the thread with the holder and the master only, the
    role for exactly the living)."""
    t = await started(h)
    victim = (await t.holders(Role.CITIZEN))[0]
    old_thread = await place(t, victim.id)
    await t.bot.http.delete_channel(old_thread)
    old_role = await role_id(t)
    await t.bot.http.delete_role(h.default_guild.id, old_role)
    await h.settle()
    assert (await t.do(t.master, "master kick", player=str(victim.id))).ephemeral
    await t.settle()
    new_thread = await assert_private(h, t, victim.id)
    assert new_thread != old_thread
    assert tr("event.you_died.kicked", "ru") in pushes(h, new_thread)[-1].text
    assert tr("places.welcome", "ru", title="Palermo") in pushes(h, new_thread)[-1].text
    assert await role_id(t) not in (None, old_role)
    assert await role_holders(h, t) == {p.id for p in await t.living()}
    assert t.bot.private_index.get(new_thread) == t.game_id


async def test_a_thread_made_before_a_crash_is_adopted_not_doubled(
        h: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    """The bot made seat 1's thread, then failed before storing its id: the retry finds
    the thread by its name (unique to the game) and uses it; no second thread."""
    t = await open_table(h, 8, roles=ROLES, locale="ru")
    places = t.bot.delivery.places
    real = places._patch
    failed: list[str] = []

    async def crash_once(info: Any, key: str, value: int | None) -> None:
        if key == place_key(0) and not failed:
            failed.append(key)
            raise RuntimeError("the process died here")
        await real(info, key, value)

    monkeypatch.setattr(places, "_patch", crash_once)
    await start(t)
    assert failed
    threads = [c for c in h.world.channels.values()
               if c["type"] == PRIVATE_THREAD and int(c.get("parent_id") or 0) == t.channel]
    assert len(threads) == 8
    for p in t.players:
        thread = await assert_private(h, t, p.id)
        assert len(pushes(h, thread)) == 1


async def test_with_mention_everyone_the_role_is_not_mentionable(h: Harness) -> None:
    h.set_bot_permissions(discord.Permissions(EVERYTHING.value | discord.Permissions(
        mention_everyone=True).value))
    t = await started(h)
    rid = await role_id(t)
    assert rid is not None and h.world.role(h.default_guild.id, rid)["mentionable"] is False


async def test_a_substitute_is_let_into_a_place_discord_archived(h: Harness) -> None:
    """A quiet week archives a thread; Discord then refuses new members (50083) until it
    is opened: the bot opens it and lets the substitute in."""
    t = await started(h)
    old = (await t.holders(Role.CITIZEN))[0]
    thread = await place(t, old.id)
    sub = h.add_member("Sub", locale="en-US")
    t.players.append(sub)
    h.fake.fail("PUT /channels/{channel_id}/thread-members/{user_id}", status=400,
                code=50083, message="Thread is archived", channel_id=thread, user_id=sub.id)
    res = await t.do(t.master, "master replace", old=str(old.id), new=str(sub.id))
    assert res.ephemeral, res.text
    await t.settle()
    await assert_private(h, t, sub.id)
    opened = [c.json for c in h.requests_to("PATCH /channels/{channel_id}", channel_id=thread)]
    assert opened == [{"archived": False, "locked": False}]


WEEK_S = 7 * 24 * 3600


@pytest.mark.parametrize("locked", [False, True], ids=["archived", "locked"])
async def test_replacing_the_holder_of_a_place_archived_after_a_quiet_week(
        h: Harness, locked: bool) -> None:
    """N3: Discord archives a private thread a week after its last post (and an admin may
    lock it): /master replace must still take the old holder out and let the substitute
    in, and his card reach him there, with nothing parked."""
    t = await started(h)
    old = (await t.holders(Role.CITIZEN))[0]
    thread = await place(t, old.id)
    h.world.pass_time(WEEK_S + 60)
    assert h.world.idle_archive(thread)  # what Discord did during the quiet week
    meta = h.world.channels[thread]["thread_metadata"]
    assert meta["archived"] and meta["auto_archive_duration"] == 10080
    meta["locked"] = locked
    sub = h.add_member("Sub", locale="en-US")
    t.players.append(sub)
    res = await t.do(t.master, "master replace", old=str(old.id), new=str(sub.id))
    assert res.ephemeral, res.text
    await t.settle()
    assert h.world.thread_members[thread] == {sub.id, t.master.id, h.world.bot_id}
    assert viewers(h, t, thread) == {sub.id, t.master.id}
    assert sub.mention in pushes(h, thread)[-1].text
    assert not (await Outbox.filter(game_id=t.game_id, status=PENDING).count())


async def test_a_push_into_a_place_locked_by_an_admin_gets_through(h: Harness) -> None:
    """A message opens an archived thread by itself, but not a locked one (50083)."""
    t = await started(h)
    victim = (await t.holders(Role.CITIZEN))[0]
    thread = await place(t, victim.id)
    h.world.pass_time(WEEK_S + 60)
    h.world.idle_archive(thread)
    h.world.channels[thread]["thread_metadata"]["locked"] = True
    n = len(pushes(h, thread))
    assert (await t.do(t.master, "master kick", player=str(victim.id))).ephemeral
    await t.settle()
    assert len(pushes(h, thread)) == n + 1
    assert not (await Outbox.filter(game_id=t.game_id, status=PENDING).count())


async def test_a_cancelled_game_deletes_its_role_and_places_with_its_channels(
        h: Harness) -> None:
    t = await open_table(h, 8, roles=ROLES, locale="ru")
    assert (await t.do(t.master, "game options", archive_channels=False)).ephemeral
    await start(t)
    rid = await role_id(t)
    threads = [await place(t, p.id) for p in t.players]
    assert (await t.do(t.master, "game cancel")).ephemeral
    await t.settle()
    assert rid not in h.world.guild(h.default_guild.id).roles
    assert all(th not in h.world.channels for th in threads)


async def test_an_end_stored_by_an_older_version_still_closes_the_game(h: Harness) -> None:
    """A game that ended across an upgrade: its end was stored without the `close` row
    this version writes (issue 40). Its announcement adds one, last, and the game closes
    as any other: the role deleted, the places locked, the team channels archived."""
    t = await started(h)
    rid = await role_id(t)
    info = await t.bot.service.info(t.game_id)
    places = [cid for key, cid in info.private_channels.items()
              if key.startswith("place:")]
    await t.bot.outbox.stop()
    assert (await t.do(t.master, "game cancel")).ephemeral
    assert await Outbox.filter(game_id=t.game_id, kind="close").delete() == 1  # as stored before
    await t.bot.outbox.start()
    await t.settle()
    await t.settle()
    gid = h.default_guild.id
    assert rid not in h.world.guild(gid).roles
    assert places and all(h.world.channel(c)["thread_metadata"]["locked"] for c in places)
    assert [r.status for r in await Outbox.filter(game_id=t.game_id, kind="close")] == [
        "delivered"]
    assert not await Outbox.filter(game_id=t.game_id, status=PENDING).exists()
