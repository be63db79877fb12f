"""Issue 28 (N1, N2): who may take a seat, through the real command tree and fake Discord.

N1: Discord shows every private thread of a channel to whoever holds Manage Threads
there (and everything to an Administrator), so such a player would read every seat's
place. N2: a stand-in host (Manage Server) who read /master log must never be seated.
Each test failed on the code before the fix.
"""

from __future__ import annotations

import discord

from core.game.roles import Role
from core.game.state import PhaseKind
from core.text.i18n import t as tr
from tests.bot.helpers import ROLES, Table, confirmed, open_table, posted, start
from tests.harness import Harness

THREADS = discord.Permissions(manage_threads=True)
SERVER = discord.Permissions(manage_guild=True)


async def seated(t: Table) -> set[int]:
    return {p.uid for p in (await t.state()).players}


# --- N1: Manage Threads reads every place ------------------------------------------------
async def test_a_member_who_sees_every_thread_is_refused_a_seat(h: Harness) -> None:
    """A member whose role grants only Manage Threads asks to join: refused, in words
    about her own rights, and nothing changes (she would have read every card)."""
    t = await open_table(h, 6)
    mod = h.add_role("Thread keepers", permissions=THREADS)
    keeper = h.add_member("Keeper", locale="en-US")
    h.give_role(keeper, mod)
    before = await t.state()
    res = await t.do(keeper, "game join")
    assert res.ephemeral and res.text == t_("error.sees_places"), res.text
    after = await t.state()
    assert after.players == before.players and after.seq == before.seq
    # a channel overwrite that takes the right away in the game channel lets her in
    h.set_overwrite(t.channel, keeper, (0, THREADS.value))
    res = await t.do(keeper, "game join")
    assert res.ephemeral and res.text != t_("error.sees_places"), res.text
    assert keeper.id in await seated(t)


def t_(key: str, **values: object) -> str:
    return tr(key, "en", **values)


async def test_start_names_who_can_read_the_places_and_waits_for_the_master(
        h: Harness) -> None:
    """A player is given Manage Threads after joining: /game start tells the master (only
    him) who can read what and deals nothing; "Start anyway" deals, and the table is told
    publicly who can read every place before the first card."""
    t = await open_table(h, 8, roles=ROLES)
    mod = h.add_role("Thread keepers", permissions=THREADS)
    keeper = t.players[2]
    h.give_role(keeper, mod)
    res = await t.do(t.master, "game start")
    assert res.ephemeral
    assert t_("secrets.sight.threads", uid=keeper.mention) in res.text
    assert t_("secrets.sight.head") in res.text
    assert res.message is not None and res.message.ephemeral_for == t.master.id
    assert (await t.state()).phase is PhaseKind.SIGNUP
    # a player cannot press it: the engine refuses the start to anyone but the master
    button = res.custom_ids[0]
    pressed = await h.click(t.master, res, button)
    assert pressed.ephemeral and pressed.text == tr("lobby.started", "en"), pressed.text
    await t.settle()
    state = await t.state()
    assert state.phase is PhaseKind.DAY and state.sight == {keeper.id: "threads"}
    public = [m.text for m in posted(h, t.channel)]
    told = tr("event.sight_threads", "ru", uid=keeper.mention)
    assert any(told in text for text in public), public


async def test_a_start_without_anybody_seeing_needs_no_confirmation(h: Harness) -> None:
    t = await open_table(h, 8, roles=ROLES)
    await start(t)
    assert (await t.state()).sight == {}


async def test_a_right_given_during_the_game_is_told_to_the_table(h: Harness) -> None:
    """GUILD_MEMBER_UPDATE is not seen (no privileged intent): the player's next command
    shows his new right, and the table is told before the command is applied."""
    t = await open_table(h, 8, roles=ROLES)
    await start(t)
    player = t.players[4]
    admins = h.add_role("Admins", permissions=discord.Permissions(administrator=True))
    h.give_role(player, admins)
    res = await t.do(player, "checkin")
    assert confirmed(res)  # the check-in (public, or to him alone behind the news)
    await t.settle()
    assert (await t.state()).sight == {player.id: "all"}
    told = tr("event.sight_all", "ru", uid=player.mention)
    assert sum(told in m.text for m in posted(h, t.channel)) == 1
    assert (await t.do(player, "away")).ephemeral  # said once, not at every command
    await t.settle()
    assert sum(told in m.text for m in posted(h, t.channel)) == 1


