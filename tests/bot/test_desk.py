"""The master's desk through the real command tree: its channel and exact overwrites, the
live feed, the read-team option, /master log paged and as a file, standby and replacement."""

from __future__ import annotations

from typing import Any

import discord
import pytest

from core.game.roles import Role
from core.game.state import PhaseKind
from core.sight.narrate import NIGHT_FORMS, phase_words, upper_first, votes
from core.text.i18n import t as tr
from tests.bot.helpers import Table, checkin_all, open_table, start
from tests.harness import Harness

VIEW = discord.Permissions(view_channel=True).value
SEND = discord.Permissions(send_messages=True).value
HISTORY = discord.Permissions(read_message_history=True).value
ROLES = "mafioso; investigator; bouncer"


def desk_channel(h: Harness, lang: str = "ru") -> Any:
    """The desk speaks its master's language (his client's), whatever the game's."""
    return h.channel_named(tr("desk.channel.name", lang))


def texts(h: Harness, channel: int) -> str:
    out = []
    for m in h.messages_in(channel):
        out.append(m.content)
        out += [e.get("description", "") for e in m.embeds]
    return "\n".join(out)


async def night_zero_orders(t: Table, story: str) -> None:
    state = await t.state()
    victim = next(p for p in state.living() if p.role is Role.CITIZEN)
    for p in state.living():
        if p.role is Role.MAFIOSO:
            extra = {"story": story} if story else {}
            res = await t.do(t.member(p.uid), "night", target=str(victim.uid), **extra)
            assert res.ephemeral, res.text
        elif p.role is Role.BOUNCER:
            res = await t.do(t.member(p.uid), "night", target=str(p.uid))
            assert res.ephemeral, res.text


async def test_desk_channel_exact_overwrites_and_live_feed(h: Harness) -> None:
    t = await open_table(h, 8, roles=ROLES, currency=True, shop=True, locale="ru")
    await start(t)
    desk = desk_channel(h)
    guild = h.default_guild
    bot_id = h.bot.user.id  # type: ignore[union-attr]
    info = await t.bot.service.info(t.game_id)
    assert desk.parent_id == info.category_id and info.private_channels["desk"] == desk.id
    assert set(desk.overwrites) == {guild.id, bot_id, t.master.id}
    assert desk.overwrites[guild.id].deny & VIEW and not desk.overwrites[guild.id].allow
    assert desk.overwrites[t.master.id].allow & VIEW and desk.overwrites[t.master.id].allow & SEND
    assert desk.overwrites[bot_id].allow & VIEW
    for p in t.players:
        assert not h.visible_channels(p).can_view(desk.id), p.name
    assert h.visible_channels(t.master).can_view(desk.id)
    start_feed = texts(h, desk.id)
    assert tr("desk.channel.welcome", "ru", title="Palermo") in start_feed
    assert tr("desk.opened.head", "ru", roles="")[:20] in start_feed

    res = await t.do(t.players[1], "away", reason="в отъезде *до* среды")
    assert res.ephemeral, res.text
    await checkin_all(t)
    await t.advance()  # night 0, the evening shop is open
    feed = texts(h, desk.id)
    away = next(line for line in feed.splitlines() if "в отъезде" in line)
    assert f"<@{t.players[1].id}>" in away and "в отъезде \\*до\\* среды" in away
    buyer = (await t.holders(Role.CITIZEN))[0]
    res = await t.do(buyer, "buy", item="alarm_clock")
    assert res.ephemeral, res.text
    await night_zero_orders(t, "под [дождём](https://evil.example)")
    await t.settle()
    feed = texts(h, desk.id)
    state = await t.state()
    mafioso = state.with_role(Role.MAFIOSO)[0]
    assert f"<@{buyer.id}>" in feed and tr("item.alarm_clock.name", "ru") in feed
    # the item's generic noun before its quoted name (issue 42, item 10)
    assert f"<@{buyer.id}> покупает предмет «{tr('item.alarm_clock.name', 'ru')}» за" in feed
    # the desk's vocabulary is the public posts' (issue 42, item 10): «нулевая ночь»
    assert f"<@{mafioso.uid}> ({tr('role.mafioso.name', 'ru')}), нулевая ночь" in feed
    assert "ночь 0" not in feed
    assert "под \\[дождём\\](https://evil.example)" in feed  # the masked link escaped
    all_in = tr("event.all_orders_in", "ru", **phase_words(0, "ru"))
    assert feed.count(all_in) == 1
    assert feed.index(all_in) > feed.index(f"<@{mafioso.uid}> ({tr('role.mafioso.name', 'ru')})")
    # none of it reached the game channel
    assert all_in not in texts(h, t.channel)

    await t.advance()
    feed = texts(h, desk.id)
    assert "Нулевая ночь по шагам:" in feed and "Ночь 0" not in feed
    assert tr("desk.night.sequence", "ru", actors="")[:10] in feed
    posts = [r for r in h.requests if r.method == "POST"
             and r.path.endswith(f"/channels/{desk.id}/messages")]
    assert len(posts) >= 4
    pinging = []
    for r in posts:  # the feed pings nobody but the master, and him only when he chose
        mentions = (r.json or {}).get("allowed_mentions")
        assert mentions is not None and mentions.get("parse") == [] \
            and not mentions.get("roles"), r.json
        if mentions.get("users"):
            assert [int(u) for u in mentions["users"]] == [t.master.id], r.json
            pinging.append(r.json["embeds"][0]["description"])
    # by default (/master pings): the absence warning and "all orders are in", no more
    assert len(pinging) == 2 and "в отъезде" in pinging[0] and all_in in pinging[1]
    # no player can read the desk even after the deaths and team changes of the night
    for p in t.players:
        assert not h.visible_channels(p).can_view(desk.id), p.name


