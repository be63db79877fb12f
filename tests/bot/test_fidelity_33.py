"""Issue 33 through the real command tree. S26: «Крик – применяется в явном виде в посте по
ходу голосования»: the public vote post in the game channel says the vote was shouted, and
a second Shout on the standing vote is posted as a Shout, not as a new vote. V7: the
master's desk explains a removal during a voting day."""

from __future__ import annotations

from typing import Any

from core.sight.narrate import NIGHT_FORMS, phase_words
from core.text.i18n import t as tr
from tests.bot.helpers import checkin_all, confirmed, open_table, start
from tests.harness import Harness


def vote_embeds(h: Harness, channel: int) -> list[dict[str, Any]]:
    titles = {tr("vote.embed_title", "ru"), tr("vote.embed_title_shout", "ru")}
    # the outbox's posts and the public replies (a vote typed in the game channel is
    # recorded by its own reply)
    return [e for m in h.messages_in(channel) for e in m.embeds if e.get("title") in titles]


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


async def test_removing_the_days_leader_is_explained_on_the_desk_only(h: Harness) -> None:
    """V7 (issue 33): «При равенстве количества голосов вешают того, кто набрал свои голоса
    первым» — the master removing the leader mid-day is told on his desk how the day now
    stands and that a tie hangs the first to reach the count, even on one vote."""
    t = await open_table(h, 8, roles="mafioso; investigator; bouncer")
    await start(t)
    await checkin_all(t)
    await t.advance()
    await t.advance()  # day 1
    living = await t.living()
    leader, a, b = living[0], living[1], living[2]
    for voter in living[3:5]:
        assert confirmed(await t.do(voter, "vote", player=str(leader.id)))
    assert confirmed(await t.do(living[5], "vote", player=str(a.id)))
    assert confirmed(await t.do(living[6], "vote", player=str(b.id)))
    res = await t.do(t.master, "master kick", player=str(leader.id))
    assert res.ephemeral, res.text
    await t.settle()
    desk = h.channel_named(tr("desk.channel.name", "en"))  # the master's client: English
    rule = tr("desk.kick_day.rule", "en")
    on_desk = [e.get("description", "") for m in h.messages_in(desk.id) for e in m.embeds]
    assert any(rule in d and f"<@{a.id}>" in d for d in on_desk)
    for channel in h.world.channel_messages:  # nowhere else
        if channel != desk.id:
            assert not any(rule in e.get("description", "") for m in h.messages_in(channel)
                           for e in m.embeds)
    assert h.visible_channels(t.master).can_view(desk.id)
    assert not any(h.visible_channels(p).can_view(desk.id) for p in t.players)


async def test_the_clan_is_told_when_the_move_passes_and_the_next_mafioso_orders(
        h: Harness) -> None:
    """N19 (issue 33): «ночные ходы выполняют в порядке нумерации за вычетом погибших» —
    the acting mafioso removed during his night: the clan's channel says who acts now, and
    he may order."""
    t = await open_table(h, 8, roles="mafioso x2; investigator; bouncer")
    await start(t)
    await checkin_all(t)
    await t.advance()  # night 0
    state = await t.state()
    first = state.clans[0].acting
    second = next(p.uid for p in state.players if p.clan == 1 and p.uid != first)
    victim = next(p.uid for p in state.living() if p.clan is None)
    refused = await t.do(t.member(second), "night", target=str(victim))
    assert refused.ephemeral and not (await t.state()).orders  # not his turn yet
    res = await t.do(t.master, "master kick", player=str(first))
    assert res.ephemeral, res.text
    await t.settle()
    clan = h.channel_named(tr("channel.clan", "ru", number=1))
    told = tr("event.clan_turn_passed", "ru", passed=f"<@{first}>",
              actor=f"<@{second}>", **phase_words(0, "ru", NIGHT_FORMS))
    assert any(told in e.get("description", "") for m in h.messages_in(clan.id)
               for e in m.embeds)
    assert not any(told in e.get("description", "") for m in h.messages_in(t.channel)
                   for e in m.embeds)
    res = await t.do(t.member(second), "night", target=str(victim))
    assert res.ephemeral and [o.actor for o in (await t.state()).orders] == [second]
