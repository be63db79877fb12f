"""Lobby and UI extras: the live signup message (posted by the outbox, across a crash),
buttons, menus, autocomplete, permission checks, several games in one guild."""

from __future__ import annotations

import asyncio
from typing import Any

import discord

from cogs.ui.lobby import SIGNUP_POST
from core.game.roles import Role
from core.game.state import PhaseKind
from core.storage.models import DELIVERED, PENDING, Outbox
from core.storage.outbox import RetryAfter
from core.text.i18n import t as tr
from tests.bot.helpers import Lives, confirmed, open_table, posted, wait_for
from tests.bot.test_delivery import freeze, frozen_after
from tests.harness import Harness, MessageRecord


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


# --- the board is the outbox's: ordered, crash-safe, posted once --------------------------
def boards(h: Harness, channel: int) -> list[MessageRecord]:
    """The signup boards in a channel (the messages carrying a Join button)."""
    return [m for m in posted(h, channel)
            if any(c.startswith("mafia:join:") for c in m.custom_ids)]


async def until(check: Any, what: str) -> None:
    """Wait for an async condition (the outbox works in the background)."""
    for _ in range(500):
        if await check():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"timed out waiting for: {what}")


async def test_a_join_due_before_the_board_waits_for_it(h: Harness) -> None:
    """The board waits in the announcements' lane (Discord asked to wait); a join's edit,
    due meanwhile in the cosmetic lane, waits for the board instead of being dropped."""
    master, player, late = h.add_member("Master"), h.add_member("P1"), h.add_member("P2")
    channel = h.default_guild.general_id
    bot: Any = h.bot
    real = bot.delivery.post_signup
    release = asyncio.Event()

    async def held(info: Any, entry: Any) -> None:
        if not release.is_set():
            raise RetryAfter(0.2)
        await real(info, entry)

    bot.delivery.post_signup = held
    res = await h.slash(master, "game create", channel=channel, title="Palermo")
    assert res.ephemeral and res.text == tr("lobby.created", "en", title="Palermo")
    game = await bot.service.game_in_channel(channel)
    assert (await h.slash(player, "game join", channel=channel)).ephemeral

    async def edit_tried() -> bool:
        rows = await Outbox.filter(game_id=game.id, kind="event")
        return any((r.last_error or r.status == DELIVERED) and '"joined"' in r.payload
                   for r in rows)

    await until(edit_tried, "the join's edit to be tried")
    edit = next(r for r in await Outbox.filter(game_id=game.id, kind="event")
                if '"joined"' in r.payload)
    assert edit.status == PENDING and not boards(h, channel)  # waiting, not dropped
    release.set()

    async def delivered() -> bool:
        return {r.status for r in await Outbox.filter(game_id=game.id)} == {DELIVERED}

    await until(delivered, "the board and the edit to go out")
    [board] = boards(h, channel)
    assert (await bot.service.info(game.id)).signup_message_id == board.id
    assert player.mention in board.text
    # later joins edit the same board; its Join button works like /game join
    res = await h.click(late, board, f"mafia:join:{game.id}")
    assert res.ephemeral and res.text == tr("lobby.joined", "en", title="Palermo", count=2)
    await bot.outbox.idle(within=20)
    [board] = boards(h, channel)
    assert player.mention in board.text and late.mention in board.text


async def test_a_board_committed_just_before_a_crash_is_posted_after_the_restart(
        lives: Lives) -> None:
    h = lives.h
    channel = h.default_guild.general_id
    master = h.add_member("Master", locale="ru")
    bot: Any = h.bot
    await bot.outbox.stop()  # the process dies before the outbox gets to it
    hit: list[Any] = []
    bot.service.create = frozen_after(bot.service.create, lambda *_a, **_k: True, hit)
    await h.slash(master, "game create", channel=channel, title="Palermo", wait=False)
    await wait_for(lambda: bool(hit), "the game to be committed")
    game = await bot.service.game_in_channel(channel)
    assert game is not None and game.signup_message_id is None
    assert not h.messages_in(channel, include_ephemeral=True)  # no reply, no board

    h = await lives.restart()
    bot = h.bot
    await bot.outbox.idle(within=20)
    [board] = boards(h, channel)
    assert tr("signup.title", "ru", title="Palermo") in board.text
    assert (await bot.service.info(game.id)).signup_message_id == board.id
    player = h.add_member("P1", locale="ru")
    res = await h.click(player, board, f"mafia:join:{game.id}", locale="ru")
    assert res.ephemeral and res.text == tr("lobby.joined", "ru", title="Palermo", count=1)
    await bot.outbox.idle(within=20)
    [board] = boards(h, channel)
    assert player.mention in board.text
    assert {r.status for r in await Outbox.filter(game_id=game.id)} == {DELIVERED}


async def test_a_crash_after_posting_the_board_does_not_post_it_twice(lives: Lives) -> None:
    h = lives.h
    channel = h.default_guild.general_id
    master = h.add_member("Master", locale="ru")
    bot: Any = h.bot
    hit: list[Any] = []
    real = bot.service.set_discord

    async def set_discord(game_id: int, patch: Any, **kwargs: Any) -> None:
        if "signup_message_id" in patch.model_fields_set:
            hit.append(patch)
            await freeze()  # posted; the process dies before storing its id
        await real(game_id, patch, **kwargs)

    bot.service.set_discord = set_discord
    res = await h.slash(master, "game create", channel=channel, title="Palermo")
    assert res.ephemeral, res.text
    await wait_for(lambda: bool(hit), "the board to be posted")
    assert len(boards(h, channel)) == 1
    game = await bot.service.game_in_channel(channel)
    [first] = [r.json for r in h.requests_to("POST /channels/{channel_id}/messages")]

    h = await lives.restart()
    bot = h.bot
    await bot.outbox.idle(within=20)
    [board] = boards(h, channel)  # the retry's nonce returned the board already posted
    assert (await bot.service.info(game.id)).signup_message_id == board.id
    [entry] = await Outbox.filter(game_id=game.id, kind=SIGNUP_POST)
    assert entry.status == DELIVERED
    [again] = [r.json for r in h.requests_to("POST /channels/{channel_id}/messages")]
    assert again["nonce"] == first["nonce"] and first["enforce_nonce"] \
        and again["enforce_nonce"]
