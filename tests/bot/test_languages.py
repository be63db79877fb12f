"""Russian and English through the real bot: a game in each language.

The game's language is the guild's preferred locale (public messages: signup,
announcements, votes, private channels); every ephemeral reply -- role cards,
tallies, acknowledgements, refusals -- follows the locale of the user who asked.
Russian tallies use the plural forms: 1 голос, 2 голоса, 5 голосов, and the
occultist's half votes of the dead: 0,5 голоса.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest

from cogs.delivery.places import place_key
from core.game.roles import Role
from core.game.state import PhaseKind
from core.sight.narrate import role_name
from core.text import i18n
from core.text.i18n import t
from tests.bot.helpers import EVERYTHING, Lives, Table, confirmed, rebind
from tests.harness import Harness, InteractionResult, MessageRecord

ROLES = "mafioso x2; investigator; sergeant; bouncer; occultist"
MARKUP = re.compile(r"<[^<>]*>")  # mentions and timestamps


pytestmark = pytest.mark.usefixtures("strict_i18n")


def script_of(text: str) -> set[str]:
    """Which scripts a text is written in ('ru', 'en'), markup aside."""
    bare = MARKUP.sub("", text)
    out = set()
    if re.search(r"[А-Яа-яЁё]", bare):
        out.add("ru")
    if re.search(r"[A-Za-z]{2,}", bare):
        out.add("en")
    return out


def labels(message: MessageRecord) -> list[str]:
    found: list[str] = []

    def walk(items: list[dict[str, Any]]) -> None:
        for item in items:
            found.extend(str(item[k]) for k in ("label", "placeholder") if item.get(k))
            walk(item.get("components", []))

    walk(message.components)
    return found


def head(key: str, lang: str, **params: Any) -> str:
    """The text of a key up to its first placeholder not given in params."""
    marker = "\x00"
    entry = i18n.get_catalogue().entry(key, lang)
    assert isinstance(entry, str), key
    names = re.findall(r"\{(\w+)\}", entry)
    return t(key, lang, **{n: marker for n in names} | params).split(marker)[0]


def public_texts(h: Harness, channel: int) -> list[str]:
    out = []
    for message in h.messages_in(channel):
        out.append(message.text)
        out.extend(labels(message))
    return out


def assert_written_in(texts: list[str], lang: str, what: str) -> None:
    other = "en" if lang == "ru" else "ru"
    assert texts, what
    wrong = [text for text in texts if other in script_of(text)]
    assert wrong == [], f"{what}: not {lang}"
    assert any(lang in script_of(text) for text in texts), what


def ephemeral(res: InteractionResult, lang: str) -> str:
    assert res.ephemeral, res.text
    assert script_of(res.text) == {lang}, res.text
    return res.text


async def seat(h: Harness, guild: Any, title: str, locales: list[str], *,
               master_locale: str, **create: Any) -> Table:
    """A master and players with the given client locales, signed up in `guild`."""
    master = h.add_member("Master", guild.id, locale=master_locale)
    players = [h.add_member(f"P{i}", guild.id, locale=loc) for i, loc in enumerate(locales, 1)]
    table = Table(h, master, players, channel=guild.general_id)
    res = await table.do(master, "game create", title=title, **create)
    assert res.ephemeral, res.text
    info = await table.bot.service.game_in_channel(table.channel)
    assert info is not None
    table.game_id = info.id
    for p in players:
        res = await table.do(p, "game join")
        assert res.ephemeral, res.text
    res = await table.do(master, "game setup", roles=ROLES)
    assert res.ephemeral, res.text
    res = await table.do(master, "game start")
    assert res.ephemeral, res.text
    await table.settle()
    return table


async def day_zero_to_day_one(t_: Table, *spared: Any) -> Any:
    """Everybody checks in; at night 0 the acting mafioso kills an honest citizen
    (not one of `spared`)."""
    for p in await t_.living():
        res = await t_.do(p, "checkin")
        assert confirmed(res), res.text
    await t_.advance()
    state = await t_.state()
    assert state.phase is PhaseKind.NIGHT
    acting = state.clans[0].acting
    keep = {p.id for p in spared}
    victim = next(p for p in state.living() if p.role is Role.CITIZEN and p.uid not in keep)
    assert acting is not None
    res = await t_.do(t_.member(acting), "night", target=str(victim.uid))
    assert res.ephemeral, res.text
    await t_.advance()
    state = await t_.state()
    assert (state.phase, state.number) == (PhaseKind.DAY, 1)
    dead = state.player(victim.uid)
    assert dead is not None and not dead.alive
    assert any(p.role is Role.OCCULTIST for p in state.living())
    return t_.member(victim.uid)


async def cast_votes(t_: Table, ghost: Any) -> tuple[Any, Any, Any, Any]:
    """Day 1: A gets 5 votes, B 2, C 1, and D the ghost's half vote."""
    living = await t_.living()
    a, b, c, d = living[:4]
    plan = [(v, a) for v in living[1:6]] + [(v, b) for v in living[6:8]] + [(living[8], c)]
    for voter, target in plan:
        res = await t_.do(voter, "vote", player=str(target.id))
        assert confirmed(res), res.text
    res = await t_.do(ghost, "vote", player=str(d.id))
    assert confirmed(res), res.text
    return a, b, c, d