async def test_the_desk_is_not_opened_twice(h: Harness) -> None:
    t = await open_table(h, 8, roles=ROLES, locale="ru")
    await start(t)
    desk = desk_channel(h)
    # as if the bot crashed after creating the channel, before storing its id
    from core.storage.service import DiscordPatch

    info = await t.bot.service.info(t.game_id)
    channels = {k: v for k, v in info.private_channels.items() if k != "desk"}
    await t.bot.service.set_discord(t.game_id, DiscordPatch(private_channels=channels))
    await checkin_all(t)
    await t.advance()
    await night_zero_orders(t, "")
    await t.settle()
    assert desk_channel(h).id == desk.id  # exactly one channel of that name
    info = await t.bot.service.info(t.game_id)
    assert info.private_channels["desk"] == desk.id


async def test_master_reads_team_channels_read_only_when_opted_in(h: Harness) -> None:
    t = await open_table(h, 8, roles=ROLES)
    res = await t.do(t.master, "game options", master_reads_teams=True)
    assert res.ephemeral, res.text
    await start(t)
    clan = h.channel_named(tr("channel.clan", "ru", number=1))
    mine = clan.overwrites[t.master.id]
    assert mine.allow & VIEW and mine.allow & HISTORY and not mine.allow & SEND
    perms = h.permissions_in(t.master.id, clan.id)
    assert perms.view_channel and perms.read_message_history and not perms.send_messages
    state = await t.state()
    for p in t.players:
        assert h.visible_channels(p).can_view(clan.id) == (
            state.player(p.id).role is Role.MAFIOSO), p.name  # type: ignore[union-attr]


async def test_master_does_not_read_team_channels_by_default(h: Harness) -> None:
    t = await open_table(h, 8, roles=ROLES)
    await start(t)
    clan = h.channel_named(tr("channel.clan", "ru", number=1))
    assert t.master.id not in clan.overwrites
    assert not h.visible_channels(t.master).can_view(clan.id)


async def long_game(t: Table, nights: int) -> list[str]:
    """Several days and nights with long stories: far more than one page of log."""
    stories = []
    await checkin_all(t)
    await t.advance()
    for n in range(nights):
        state = await t.state()
        assert state.phase is PhaseKind.NIGHT
        for p in state.living():
            if p.role is Role.BOUNCER:
                others = [q for q in state.living() if q.uid != p.uid
                          and q.uid not in state.covered.get(p.uid, [])]
                res = await t.do(t.member(p.uid), "night", target=str(others[0].uid))
                assert res.ephemeral, res.text
            if p.role is Role.MAFIOSO:
                for k in range(6):  # orders replaced several times: each is logged
                    story = f"story-{n}-{k} " + "ж" * 400
                    stories.append(story)
                    target = next(q for q in state.living() if q.role is Role.CITIZEN)
                    res = await t.do(t.member(p.uid), "night", target=str(target.uid),
                                     story=story)
                    assert res.ephemeral, res.text
        await t.advance()
        if (await t.state()).over:
            break
        for p in await t.living():  # everyone votes, nobody in particular
            others = [q for q in await t.living() if q.id != p.id]
            await t.do(p, "vote", player=str(others[0].id))
        await t.advance()
        if (await t.state()).over:
            break
    return stories


