"""A game's planned start (issue 46, item 1): `/game create start:` through the real
command tree in both languages makes a Discord scheduled event (with Create Events),
which follows the game's start and its cancel; bad input and a missing permission are
refused in the user's language before anything changes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import discord
import pytest

from core.text.i18n import t
from tests.bot.helpers import EVERYTHING, ROLES
from tests.harness import Harness, InteractionResult

pytestmark = pytest.mark.usefixtures("strict_i18n")

WITH_EVENTS = discord.Permissions(EVERYTHING.value | discord.Permissions(
    create_events=True).value)


def alone(res: InteractionResult) -> str:
    assert res.messages and all(m.flags & 64 for m in res.messages), res.text
    return res.text


def soon(days: int = 2) -> datetime:
    return (datetime.now(UTC) + timedelta(days=days)).replace(second=0, microsecond=0)


async def nothing_made(h: Harness) -> None:
    assert await h.bot.service.game_in_channel(h.default_guild.general_id) is None  # type: ignore[attr-defined]
    assert h.world.scheduled_events == {}


async def test_the_planned_start_is_an_event_that_follows_the_game(h: Harness) -> None:
    h.set_bot_permissions(WITH_EVENTS)
    master = h.add_member("Master", locale="en-US")
    start = soon()
    res = await h.slash(master, "game create", title="Palermo",
                        start=start.strftime("%Y-%m-%d %H:%M"))
    text = alone(res)
    assert t("lobby.created", "en", title="Palermo") in text
    assert t("events.planned", "en") in text
    (event,) = h.world.scheduled_events.values()
    assert event["name"] == "Palermo" and event["status"] == 1
    assert datetime.fromisoformat(event["scheduled_start_time"]) == start
    assert event["entity_metadata"]["location"].endswith(
        f"/{h.default_guild.id}/{h.default_guild.general_id}")
    assert event["privacy_level"] == 2  # the server's members only
    game = await h.bot.service.game_in_channel(h.default_guild.general_id)  # type: ignore[attr-defined]
    players = [h.add_member(f"P{i}") for i in range(8)]
    for p in players:
        assert (await h.slash(p, "game join")).ephemeral
    assert (await h.slash(master, "game setup", roles=ROLES)).ephemeral
    started = await h.slash(master, "game start")  # two days early
    assert alone(started) == t("lobby.started", "en")
    await h.bot.outbox.idle(within=20)  # type: ignore[attr-defined]
    assert event["status"] == 2  # started: Discord shows it as going on
    assert game is not None


async def test_a_cancel_cancels_the_event(h: Harness) -> None:
    h.set_bot_permissions(WITH_EVENTS)
    master = h.add_member("Мастер", locale="ru")
    stamp = int(soon(3).timestamp())
    res = await h.slash(master, "game create", title="Палермо", start=f"<t:{stamp}:F>")
    assert t("events.planned", "ru") in alone(res)
    (event,) = h.world.scheduled_events.values()
    assert datetime.fromisoformat(event["scheduled_start_time"]).timestamp() == stamp
    assert alone(await h.slash(master, "game cancel")) == t("lobby.cancelled", "ru")
    await h.bot.outbox.idle(within=20)  # type: ignore[attr-defined]
    assert event["status"] == 4


@pytest.mark.parametrize("typed", ["tomorrow", "2026-02-30 10:00", "24.12.2026 19:00",
                                   "2020-01-01 10:00", "<t:99999999999>", "<t:12:Q>"])
async def test_a_start_that_cannot_be_read_is_refused_and_nothing_changes(
        h: Harness, typed: str) -> None:
    h.set_bot_permissions(WITH_EVENTS)
    for locale, lang in (("ru", "ru"), ("en-US", "en")):
        master = h.add_member(f"M{lang}", locale=locale)
        res = await h.slash(master, "game create", title="Palermo", start=typed)
        text = alone(res)
        assert text in (t("error.bad_start_time", lang), t("error.start_time_range", lang))
        await nothing_made(h)


async def test_without_create_events_a_planned_start_is_refused(h: Harness) -> None:
    for locale, lang in (("ru", "ru"), ("en-US", "en")):
        master = h.add_member(f"M{lang}", locale=locale)
        res = await h.slash(master, "game create", title="Palermo",
                            start=soon().strftime("%Y-%m-%d %H:%M"))
        assert alone(res) == t("error.bot_missing_permissions", lang,
                               permissions=t("permission.create_events", lang))
        await nothing_made(h)
