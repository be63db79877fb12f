"""Delivery guarantees through the Discord harness: public things are always public (in
the game channel, wherever the command was typed, and across a crash), nothing is posted
twice after a crash between posting and marking (nonce + enforce_nonce), and channel
creation is idempotent across a crash.

A "crash" here: the old bot is frozen at the chosen point (the coroutine that would run
next never returns, its outbox stopped), then closed, and a new MafiaBot starts on the
same database and the same fake Discord (tests/bot/test_restart.py).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from cogs.ui.markup import user_text
from core.game.roles import Role
from core.game.state import PhaseKind
from core.sight.narrate import phase_words, team_name
from core.storage.models import DELIVERED, Outbox
from core.text.i18n import t as tr
from tests.bot.helpers import (
    ROLES,
    Lives,
    checkin_all,
    confirmed,
    day_one,
    open_table,
    posted,
    rebind,
    start,
    wait_for,
)
from tests.harness import Harness


def masked_links(text: str) -> list[str]:
    """Markdown masked links Discord would render: `[label](url)` with an unescaped `[`."""
    return re.findall(r"(?<!\\)\[[^\]\n]*\]\(\s*<?https?://", text)


def embeds_in(h: Harness, channel: int) -> list[dict[str, Any]]:
    return [e for m in posted(h, channel) for e in m.embeds]


def vote_posts(h: Harness, channel: int, lang: str, voter: int, target: int) -> list[str]:
    title = tr("vote.embed_title", lang)
    return [e.get("description", "") for e in embeds_in(h, channel)
            if e.get("title") == title and f"<@{voter}>" in e.get("description", "")
            and f"<@{target}>" in e.get("description", "")]


async def freeze() -> None:
    """Where the process "dies": nothing after this point ever runs."""
    await asyncio.Event().wait()


def frozen_after(real: Callable[..., Awaitable[Any]], when: Callable[..., bool],
                 hit: list[Any]) -> Callable[..., Awaitable[Any]]:
    """`real`, except that a call matching `when` completes and then never returns."""
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        result = await real(*args, **kwargs)
        if when(*args, **kwargs):
            hit.append(args)
            await freeze()
        return result
    return wrapper


# --- 1. every public announcement goes to the game channel ---------------------------------
async def test_a_vote_from_the_police_channel_is_posted_in_the_game_channel_only(
        h: Harness) -> None:
    t = await open_table(h, 8, roles=ROLES, locale="ru")
    await start(t)
    police = h.channel_named(tr("channel.police", "ru"))
    investigator = (await t.holders(Role.INVESTIGATOR))[0]
    # a check-in typed in the police channel: announced in the game channel
    res = await h.slash(investigator, "checkin", channel=police.id)
    assert confirmed(res), res.text
    for p in t.players:
        if p.id != investigator.id:
            await t.do(p, "checkin")
    await t.advance()
    await t.advance()
    assert await t.phase() == (PhaseKind.DAY, 1)
    before = len(posted(h, police.id))
    target = next(p for p in await t.living() if p.id != investigator.id)
    res = await h.slash(investigator, "vote", channel=police.id, player=str(target.id))
    assert confirmed(res), res.text  # the reply confirms to the voter alone
    await t.settle()
    assert len(vote_posts(h, t.channel, "ru", investigator.id, target.id)) == 1
    assert len(posted(h, police.id)) == before  # nothing public lands in the police channel
    assert not any(m.embeds for m in h.messages_in(police.id)
                   if "interaction_metadata" in m.payload and not m.ephemeral_for)
    # the check-in typed there shows in the game channel's one check-in list
    listed = tr("tally.checkin.final_title", "ru", **phase_words(0, "ru"))
    assert any(e.get("title") == listed and f"<@{investigator.id}>" in e["description"]
               for e in embeds_in(h, t.channel))
    # and a withdrawal typed there too
    res = await h.slash(investigator, "unvote", channel=police.id)
    assert confirmed(res), res.text
    await t.settle()
    assert len(posted(h, police.id)) == before
    withdrawn = [e for e in embeds_in(h, t.channel) if f"<@{investigator.id}>" in
                 (e.get("description") or "") and e.get("title") is None
                 and f"<@{target.id}>" in (e.get("description") or "")]
    assert withdrawn


async def test_a_vote_committed_just_before_a_crash_is_posted_after_the_restart_once(
        lives: Lives) -> None:
    h = lives.h
    t = await day_one(h)
    voter, target = t.players[0], t.players[1]
    bot: Any = h.bot
    await bot.outbox.stop()  # the process dies before the outbox gets to it
    hit: list[Any] = []
    bot.apply = frozen_after(bot.apply, lambda *_a, **_k: True, hit)
    await t.h.slash(voter, "vote", channel=t.channel, player=str(target.id), wait=False)
    await wait_for(lambda: bool(hit), "the vote to be committed")
    state = await t.state()
    assert [(m.voter, m.target) for m in state.vote_log] == [(voter.id, target.id)]
    assert not vote_posts(h, t.channel, "ru", voter.id, target.id)
    h = await lives.restart()
    t = rebind(t, h)
    await t.settle()
    assert len(vote_posts(h, t.channel, "ru", voter.id, target.id)) == 1
    # the voter's retry is refused as a repeat; nothing more is posted
    res = await t.do(voter, "vote", player=str(target.id))
    await t.settle()
    assert len(vote_posts(h, t.channel, "ru", voter.id, target.id)) == 1, res.text


# --- 2. channel creation is idempotent across a crash --------------------------------------
async def _crash_during_start(lives: Lives, stored: str) -> None:
    """Start a game and die right after Discord made something whose id the bot was about
    to store (`stored`: 'private_channels' or 'category_id')."""
    h = lives.h
    t = await open_table(h, 8, roles=ROLES, locale="ru")
    bot: Any = h.bot
    hit: list[Any] = []
    real = bot.service.set_discord

    async def set_discord(game_id: int, patch: Any, **kwargs: Any) -> None:
        if stored in patch.model_fields_set:
            hit.append(patch)
            await freeze()  # Discord made it; the process dies before storing the id
        await real(game_id, patch, **kwargs)

    bot.service.set_discord = set_discord
    res = await t.do(t.master, "game start")
    assert res.ephemeral, res.text
    await wait_for(lambda: bool(hit), "a channel to be created")
    h = await lives.restart()
    t = rebind(t, h)
    await t.settle()
    info = await h.bot.service.info(t.game_id)  # type: ignore[attr-defined]
    for team, name in (("clan:1", tr("channel.clan", "ru", number=1)),
                       ("police", tr("channel.police", "ru"))):
        same = [c for c in h.channels() if c.name == name]
        assert len(same) == 1, [c.id for c in same]
        assert info.private_channels[team] == same[0].id
        assert same[0].parent_id == info.category_id
        welcome = tr("channel.welcome", "ru", team=tr("team.police", "ru")) \
            if team == "police" else None
        texts = [m.text for m in posted(h, same[0].id)]
        assert len(texts) == len(set(texts)), texts  # the welcome once
        if welcome:
            assert texts.count(welcome) == 1
    categories = [c for c in h.channels() if c.name == tr("channel.category", "ru",
                                                           title="Palermo")]
    assert [c.id for c in categories] == [info.category_id]
    state = await t.state()
    clan = h.channel_named(tr("channel.clan", "ru", number=1))
    for p in state.players:  # the adopted channel has exactly the clan's members
        assert h.visible_channels(p.uid).can_view(clan.id) == (p.clan == 1), p.name
    assert {r.status for r in await Outbox.filter(game_id=t.game_id)} == {DELIVERED}


async def test_a_crash_right_after_a_private_channel_is_created_leaves_one_channel(
        lives: Lives) -> None:
    await _crash_during_start(lives, "private_channels")


async def test_a_crash_right_after_the_category_is_created_leaves_one_category(
        lives: Lives) -> None:
    await _crash_during_start(lives, "category_id")


# --- 3. a crash between posting and marking posts nothing twice ----------------------------
async def test_a_crash_after_posting_does_not_repeat_the_day_result_or_the_payouts(
        lives: Lives) -> None:
    h = lives.h
    t = await open_table(h, 8, roles="mafioso; investigator; sergeant; citizen x5",
                         locale="ru", currency=True)
    await start(t)
    await checkin_all(t)
    await t.advance()
    await t.advance()
    assert await t.phase() == (PhaseKind.DAY, 1)
    don = (await t.holders(Role.MAFIOSO))[0]
    for p in await t.living():
        target = don if p.id != don.id else t.players[0] if t.players[0].id != don.id \
            else t.players[1]
        assert confirmed(await t.do(p, "vote", player=str(target.id)))
    await t.settle()
    bot: Any = h.bot
    hit: list[Any] = []
    real = bot.outbox._mark_delivered

    async def die(ids: list[int]) -> None:  # posted, then dead before marking
        payloads = await Outbox.filter(id__in=ids).values_list("payload", flat=True)
        if not any('"day_result"' in str(p) for p in payloads):
            await real(ids)  # other lanes (places, channels) go side by side: not these
            return
        hit.append(ids)
        await freeze()

    bot.outbox._mark_delivered = die
    res = await t.do(t.master, "master advance")
    assert res.ephemeral, res.text
    await wait_for(lambda: bool(hit), "the day's result to be posted")
    assert (await t.state()).over
    head = tr("event.day_result.head", "ru", **phase_words(1, "ru"))
    payouts = tr("payouts.head", "ru")
    count = len(posted(h, t.channel))
    assert [e for e in embeds_in(h, t.channel) if head in (e.get("description") or "")]
    h = await lives.restart()
    t = rebind(t, h)
    await t.settle()
    descriptions = [e.get("description") or "" for e in embeds_in(h, t.channel)]
    assert sum(head in d for d in descriptions) == 1
    assert sum(d.startswith(payouts) for d in descriptions) == 1
    assert len(posted(h, t.channel)) == count  # the retry returned the same messages
    assert {r.status for r in await Outbox.filter(game_id=t.game_id)} == {DELIVERED}
    # every post of the outbox carried a nonce (with enforce_nonce)
    sends = h.requests_to("POST /channels/{channel_id}/messages")
    assert sends and all(r.json.get("nonce") and r.json.get("enforce_nonce")
                         for r in sends)


# --- 4./6. limits and pings in a real game ----------------------------------------------------
LONG = "x" * 1400


async def test_three_long_kill_stories_and_fifteen_long_secret_bonuses_are_all_posted(
        h: Harness) -> None:
    t = await open_table(h, 10, roles="mafioso; killer; operative; investigator; bouncer",
                         locale="ru", extra_roles=True, currency=True)
    await start(t)
    await checkin_all(t)
    await t.advance()
    await t.advance()  # day 1
    citizens = await t.holders(Role.CITIZEN)
    for p in await t.living():  # hang a citizen, everyone votes (no missed turns)
        who = citizens[0] if p.id != citizens[0].id else citizens[1]
        assert confirmed(await t.do(p, "vote", player=str(who.id)))
    for i, p in enumerate(t.players[:15] * 2):
        if i >= 15:
            break
        reason = f"{i:02d}" + "[official rules](https://evil.example/login) " + "y" * 250
        res = await t.do(t.master, "master bonus", player=str(p.id), amount=1,
                         reason=reason[:300], secret=True)
        assert res.ephemeral, res.text
    await t.advance()  # night 1
    state = await t.state()
    victims = [c for c in citizens[1:] if state.player(c.id).alive][:3]  # type: ignore[union-attr]
    assert len(victims) == 3
    killers = [state.clans[0].acting, (await t.holders(Role.KILLER))[0].id,
               (await t.holders(Role.OPERATIVE))[0].id]
    for n, (actor, victim) in enumerate(zip(killers, victims, strict=True)):
        story = f"story{n} " + LONG + " **bold** [link](https://evil.example)"
        res = await t.do(t.member(actor), "night", target=str(victim.id),  # type: ignore[arg-type]
                         story=story[:1500])
        assert res.ephemeral and not res.text.startswith("❌"), res.text
    await t.advance()  # morning of day 2
    text = "\n".join(e.get("description") or "" for e in embeds_in(h, t.channel))
    for n in range(3):
        assert f"story{n} " + LONG in text  # all three, whole
    assert not masked_links(text)  # escaped, never a link
    assert user_text("[link](https://evil.example)") in text
    # end the game: every bonus reason is in the payouts table
    for role in (Role.MAFIOSO, Role.KILLER, Role.BOUNCER):
        for p in await t.holders(role):
            assert (await t.do(t.master, "master kick", player=str(p.id))).ephemeral
    await t.settle()
    assert (await t.state()).over
    text = "\n".join(e.get("description") or "" for e in embeds_in(h, t.channel))
    for i in range(15):
        assert user_text(f"{i:02d}[official rules](https://evil.example/login) ") \
            + "y" * 250 in text
    assert {r.status for r in await Outbox.filter(game_id=t.game_id)} == {DELIVERED}
    assert_no_pings(h)


def assert_no_pings(h: Harness) -> None:
    """Every message the bot sent said explicitly that it pings nobody (or exactly the
    users it names): never @everyone, @here or a role, but for a phase announcement
    pinging exactly its game's role (cogs/delivery/places.py), which it names in its content."""
    game_roles = {str(r.response["id"]) for r in h.requests_to("POST /guilds/{guild_id}/roles")}
    bodies: list[tuple[str, dict[str, Any]]] = []
    for r in h.requests:
        body = r.json if isinstance(r.json, dict) else {}
        if r.route in ("POST /channels/{channel_id}/messages",
                       "PATCH /channels/{channel_id}/messages/{message_id}") \
                or (r.kind == "webhook" and r.method in ("POST", "PATCH")):
            bodies.append((str(r.route), body))
        elif r.kind == "interaction" and body.get("type") in (4, 7):
            bodies.append((str(r.route), body.get("data") or {}))
    assert bodies
    for route, body in bodies:
        mentions = body.get("allowed_mentions")
        assert mentions is not None, (route, body)
        assert mentions.get("parse") == [], (route, mentions)
        roles = [str(r) for r in mentions.get("roles") or []]
        # beside its role, a phase announcement names the players the role has not
        # reached yet (issue 40): exactly the users it allows
        users = [str(u) for u in mentions.get("users") or []]
        assert not roles or (len(roles) == 1 and roles[0] in game_roles
                             and body.get("content") == " ".join(
                                 [f"<@&{roles[0]}>", *(f"<@{u}>" for u in users)])
                             ), (route, mentions)