async def test_master_log_pages_through_buttons_never_cut(h: Harness) -> None:
    t = await open_table(h, 10, roles=ROLES + "; citizen x7")
    await start(t)
    stories = await long_game(t, 2)
    res = await t.do(t.master, "master log")
    assert res.ephemeral, res.text
    embed = res.embeds[0]
    ids = res.custom_ids
    assert len(ids) == 2 and all(i.startswith(f"mafia:desklog:{t.game_id}:") for i in ids)
    footer = embed["footer"]["text"]
    pages = int(footer.split(" ")[3])  # "Page N of N · ..."
    assert pages > 3 and footer.startswith(f"Page {pages} of {pages}")
    seen = [embed["description"]]
    message = res.message
    for _ in range(pages - 1):  # back to the first page, one click at a time
        click = await h.click(t.master, message, message.custom_ids[0])  # "Previous"
        assert click.response_type == 7, click.text  # the same message, edited
        message = h.world.message_record(message.id)
        seen.append(message.embeds[0]["description"])
        ids = message.custom_ids
    assert message.embeds[0]["footer"]["text"].startswith(f"Page 1 of {pages}")
    whole = "".join(reversed(seen)).replace("\n", "")
    for story in stories:
        assert story in whole, story[:12]
    assert all(len(p) <= 4096 for p in seen)
    # the custom_id carries game, page and filters: no state kept in the bot's memory
    t.bot.service.forget()
    click = await h.click(t.master, message, message.custom_ids[1])
    assert click.response_type == 7
    assert h.world.message_record(message.id).embeds[0]["footer"]["text"].startswith(
        f"Page 2 of {pages}")


async def test_master_log_as_a_file_with_filters(h: Harness) -> None:
    t = await open_table(h, 10, roles=ROLES + "; citizen x7")
    await start(t)
    stories = await long_game(t, 2)
    res = await t.do(t.master, "master log", file=True)
    assert res.ephemeral and res.message is not None
    [(name, data)] = res.message.files
    text = data.decode()
    assert name.endswith(".txt")
    for story in stories:
        assert story in text
    assert "[day 0]" in text or "[день 0]" in text
    res = await t.do(t.master, "master log", file=True, phase="night", number=0)
    [(_, data)] = res.message.files  # type: ignore[union-attr]
    night0 = data.decode().splitlines()
    assert night0 and all(line.startswith("[night 0]") for line in night0 if line.startswith("["))
    assert any("story-0-" in line for line in night0)
    assert not any("story-1-" in line for line in night0)
    citizen = (await t.holders(Role.CITIZEN, alive=False))[-1]
    res = await t.do(t.master, "master log", file=True, player=str(citizen.id))
    [(_, data)] = res.message.files  # type: ignore[union-attr]
    about = data.decode()
    assert citizen.name in about and len(about) < len(text)
    orders = [line for line in about.splitlines() if line.startswith("[") and " → " in line]
    assert all(citizen.name in line for line in orders), (citizen.name, orders[:3])
    # a player cannot read the master's log
    res = await t.do(t.players[0], "master log")
    assert res.ephemeral and not res.message.files  # type: ignore[union-attr]
    assert res.text == tr("error.not_master", "en")


async def test_replacement_from_the_standby_list(h: Harness) -> None:
    t = await open_table(h, 8, roles=ROLES)
    await start(t)
    sub = h.add_member("Sub", locale="en-US")
    robot = h.add_member(h.add_user("Robo", bot=True))
    before = (await t.state()).model_dump_json()
    res = await t.do(t.master, "master replace", old=str(t.players[0].id))
    assert res.ephemeral and res.text == tr("error.standby_empty", "en")
    res = await t.do(t.master, "master replace", old=str(t.players[0].id), new=robot.id)
    assert res.ephemeral and res.text == tr("error.bot_cannot_play", "en")
    res = await t.do(t.master, "master replace", old=str(t.players[0].id), standby="12345")
    assert res.ephemeral and res.text == tr("error.unknown_player", "en", name="12345")
    assert (await t.state()).model_dump_json() == before  # refusals change nothing
    res = await t.do(t.players[0], "game standby")
    assert res.ephemeral and res.text == tr("error.already_signed_up", "en")
    res = await t.do(t.master, "game standby")
    assert res.ephemeral and res.text == tr("error.master_cannot_play", "en")
    res = await t.do(sub, "game standby")
    assert res.ephemeral and res.text == tr("desk.standby.joined", "en", title="Palermo",
                                            count=1)
    await t.settle()
    assert tr("desk.standby.on", "en", uid=f"<@{sub.id}>", count=1) in texts(
        h, desk_channel(h, "en").id)  # an English client's desk in a Russian game
    ac = await h.autocomplete(t.master, "master replace", option="standby", channel=t.channel,
                              old=str(t.players[0].id))
    assert [(c.name, c.value) for c in ac.choices] == [("Sub", str(sub.id))]
    state = await t.state()
    old = state.with_role(Role.MAFIOSO)[0]
    before = len(h.messages_in(t.channel))
    res = await t.do(t.master, "master replace", old=str(old.uid))
    assert res.ephemeral, res.text
    await t.settle()
    state = await t.state()
    seat = state.player(sub.id)
    assert seat is not None and seat.role is Role.MAFIOSO and state.player(old.uid) is None
    assert state.standby == []
    public = [e.get("description", "") for m in h.messages_in(t.channel)[before:]
              for e in m.embeds]
    assert public == [tr("event.replaced", "ru", new=f"<@{sub.id}>", old=f"<@{old.uid}>")]
    clan = h.channel_named(tr("channel.clan", "ru", number=1))
    assert h.visible_channels(sub).can_view(clan.id) and h.visible_channels(sub).can_send(clan.id)
    assert not h.visible_channels(t.member(old.uid)).can_view(clan.id)
    res = await t.do(sub, "role")
    assert res.ephemeral and tr("role.mafioso.name", "en") in res.text