async def test_a_russian_game(h: Harness) -> None:
    """A Russian guild: public messages in Russian; each reply in its reader's language."""
    guild = h.default_guild  # preferred locale: ru
    locales = ["ru"] * 9 + ["en-US"]
    t_ = await seat(h, guild, "Палермо", locales, master_locale="ru", extra_roles=True)
    english = t_.players[-1]
    russian = t_.players[0]

    # role cards: the reader's language, whatever the game's
    state = await t_.state()
    for p in (russian, english):
        lang = "en" if p is english else "ru"
        text = ephemeral(await t_.do(p, "role"), lang)
        me = state.player(p.id)
        assert me is not None and me.role is not None
        assert t("card.title", lang, role=t(f"role.{me.role}.name", lang)) in text
    # the same through the public "my role" button on the start announcement
    started = next(m for m in h.messages_in(t_.channel)
                   if any(cid.startswith("mafia:role:") for cid in m.custom_ids))
    clicked = await h.click(english, started, f"mafia:role:{t_.game_id}")
    ephemeral(clicked, "en")
    clicked = await h.click(russian, started, f"mafia:role:{t_.game_id}")
    ephemeral(clicked, "ru")

    ghost = await day_zero_to_day_one(t_, russian, english)
    # a refusal, in each reader's language
    res = await t_.do(russian, "checkin")
    assert ephemeral(res, "ru") == t("error.checkin_day_zero_only", "ru")
    res = await t_.do(english, "checkin")
    assert ephemeral(res, "en") == t("error.checkin_day_zero_only", "en")

    a, b, c, d = await cast_votes(t_, ghost)
    votes = ephemeral(await t_.do(russian, "votes"), "ru")
    for target, count in ((a, 5), (b, 2), (c, 1), (d, 0.5)):
        assert f"<@{target.id}>: {t('vote.count', 'ru', count=count)}" in votes
    assert "5 голосов" in votes and "2 голоса" in votes and "1 голос " in votes
    assert "0,5 голоса" in votes
    assert t("votes.ghost_voter", "ru", name=f"<@{ghost.id}>") in votes
    votes_en = ephemeral(await t_.do(english, "votes"), "en")
    assert "5 votes" in votes_en and "2 votes" in votes_en and "1 vote " in votes_en
    assert "0.5 votes" in votes_en

    # the public vote embed and every public message: Russian
    await t_.settle()
    texts = public_texts(h, t_.channel)
    assert_written_in(texts, "ru", "the Russian game's channel")
    joined = "\n".join(texts)
    assert head("signup.title", "ru") + "Палермо" in joined
    assert head("event.phase_started.day", "ru", number=1) in joined
    assert head("event.vote_cast_ghost", "ru") in joined
    assert t("vote.embed_title", "ru") in joined
    assert t("button.role", "ru") in joined and t("button.role", "en") not in joined
    # private channels are named and greeted in the game's language
    clan = h.channel_named(t("channel.clan", "ru", number=1))
    police = h.channel_named(t("channel.police", "ru"))
    for channel in (clan, police):
        assert_written_in(public_texts(h, channel.id), "ru", channel.name)