async def test_replace_and_standby_refuse_a_member_who_sees_every_thread(h: Harness) -> None:
    t = await open_table(h, 8, roles=ROLES)
    await start(t)
    mod = h.add_role("Thread keepers", permissions=THREADS)
    keeper = h.add_member("Keeper", locale="en-US")
    h.give_role(keeper, mod)
    res = await t.do(keeper, "game standby")
    assert res.ephemeral and res.text == t_("error.sees_places"), res.text
    old = (await t.holders(Role.CITIZEN))[0]
    before = await t.state()
    res = await t.do(t.master, "master replace", old=str(old.id), new=str(keeper.id))
    assert res.ephemeral and res.text == t_("error.sees_places_sit", target=keeper.mention)
    assert (await t.state()).players == before.players


# --- N2: a stand-in host never plays ----------------------------------------------------------
async def test_a_stand_in_host_who_read_the_log_is_never_seated(h: Harness) -> None:
    """The attack: a non-playing member with Manage Server reads /master log (every role),
    asks to stand by and is seated by /master replace. Refused at every step, even after
    the right is taken from her: she has read the log."""
    t = await open_table(h, 8, roles=ROLES)
    await start(t)
    server = h.add_role("Moderators", permissions=SERVER)
    mod = h.add_member("Moderator", locale="en-US")
    h.give_role(mod, server)
    res = await t.do(mod, "master log")
    assert res.ephemeral and res.embeds, res.text
    res = await t.do(mod, "game standby")
    assert res.ephemeral and res.text == t_("error.host_cannot_play"), res.text
    h.take_role(mod, server)
    res = await t.do(mod, "game standby")
    assert res.ephemeral and res.text == t_("error.host_cannot_play"), res.text
    assert (await t.state()).standby == []
    old = (await t.holders(Role.CITIZEN))[0]
    before = await t.state()
    res = await t.do(t.master, "master replace", old=str(old.id), new=str(mod.id))
    assert res.ephemeral and res.text == t_("error.host_cannot_sit", target=mod.mention)
    assert (await t.state()).players == before.players


async def test_a_member_who_could_host_cannot_join(h: Harness) -> None:
    t = await open_table(h, 6)
    server = h.add_role("Moderators", permissions=SERVER)
    mod = h.add_member("Moderator", locale="en-US")
    h.give_role(mod, server)
    res = await t.do(mod, "game join")
    assert res.ephemeral and res.text == t_("error.host_cannot_play"), res.text
    assert mod.id not in await seated(t)
    # nor with the signup message's button
    res = await h.click(mod, f"mafia:join:{t.game_id}")
    assert res.ephemeral and res.text == t_("error.host_cannot_play"), res.text
    assert mod.id not in await seated(t)


# --- the dead are silent in the game channel ---------------------------------------------------
async def test_the_dead_are_silent_in_the_game_channel_until_the_end(h: Harness) -> None:
    """A kicked (or killed) player can no longer post in the game channel nor in its
    threads (his place included), but keeps reading and using commands (a ghost's vote is
    /vote); an overwrite an admin set him there is kept; the end gives his voice back."""
    t = await open_table(h, 8, roles=ROLES)
    await start(t)
    state = await t.state()
    victim = t.member(next(p.uid for p in state.players if p.role is Role.CITIZEN))
    h.set_overwrite(t.channel, victim, (0, THREADS.value))  # an admin's, kept throughout
    assert h.permissions_in(victim, t.channel).send_messages
    assert (await t.do(t.master, "master kick", player=str(victim.id))).ephemeral
    await t.settle()
    perms = h.permissions_in(victim, t.channel)
    assert perms.view_channel and perms.read_message_history
    assert not perms.send_messages and not perms.send_messages_in_threads
    assert not perms.add_reactions and not perms.create_public_threads
    assert perms.use_application_commands and not perms.manage_threads
    place = (await t.bot.service.info(t.game_id)).private_channels
    thread = next(v for k, v in place.items() if k.startswith("place:")
                  and h.world.thread_members.get(v, set()) >= {victim.id})
    assert not h.permissions_in(victim, thread).send_messages
    living = [p for p in t.players if p.id != victim.id]
    assert all(h.permissions_in(p, t.channel).send_messages for p in living)
    assert (await t.do(t.master, "game cancel")).ephemeral
    await t.settle()
    perms = h.permissions_in(victim, t.channel)
    assert perms.send_messages and not perms.manage_threads  # the admin's deny stays


async def test_the_master_may_let_the_dead_speak(h: Harness) -> None:
    t = await open_table(h, 8, roles=ROLES)
    assert (await t.do(t.master, "game options", dead_public=True)).ephemeral
    await start(t)
    victim = (await t.holders(Role.CITIZEN))[0]
    assert (await t.do(t.master, "master kick", player=str(victim.id))).ephemeral
    await t.settle()
    assert h.permissions_in(victim, t.channel).send_messages
    assert not h.requests_to("PUT /channels/{channel_id}/permissions/{target}",
                             channel_id=t.channel, target=victim.id)
