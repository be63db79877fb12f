"""Issue 42, item 10 through the real command tree: the lines a native master read in a
Russian game (and their English twins) as the table now meets them."""

from __future__ import annotations

import pytest

from core.game.roles import Role
from core.game.state import PhaseKind
from core.text.i18n import t as tr
from tests.harness import Harness

from .helpers import ROLES, confirmed, open_table, start
from .test_desk import desk_channel, texts

pytestmark = pytest.mark.asyncio


@pytest.mark.parametrize(("locale", "said"), [("ru", "Лично напомнили: <@{uid}>."),
                                              ("en-US", "Reminded in private: <@{uid}>.")])
async def test_prod_with_one_name_left_says_no_plural(h: Harness, locale: str,
                                                      said: str) -> None:
    """One player left to check in: «Лично напомнили: @X.», not "игрокам"; the master
    alone reads it."""
    t = await open_table(h, 6, roles="mafioso; investigator", locale=locale)
    await start(t)
    last = t.players[-1]
    for p in t.players[:-1]:
        assert (await t.do(p, "checkin")).embeds
    res = await t.do(t.master, "master prod")
    assert res.ephemeral and res.message is not None
    assert res.message.ephemeral_for == t.master.id
    assert res.text == said.format(uid=last.id), res.text


async def test_the_day_and_the_desk_speak_the_public_posts_words(h: Harness) -> None:
    """Day 1 in a Russian game: the vote's end said as a master says it, and the desk's
    night by its ordinal word (not "Ночь 0"); the desk's words reach the master only."""
    t = await open_table(h, 8, roles=ROLES, locale="ru")
    await start(t)
    for p in t.players:
        assert confirmed(await t.do(p, "checkin"))
    await t.advance()
    state = await t.state()
    citizen = (await t.holders(Role.CITIZEN))[0]
    assert (await t.do(t.member(state.clans[0].acting), "night",  # type: ignore[arg-type]
                       target=str(citizen.id))).ephemeral
    await t.advance()
    assert await t.phase() == (PhaseKind.DAY, 1)
    public = texts(h, t.channel)
    assert "Наступает первый день. Голосование — до " in public, public
    assert "Итоги подводятся" not in public
    desk = desk_channel(h)
    feed = texts(h, desk.id)
    assert "Нулевая ночь по шагам:" in feed and "Ночь 0" not in feed
    assert "по шагам" not in public
    for p in t.players:
        assert not h.visible_channels(p).can_view(desk.id), p.name
    assert h.visible_channels(t.master).can_view(desk.id)
    assert tr("desk.night.head", "ru", night_nom="нулевая ночь") == "нулевая ночь по шагам:"