async def test_an_english_game(h: Harness) -> None:
    """An English guild: public messages in English, a Russian user still reads Russian."""
    guild = h.add_guild("Palermo Club", locale="en-US")
    h.set_bot_permissions(EVERYTHING, guild.id)
    locales = ["en-US"] * 9 + ["ru"]
    t_ = await seat(h, guild, "Palermo", locales, master_locale="en-GB", extra_roles=True)
    info = await t_.bot.service.info(t_.game_id)
    assert info.language == "en"
    russian = t_.players[-1]
    english = t_.players[0]

    state = await t_.state()
    for p, lang in ((english, "en"), (russian, "ru")):
        text = ephemeral(await t_.do(p, "role"), lang)
        me = state.player(p.id)
        assert me is not None and me.role is not None
        assert t(f"role.{me.role}.power", lang) in text

    ghost = await day_zero_to_day_one(t_, russian, english)
    a, b, c, d = await cast_votes(t_, ghost)
    votes = ephemeral(await t_.do(english, "votes"), "en")
    for target, count in ((a, 5), (b, 2), (c, 1), (d, 0.5)):
        assert f"<@{target.id}>: {t('vote.count', 'en', count=count)}" in votes
    votes_ru = ephemeral(await t_.do(russian, "votes"), "ru")
    assert "5 голосов" in votes_ru and "0,5 голоса" in votes_ru
    # the master's tools answer the master in his language (en-GB -> English)
    res = await t_.do(t_.master, "master prod")
    ephemeral(res, "en")

    await t_.settle()
    texts = public_texts(h, t_.channel)
    assert_written_in(texts, "en", "the English game's channel")
    joined = "\n".join(texts)
    assert head("signup.title", "en") + "Palermo" in joined
    assert head("event.morning.head", "en", number=1) in joined
    assert t("button.role", "en") in joined and t("button.role", "ru") not in joined
    clan = h.channel_named(t("channel.clan", "en", number=1), guild.id)
    assert_written_in(public_texts(h, clan.id), "en", clan.name)
    # the other guild's game is unaffected: the Russian guild has no game at all
    assert await t_.bot.service.game_in_channel(h.default_guild.general_id) is None


async def test_a_refusal_outside_any_game_follows_the_user(h: Harness) -> None:
    ru = h.add_member("Аня", locale="ru")
    en = h.add_member("Ann", locale="en-US")
    res = await h.slash(ru, "votes")
    assert ephemeral(res, "ru") == t("error.no_game_here", "ru")
    res = await h.slash(en, "votes")
    assert ephemeral(res, "en") == t("error.no_game_here", "en")


# --- each reader's private pushes in his own language ---------------------------------
POST = "POST /channels/{channel_id}/messages"


async def place_of(t_: Table, uid: int) -> int:
    """The thread of the seat `uid` holds."""
    state = await t_.state()
    seat_no = next(i for i, p in enumerate(state.players) if p.uid == uid)
    return (await t_.bot.service.info(t_.game_id)).private_channels[place_key(seat_no)]


async def last_push(h: Harness, t_: Table, uid: int) -> MessageRecord:
    """The latest push in `uid`'s place, checked to reach him alone: the thread's members
    are him, the master and the bot, and its ping names him and nobody else."""
    thread = await place_of(t_, uid)
    assert h.world.thread_members[thread] == {uid, t_.master.id, h.world.bot_id}
    body = h.requests_to(POST, channel_id=thread)[-1].json
    assert body["allowed_mentions"]["parse"] == []
    assert [int(u) for u in body["allowed_mentions"]["users"]] == [uid]
    assert body["content"].startswith(f"<@{uid}>")
    return h.messages_in(thread)[-1]


