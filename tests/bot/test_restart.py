"""Restarts: the bot stops and a NEW MafiaBot starts on the same database file, attached
to the same fake Discord (guilds, members, channels and the messages already posted).

The buttons and the menu posted before the restart keep working (they are persistent
DynamicItems registered in setup_hook, the game id in their custom_id), and the deadline
scheduler picks up the running games' deadlines: a pending one fires when it is reached,
one that passed while the bot was down fires at once.
"""

from __future__ import annotations

from datetime import timedelta

from bot import MafiaBot
from core.game.roles import Role
from core.game.state import PhaseKind
from core.sight.narrate import phase_words
from core.text.i18n import t as tr
from tests.bot.helpers import Lives, confirmed, day_one, rebind, wait_for


async def test_buttons_and_the_vote_menu_work_after_a_restart(lives: Lives) -> None:
    h = lives.h
    t = await day_one(h)  # the game in #general: role button and day-1 vote menu
    lobby_channel = h.add_text_channel("lobby").id
    master2 = h.add_member("Master2")
    res = await h.slash(master2, "game create", channel=lobby_channel, title="Second")
    assert res.ephemeral
    await h.bot.outbox.idle(within=20)  # type: ignore[attr-defined]
    lobby = await h.bot.service.game_in_channel(lobby_channel)  # type: ignore[attr-defined]
    assert lobby is not None
    newcomer = h.add_member("Newcomer", locale="ru")
    join_id = f"mafia:join:{lobby.id}"
    role_id = f"mafia:role:{t.game_id}"
    vote_id = f"mafia:vote:{t.game_id}:1"
    for custom_id in (join_id, role_id, vote_id):  # all three are on posted messages
        h.find_component_message(custom_id)

    h = await lives.restart()
    t = rebind(t, h)
    # the signup message's Join button
    res = await h.click(newcomer, join_id, locale="ru")
    assert res.ephemeral and res.text == tr("lobby.joined", "ru", title="Second", count=1)
    assert [p.uid for p in (await h.bot.service.state(lobby.id)).players  # type: ignore[attr-defined]
            ] == [newcomer.id]
    # 'Show my role' on the game-start message
    mafioso = (await t.holders(Role.MAFIOSO))[0]
    res = await h.click(mafioso, role_id)
    assert res.ephemeral and res.embeds
    assert res.embeds[0]["title"] == tr("card.title", "en", role=tr(
        "role.mafioso.name", "en"))
    # the day-1 vote menu
    voter, target = t.players[0], t.players[1]
    res = await h.click(voter, vote_id, values=[str(target.id)])
    assert confirmed(res)  # the vote (its public post goes through the outbox)
    state = await t.state()
    assert [(m.voter, m.target) for m in state.vote_log] == [(voter.id, target.id)]
    await h.bot.service.verify(t.game_id)  # type: ignore[attr-defined]


async def looked_again(bot: MafiaBot) -> None:
    """Wait until the scheduler has gone over its (virtual) clock once more from now: what
    was due then is firing (`busy`) or fired; what was not, is not (no sleeping)."""
    before = bot.scheduler.looked
    bot.scheduler.wake()
    await wait_for(lambda: bot.scheduler.looked > before, "the scheduler to look at its clock")


async def test_a_pending_deadline_is_resumed_after_a_restart(lives: Lives) -> None:
    h = lives.h
    t = await day_one(h)
    deadline = (await t.state()).deadline
    assert deadline is not None
    h = await lives.restart(clock=lambda: deadline - timedelta(seconds=1))  # a virtual clock
    t = rebind(t, h)
    bot: MafiaBot = h.bot  # type: ignore[assignment]
    assert bot.scheduler.deadlines == {t.game_id: deadline}
    await looked_again(bot)  # a second before the deadline: nothing fires
    assert bot.scheduler.fired == 0 and not bot.scheduler.busy
    assert await t.phase() == (PhaseKind.DAY, 1)
    bot.scheduler.set_clock(lambda: deadline + timedelta(seconds=1))
    await wait_for(lambda: bot.scheduler.fired == 1, "the resumed deadline to fire")
    assert await t.phase() == (PhaseKind.NIGHT, 1)
    await t.settle()
    night = tr("event.phase_started.night", "ru", **phase_words(1, "ru"), deadline="")[:10]
    assert any(night in e.get("description", "") for m in h.messages_in(t.channel)
               for e in m.embeds)


async def test_an_overdue_deadline_fires_at_once_after_a_restart(lives: Lives) -> None:
    h = lives.h
    t = await day_one(h)
    deadline = (await t.state()).deadline
    assert deadline is not None
    # the bot was down for two hours past the deadline
    h = await lives.restart(clock=lambda: deadline + timedelta(hours=2))
    t = rebind(t, h)
    bot: MafiaBot = h.bot  # type: ignore[assignment]
    await wait_for(lambda: bot.scheduler.fired == 1, "the overdue deadline to fire")
    state = await t.state()
    assert (state.phase, state.number) == (PhaseKind.NIGHT, 1)
    assert state.deadline == deadline + timedelta(hours=2, minutes=state.options.night_minutes)
    assert state.days[-1].number == 1  # day 1 was closed exactly once
    await looked_again(bot)
    assert bot.scheduler.fired == 1 and not bot.scheduler.busy  # the night's is not due yet
    await bot.service.verify(t.game_id)
