"""Issue 34 through the real command tree: the balance estimate at /game setup and
/game options (the master alone, "estimating…" at once, the figures in the same reply),
and the setup history (/stats setups, the line beside the estimate)."""

from __future__ import annotations

import discord
import pytest

from cogs.balance import Estimator
from core.game.roles import Role
from core.game.state import PhaseKind
from core.text.i18n import t
from tests.bot.helpers import Table, open_table, posted
from tests.harness import Harness, InteractionResult

pytestmark = pytest.mark.asyncio

SETUP = "mafioso; investigator"


async def estimated(t_: Table) -> None:
    lobby = t_.bot.get_cog("Lobby")
    assert lobby is not None
    await lobby.estimates.idle()  # type: ignore[attr-defined]


def head(games: int, players: int, lang: str = "en") -> str:
    return t("balance.head", lang, count=games, players=players, days=0.0).split(",")[0]


async def test_setup_shows_estimating_at_once_then_the_figures_to_the_master_alone(
        h: Harness, small_estimates: Estimator) -> None:
    table = await open_table(h, 6)
    before = {c: len(posted(h, c)) for c in h.world.channels}
    res = await table.do(table.master, "game setup", roles="mafioso x2; investigator; bouncer")
    assert res.ephemeral
    assert t("balance.estimating", "en") in res.response_data["content"]
    await estimated(table)
    content = res.content
    assert t("balance.estimating", "en") not in content
    assert content.startswith(head(10, 6)), content
    assert t("balance.side.town", "en") in content and t("balance.side.mafia", "en") in content
    assert t("balance.side.neutral", "en") in content  # the bouncer
    assert "95% interval" in content and "Simulated players who act like this" in content
    assert res.ephemeral and res.message is not None
    assert res.message.ephemeral_for == table.master.id
    # nothing about the estimate anywhere public
    assert {c: len(posted(h, c)) for c in h.world.channels} == before


async def test_options_change_estimates_again(h: Harness) -> None:
    table = await open_table(h, 6, roles=SETUP)
    await estimated(table)
    res = await table.do(table.master, "game options", bouncer_self=False)
    assert res.ephemeral and t("balance.estimating", "en") in res.response_data["content"]
    await estimated(table)
    assert res.content.startswith(head(10, 6)), res.content


async def test_a_lopsided_setup_gets_the_warning(h: Harness) -> None:
    table = await open_table(h, 6)
    res = await table.do(table.master, "game setup", roles="mafioso x3", )
    await estimated(table)
    assert "⚠️ **" + t("balance.side.mafia", "en") + ": 100%" in res.content, res.content


async def finish(table: Table) -> None:
    """Start and end at once: the master kicks the only mafioso (the town wins)."""
    res = await table.do(table.master, "game start")
    assert res.ephemeral, res.text
    await table.settle()
    mafioso = (await table.holders(Role.MAFIOSO))[0]
    res = await table.do(table.master, "master kick", player=str(mafioso.id))
    assert res.ephemeral, res.text
    await table.settle()
    assert (await table.state()).phase is PhaseKind.ENDED


async def test_stats_setups_after_two_finished_games_and_the_history_beside_the_estimate(
        h: Harness) -> None:
    first = await open_table(h, 6, roles="mafioso; investigator")
    await finish(first)
    # the same setup typed differently, in another channel
    other = h.add_text_channel("second")
    second = Table(h, first.master, first.players, channel=other.id)
    assert (await second.do(second.master, "game create", title="Again")).ephemeral
    await second.settle()
    for p in second.players:
        assert (await second.do(p, "game join")).ephemeral
    res = await second.do(second.master, "game setup", roles="следователь; мафиози x1")
    assert res.ephemeral, res.text
    second.game_id = (await second.bot.service.game_in_channel(other.id)).id  # type: ignore[union-attr]
    await finish(second)
    # a cancelled game does not count
    third_channel = h.add_text_channel("third")
    third = Table(h, first.master, first.players, channel=third_channel.id)
    assert (await third.do(third.master, "game create", title="Never")).ephemeral
    for p in third.players:
        assert (await third.do(p, "game join")).ephemeral
    await third.do(third.master, "game setup", roles="mafioso; investigator")
    await estimated(third)
    assert (await third.do(third.master, "game cancel")).ephemeral

    res = await h.slash(first.players[0], "stats setups", channel=first.channel)
    assert res.ephemeral
    text = res.text
    assert "mafioso, investigator, honest citizen ×4" in text, text
    assert "2 games: Town (police and honest citizens) won 2 (100%); about 0 days long" in text
    assert text.count("games:") == 1

    # the master setting this setup up again sees its record here beside the estimate
    fourth_channel = h.add_text_channel("fourth")
    fourth = Table(h, first.master, first.players, channel=fourth_channel.id)
    assert (await fourth.do(fourth.master, "game create", title="Once more")).ephemeral
    for p in fourth.players:
        assert (await fourth.do(p, "game join")).ephemeral
    res = await fourth.do(fourth.master, "game setup", roles="Mafia; Detective")
    await estimated(fourth)
    assert ("Played here 2 times: Town (police and honest citizens) won 2 (100%); "
            "about 0 days long on average.") in res.content, res.content


async def test_stats_setups_one_game_of_one_day_in_english_and_russian(h: Harness) -> None:
    """Issue 42, item 8: the share beside the count, and "1 game", "about 1 day" (not
    "1 days"); in Russian "1 игра", "1 победа", "около 1 дня"."""
    table = await open_table(h, 6, roles="mafioso; investigator")
    res = await table.do(table.master, "game start")
    assert res.ephemeral, res.text
    await table.settle()
    for p in table.players:
        assert (await table.do(p, "checkin")).embeds
    await table.advance()
    await table.advance()
    assert (await table.phase())[1] == 1
    mafioso = (await table.holders(Role.MAFIOSO))[0]
    assert (await table.do(table.master, "master kick", player=str(mafioso.id))).ephemeral
    await table.settle()
    assert (await table.state()).phase is PhaseKind.ENDED
    res = await h.slash(table.players[0], "stats setups", channel=table.channel)
    assert res.ephemeral and res.message is not None
    assert res.message.ephemeral_for == table.players[0].id
    assert ("1 game: Town (police and honest citizens) won 1 (100%); "
            "about 1 day long on average.") in res.text, res.text
    reader = h.add_member("Читатель", locale="ru")
    res = await h.slash(reader, "stats setups", channel=table.channel)
    assert res.ephemeral and res.message is not None and res.message.ephemeral_for == reader.id
    assert ("1 игра: Город (полиция и честные жители): 1 победа (100%); "
            "в среднем примерно 1 день.") in res.text, res.text


async def test_stats_setups_in_a_server_without_games(h: Harness) -> None:
    member = h.add_member("Curious", locale="ru")
    res: InteractionResult = await h.slash(member, "stats setups")
    assert res.ephemeral and t("stats.setups.none", "ru") in res.text
    assert isinstance(discord.Colour.blurple(), discord.Colour)