async def noted(t_: Table, uid: int, lang: str) -> None:
    """Wait until the bot has noted the language a command of `uid` used (it is noted
    once the command went through, beside the game)."""
    for _ in range(500):
        if await t_.bot.service.readers.language(t_.game_id, uid, "?") == lang:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"{uid}'s language was not noted as {lang}")


async def prod(t_: Table) -> None:
    res = await t_.do(t_.master, "master prod")
    assert res.ephemeral, res.text
    await t_.settle()


async def test_private_pushes_follow_each_reader_public_posts_the_game(lives: Lives) -> None:
    """A Russian game: a player with an English client gets his welcome, card, reminders
    and results in English in his own place, a Russian one in Russian, while every public
    post stays Russian; a switch of client switches his later pushes, and the language
    he last used survives a restart."""
    h = lives.h
    guild = h.default_guild
    t_ = await seat(h, guild, "Палермо", ["en-US"] + ["ru"] * 9, master_locale="ru",
                    extra_roles=True)
    english, russian = t_.players[0], t_.players[1]
    state = await t_.state()

    # the welcome and the card
    for p, lang in ((english, "en"), (russian, "ru")):
        card = await last_push(h, t_, p.id)
        me = state.player(p.id)
        assert me is not None and me.role is not None
        assert card.embeds[0]["title"] == t("card.title", lang, role=role_name(str(me.role),
                                                                               lang))
        assert t("places.welcome", lang, title="Палермо") in card.content

    # reminders: each in his reader's language
    await prod(t_)
    for p, lang in ((english, "en"), (russian, "ru")):
        text = (await last_push(h, t_, p.id)).text
        assert head("event.reminder.checkin", lang) in text, text
        assert t("places.footer", lang, title="Палермо", ref="")[:10] in text

    # the language he last used survives a restart (the game's is Russian)
    h = await lives.restart()
    t_ = rebind(t_, h)
    await prod(t_)
    assert head("event.reminder.checkin", "en") in (await last_push(h, t_, english.id)).text

    # a switch of client language switches his later pushes; noting it costs no request
    # to Discord (the locale comes with the interaction): only the reply is sent
    await h.settle()
    before = len(h.requests)
    res = await h.slash(english, "role", channel=t_.channel, locale="ru")
    ephemeral(res, "ru")
    await noted(t_, english.id, "ru")
    assert [r for r in h.requests[before:] if "/interactions/" not in r.path] == []
    await prod(t_)
    assert head("event.reminder.checkin", "ru") in (await last_push(h, t_, english.id)).text

    # a result: the victim of night 0 reads "you are out" in the language he used last
    for p in await t_.living():
        assert confirmed(await t_.do(p, "checkin"))
    await t_.advance()
    state = await t_.state()
    victim = next(p for p in state.living() if p.role is Role.CITIZEN
                  and p.uid not in (english.id, russian.id))
    res = await h.slash(t_.member(victim.uid), "role", channel=t_.channel, locale="en-GB")
    ephemeral(res, "en")
    await noted(t_, victim.uid, "en")
    acting = state.clans[0].acting
    assert acting is not None
    assert (await t_.do(t_.member(acting), "night", target=str(victim.uid))).ephemeral
    await t_.advance()
    died = (await last_push(h, t_, victim.uid)).text
    assert t("event.you_died.killed", "en") in died

    # the public posts: Russian, whoever read what
    assert_written_in(public_texts(h, t_.channel), "ru", "the Russian game's channel")


async def test_a_language_without_a_catalogue_follows_the_game(h: Harness) -> None:
    """A German client in an English game: the game's language (English), not a guess;
    in a Russian game: Russian."""
    t_ = await seat(h, h.default_guild, "Палермо", ["de"] + ["ru"] * 9, master_locale="ru")
    card = await last_push(h, t_, t_.players[0].id)
    assert t("places.welcome", "ru", title="Палермо") in card.content
    assert await t_.bot.service.readers.language(t_.game_id, t_.players[0].id, "ru") == "ru"
    assert await t_.bot.service.readers.language(t_.game_id, t_.players[1].id, "en") == "ru"


