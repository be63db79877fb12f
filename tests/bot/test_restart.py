"""Restarts: the bot stops and a NEW MafiaBot starts on the same database file, attached
to the same fake Discord (guilds, members, channels and the messages already posted).

The buttons and the menu posted before the restart keep working (they are persistent
DynamicItems registered in setup_hook, the game id in their custom_id), and the deadline
scheduler picks up the running games' deadlines: a pending one fires when it is reached,
one that passed while the bot was down fires at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

from bot import MafiaBot
from core.i18n import t as tr
from core.rules.roles import Role
from core.settings import Settings
from core.state import PhaseKind
from tests.bot.conftest import EVERYTHING
from tests.bot.helpers import Table, confirmed, open_table
from tests.harness import Harness
from tests.harness.payloads import PayloadBuilder
from tests.harness.routes import RestApi

ROLES = "mafioso x2; investigator; sergeant; bouncer"


def new_bot(tmp_path: Path) -> MafiaBot:
    settings = Settings(discord_token="x", database_url=f"sqlite://{tmp_path / 'bot.db'}")
    return MafiaBot(settings, state_dir=tmp_path)


async def first_life(tmp_path: Path) -> Harness:
    h = Harness(new_bot(tmp_path))
    await h.start()
    h.add_guild("Mafia Club", locale="ru")
    h.set_bot_permissions(EVERYTHING)
    return h


async def restart(old: Harness, tmp_path: Path,
                  clock: Callable[[], datetime] | None = None) -> Harness:
    """Close the old bot, start a new one on the same database and the same fake world.

    `clock`, if given, is the new scheduler's clock from its very start (a bot that comes
    back after a deadline passed)."""
    await old.close()
    bot = new_bot(tmp_path)
    if clock is not None:
        bot.scheduler._now = clock  # type: ignore[method-assign]
    h = Harness(bot)
    h.world = old.world  # re-attach: the same guilds, members, channels and messages
    h.fake.limits = old.world.ratelimits  # and the same rate-limit windows and clock
    h.api = RestApi(h.world)
    h.api.install(h.fake)
    h.payloads = PayloadBuilder(h.world, bot)
    h._default_guild = old._default_guild
    await h.start()
    for gid in h.world.guilds:  # the gateway sends every guild again after READY
        h.world.emit("GUILD_CREATE", h.world.guild_payload(gid, gateway=True))
    await h.settle()
    return h


def rebind(t: Table, h: Harness) -> Table:
    return Table(h, t.master, t.players, channel=t.channel, game_id=t.game_id)


async def day_one(h: Harness) -> Table:
    t = await open_table(h, 8, roles=ROLES)
    assert (await t.do(t.master, "game start")).ephemeral
    await t.settle()
    for p in t.players:
        assert confirmed(await t.do(p, "checkin"))
    await t.advance()
    state = await t.state()
    citizen = (await t.holders(Role.CITIZEN))[0]
    assert (await t.do(t.member(state.clans[0].acting), "night",  # type: ignore[arg-type]
                       target=str(citizen.id))).ephemeral
    for bouncer in await t.holders(Role.BOUNCER):
        assert (await t.do(bouncer, "night", target=str(citizen.id))).ephemeral
    await t.advance()
    assert await t.phase() == (PhaseKind.DAY, 1)
    return t


async def test_buttons_and_the_vote_menu_work_after_a_restart(tmp_path: Path) -> None:
    h = await first_life(tmp_path)
    try:
        t = await day_one(h)  # the game in #general: role button and day-1 vote menu
        lobby_channel = h.add_text_channel("lobby").id
        master2 = h.add_member("Master2")
        res = await h.slash(master2, "game create", channel=lobby_channel, title="Second")
        assert not res.ephemeral
        lobby = await h.bot.service.game_in_channel(lobby_channel)  # type: ignore[attr-defined]
        assert lobby is not None
        newcomer = h.add_member("Newcomer", locale="ru")
        join_id = f"mafia:join:{lobby.id}"
        role_id = f"mafia:role:{t.game_id}"
        vote_id = f"mafia:vote:{t.game_id}:1"
        for custom_id in (join_id, role_id, vote_id):  # all three are on posted messages
            h.find_component_message(custom_id)
    except BaseException:
        await h.close()
        raise

    h = await restart(h, tmp_path)
    try:
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
    finally:
        await h.close()


async def wait_for(check: Callable[[], bool], what: str) -> None:
    for _ in range(500):
        if check():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"timed out waiting for: {what}")


async def test_a_pending_deadline_is_resumed_after_a_restart(tmp_path: Path) -> None:
    h = await first_life(tmp_path)
    try:
        t = await day_one(h)
        deadline = (await t.state()).deadline
        assert deadline is not None
    except BaseException:
        await h.close()
        raise
    h = await restart(h, tmp_path)
    try:
        t = rebind(t, h)
        bot: MafiaBot = h.bot  # type: ignore[assignment]
        assert bot.scheduler.deadlines == {t.game_id: deadline}
        await asyncio.sleep(0.05)
        assert bot.scheduler.fired == 0 and await t.phase() == (PhaseKind.DAY, 1)
        bot.scheduler._now = lambda: deadline + timedelta(seconds=1)  # type: ignore[method-assign]
        bot.scheduler.wake()
        await wait_for(lambda: bot.scheduler.fired == 1, "the resumed deadline to fire")
        assert await t.phase() == (PhaseKind.NIGHT, 1)
        await t.settle()
        night = tr("event.phase_started.night", "ru", number=1, deadline="")[:10]
        assert any(night in e.get("description", "") for m in h.messages_in(t.channel)
                   for e in m.embeds)
    finally:
        await h.close()


async def test_an_overdue_deadline_fires_at_once_after_a_restart(tmp_path: Path) -> None:
    h = await first_life(tmp_path)
    try:
        t = await day_one(h)
        deadline = (await t.state()).deadline
        assert deadline is not None
    except BaseException:
        await h.close()
        raise
    # the bot was down for two hours past the deadline
    h = await restart(h, tmp_path, clock=lambda: deadline + timedelta(hours=2))
    try:
        t = rebind(t, h)
        bot: MafiaBot = h.bot  # type: ignore[assignment]
        await wait_for(lambda: bot.scheduler.fired == 1, "the overdue deadline to fire")
        state = await t.state()
        assert (state.phase, state.number) == (PhaseKind.NIGHT, 1)
        assert state.deadline == deadline + timedelta(hours=2, minutes=state.options.night_minutes)
        assert state.days[-1].number == 1  # day 1 was closed exactly once
        await asyncio.sleep(0.05)
        assert bot.scheduler.fired == 1  # and the new night's deadline is not due yet
        await bot.service.verify(t.game_id)
    finally:
        await h.close()
