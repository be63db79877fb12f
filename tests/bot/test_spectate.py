"""Issue 34, point 3, through the real command tree: /game spectate. The spectator's
exact viewers on every channel (overwrites), who is refused, and that he can never be
seated (join, standby, replace); refusals change nothing."""

from __future__ import annotations

from typing import Any

import discord
import pytest

from cogs.delivery.overwrites import POSTING
from core.game.roles import Role
from core.text.i18n import t as tr
from tests.bot.helpers import Table, open_table, start
from tests.harness import Harness

VIEW = discord.Permissions(view_channel=True).value
SEND = discord.Permissions(send_messages=True).value
HISTORY = discord.Permissions(read_message_history=True).value
ROLES = "mafioso x2; investigator; sergeant; bouncer"


def graveyard(h: Harness) -> Any:
    return h.channel_named(tr("channel.graveyard", "ru"))  # a Russian guild: a Russian game


def refused(res: Any, code: str, lang: str = "en") -> None:
    assert res.ephemeral and tr(f"error.{code}", lang) in res.text, res.text


def writer(ow: Any) -> bool:
    return bool(ow.allow & VIEW and ow.allow & HISTORY and ow.allow & SEND and not ow.deny)


def reader(ow: Any) -> bool:
    """Reads, and every posting permission the bot holds is denied."""
    denied = discord.Permissions(ow.deny)
    return bool(ow.allow & VIEW and ow.allow & HISTORY and not ow.allow & SEND
                and all(getattr(denied, name) for name in POSTING
                        if getattr(discord.Permissions, name, None) is not None
                        and name in ("send_messages", "add_reactions", "attach_files",
                                     "create_public_threads", "send_messages_in_threads")))


async def spectator(h: Harness, t: Table, name: str = "Watcher") -> Any:
    member = h.add_member(name, locale="en-US")
    res = await t.do(member, "game spectate")
    assert res.ephemeral and tr("spectate.done", "en", title="Palermo") in res.text, res.text
    await t.settle()
    return member


async def test_spectator_talks_with_the_dead_only_and_is_never_seated(h: Harness) -> None:
    t = await open_table(h, 8, roles=ROLES)
    watcher = await spectator(h, t)  # from the signup on: the graveyard opens for him
    guild, bot_id = h.default_guild, h.bot.user.id  # type: ignore[union-attr]
    grave = graveyard(h)
    assert set(grave.overwrites) == {guild.id, bot_id, watcher.id}
    assert grave.overwrites[guild.id].deny & VIEW and not grave.overwrites[guild.id].allow
    assert writer(grave.overwrites[watcher.id])
    for p in [*t.players, t.master]:
        assert not h.visible_channels(p).can_view(grave.id), p.name
    # the game channel, which the living read: he reads it and posts nothing there
    perms = h.permissions_in(watcher, t.channel)
    assert perms.view_channel and perms.read_message_history
    assert not perms.send_messages and not perms.send_messages_in_threads
    assert not perms.add_reactions and perms.use_application_commands
    assert all(h.permissions_in(p, t.channel).send_messages for p in t.players)

    # he can never be seated: not by joining while the signup is open
    before = (await t.state()).model_dump_json()
    refused(await t.do(watcher, "game join"), "spectator_cannot_play")
    assert (await t.state()).model_dump_json() == before

    await start(t)
    state = await t.state()
    clan = h.channel_named(tr("channel.clan", "ru", number=1))
    police = h.channel_named(tr("channel.police", "ru"))
    for channel in (clan, police):
        assert watcher.id not in channel.overwrites
        assert not h.visible_channels(watcher).can_view(channel.id)
    # no seat's place (the private threads) lets him in
    for thread, members in h.world.thread_members.items():
        assert watcher.id not in members, thread

    # a death: the dead player joins him in the graveyard, both write; no living reads it
    citizen = next(p for p in state.players if p.role is Role.BOUNCER)
    res = await t.do(t.master, "master kick", player=str(citizen.uid))
    assert res.ephemeral, res.text
    await t.settle()
    grave = graveyard(h)
    assert set(grave.overwrites) == {guild.id, bot_id, watcher.id, citizen.uid}
    assert writer(grave.overwrites[watcher.id]) and writer(grave.overwrites[citizen.uid])
    for p in (await t.state()).living():
        assert not h.visible_channels(t.member(p.uid)).can_view(grave.id)

    # nor by standing by, nor by the master's replacement; refusals change nothing
    before = (await t.state()).model_dump_json()
    refused(await t.do(watcher, "game standby"), "spectator_cannot_play")
    living = (await t.state()).living()[0]
    res = await t.do(t.master, "master replace", old=str(living.uid), new=watcher.id)
    refused(res, "spectator_cannot_play")
    assert (await t.state()).model_dump_json() == before


