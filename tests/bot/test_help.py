"""/help and /rules through the real command tree, in Russian and English, and the
message fixes of issue 19 seen from Discord (signup lengths and count, the shop's
reply, /votes and /shop after the game, the role card's "what to do")."""

from __future__ import annotations

import pytest

from core.game.roles import Role
from core.text.i18n import t
from tests.bot.helpers import checkin_all, open_table, start
from tests.harness import Harness, InteractionResult

ROLES = "mafioso; investigator; bouncer"


pytestmark = pytest.mark.usefixtures("strict_i18n")


def private(res: InteractionResult) -> str:
    """The reply's text; every message of it ephemeral (only the reader sees it)."""
    assert res.messages, res
    assert all(m.flags & 64 for m in res.messages), res.text
    for m in res.messages:  # Discord's limits, per message
        assert len(m.embeds) <= 10
        size = sum(len(e.get("title") or "") + len(e.get("description") or "")
                   + sum(len(f["name"]) + len(f["value"]) for f in e.get("fields", []))
                   + len((e.get("footer") or {}).get("text", "")) for e in m.embeds)
        assert size <= 6000
        for e in m.embeds:
            assert len(e.get("description") or "") <= 4096
            assert all(len(f["value"]) <= 1024 for f in e.get("fields", []))
    return res.text


async def test_help_without_a_game_in_both_languages(h: Harness) -> None:
    ru = h.add_member("Дина", locale="ru")
    en = h.add_member("Dean", locale="en-US")
    text = private(await h.slash(ru, "help"))
    assert t("help.no_game", "ru") in text and t("help.duty.no_game", "ru") in text
    assert "/игра создать — " in text and "/правила — " in text
    text = private(await h.slash(en, "help"))
    assert t("help.no_game", "en") in text and "/game create — " in text
    assert "/rules — " in text and "Open signup" in text


async def test_help_in_a_game_says_what_the_reader_can_do_now(h: Harness) -> None:
    table = await open_table(h, 8, roles=ROLES, currency=True, shop=True)
    outsider = h.add_member("Zoe", locale="en-US")
    text = private(await table.do(table.players[0], "help"))
    assert t("help.game", "en", title="Palermo") in text
    assert t("help.duty.signup_wait", "en") in text and "/game leave" in text
    assert t("signup.module.currency", "en") in text
    # what he can do now comes first; the master options are the master's alone (the
    # signup board shows them to everyone)
    assert text.index(t("help.field.now", "en")) < text.index(t("help.intro", "en"))
    assert t("help.field.options", "en") not in text
    assert t("signup.option.reveal_roles.on", "en") not in text
    text = private(await table.do(outsider, "help"))
    assert t("help.duty.signup_join", "en") in text
    assert t("help.field.options", "en") not in text
    text = private(await table.do(table.master, "help"))
    assert t("help.duty.master_signup", "en") in text
    assert t("signup.option.reveal_roles.on", "en") in text  # master options in plain words
    assert text.index(t("help.field.now", "en")) < text.index(t("help.field.yours", "en")) \
        < text.index(t("help.field.options", "en"))  # his options last
    text = private(await h.slash(table.master, "help", channel=table.channel, locale="ru"))
    assert text.index(t("help.field.now", "ru")) < text.index(t("help.field.options", "ru"))
    await start(table)
    await checkin_all(table)
    await table.advance()  # night 0
    await table.advance()  # day 1
    citizen = (await table.holders(Role.CITIZEN))[0]
    text = private(await table.do(citizen, "help"))
    assert t("help.role_line", "en", role="honest citizen") in text
    assert t("help.duty.vote", "en") in text
    yours = text.split(t("help.field.yours", "en"))[1]
    assert "/vote" in yours and "/master advance" not in yours and "/night" not in yours
    assert t("help.field.all", "en") not in text  # his commands only, not all 36 (issue 32)
    assert "/game start" not in text and "/master" not in text  # master tools: master only
    # another player's role is nowhere in a citizen's help
    assert "mafioso" not in text.lower()
    await table.do(citizen, "vote", player=str(table.players[0].id))
    h_ru = h.add_member("Вера", locale="ru")  # a Russian reader outside the game
    text = private(await table.do(h_ru, "help"))
    assert t("help.duty.spectator", "ru") in text and "/голос " not in text
    text = private(await h.slash(citizen, "help", channel=table.channel, locale="ru"))
    assert t("help.duty.voted", "ru") in text
    assert t("help.role_line", "ru", role="честный житель") in text
    mafioso = (await table.holders(Role.MAFIOSO))[0]
    text = private(await table.do(mafioso, "help"))
    assert t("help.duty.pre_order", "en") in text and "/night" in text