async def test_user_text_never_pings_and_masked_links_are_escaped(h: Harness) -> None:
    t = await open_table(h, 8, roles=ROLES, locale="ru", crypto=True)
    await start(t)
    await checkin_all(t)
    await t.advance()
    await t.advance()
    p = (await t.living())[0]
    evil = f"@everyone <@{t.players[1].id}> [official rules](https://evil.example/login)"
    res = await t.do(p, "anon", text=evil)
    assert res.ephemeral, res.text
    await t.settle()
    anon = [e for e in embeds_in(h, t.channel) if "evil.example" in (e.get("description") or "")]
    assert len(anon) == 1
    text = anon[0]["description"]
    assert not masked_links(text) and user_text("[official rules](") in text
    assert "@everyone" not in text  # defused: @\u200beveryone
    assert_no_pings(h)
    sent = [r for r in h.requests_to("POST /channels/{channel_id}/messages")
            if "evil.example" in json.dumps(r.json)]
    assert sent and all(r.json["allowed_mentions"]["parse"] == [] for r in sent)


async def test_the_fake_discord_honours_enforce_nonce_within_its_window(h: Harness) -> None:
    """As Discord: a repeated nonce (enforce_nonce) by the same author in the same channel
    within the window returns the message already created; after the window, a new one."""
    channel: Any = h.bot.get_channel(h.default_guild.general_id)
    first = await channel.send("hello", nonce="g1o1.0")
    again = await channel.send("hello", nonce="g1o1.0")
    assert again.id == first.id and len(posted(h, channel.id)) == 1
    other = await channel.send("hello", nonce="g1o2.0")
    assert other.id != first.id
    # Discord's virtual clock moves past the window: no sleep
    h.world.ratelimits.clock.at_least(h.world.clock() + h.world.nonce_window + 1)
    late = await channel.send("hello", nonce="g1o1.0")
    assert late.id != first.id and len(posted(h, channel.id)) == 3


