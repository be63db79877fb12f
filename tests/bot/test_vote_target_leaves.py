"""Issue 46, last paragraph, through the real command tree: a vote whose target is kicked
mid-day is withdrawn and its voter told in his own place (him and the master alone); on a
replacement the vote stands against the substitute and its voter is told so."""

from __future__ import annotations

import pytest

from core.game.roles import Role
from core.game.state import PhaseKind
from core.text.i18n import t as tr
from tests.bot.helpers import ROLES, Table, checkin_all, confirmed, open_table, start
from tests.bot.test_places import assert_private, place, pushes
from tests.harness import Harness


async def _day_one(h: Harness, locale: str) -> Table:
    t = await open_table(h, 8, roles=ROLES, locale=locale)
    await start(t)
    await checkin_all(t)
    await t.advance()  # night 0
    await t.advance()  # day 1, nobody moved
    assert await t.phase() == (PhaseKind.DAY, 1)
    return t


@pytest.mark.parametrize("locale,lang", [("ru", "ru"), ("en-US", "en")])
async def test_a_kicked_target_releases_the_vote_and_tells_its_voter(
        h: Harness, locale: str, lang: str) -> None:
    t = await _day_one(h, locale)
    target, voter, bystander = (await t.holders(Role.CITIZEN))[:3]
    assert confirmed(await t.do(voter, "vote", player=str(target.id)))
    assert confirmed(await t.do(bystander, "vote", player=str(voter.id)))
    await t.settle()
    seen = {p.id: len(pushes(h, await place(t, p.id))) for p in (voter, bystander)}
    assert (await t.do(t.master, "master kick", player=str(target.id))).ephemeral
    await t.settle()
    said = tr("event.vote_released", lang, target=target.mention)
    thread = await assert_private(h, t, voter.id)
    assert [m.text for m in pushes(h, thread)[seen[voter.id]:] if said in m.text]
    other = pushes(h, await place(t, bystander.id))[seen[bystander.id]:]
    assert not [m for m in other if said in m.text]
    state = await t.state()
    assert [m.target for m in state.vote_log if m.voter == voter.id][-1] is None


@pytest.mark.parametrize("locale,lang", [("ru", "ru"), ("en-US", "en")])
async def test_a_replaced_target_keeps_the_vote_and_its_voter_is_told(
        h: Harness, locale: str, lang: str) -> None:
    t = await _day_one(h, locale)
    target, voter = (await t.holders(Role.CITIZEN))[:2]
    assert confirmed(await t.do(voter, "vote", player=str(target.id)))
    await t.settle()
    seen = len(pushes(h, await place(t, voter.id)))
    sub = h.add_member("Sub", locale=locale)
    t.players.append(sub)
    assert (await t.do(t.master, "master replace", old=str(target.id), new=str(sub.id))).ephemeral
    await t.settle()
    said = tr("event.vote_moved", lang, old=target.mention, new=sub.mention)
    thread = await assert_private(h, t, voter.id)
    assert [m for m in pushes(h, thread)[seen:] if said in m.text]
    state = await t.state()
    assert [m.target for m in state.vote_log if m.voter == voter.id][-1] == sub.id
