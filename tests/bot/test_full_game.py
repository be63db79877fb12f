"""A complete game through the real command tree, from /game create to game over."""

from __future__ import annotations

import discord

from core.game.roles import Role
from core.game.state import PhaseKind
from core.text.i18n import t as tr
from tests.bot.helpers import Table, confirmed, open_table
from tests.harness import Harness

ROLES = "mafioso x2; investigator; sergeant; bouncer"
VIEW = discord.Permissions(view_channel=True).value
SEND = discord.Permissions(send_messages=True).value


async def play_to_the_end(t: Table) -> None:
    """Citizens hang mafiosi by day; the mafia kills citizens by night."""
    for _ in range(40):
        state = await t.state()
        if state.over:
            return
        if state.phase is PhaseKind.DAY and state.number == 0:
            for p in await t.living():
                res = await t.do(p, "checkin")
                assert confirmed(res), res.text
        elif state.phase is PhaseKind.DAY:
            mafia = await t.holders(Role.MAFIOSO)
            target = mafia[0] if mafia else (await t.living())[0]
            for p in await t.living():
                if p.id == target.id:
                    continue
                res = await t.do(p, "vote", player=str(target.id))
                assert confirmed(res) and res.embeds[0]["color"] == discord.Colour.red().value
            res = await t.do(target, "vote", player=str((await t.living())[-1].id))
        else:
            await night_moves(t)
        await t.advance()
    raise AssertionError("the game did not end")


async def night_moves(t: Table) -> None:
    state = await t.state()
    for p in state.living():
        if p.role is Role.MAFIOSO and state.clans[0].acting == p.uid:
            victims = [q for q in state.living() if q.clan is None]
            res = await t.do(t.member(p.uid), "night", target=str(victims[-1].uid))
            assert res.ephemeral, res.text
        elif p.role is Role.BOUNCER:
            res = await t.do(t.member(p.uid), "night", target=str(p.uid))
            assert res.ephemeral, res.text
        elif p.role is Role.INVESTIGATOR and state.number >= 1:
            others = [q for q in state.living() if q.uid != p.uid]
            res = await t.do(t.member(p.uid), "night", target=str(others[0].uid))
            assert res.ephemeral, res.text


async def test_a_whole_game(h: Harness) -> None:
    t = await open_table(h, roles=ROLES)
    signup = h.messages_in(t.channel)[0]
    assert len(signup.embeds[0]["fields"]) >= 5
    res = await t.do(t.master, "game start")
    assert res.ephemeral
    await t.settle()
    state = await t.state()
    assert state.phase is PhaseKind.DAY and state.number == 0

    # every card is ephemeral and names the player's own role only
    for p in t.players:
        res = await t.do(p, "role")
        assert res.ephemeral
        mine = state.player(p.id)
        assert mine is not None and mine.role is not None

    # private channels: exactly the members, the bot keeps access, @everyone denied
    guild = h.default_guild
    clan = h.channel_named(tr("channel.clan", "ru", number=1))  # a Russian guild
    police = h.channel_named(tr("channel.police", "ru"))
    mafia = {p.uid for p in state.players if p.role is Role.MAFIOSO}
    # the sergeant does not know the investigator: the police channel is not his
    cops = {p.uid for p in state.players if p.role in (Role.INVESTIGATOR, Role.OPERATIVE)}
    for channel, members in ((clan, mafia), (police, cops)):
        assert channel.overwrites[guild.id].deny & VIEW
        for p in [*t.players, t.master]:
            view = h.visible_channels(p)
            assert view.can_view(channel.id) == (p.id in members), (channel.name, p.name)
        bot_perms = h.permissions_in(h.bot.user.id, channel.id)  # type: ignore[union-attr]
        assert bot_perms.view_channel and bot_perms.send_messages

    await play_to_the_end(t)
    await t.settle()
    state = await t.state()
    assert state.over and (state.winners or state.draw)
    texts = " ".join(e.get("description", "") for m in h.messages_in(t.channel)
                     for e in m.embeds)
    assert tr("event.game_over.head", "ru", winners="")[:12] in texts
    # archived: members keep reading, nobody writes
    for p in t.players:
        if p.id in mafia:
            assert h.visible_channels(p).can_view(clan.id)
            assert not h.permissions_in(p.id, clan.id).send_messages
