"""Right-click play (issue 46, item 2): the member context menus "Vote against" and
"Night order on" through the real command tree, in both languages: the same record and
reply as /vote and /night, the same refusals (the same guard), changing nothing when
refused, and listed by /help."""

from __future__ import annotations

import pytest

from core.game.roles import Role
from core.game.state import PhaseKind
from core.text.i18n import t
from tests.bot.helpers import ROLES, confirmed, day_one, open_table
from tests.harness import Harness, InteractionResult

pytestmark = pytest.mark.usefixtures("strict_i18n")

VOTE = t("ctx.vote_against.name", "en")
NIGHT = t("ctx.night_order_on.name", "en")


def alone(res: InteractionResult) -> str:
    """A reply only its sender sees (ephemeral), its text."""
    assert res.messages and all(m.flags & 64 for m in res.messages), res.text
    return res.text


async def test_vote_against_is_the_vote_in_the_game_channel(h: Harness) -> None:
    t_ = await day_one(h)
    living = await t_.living()
    voter, target = living[0], living[1]
    res = await h.user_command(voter, VOTE, target, channel=t_.channel)
    assert confirmed(res) and not res.ephemeral  # typed here: the reply is the record
    state = await t_.state()
    mark = state.vote_log[-1]
    assert (mark.voter, mark.target, mark.shouts) == (voter.id, target.id, 0)
    # the record /vote posts: another voter's, by the slash command, looks the same
    by_slash = await t_.do(living[2], "vote", player=str(target.id))
    assert confirmed(by_slash) and not by_slash.ephemeral
    assert [(e.get("title"), e.get("color")) for e in res.embeds] == \
        [(e.get("title"), e.get("color")) for e in by_slash.embeds]


async def test_refusals_are_the_slash_commands_own_and_change_nothing(h: Harness) -> None:
    t_ = await day_one(h)
    outsider = h.add_member("Зоя", locale="ru")
    voter = (await t_.living())[0]
    before = (await t_.state()).model_dump_json()
    for who, on in ((voter, outsider), (outsider, voter), (t_.master, voter)):
        for locale in ("ru", "en-US"):
            menu = await h.user_command(who, VOTE, on, channel=t_.channel, locale=locale)
            slash = await h.slash(who, "vote", channel=t_.channel, locale=locale,
                                  player=str(on.id))
            assert alone(menu) == alone(slash) and menu.text
            assert not menu.embeds
    # night orders by day are refused to a citizen as /night refuses them
    citizen = (await t_.holders(Role.CITIZEN))[0]
    for locale in ("ru", "en-US"):
        menu = await h.user_command(citizen, NIGHT, voter, channel=t_.channel, locale=locale)
        slash = await h.slash(citizen, "night", channel=t_.channel, locale=locale,
                              target=str(voter.id))
        assert alone(menu) == alone(slash) and menu.text
    assert (await t_.state()).model_dump_json() == before  # refused: nothing changed


async def test_night_order_on_is_the_night_order(h: Harness) -> None:
    t_ = await open_table(h, 8, roles=ROLES, locale="ru")
    assert (await t_.do(t_.master, "game start")).ephemeral
    await t_.settle()
    for p in t_.players:
        assert confirmed(await t_.do(p, "checkin"))
    await t_.advance()
    assert await t_.phase() == (PhaseKind.NIGHT, 0)
    state = await t_.state()
    acting = t_.member(state.clans[0].acting)  # type: ignore[arg-type]
    citizen = (await t_.holders(Role.CITIZEN))[0]
    listed = alone(await t_.do(acting, "help"))  # /help names the menu to a night mover
    assert t("help.menu_label", "ru", name=t("ctx.night_order_on.name", "ru")) in listed
    assert t("help.menu.night", "ru") in listed
    res = await h.user_command(acting, NIGHT, citizen, channel=t_.channel)
    text = alone(res)  # the acceptance, to the sender alone, in Russian
    orders = [o for o in (await t_.state()).orders if o.actor == acting.id]
    assert [(o.target, o.fallback, o.story) for o in orders] == [(citizen.id, None, None)]
    slash = await t_.do(acting, "night", target=str(citizen.id))
    assert alone(slash) == text


async def test_help_lists_the_menus_to_whom_they_serve(h: Harness) -> None:
    t_ = await day_one(h)
    citizen = (await t_.holders(Role.CITIZEN))[0]
    for locale, lang in (("en-US", "en"), ("ru", "ru")):
        text = alone(await h.slash(citizen, "help", channel=t_.channel, locale=locale))
        vote = t("help.menu_label", lang, name=t("ctx.vote_against.name", lang))
        night = t("help.menu_label", lang, name=t("ctx.night_order_on.name", lang))
        assert vote in text and t("help.menu.vote", lang) in text
        assert night not in text  # a citizen has no night move
    text = alone(await h.slash(t_.master, "help", channel=t_.channel))
    assert t("help.menu_label", "en", name=VOTE) not in text  # the master does not vote