async def test_rules_index_topic_and_autocomplete(h: Harness) -> None:
    ru = h.add_member("Дина", locale="ru")
    en = h.add_member("Dean", locale="en-US")
    text = private(await h.slash(en, "rules"))
    assert t("help.rules.index_title", "en") in text and "honest citizen" in text
    text = private(await h.slash(ru, "rules", topic="role:citizen"))
    assert t("help.role.citizen.duty", "ru") in text
    assert t("side.citizens.goal", "ru") in text
    text = private(await h.slash(en, "rules", topic="item:protection"))
    assert t("item.protection.effect", "en") in text and "10 lira" in text
    text = private(await h.slash(ru, "rules", topic="topic:voting"))
    assert t("help.topic.voting.text", "ru") in text
    # typed by hand, in the other language: the title is found too
    text = private(await h.slash(ru, "rules", topic="Voting"))
    assert t("help.topic.voting.text", "ru") in text
    res = await h.autocomplete(ru, "rules", option="topic", value="выш")
    assert (res.choices[0].name, res.choices[0].value) == ("вышибала", "role:bouncer")
    res = await h.autocomplete(en, "rules", option="topic", value="pay")
    assert ("Payouts after the game", "topic:payouts") in [(c.name, c.value)
                                                            for c in res.choices]
    res = await h.autocomplete(en, "rules", option="topic", value="")
    assert 0 < len(res.choices) <= 25


async def test_rules_refuses_an_unknown_topic_in_the_readers_language(h: Harness) -> None:
    ru = h.add_member("Дина", locale="ru")
    res = await h.slash(ru, "rules", topic="квиддич")
    assert res.ephemeral
    assert res.text == t("error.help_unknown_topic", "ru", name="квиддич")


async def test_every_rules_topic_fits_discord(h: Harness) -> None:
    from core.sight.guide import topic_ids

    ru = h.add_member("Дина", locale="ru")
    for tid in topic_ids():
        private(await h.slash(ru, "rules", topic=tid))


async def test_role_card_says_what_to_do(h: Harness) -> None:
    table = await open_table(h, 8, roles=ROLES)
    await start(table)
    citizen = (await table.holders(Role.CITIZEN))[0]
    text = private(await table.do(citizen, "role"))
    assert t("help.card.duty", "en") in text
    assert "Vote every day" in text and "with the positives or the neutrals" in text
    text = private(await h.slash(citizen, "role", channel=table.channel, locale="ru"))
    assert "Голосуйте каждый день" in text


async def test_signup_shows_hours_and_counts_signed_up_players(h: Harness) -> None:
    table = await open_table(h, 3)
    signup = [m for m in h.messages_in(table.channel) if m.embeds]
    assert "день 24 ч / ночь 12 ч" in signup[-1].text  # the guild is Russian
    res = await table.do(table.players[0], "game status")
    assert t("words.status.signed_up", "en", count=3) in res.text
    assert "Alive" not in res.text


async def test_the_shop_names_what_was_bought_and_the_game_over_is_said(h: Harness) -> None:
    table = await open_table(h, 8, roles=ROLES, currency=True, shop=True)
    await start(table)
    await checkin_all(table)
    await table.advance()  # night 0: the evening shop is open
    buyer = (await table.holders(Role.CITIZEN))[0]
    res = await table.do(buyer, "buy", item="protection", target="mafia:1")
    assert res.ephemeral
    assert res.text == t("shop.bought", "en", item="Protection from clan 1")
    assert "…" not in res.text
    res = await table.do(table.master, "game cancel")
    for command in ("votes", "shop"):
        res = await table.do(buyer, command)
        assert res.ephemeral and res.text == t("error.game_over", "en"), res.text


def test_a_long_help_is_cut_within_discords_limits() -> None:
    from cogs.ui.help import help_embeds
    from cogs.ui.limits import fits, pack
    from core.sight.guide import guide

    many = [f"game {'x' * 20} {i}" for i in range(300)]  # far more commands than a message
    parts = pack(embeds=help_embeds(guide(None, 5), [], many, "ru"))
    assert len(parts) > 1
    for part in parts:
        assert fits({"embeds": [e.to_dict() for e in part.embeds]}) == []
    text = "\n".join(e.description or "" for part in parts for e in part.embeds)
    assert all(f"{'x' * 20} {i} " in text for i in range(300))  # nothing dropped


async def test_a_hanging_is_announced_once_in_the_game_channel(h: Harness) -> None:
    table = await open_table(h, 8, roles=ROLES)
    await start(table)
    await checkin_all(table)
    await table.advance()  # night 0
    for p in await table.holders(Role.BOUNCER) + await table.holders(Role.MAFIOSO):
        await table.do(p, "night", target=str((await table.holders(Role.CITIZEN))[0].id))
    await table.advance()  # day 1
    victim = (await table.holders(Role.CITIZEN))[-1]
    before = len(h.messages_in(table.channel))
    for p in await table.living():
        target = victim if p.id != victim.id else (await table.holders(Role.MAFIOSO))[0]
        await table.do(p, "vote", player=str(target.id))
    await table.advance()
    texts = [m.text for m in h.messages_in(table.channel)[before:]]
    hanged = t("event.died.hanged", "ru", uid=f"<@{victim.id}>", role="@@").split("@@")[0]
    said = [x for x in texts if f"<@{victim.id}>" in x and "повеш" in x]
    assert len(said) == 1, texts  # the death line; the tally does not repeat it
    assert hanged in said[0]  # "По итогам дня повешен игрок @X. Роль: …"
