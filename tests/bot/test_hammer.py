"""Issue 46.7, the hammer through the real command tree, in both languages: set with
/game options, shown on the signup board; the vote that gives one player more than half
the living votes ends the day in public, or (hammer_confirm) tells the master alone, on his
desk, and the day runs on until /master advance."""

from __future__ import annotations

import pytest

from core.game.state import PhaseKind
from core.text.i18n import t as tr
from tests.bot.helpers import ROLES, Table, checkin_all, confirmed, open_table, posted, start
from tests.bot.test_desk import desk_channel, texts
from tests.bot.test_places import posts_to
from tests.harness import Harness


async def _day_one(h: Harness, locale: str, **options: bool) -> Table:
    """The game speaks its players' language (`/game options language`)."""
    t = await open_table(h, 8, roles=ROLES, locale=locale)
    res = await t.do(t.master, "game options", language=locale[:2], **options)
    assert res.ephemeral, res.text
    await start(t)
    await checkin_all(t)
    await t.advance()  # night 0
    await t.advance()  # day 1, nobody moved: 8 living, 5 votes are the hammer
    assert await t.phase() == (PhaseKind.DAY, 1)
    return t


def _board(h: Harness, t: Table) -> str:
    return " ".join(str(e) for m in posted(h, t.channel) for e in m.embeds)


@pytest.mark.parametrize("locale,lang", [("ru", "ru"), ("en-US", "en")])
async def test_the_fifth_vote_of_eight_ends_the_day(h: Harness, locale: str, lang: str) -> None:
    t = await _day_one(h, locale, hammer=True)
    board = (await t.state()).options.language
    assert board == lang and tr("signup.option.hammer.on", lang) in _board(h, t)
    target = t.players[0]
    for voter in t.players[1:5]:  # four of eight: no majority
        assert confirmed(await t.do(voter, "vote", player=str(target.id)))
    assert await t.phase() == (PhaseKind.DAY, 1)
    assert confirmed(await t.do(t.players[5], "vote", player=str(target.id)))
    await t.settle()
    assert await t.phase() == (PhaseKind.NIGHT, 1)
    said = tr("event.hammer", board, target=target.mention)  # a public post: the game's
    hammer = [m for m in posted(h, t.channel) if said in m.text]
    assert len(hammer) == 1
    sent = [b for b in posts_to(h, t.channel) if said in str(b)]
    assert sent and all(b["allowed_mentions"]["parse"] == [] for b in sent)
    state = await t.state()
    assert state.days[-1].hanged == target.id


@pytest.mark.parametrize("locale,lang", [("ru", "ru"), ("en-US", "en")])
async def test_with_confirmation_the_master_alone_is_told(
        h: Harness, locale: str, lang: str) -> None:
    t = await _day_one(h, locale, hammer=True, hammer_confirm=True)
    target = t.players[0]
    for voter in t.players[1:6]:
        assert confirmed(await t.do(voter, "vote", player=str(target.id)))
    await t.settle()
    assert await t.phase() == (PhaseKind.DAY, 1)
    said = tr("event.desk_hammer", lang, target=target.mention)
    desk = desk_channel(h, lang)
    assert texts(h, desk.id).count(said) == 1
    assert not any(h.visible_channels(p).can_view(desk.id) for p in t.players)
    game_lang = (await t.state()).options.language
    assert not [m for m in posted(h, t.channel)
                if tr("event.hammer", game_lang, target=target.mention) in m.text]
    await t.advance()  # the master confirms
    assert (await t.state()).days[-1].hanged == target.id
