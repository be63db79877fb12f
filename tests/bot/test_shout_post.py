"""Issue 33, S26 through the real command tree: «Крик – применяется в явном виде в посте по
ходу голосования». The public vote post in the game channel says the vote was shouted;
a second Shout on the standing vote is posted as a Shout, not as a new vote."""

from __future__ import annotations

from typing import Any

from core.i18n import t as tr
from tests.bot.helpers import checkin_all, confirmed, open_table, posted, start
from tests.harness import Harness


def vote_embeds(h: Harness, channel: int) -> list[dict[str, Any]]:
    titles = {tr("vote.embed_title", "ru"), tr("vote.embed_title_shout", "ru")}
    return [e for m in posted(h, channel) for e in m.embeds if e.get("title") in titles]


async def test_the_vote_post_says_the_vote_was_shouted(h: Harness) -> None:
    t = await open_table(h, 8, roles="mafioso; investigator; bouncer", currency=True,
                         shop=True)
    await start(t)
    await checkin_all(t)
    await t.advance()
    await t.advance()  # night 0 passes without orders: day 1
    voter, target, other = (await t.living())[:3]
    res = await t.do(other, "vote", player=str(target.id))
    assert confirmed(res), res.text
    res = await t.do(voter, "vote", player=str(target.id), shout=True)
    assert confirmed(res), res.text
    assert res.embeds[0]["title"] == tr("vote.embed_title_shout", "ru")  # the sender's copy
    res = await t.do(voter, "vote", player=str(target.id), shout=True)
    assert confirmed(res), res.text
    await t.settle()
    plain, first, second = vote_embeds(h, t.channel)  # the guild speaks Russian
    assert plain["title"] == tr("vote.embed_title", "ru")
    assert "Криком" not in plain["description"]
    assert first["title"] == second["title"] == tr("vote.embed_title_shout", "ru")
    assert first["description"].startswith(f"<@{voter.id}> с Криком голосует против игрока "
                                           f"<@{target.id}>")
    assert "подкрепляет голос" in second["description"] and \
        "голосует" not in second["description"]
    state = await t.state()
    assert [m.shouts for m in state.vote_log if m.voter == voter.id] == [1, 2]
