"""Lobby and UI extras: the live signup message, buttons, menus, autocomplete,
permission checks, several games in one guild."""

from __future__ import annotations

import discord

from core.i18n import t as tr
from core.rules.roles import Role
from core.state import PhaseKind
from tests.bot.helpers import confirmed, open_table
from tests.harness import Harness


async def test_signup_message_lists_players_as_they_join_and_leave(h: Harness) -> None:
    t = await open_table(h, 3)
    signup = h.messages_in(t.channel)[0]
    players_field = next(f for f in signup.embeds[0]["fields"] if "(3)" in f["name"])
    assert all(p.mention in players_field["value"] for p in t.players)
    res = await t.do(t.players[0], "game leave")
    assert res.ephemeral
    await t.settle()
    signup = h.messages_in(t.channel)[0]
    players_field = next(f for f in signup.embeds[0]["fields"] if "(2)" in f["name"])
    assert t.players[0].mention not in players_field["value"]
    # the Join button on the signup message works like /game join
    join_id = f"mafia:join:{t.game_id}"
    res = await h.click(t.players[0], signup, join_id)
    assert res.ephemeral
    assert len((await t.state()).players) == 3


async def test_show_my_role_button_and_vote_menu(h: Harness) -> None:
    t = await open_table(h, 7, roles="mafioso x2; investigator; bouncer")
    await t.do(t.master, "game start")
    await t.settle()
    opening = next(m for m in h.messages_in(t.channel)
                   if any(c.get("custom_id", "").startswith("mafia:role:")
                          for row in m.components for c in row["components"]))
    p = t.players[0]
    res = await h.click(p, opening, f"mafia:role:{t.game_id}")
    assert res.ephemeral
    role = (await t.state()).player(p.id).role  # type: ignore[union-attr]
    assert tr(f"role.{role}.name", "en") in res.text.lower()
    for q in t.players:
        await t.do(q, "checkin")
    await t.advance()
    state = await t.state()
    bouncer = (await t.holders(Role.BOUNCER))[0]
    acting = t.member(state.clans[0].acting)  # type: ignore[arg-type]
    await t.do(bouncer, "night", target=str(t.players[-1].id))
    await t.do(acting, "night", target=str(t.players[-1].id))
    await t.advance()
    assert (await t.phase()) == (PhaseKind.DAY, 1)
    # the day's announcement carries the menu (the live vote count follows it)
    day = h.find_component_message(f"mafia:vote:{t.game_id}:1")
    assert day in h.messages_in(t.channel)[-2:]
    target = next(q for q in t.players if q.id != p.id)
    res = await h.click(p, day, f"mafia:vote:{t.game_id}:1", values=[str(target.id)])
    assert confirmed(res) and res.embeds[0]["color"] == discord.Colour.red().value
    assert (await t.state()).vote_log[-1].target == target.id


async def test_autocomplete_offers_living_players(h: Harness) -> None:
    t = await open_table(h, 6)
    await t.do(t.master, "game start")
    await t.settle()
    res = await h.autocomplete(t.players[0], "vote", option="player", value="P",
                               channel=t.channel)
    offered = {int(c.value) for c in res.choices}
    assert offered == {p.id for p in t.players}
    await t.do(t.master, "master kick", player=str(t.players[1].id))
    res = await h.autocomplete(t.players[0], "vote", option="player", value="",
                               channel=t.channel)
    assert t.players[1].id not in {int(c.value) for c in res.choices}


async def test_missing_permissions_are_named_and_nothing_changes(h: Harness) -> None:
    t = await open_table(h, 6)
    h.set_bot_permissions(discord.Permissions(view_channel=True, send_messages=True,
                                              embed_links=True))
    before = (await t.state()).model_dump_json()
    res = await t.do(t.master, "game start")
    assert res.ephemeral
    assert tr("permission.manage_channels", "en") in res.text
    assert tr("permission.manage_roles", "en") in res.text
    assert (await t.state()).model_dump_json() == before


async def test_several_games_in_one_guild(h: Harness) -> None:
    t = await open_table(h, 6)
    other = h.add_text_channel("second-game")
    master2 = h.add_member("Master2")
    res = await h.slash(master2, "game create", title="Corleone", channel=other.id)
    assert res.ephemeral and res.text == tr("lobby.created", "en", title="Corleone")
    res = await h.slash(t.players[0], "game join", channel=other.id)
    assert res.ephemeral
    second = await h.bot.service.game_in_channel(other.id)  # type: ignore[attr-defined]
    first = await t.state()
    assert second is not None and second.title == "Corleone"
    assert [p.uid for p in (await h.bot.service.state(second.id)).players] == \
        [t.players[0].id]  # type: ignore[attr-defined]
    assert len(first.players) == 6
    res = await h.slash(master2, "game create", title="Again", channel=other.id)
    assert res.ephemeral and res.text == tr("error.channel_has_game", "en")


async def test_cancel_ends_without_result(h: Harness) -> None:
    t = await open_table(h, 6)
    res = await t.do(t.players[0], "game cancel")
    assert res.ephemeral and res.text == tr("error.not_master", "en")
    res = await t.do(t.master, "game cancel")
    assert res.ephemeral
    assert (await t.state()).phase is PhaseKind.CANCELLED
