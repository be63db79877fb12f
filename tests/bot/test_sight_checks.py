"""Issue 41, points 4 and 5, through the real command tree.

4. After "Start anyway" the first public post names the players whose rights show them
   every private thread: the day-0 check-in board comes after that notice.
5. A right gained during the game is told to the table at the player's next
   interaction of any kind: a read-only command (/role, /votes, /game status, /help)
   or an option's autocomplete, not only a command that acts (RULES.md §8)."""

from __future__ import annotations

import asyncio
from typing import Any

import discord
import pytest

from core.sight.tallies import message_key
from core.text.i18n import t as tr
from tests.bot.helpers import ROLES, Table, open_table, posted, start
from tests.harness import Harness

THREADS = discord.Permissions(manage_threads=True)


def told(h: Harness, t: Table, player: Any, key: str = "event.sight_threads") -> int:
    """How many of the game channel's posts tell the table of `player`'s sight."""
    words = tr(key, "ru", uid=player.mention)
    return sum(words in m.text for m in posted(h, t.channel))


async def test_start_anyway_names_the_reader_before_the_checkin_board(
        h: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    """The start's announcement waits for the game's ping role (its own lane, a slow
    window of Discord's): the board, in another lane, must wait for it too."""
    t = await open_table(h, 8, roles=ROLES)
    places: Any = t.bot.delivery.places
    make_role = places.sync_role

    async def slow(*args: Any) -> None:  # Discord's role window, made slow
        await asyncio.sleep(0.3)
        await make_role(*args)

    monkeypatch.setattr(places, "sync_role", slow)
    keeper = t.players[2]
    h.give_role(keeper, h.add_role("Thread keepers", permissions=THREADS))
    before = len(posted(h, t.channel))
    offer = await t.do(t.master, "game start")
    await h.click(t.master, offer, offer.custom_ids[0])
    await t.settle()
    after = posted(h, t.channel)[before:]
    board = (await t.bot.service.info(t.game_id)).live_messages[message_key(0)]
    notice = tr("event.sight_threads", "ru", uid=keeper.mention)
    at_notice = next(i for i, m in enumerate(after) if notice in m.text)
    at_board = next(i for i, m in enumerate(after) if m.id == board)
    assert at_notice == 0 and at_board > at_notice, [m.text[:60] for m in after]


@pytest.mark.parametrize("command,options", [
    ("role", {}), ("votes", {}), ("game status", {}), ("help", {})])
async def test_a_read_only_command_tells_the_table(h: Harness, command: str,
                                                   options: dict[str, Any]) -> None:
    t = await open_table(h, 8, roles=ROLES)
    await start(t)
    player = t.players[4]
    h.give_role(player, h.add_role("Thread keepers", permissions=THREADS))
    res = await t.do(player, command, **options)
    assert res.ephemeral, res.text
    await t.settle()
    assert (await t.state()).sight == {player.id: "threads"}
    assert told(h, t, player) == 1
    assert (await t.do(player, command, **options)).ephemeral  # said once
    await t.settle()
    assert told(h, t, player) == 1


async def test_autocomplete_tells_the_table(h: Harness) -> None:
    t = await open_table(h, 8, roles=ROLES)
    await start(t)
    player = t.players[5]
    h.give_role(player, h.add_role("Admins", permissions=discord.Permissions(
        administrator=True)))
    res = await h.autocomplete(player, "vote", option="player", value="",
                               channel=t.channel)
    assert res.choices is not None
    await t.settle()
    assert (await t.state()).sight == {player.id: "all"}
    assert told(h, t, player, "event.sight_all") == 1


async def test_a_member_without_a_seat_changes_nothing(h: Harness) -> None:
    """Rights are a seated player's matter: a bystander's read-only command writes
    nothing (no Sight command, no post)."""
    t = await open_table(h, 8, roles=ROLES)
    await start(t)
    bystander = h.add_member("Bystander", locale="en-US")
    h.give_role(bystander, h.add_role("Thread keepers", permissions=THREADS))
    seq = (await t.state()).seq
    assert (await t.do(bystander, "game status")).ephemeral
    await t.settle()
    assert (await t.state()).seq == seq and (await t.state()).sight == {}


async def test_the_show_my_role_button_tells_the_table(h: Harness) -> None:
    t = await open_table(h, 8, roles=ROLES)
    await start(t)
    player = t.players[1]
    h.give_role(player, h.add_role("Thread keepers", permissions=THREADS))
    board = next(m for m in posted(h, t.channel)
                 if any(c.get("custom_id", "").startswith("mafia:role:")
                        for row in m.components for c in row.get("components", [])))
    button = next(c["custom_id"] for row in board.components for c in row["components"]
                  if c.get("custom_id", "").startswith("mafia:role:"))
    res = await h.click(player, board, button)
    assert res.ephemeral and res.embeds, res.text  # his card, to him alone
    await t.settle()
    assert (await t.state()).sight == {player.id: "threads"}
    assert told(h, t, player) == 1