@pytest.mark.parametrize("lang", ["en", "ru"])
async def test_the_desk_and_the_log_say_who_and_why(h: Harness, lang: str) -> None:
    """Issue 42 point 5, in the master's language: a slept vote's 0 says why on the
    desk; the night's step by step names its death once (in the deaths' line); /master
    log names the player every line of a private push went to."""
    t = await open_table(h, 8, roles=ROLES, currency=True, shop=True,
                         locale="en-US" if lang == "en" else "ru")
    await start(t)
    desk = desk_channel(h, lang)
    await checkin_all(t)
    await t.advance()  # night 0
    await t.advance()  # day 1
    citizens = await t.holders(Role.CITIZEN)
    a, b, c = citizens[:3]
    assert (await t.do(a, "cast", spell="sleep", target=str(b.id))).ephemeral
    assert (await t.do(b, "vote", player=str(c.id))).embeds
    # point 6: what his place was told stays on his card (his alone)
    slept = tr("notice.spell_on_you_day", lang, night=1,
               spell=tr("spell.sleep.name", lang))
    card = await t.do(b, "role")
    assert card.ephemeral and card.message is not None
    assert card.message.ephemeral_for == b.id and slept in card.text, card.text
    assert slept not in (await t.do(c, "role")).text
    await t.advance()  # night 1: the slept vote counted 0, nobody is hanged
    feed = texts(h, desk.id)
    zero = tr("desk.day.vote_zero", lang, voter=f"<@{b.id}>", target=f"<@{c.id}>",
              votes=votes(0, lang), why=tr("desk.day.why.asleep", lang))
    assert zero in feed, feed[-800:]
    # night 1: the clan kills a citizen
    state = await t.state()
    mover = state.clans[0].acting
    assert mover is not None
    victim = next(p for p in await t.holders(Role.CITIZEN) if p.id != mover)
    assert (await t.do(t.member(mover), "night", target=str(victim.id))).ephemeral
    await t.advance()  # day 2
    assert victim.id not in {p.id for p in await t.living()}
    night = next(d for m in reversed(h.messages_in(desk.id)) for e in m.embeds
                 if (d := e.get("description", "")).startswith(
                     upper_first(tr("desk.night.head", lang,
                                             **phase_words(1, lang, NIGHT_FORMS)))))
    death = tr("desk.night.death", lang, name=f"<@{victim.id}>", by=f"<@{mover}>")
    assert night.count(death) == 1
    said_out = [line for line in night.splitlines() if f"<@{victim.id}>" in line
                and line != death and ("out of the game" in line or "выбывает" in line)]
    assert said_out == [], night  # the step says the move, the deaths' line the death
    # /master log: every line of the victim's "you are out" push names him
    res = await h.slash(t.master, "master log", channel=t.channel, locale=lang,
                        player=str(victim.id), file=True)
    assert res.ephemeral and res.message is not None
    [(_, data)] = res.message.files
    lines = data.decode().splitlines()
    to = tr("desk.log.to", lang, names=victim.name, text="")
    for key in ("event.you_died.killed", "event.you_died.where"):
        [line] = [x for x in lines if tr(key, lang) in x]
        assert to in line, line
