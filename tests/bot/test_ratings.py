"""Issue 46.5 through the real command tree, in both languages: a finished game moves the
ratings and earns achievements, /profile shows them with games and wins, /stats players
lists the top 20 and the reader's own row; each reply is the reader's alone and pings
nobody. A cancelled game moves nothing."""

from __future__ import annotations

import pytest

from core.game.roles import Role
from core.sight.ratings import Skill
from core.storage.models import Achievement, Rating
from core.text.i18n import t as tr
from tests.bot.helpers import Table, open_table, start
from tests.harness import Harness, InteractionResult

ROLES = "mafioso; investigator; bouncer"


async def _finished(h: Harness, locale: str) -> Table:
    """The master removes the mafioso and the bouncer: the town wins at once."""
    t = await open_table(h, 8, roles=ROLES, locale=locale)
    await start(t)
    for role in (Role.MAFIOSO, Role.BOUNCER):
        res = await t.do(t.master, "master kick", player=str((await t.holders(role))[0].id))
        assert res.ephemeral, res.text
    await t.settle()
    assert (await t.state()).over
    return t


def _private(res: InteractionResult) -> None:
    assert res.ephemeral
    assert res.response_data["allowed_mentions"]["parse"] == []


@pytest.mark.parametrize("locale,lang", [("ru", "ru"), ("en-US", "en")])
async def test_a_finished_game_rates_and_marks_its_players(
        h: Harness, locale: str, lang: str) -> None:
    t = await _finished(h, locale)
    guild = h.default_guild.id
    inv = (await t.holders(Role.INVESTIGATOR))[0]
    don = (await t.holders(Role.MAFIOSO, alive=False))[0]
    rows = {r.user_id: r for r in await Rating.filter(guild_id=guild)}
    assert set(rows) == {p.id for p in t.players}  # the master is not rated
    assert rows[inv.id].mu > 25 > rows[don.id].mu and rows[inv.id].rated == 1
    res = await t.do(inv, "profile")
    _private(res)
    for key in ("profile.rating", "profile.achievements"):
        assert tr(key, lang) in res.text, res.text
    for mark in ("win_positive", "still_standing"):
        assert tr(f"achievement.{mark}", lang) in res.text, res.text
    assert tr("achievement.win_citizens", lang) not in res.text
    res = await t.do(don, "profile")
    _private(res)
    assert tr("profile.no_achievements", lang) in res.text
    # the leaderboard: every seat in the order of its shown rating, no row for the master
    res = await t.do(t.master, "stats players")
    _private(res)
    description = res.embeds[0]["description"]
    shown = {uid: Skill(r.mu, r.sigma).shown for uid, r in rows.items()}
    listed = sorted(shown, key=lambda u: description.index(f"<@{u}>"))
    assert [shown[u] for u in listed] == sorted(shown.values(), reverse=True)
    assert t.master.mention not in description
    assert tr("stats.players.unrated", lang) in res.text  # the master reads his own row


@pytest.mark.parametrize("locale,lang", [("ru", "ru"), ("en-US", "en")])
async def test_the_leaderboard_shows_20_and_the_readers_own_row(
        h: Harness, locale: str, lang: str) -> None:
    t = await _finished(h, locale)
    guild = h.default_guild.id
    await Rating.bulk_create([Rating(guild_id=guild, user_id=9000 + i, mu=40.0 + i, sigma=1.0,
                                     rated=5) for i in range(25)])
    reader = t.players[0]
    res = await t.do(reader, "stats players")
    _private(res)
    description = res.embeds[0]["description"]
    assert description.count("\n") == 19  # 20 rows
    assert "<@9024>" in description and "<@9004>" not in description
    own = res.embeds[0]["fields"][0]
    assert own["name"] == tr("stats.players.yours", lang) and reader.mention in own["value"]
    mine = Skill((r := await Rating.get(guild_id=guild, user_id=reader.id)).mu, r.sigma).shown
    above = sum(1 for r in await Rating.filter(guild_id=guild)
                if Skill(r.mu, r.sigma).shown > mine)
    assert above >= 25 and own["value"].startswith(f"**{above + 1}.** {reader.mention}")


async def test_a_cancelled_game_moves_no_rating(h: Harness) -> None:
    t = await open_table(h, 8, roles=ROLES)
    await start(t)
    assert (await t.do(t.master, "game cancel")).ephemeral
    await t.settle()
    assert (await t.state()).over
    assert await Rating.all().count() == 0 and await Achievement.all().count() == 0
    res = await t.do(t.players[0], "stats players")
    _private(res)
    assert tr("stats.players.none", "en") in res.text
