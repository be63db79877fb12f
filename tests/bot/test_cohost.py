"""The co-host (issue 46, item 3; RULES.md §8, "The co-host") through the real command
tree in both languages: the master names him, the table is told, he uses the master's
tools and reads the desk (exact viewers), is never seated and never was, /game status
names him, and he becomes the master at a handover or when the master leaves."""

from __future__ import annotations

import pytest

from core.text.i18n import t
from tests.bot.helpers import ROLES, day_one, open_table, posted
from tests.harness import Harness, InteractionResult

pytestmark = pytest.mark.usefixtures("strict_i18n")


def alone(res: InteractionResult) -> str:
    assert res.messages and all(m.flags & 64 for m in res.messages), res.text
    return res.text


def told(h: Harness, channel: int, text: str) -> bool:
    """The game channel carries `text` in a post of the bot's (the outbox's): public,
    in the game's language (the guild's, Russian here)."""
    return any(text in m.text for m in posted(h, channel))


def desk_readers(h: Harness, t_: object, members: list[object]) -> set[int]:
    desk = h.channel_named(t("desk.channel.name", "en"))
    return {m.id for m in members if h.visible_channels(m).can_view(desk.id)}  # type: ignore[attr-defined]


async def test_the_cohost_hosts_reads_the_desk_and_the_table_is_told(h: Harness) -> None:
    t_ = await day_one(h)
    cora = h.add_member("Cora", locale="en-US")
    res = await t_.do(t_.master, "master cohost add", player=cora)
    assert t("master.cohost_added", "en", uid=f"<@{cora.id}>") == alone(res)
    await t_.settle()
    assert told(h, t_.channel, t("event.cohost_named", "ru", uid=f"<@{cora.id}>"))
    everyone = [*t_.players, t_.master, cora]
    assert desk_readers(h, t_, everyone) == {t_.master.id, cora.id}
    status = alone(await t_.do(cora, "game status"))
    assert t("status.cohost", "en") in status and f"<@{cora.id}>" in status
    assert alone(await t_.do(cora, "master log"))  # the whole log, to him alone
    # the co-host does not name, remove or succeed himself
    other = h.add_member("Olga", locale="ru")
    before = (await t_.state()).model_dump_json()
    res = await h.slash(cora, "master cohost add", channel=t_.channel, locale="ru",
                        player=other)
    assert alone(res) == t("error.cohost_only_master", "ru")
    assert (await t_.state()).model_dump_json() == before
    res = await t_.do(cora, "master advance")  # every master tool
    assert res.ephemeral, res.text
    assert (await t_.state()).phase.value == "night"


async def test_who_may_not_cohost_is_refused_and_nothing_changes(h: Harness) -> None:
    t_ = await open_table(h, 8, roles=ROLES, locale="ru")
    bot_member = h.add_member(h.add_user("Robo", locale="ru", bot=True))
    before = (await t_.state()).model_dump_json()
    cases = [(t_.players[0], "error.cohost_seated", {"target": f"<@{t_.players[0].id}>"}),
             (t_.master, "error.cohost_is_master", {}),
             (bot_member, "error.cohost_bot", {"target": f"<@{bot_member.id}>"})]
    for who, key, params in cases:
        for locale, lang in (("ru", "ru"), ("en-US", "en")):
            res = await h.slash(t_.master, "master cohost add", channel=t_.channel,
                                locale=locale, player=who)
            assert alone(res) == t(key, lang, **params)
    for command in ("master cohost remove", "master cohost handover"):
        assert alone(await t_.do(t_.master, command)) == t("error.cohost_none", "ru")
    assert (await t_.state()).model_dump_json() == before
    # named in the signup, he can never sit down: join is refused in his words
    vera = h.add_member("Вера", locale="ru")
    assert alone(await t_.do(t_.master, "master cohost add", player=vera))
    res = await t_.do(vera, "game join")
    assert alone(res) == t("error.host_cannot_play", "ru", target=f"<@{vera.id}>")
    assert (await t_.state()).player(vera.id) is None
    await t_.settle()
    status = alone(await t_.do(t_.players[0], "game status"))
    assert t("status.cohost", "ru") in status and f"<@{vera.id}>" in status


async def test_a_handover_makes_the_cohost_master_and_the_old_master_leaves_the_desk(
        h: Harness) -> None:
    t_ = await day_one(h)
    cora = h.add_member("Cora", locale="en-US")
    assert alone(await t_.do(t_.master, "master cohost add", player=cora))
    res = await t_.do(t_.master, "master cohost handover")
    assert alone(res) == t("master.cohost_handed", "en", uid=f"<@{cora.id}>")
    await t_.settle()
    state = await t_.state()
    assert (state.master, state.cohost) == (cora.id, None)
    assert (await t_.bot.service.info(t_.game_id)).master_id == cora.id
    assert told(h, t_.channel, t("event.master_handed_over", "ru", new=f"<@{cora.id}>",
                                 old=f"<@{t_.master.id}>"))
    assert desk_readers(h, t_, [*t_.players, t_.master, cora]) == {cora.id}
    res = await t_.do(t_.master, "master advance")
    assert alone(res) == t("error.not_master", "en")


async def test_the_master_leaving_the_server_hands_the_game_to_the_cohost(
        h: Harness) -> None:
    t_ = await day_one(h)
    cora = h.add_member("Кора", locale="ru")
    assert alone(await t_.do(t_.master, "master cohost add", player=cora))
    await t_.settle()
    # the co-host may not take the game while the master is still on the server
    before = (await t_.state()).model_dump_json()
    res = await t_.do(cora, "master cohost handover")
    assert alone(res) == t("error.cohost_only_master", "ru")
    assert (await t_.state()).model_dump_json() == before
    h.remove_member(t_.master)  # the bot is not told (no members intent): he asks
    res = await h.slash(cora, "master cohost handover", channel=t_.channel, locale="ru")
    assert alone(res) == t("master.cohost_handed", "ru", uid=f"<@{cora.id}>")
    await t_.settle()
    state = await t_.state()
    assert (state.master, state.cohost) == (cora.id, None)
    assert told(h, t_.channel, t("event.master_handed_over_left", "ru",
                                 old=f"<@{t_.master.id}>", new=f"<@{cora.id}>"))
    assert alone(await t_.do(cora, "master advance"))