async def test_the_desk_and_its_welcome_speak_the_masters_language(h: Harness) -> None:
    """A Russian game run by a master with an English client: his desk is English, the
    game channel Russian."""
    t_ = await seat(h, h.default_guild, "Палермо", ["ru"] * 10, master_locale="en-US")
    desk = h.channel_named(t("desk.channel.name", "en"))
    assert h.world.channels[desk.id]["permission_overwrites"]  # a real private channel
    assert {m.id for m in [*t_.players, t_.master]
            if h.visible_channels(m).can_view(desk.id)} == {t_.master.id}
    feed = "\n".join(m.text for m in h.messages_in(desk.id))
    assert t("desk.channel.welcome", "en", title="Палермо") in feed
    assert head("desk.opened.head", "en") in feed
    assert_written_in(public_texts(h, t_.channel), "ru", "the Russian game's channel")


async def test_a_refused_command_does_not_change_the_readers_language(h: Harness) -> None:
    """Bad input changes nothing, the reader's language included: only a command that
    went through notes the language it was sent in."""
    t_ = await seat(h, h.default_guild, "Палермо", ["en-US"] + ["ru"] * 9, master_locale="ru")
    english, other = t_.players[0], t_.players[1]
    res = await h.slash(english, "unvote", channel=t_.channel, locale="ru")  # day 0: refused
    assert ephemeral(res, "ru") and not confirmed(res)
    # a later command that goes through, by another: noted after the refusal was answered
    ephemeral(await h.slash(other, "role", channel=t_.channel, locale="en-US"), "en")
    await noted(t_, other.id, "en")
    assert await t_.bot.service.readers.language(t_.game_id, english.id, "?") == "en"
    card = await last_push(h, t_, english.id)
    assert t("places.welcome", "en", title="Палермо") in card.content


async def test_a_check_in_is_acknowledged_in_the_senders_language(h: Harness) -> None:
    """A Russian game: the private acknowledgement of a check-in (the day 0 list shows it
    publicly) is in the sender's client language, the list in the game's."""
    t_ = await seat(h, h.default_guild, "Палермо", ["en-US", "ru"] + ["ru"] * 8,
                    master_locale="ru", extra_roles=True)
    for p, lang in zip(t_.players[:2], ("en", "ru"), strict=True):
        res = await t_.do(p, "checkin")
        assert res.ephemeral, res.text
        assert res.embeds, res.text
        said = res.embeds[0].get("description", "") + res.embeds[0].get("title", "")
        other = "ru" if lang == "en" else "en"
        me = f"<@{p.id}>"
        assert head("event.checked_in", lang, uid=me) in said, said
        assert head("event.checked_in", other, uid=me) not in said, said


async def test_a_button_notes_the_pressers_language_as_a_command_does(h: Harness) -> None:
    """A Russian game, a player with an English client: pressing "my role" from a Russian
    client notes Russian for his later pushes, as /role would, and back."""
    t_ = await seat(h, h.default_guild, "Палермо", ["en-US"] + ["ru"] * 9, master_locale="ru")
    english = t_.players[0]
    assert await t_.bot.service.readers.language(t_.game_id, english.id, "?") == "en"
    started = next(m for m in h.messages_in(t_.channel)
                   if any(cid.startswith("mafia:role:") for cid in m.custom_ids))
    clicked = await h.click(english, started, f"mafia:role:{t_.game_id}", locale="ru")
    assert clicked.ephemeral
    ephemeral(clicked, "ru")
    await noted(t_, english.id, "ru")
    await prod(t_)
    assert head("event.reminder.checkin", "ru") in (await last_push(h, t_, english.id)).text
    # back to English by the button: the next push follows
    ephemeral(await h.click(english, started, f"mafia:role:{t_.game_id}", locale="en-US"),
              "en")
    await noted(t_, english.id, "en")
    await prod(t_)
    assert head("event.reminder.checkin", "en") in (await last_push(h, t_, english.id)).text
