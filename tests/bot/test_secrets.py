"""Issue 16, secret leaks and input abuse, through the real command tree and fake Discord.

Each test is one hole the outside attack found; each fails on the code before the fix.
"""

from __future__ import annotations

import re
from typing import Any

import discord
import pytest
from tortoise.connection import get_connection

from cogs.delivery.overwrites import POSTING
from core.game.roles import Role
from core.text.i18n import t
from tests.bot.helpers import Table, checkin_all, open_table, start
from tests.harness import Harness

ROLES = "mafioso x2; investigator; sergeant; bouncer; killer"
MENTION = re.compile(r"<@!?\d+>")


def masked(text: str) -> str:
    """A reply up to names."""
    return MENTION.sub("<@…>", text)


async def rows() -> dict[str, list[dict[str, Any]]]:
    conn = get_connection("default")
    names = [r["name"] for r in await conn.execute_query_dict(
        "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    return {n: await conn.execute_query_dict(f'SELECT * FROM "{n}" ORDER BY rowid')
            for n in names}


# --- 1. /cast is no role oracle ----------------------------------------------------------
async def test_cast_doubling_answers_alike_for_a_citizen_and_a_role_player(h: Harness) -> None:
    """Before: "<@X> has no night move to double." for a citizen, "Not enough lira" for a
    role player. Now the same answer, whoever the target is."""
    table = await open_table(h, 8, roles=ROLES, currency=True, shop=True)
    await start(table)
    citizens = await table.holders(Role.CITIZEN)
    caster, citizen = citizens[0], citizens[1]
    killer = (await table.holders(Role.KILLER))[0]
    replies = []
    for target in (citizen, killer):
        res = await table.do(caster, "cast", spell="doubling", target=str(target.id))
        assert res.ephemeral
        replies.append(masked(res.text))
    assert replies[0] == replies[1], replies


# --- 4. a player is never the master -------------------------------------------------------
async def test_a_player_with_manage_server_gets_no_master_tools(h: Harness) -> None:
    table = await open_table(h, 8, roles=ROLES)
    mod = h.add_role("Moderators", permissions=discord.Permissions(manage_guild=True))
    player = table.players[0]
    h.give_role(player, mod)
    await start(table)
    expected = t("error.player_cannot_master", "en")
    for command in ("master log", "master prod", "master advance"):
        res = await table.do(player, command)
        assert res.ephemeral and res.text == expected, (command, res.text)
    assert not res.messages or all(not m.files for m in res.messages)
    # a moderator who does not play keeps the stand-in host's tools
    outsider = h.add_member("Moderator")
    h.give_role(outsider, mod)
    res = await table.do(outsider, "master prod")
    assert res.ephemeral and res.text != t("error.not_master", "en"), res.text


async def test_the_master_cannot_join_his_game(h: Harness) -> None:
    table = await open_table(h, 6)
    res = await table.do(table.master, "game join")
    assert res.ephemeral and res.text == t("error.master_cannot_play", "en")


# --- 5. the dead post nothing in their team channel ------------------------------------------
async def test_a_dead_mafiosos_overwrite_denies_every_way_of_posting(h: Harness) -> None:
    table = await open_table(h, 8, roles=ROLES)
    await start(table)
    dead, alive = await table.holders(Role.MAFIOSO)
    res = await table.do(table.master, "master kick", player=str(dead.id))
    assert res.ephemeral, res.text
    await table.settle()
    info = await table.bot.service.info(table.game_id)
    channel = h.channel(info.private_channels["clan:1"])
    overwrite = channel.overwrites[dead.id]
    denied = discord.Permissions(overwrite.deny)
    allowed = discord.Permissions(overwrite.allow)
    held = h.guild().me.guild_permissions  # Discord lets a bot deny only what it holds
    for name in POSTING:
        assert getattr(denied, name) == getattr(held, name), name
    for name in ("send_messages", "send_messages_in_threads", "create_public_threads",
                 "create_private_threads", "add_reactions"):  # held whenever a game starts
        assert getattr(denied, name), name
    assert allowed.view_channel and allowed.read_message_history
    effective = h.permissions_in(dead, channel.id)
    assert effective.view_channel and effective.read_message_history
    for name in ("send_messages", "send_messages_in_threads", "create_public_threads",
                 "create_private_threads", "add_reactions", "attach_files",
                 "use_application_commands", "send_polls"):
        assert not getattr(effective, name), name
    assert h.permissions_in(alive, channel.id).send_messages


# --- 6. /game create only in ordinary channels no game owns -----------------------------------
async def test_no_game_is_created_in_a_private_channel_or_a_thread(h: Harness) -> None:
    table = await open_table(h, 8, roles=ROLES)
    await start(table)
    mafioso = (await table.holders(Role.MAFIOSO))[0]
    info = await table.bot.service.info(table.game_id)
    before = await rows()
    res = await h.slash(mafioso, "game create", channel=info.private_channels["clan:1"],
                        title="Inside")
    assert res.ephemeral and res.text == t("error.create_here_game_channel", "en"), res.text
    thread = h.world.add_thread(table.channel, "side talk", private=False,
                                owner_id=table.players[0].id)
    h.world.emit("THREAD_CREATE", h.world.channel_payload(thread.id) | {"newly_created": True})
    await h.settle()
    res = await h.slash(table.players[0], "game create", channel=thread.id, title="Thread")
    assert res.ephemeral and res.text == t("error.create_here_not_text", "en"), res.text
    assert await rows() == before


# --- 7. bots are never seated ---------------------------------------------------------------
async def test_master_replace_refuses_a_bot(h: Harness) -> None:
    table = await open_table(h, 8, roles=ROLES)
    await start(table)
    robot = h.add_member(h.add_user("Robot", bot=True))
    before = await rows()
    res = await table.do(table.master, "master replace", old=str(table.players[0].id),
                         new=robot)
    assert res.ephemeral and res.text == t("error.bot_cannot_play", "en"), res.text
    assert await rows() == before


# --- 8. look-alike names get a suffix ---------------------------------------------------------
async def test_look_alike_names_are_told_apart_in_the_vote_menu_and_autocomplete(
        h: Harness) -> None:
    master = h.add_member("Master")
    anna = h.add_member("anna")
    fake = h.add_member(h.add_user("impostor"), nick="Anna\u200b")
    others = [h.add_member(f"P{i}") for i in range(6)]
    table = Table(h, master, [anna, fake, *others], channel=h.default_guild.general_id)
    assert (await table.do(master, "game create", title="Twins")).ephemeral
    table.game_id = (await table.bot.service.game_in_channel(table.channel)).id  # type: ignore[union-attr]
    for p in table.players:
        assert (await table.do(p, "game join")).ephemeral
    await start(table)
    await checkin_all(table)
    await table.advance()  # night 0
    await table.advance()  # day 1: the announcement carries the vote menu
    menus = [c for m in h.messages_in(table.channel) for row in m.components
             for c in row.get("components", []) if c.get("custom_id", "").startswith("mafia:vote")]
    assert menus, "no vote menu"
    labels = {int(o["value"]): o["label"] for o in menus[-1]["options"]}
    assert labels[anna.id] != labels[fake.id], labels
    assert "@impostor" in labels[fake.id] and "@anna" in labels[anna.id], labels
    res = await h.autocomplete(others[0], "vote", option="player", value="",
                               channel=table.channel)
    names = {int(c.value): c.name for c in res.choices}
    assert names[anna.id] != names[fake.id] and "@impostor" in names[fake.id], names


# --- 9. open games per member ------------------------------------------------------------------
async def test_one_member_cannot_open_more_games_than_the_limit(h: Harness) -> None:
    member = h.add_member("Host")
    limit = h.bot.settings.max_games_per_member  # type: ignore[attr-defined]
    for i in range(limit):
        channel = h.add_text_channel(f"table-{i}")
        res = await h.slash(member, "game create", channel=channel.id, title=f"G{i}")
        assert res.ephemeral and res.text == t("lobby.created", "en", title=f"G{i}"), res.text
    await h.bot.outbox.idle(within=20)  # type: ignore[attr-defined]
    before = await rows()  # the boards posted
    channel = h.add_text_channel("one-too-many")
    res = await h.slash(member, "game create", channel=channel.id, title="Again")
    assert res.ephemeral and res.text == t("error.too_many_games_member", "en", limit=limit)
    assert await rows() == before


# --- 10. blank text -------------------------------------------------------------------------
@pytest.mark.parametrize("title", ["   ", "\u200b\u200b", "\u3164"])
async def test_a_blank_title_is_refused(h: Harness, title: str) -> None:
    member = h.add_member("Host")
    before = await rows()
    res = await h.slash(member, "game create", channel=h.default_guild.general_id, title=title)
    assert res.ephemeral and res.text == t("error.blank_text", "en"), res.text
    assert await rows() == before


async def test_a_blank_anonymous_post_is_refused(h: Harness) -> None:
    table = await open_table(h, 8, roles=ROLES, crypto=True)
    await start(table)
    before = await rows()
    res = await table.do(table.players[0], "anon", text="\u200b \u200b")
    assert res.ephemeral and res.text == t("error.blank_text", "en"), res.text
    assert await rows() == before


# --- 9. the vote cooldown -------------------------------------------------------------------
async def test_a_fourth_vote_change_within_a_minute_waits(h: Harness) -> None:
    table = await open_table(h, 8, roles=ROLES)
    await start(table)
    await checkin_all(table)
    await table.advance()  # night 0
    await table.advance()  # day 1
    voter, *others = await table.living()
    refused = t("error.vote_cooldown", "en", seconds=r"\d+").replace(".", r"\.")
    for target in others[:3]:
        res = await table.do(voter, "vote", player=str(target.id))
        assert not re.fullmatch(refused, res.text), res.text
    await table.settle()
    posts = len(h.messages_in(table.channel))
    res = await table.do(voter, "vote", player=str(others[3].id))
    assert res.ephemeral and re.fullmatch(refused, res.text), res.text
    await table.settle()
    assert len(h.messages_in(table.channel)) == posts  # nothing posted, nothing counted
    state = await table.state()
    assert [m.target for m in state.vote_log if m.voter == voter.id][-1] == others[2].id
