"""The "Start anyway" offer of /game start (a seated player can read other seats' places),
through the real command tree and fake Discord: once pressed, its message loses the
button (the click's own interaction response edits it: no request of the bot's budget);
a stale press (the game already started, or cancelled) is refused in the presser's
language, ephemerally, changing nothing but the stale button."""

from __future__ import annotations

import discord
import pytest

from core.game.state import PhaseKind
from core.text.i18n import t as tr
from tests.bot.helpers import ROLES, Table, open_table
from tests.bot.test_bad_input import dump_db
from tests.harness import Harness, HarnessError

THREADS = discord.Permissions(manage_threads=True)


async def offered(h: Harness, locale: str = "en-US") -> tuple[Table, object]:
    """A table of 8 whose third player holds Manage Threads, and the master's offer."""
    t = await open_table(h, 8, roles=ROLES, locale=locale)
    h.give_role(t.players[2], h.add_role("Thread keepers", permissions=THREADS))
    res = await t.do(t.master, "game start")
    assert res.ephemeral and res.custom_ids, res.text
    return t, res


def edits_besides_the_answer(res: object, message: int) -> list[str]:
    """REST requests (the bot's budget, not the interaction's answer) that a click made
    on the offer's message, or through the interaction's webhook."""
    return [r.route or r.path for r in res.requests  # type: ignore[attr-defined]
            if r.kind == "rest" and (r.params.get("message_id") == message
                                     or "webhooks" in (r.route or r.path))]


async def test_the_pressed_offer_loses_its_button(h: Harness) -> None:
    t, offer = await offered(h)
    button = offer.custom_ids[0]  # type: ignore[attr-defined]
    pressed = await h.click(t.master, offer, button)
    assert pressed.response_type == 7  # the offer's own message, edited by the answer
    assert pressed.message is not None and pressed.message.id == offer.message.id  # type: ignore[attr-defined]
    assert pressed.ephemeral and pressed.text == tr("lobby.started", "en"), pressed.text
    assert pressed.custom_ids == [] and pressed.components == []
    assert edits_besides_the_answer(pressed, pressed.message.id) == []
    await t.settle()
    assert (await t.state()).phase is PhaseKind.DAY
    with pytest.raises(HarnessError):  # nothing left to press
        await h.click(t.master, pressed.message, button)


@pytest.mark.parametrize("locale,lang", [("en-US", "en"), ("ru", "ru")])
async def test_a_second_offer_pressed_after_the_start_is_refused(
        h: Harness, locale: str, lang: str) -> None:
    """Two offers (the master ran /game start twice): the first starts the game; the
    second, pressed after, is refused in his language, changes nothing, loses its button."""
    t, first = await offered(h, locale)
    second = await t.do(t.master, "game start")
    assert second.custom_ids, second.text
    await h.click(t.master, first, first.custom_ids[0])  # type: ignore[attr-defined]
    await t.settle()
    before = await dump_db()
    stale = await h.click(t.master, second, second.custom_ids[0])
    await t.settle()
    assert await dump_db() == before
    assert stale.response_type == 7 and stale.message.id == second.message.id  # type: ignore[union-attr]
    assert stale.ephemeral and second.custom_ids == []
    assert stale.text == "\n".join([tr("error.already_started", lang),
                                    tr("secrets.sight.stale", lang)]), stale.text
    assert [r for r in stale.requests if r.kind == "rest"] == []  # not even the rights


async def test_an_offer_pressed_after_a_cancel_is_refused(h: Harness) -> None:
    t, offer = await offered(h)
    res = await t.do(t.master, "game cancel")
    assert res.ephemeral, res.text
    await t.settle()
    before = await dump_db()
    stale = await h.click(t.master, offer, offer.custom_ids[0])  # type: ignore[attr-defined]
    await t.settle()
    assert await dump_db() == before
    assert (await t.state()).phase is PhaseKind.CANCELLED
    assert stale.response_type == 7 and stale.message.id == offer.message.id  # type: ignore[attr-defined,union-attr]
    assert stale.ephemeral and offer.custom_ids == []  # type: ignore[attr-defined]
    assert stale.text == "\n".join([tr("error.game_over", "en"),
                                    tr("secrets.sight.stale", "en")]), stale.text


async def test_a_refusal_that_is_not_stale_keeps_the_button(h: Harness) -> None:
    """The bot lost a right it needs: the master is told, and the offer still stands
    (he gives the right back and presses again)."""
    t, offer = await offered(h)
    h.set_bot_permissions(discord.Permissions(send_messages=True, embed_links=True,
                                              view_channel=True))
    refused = await h.click(t.master, offer, offer.custom_ids[0])  # type: ignore[attr-defined]
    assert refused.ephemeral and refused.response_type == 4, refused.text
    assert offer.custom_ids  # type: ignore[attr-defined]
    assert (await t.state()).phase is PhaseKind.SIGNUP