async def test_with_the_option_he_reads_the_team_channels_and_writes_in_none(
        h: Harness) -> None:
    t = await open_table(h, 8, roles=ROLES)
    res = await t.do(t.master, "game options", spectators_see_teams=True)
    assert res.ephemeral, res.text
    watcher = h.add_member("Watcher", locale="en-US")
    res = await t.do(watcher, "game spectate")
    assert tr("spectate.done_teams", "en", title="Palermo") in res.text, res.text
    await start(t)
    state = await t.state()
    guild, bot_id = h.default_guild, h.bot.user.id  # type: ignore[union-attr]
    clan = h.channel_named(tr("channel.clan", "ru", number=1))
    police = h.channel_named(tr("channel.police", "ru"))
    mafia = {p.uid for p in state.players if p.role is Role.MAFIOSO}
    cops = {p.uid for p in state.players if p.role is Role.INVESTIGATOR}
    assert set(clan.overwrites) == {guild.id, bot_id, watcher.id, *mafia}
    assert set(police.overwrites) == {guild.id, bot_id, watcher.id, *cops}
    for channel in (clan, police):
        assert reader(channel.overwrites[watcher.id])
        perms = h.permissions_in(watcher.id, channel.id)
        assert perms.view_channel and not perms.send_messages and not perms.add_reactions
    assert writer(graveyard(h).overwrites[watcher.id])
    for thread, members in h.world.thread_members.items():
        assert watcher.id not in members, thread


async def test_players_the_master_and_a_second_try_are_refused(h: Harness) -> None:
    t = await open_table(h, 8, roles=ROLES)
    before = (await t.state()).model_dump_json()
    refused(await t.do(t.master, "game spectate"), "master_cannot_spectate")
    refused(await t.do(t.players[0], "game spectate"), "player_cannot_spectate")
    assert (await t.state()).model_dump_json() == before
    watcher = await spectator(h, t)
    before = (await t.state()).model_dump_json()
    refused(await t.do(watcher, "game spectate"), "already_spectating")
    await start(t)
    state = await t.state()
    victim = next(p for p in state.players if p.role is Role.BOUNCER)
    assert (await t.do(t.master, "master kick", player=str(victim.uid))).ephemeral
    before = (await t.state()).model_dump_json()
    refused(await t.do(t.member(victim.uid), "game spectate"), "player_cannot_spectate")
    assert (await t.state()).model_dump_json() == before


@pytest.mark.parametrize("locale", ["en-US", "ru"])
async def test_a_spectators_help_says_he_spectates_where_and_who_sees_him(
        h: Harness, locale: str) -> None:
    """Issue 42 point 7: a spectator's /help is not an outsider's; it says he spectates,
    that he reads the game channel and writes in the graveyard alone, and who reads that
    (the option adds the team channels, read-only); ephemeral, his alone."""
    lang = "ru" if locale == "ru" else "en"
    t = await open_table(h, 8, roles=ROLES)
    watcher = h.add_member("Watcher", locale=locale)
    assert (await t.do(watcher, "game spectate")).ephemeral
    outsider = h.add_member("Zoe", locale=locale)
    for phase in ("signup", "day 0"):
        res = await t.do(watcher, "help")
        assert res.ephemeral and res.message is not None
        assert res.message.ephemeral_for == watcher.id
        assert tr("help.duty.spectating", lang) in res.text, (phase, res.text)
        assert tr("help.duty.spectator", lang) not in res.text
        assert tr("help.duty.signup_join", lang) not in res.text
        assert tr("help.duty.spectating_teams", lang) not in res.text
        other = (await t.do(outsider, "help")).text
        assert tr("help.duty.spectating", lang) not in other
        if phase == "signup":
            await start(t)


async def test_with_the_option_a_spectators_help_names_the_team_channels(h: Harness) -> None:
    t = await open_table(h, 8, roles=ROLES)
    assert (await t.do(t.master, "game options", spectators_see_teams=True)).ephemeral
    watcher = h.add_member("Watcher", locale="en-US")
    assert (await t.do(watcher, "game spectate")).ephemeral
    text = (await t.do(watcher, "help")).text
    assert tr("help.duty.spectating", "en") in text
    assert tr("help.duty.spectating_teams", "en") in text