INVISIBLE = re.compile("[\u200b\u200c\u200d\u2060\ufeff]")


@pytest.mark.parametrize("lang", ["en", "ru"])
async def test_channel_topics_carry_no_machine_tag_people_read(h: Harness, lang: str) -> None:
    """Issue 42 point 7: a private channel's topic reads as the catalogue's words alone;
    the marker the bot finds its channels by after a crash is invisible (adoption:
    the crash tests above)."""
    t = await open_table(h, 8, roles="mafioso x2; investigator; sergeant; bouncer",
                         locale="en-US" if lang == "en" else "ru")
    if lang == "en":
        assert (await t.do(t.master, "game options", language="en")).ephemeral
    await start(t)
    info = await t.bot.service.info(t.game_id)
    checked = set()
    for team, channel_id in info.private_channels.items():
        if h.world.channels.get(channel_id, {}).get("type") != 0:
            continue  # a seat's place is a thread: no topic
        topic = h.world.channels[channel_id].get("topic") or ""
        assert "[mafia" not in topic and "mafia" not in INVISIBLE.sub("", topic).lower()
        shown = INVISIBLE.sub("", topic)
        expected = tr("desk.channel.topic", lang, title="Palermo") if team == "desk" else \
            tr("channel.topic", lang, team=team_name(team, lang), title="Palermo")
        assert shown == expected, (team, topic)
        assert topic != shown  # the marker is there, unseen
        checked.add(team)
    assert checked == {"clan:1", "police", "desk"}


def test_a_channel_marked_the_old_visible_way_is_still_found() -> None:
    """A channel an older version made (its topic ends "[mafia 3 police]") is adopted
    after a crash as one with the invisible marker is; another game's or team's is not."""
    from types import SimpleNamespace

    from cogs.delivery.posting import channel_marker, find_marked, legacy_marker, marked_topic

    old = SimpleNamespace(id=1, topic="police: private channel [mafia 3 police]")
    new = SimpleNamespace(id=2, topic=marked_topic("police: private channel",
                                                   channel_marker(4, "police")))
    other = SimpleNamespace(id=3, topic=marked_topic("x", channel_marker(4, "clan:1")))
    guild: Any = SimpleNamespace(text_channels=[old, new, other])
    assert find_marked(guild, channel_marker(3, "police"), exclude=set(),
                       legacy=legacy_marker(3, "police")) is old
    assert find_marked(guild, channel_marker(4, "police"), exclude=set(),
                       legacy=legacy_marker(4, "police")) is new
    assert find_marked(guild, channel_marker(4, "police"), exclude={2},
                       legacy=legacy_marker(4, "police")) is None
    assert len(marked_topic("a" * 2000, channel_marker(4, "police"))) <= 1024
