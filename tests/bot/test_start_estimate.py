"""Issue 42, item 1 and issue 41, item 6, through the real command tree: /game start
waits for the balance estimate and asks for confirm when its warning fires; the
estimate's share of the machine (a queue, a newer estimate replacing an older one, a
member's and a server's allowance), each answer to the master alone, in his language.

Most tests fix the simulated games' outcome (`fixed`: half the games to each side, or
chunks held until released) so that what is tested is the start's rule, not chance;
the first plays the issue's own setup for real."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from cogs import balance
from core.game.state import PhaseKind
from core.play.balance import Tally, job_for, side_name
from core.text.i18n import t
from tests.bot.helpers import ROLES, Table, open_table, posted
from tests.bot.test_bad_input import dump_db
from tests.harness import Harness, InteractionResult

pytestmark = pytest.mark.asyncio

LANGS = [("en-US", "en"), ("ru", "ru")]


@pytest.fixture(autouse=True)
def guarded(small_estimates: balance.Estimator) -> balance.Estimator:
    """The tests' small estimator, guarding the start as the bot's own does."""
    small_estimates.guards_start = True
    small_estimates.start_wait_s = 3.0
    return small_estimates


def even(job: Any, start: int, games: int) -> Tally:
    """A chunk where each side wins half the games: no warning."""
    town = games // 2
    return Tally(games, {"town": town, "mafia": games - town}, games, ["town", "mafia"])


class Held:
    """Chunks that wait until released (an estimate still running), then are even."""

    def __init__(self) -> None:
        self.go = threading.Event()
        self.calls = 0

    def __call__(self, job: Any, start: int, games: int) -> Tally:
        self.calls += 1
        self.go.wait(30)
        return even(job, start, games)


@pytest.fixture
def fixed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(balance, "run_chunk", even)


@pytest.fixture
def held(monkeypatch: pytest.MonkeyPatch) -> Iterator[Held]:
    chunks = Held()
    monkeypatch.setattr(balance, "run_chunk", chunks)
    try:
        yield chunks
    finally:
        chunks.go.set()  # before the estimator's thread is shut down


def estimates(table: Table) -> balance.Estimates:
    lobby: Any = table.bot.get_cog("Lobby")
    return lobby.estimates  # type: ignore[no-any-return]


def to_master_alone(res: InteractionResult, table: Table) -> None:
    assert res.ephemeral and res.message is not None, res.text
    assert res.message.ephemeral_for == table.master.id


def head(key: str, lang: str, **params: Any) -> str:
    """A message's words before its relative time ("in 40 seconds", Discord's)."""
    return t(key, lang, when="\x00", **params).split("\x00")[0]


async def another_table(h: Harness, first: Table, name: str) -> Table:
    channel = h.add_text_channel(name)
    table = Table(h, first.master, first.players, channel=channel.id)
    assert (await table.do(table.master, "game create", title=name)).ephemeral
    table.game_id = (await table.bot.service.game_in_channel(channel.id)).id  # type: ignore[union-attr]
    await table.settle()
    for p in table.players:
        assert (await table.do(p, "game join")).ephemeral
    return table


@pytest.mark.parametrize("locale,lang", LANGS)
async def test_start_right_after_a_lopsided_setup_asks_for_confirm(
        h: Harness, locale: str, lang: str) -> None:
    """The issue's own setup, played for real: three mafiosi, four citizens (not half
    the seats, so the seat count alone says nothing); /game start at once waits for
    the estimate and is refused by its warning; with confirm it starts."""
    table = await open_table(h, 7, locale=locale)
    res = await table.do(table.master, "game setup", roles="mafioso x3; citizen x4")
    assert res.ephemeral, res.text
    await table.settle()
    before, posts = await dump_db(), {c: len(posted(h, c)) for c in h.world.channels}
    refused = await table.do(table.master, "game start")
    await table.settle()
    to_master_alone(refused, table)
    assert (await table.state()).phase is PhaseKind.SIGNUP, refused.text
    assert await dump_db() == before
    assert {c: len(posted(h, c)) for c in h.world.channels} == posts
    job, est = estimates(table).done[table.game_id]  # type: ignore[index]
    assert job == job_for(await table.state())
    top = est.lopsided
    assert top is not None and top.side == "mafia", est
    assert refused.text == t("error.balance_lopsided", lang, side=side_name("mafia", lang),
                             share=round(100 * top.share)), refused.text
    started = await table.do(table.master, "game start", confirm=True)
    to_master_alone(started, table)
    assert started.text == t("lobby.started", lang), started.text
    await table.settle()
    assert (await table.state()).phase is not PhaseKind.SIGNUP


@pytest.mark.parametrize("locale,lang", LANGS)
async def test_start_while_the_estimate_runs_is_refused_then_goes_once_it_is_done(
        h: Harness, held: Held, guarded: balance.Estimator, locale: str, lang: str) -> None:
    guarded.start_wait_s = 0.3
    table = await open_table(h, 8, roles=ROLES, locale=locale)
    before = await dump_db()
    refused = await table.do(table.master, "game start")
    await table.settle()
    to_master_alone(refused, table)
    assert refused.response_type == 5  # it waited (deferred), then answered
    assert refused.text == t("error.balance_running", lang), refused.text
    assert await dump_db() == before
    assert (await table.state()).phase is PhaseKind.SIGNUP
    held.go.set()
    await estimates(table).idle()
    started = await table.do(table.master, "game start")
    to_master_alone(started, table)
    assert started.text == t("lobby.started", lang), started.text
    await table.settle()
    assert (await table.state()).phase is not PhaseKind.SIGNUP


async def test_a_balanced_estimate_lets_the_start_through_at_once(
        h: Harness, fixed: None) -> None:
    table = await open_table(h, 8, roles=ROLES)
    res = await table.do(table.master, "game start")
    to_master_alone(res, table)
    assert res.text == t("lobby.started", "en"), res.text


async def test_start_makes_the_estimate_when_the_seats_changed_since(
        h: Harness, fixed: None) -> None:
    """A player joined after the setup: the estimate shown was of fewer seats; the start
    estimates what it would deal, waits for it, and goes."""
    table = await open_table(h, 7, roles=ROLES)
    await estimates(table).idle()
    old_job = estimates(table).done[table.game_id][0]  # type: ignore[index]
    late = h.add_member("Late")
    assert (await table.do(late, "game join")).ephemeral
    table.players.append(late)
    res = await table.do(table.master, "game start")
    to_master_alone(res, table)
    assert res.text == t("lobby.started", "en"), res.text
    assert old_job.players == 7


@pytest.mark.parametrize("locale,lang", LANGS)
async def test_a_member_beyond_his_allowance_is_told_when_to_ask_again(
        h: Harness, fixed: None, locale: str, lang: str) -> None:
    table = await open_table(h, 8, locale=locale)
    estimates(table).allowance.per_member = 2
    posts = {c: len(posted(h, c)) for c in h.world.channels}
    for roles in ("mafioso x2; investigator", "mafioso x2; investigator; bouncer"):
        res = await table.do(table.master, "game setup", roles=roles)
        to_master_alone(res, table)
        assert t("balance.estimating", lang) in res.response_data["content"]
        await estimates(table).idle()
    res = await table.do(table.master, "game setup", roles=ROLES)
    to_master_alone(res, table)
    content = res.response_data["content"]
    assert head("balance.refused.member", lang, count=2) in content, content
    assert "<t:" in content and t("balance.estimating", lang) not in content
    assert table.game_id not in estimates(table).under
    assert (await table.state()).roles_text == ROLES  # the setup itself is saved
    await table.settle()
    assert {c: len(posted(h, c)) for c in h.world.channels} == posts


@pytest.mark.parametrize("locale,lang", LANGS)
async def test_a_server_beyond_its_allowance_is_told_when_to_ask_again(
        h: Harness, fixed: None, locale: str, lang: str) -> None:
    first = await open_table(h, 6, locale=locale)
    estimates(first).allowance.per_guild = 1
    assert (await first.do(first.master, "game setup", roles="mafioso; investigator")).ephemeral
    second = await another_table(h, first, "second")
    res = await second.do(second.master, "game setup", roles="mafioso; investigator")
    to_master_alone(res, second)
    assert head("balance.refused.guild", lang, count=1) in res.response_data["content"]


@pytest.mark.parametrize("locale,lang", LANGS)
async def test_estimates_beyond_the_workers_wait_their_turn_then_are_refused(
        h: Harness, held: Held, guarded: balance.Estimator, locale: str, lang: str) -> None:
    """One worker: one estimate runs, the next is queued (the reply says so), and past
    the queue's length the reply says no estimate is made and when to ask again."""
    guarded.queue_limit = 1
    first = await open_table(h, 6, roles="mafioso; investigator", locale=locale)
    assert guarded.running == 1
    second = await another_table(h, first, "second")
    res = await second.do(second.master, "game setup", roles="mafioso; investigator")
    to_master_alone(res, second)
    assert t("balance.queued", lang, count=1) in res.response_data["content"]
    third = await another_table(h, first, "third")
    res = await third.do(third.master, "game setup", roles="mafioso; investigator")
    to_master_alone(res, third)
    assert head("balance.refused.busy", lang) in res.response_data["content"]
    assert guarded.running == 1 and guarded.waiting == 1
    held.go.set()
    await estimates(first).idle()
    assert guarded.running == guarded.waiting == 0


async def test_a_newer_estimate_of_a_game_replaces_the_running_one(
        h: Harness, held: Held, guarded: balance.Estimator) -> None:
    table = await open_table(h, 8, roles="mafioso x2; investigator")
    older = estimates(table).under[table.game_id].task  # type: ignore[index]
    res = await table.do(table.master, "game setup", roles=ROLES)
    assert t("balance.estimating", "en") in res.response_data["content"], res.text
    newer = estimates(table).under[table.game_id].task  # type: ignore[index]
    assert newer is not older
    held.go.set()
    await estimates(table).idle()
    assert older.cancelled() and not newer.cancelled()
    job, _ = estimates(table).done[table.game_id]  # type: ignore[index]
    assert job.roles == ROLES
    assert res.content.startswith(t("balance.head", "en", count=10, players=8,
                                    days=1.0).split(",")[0]), res.content


async def test_the_bot_stopping_ends_its_estimates_and_the_pool(
        h: Harness, held: Held, guarded: balance.Estimator) -> None:
    """The graceful stop's road (bot.close unloads the cogs): the lobby's unload cancels
    the estimates under way and closes the estimator's pool (worker processes in the
    bot: tests/test_balance_processes.py counts them)."""
    table = await open_table(h, 6, roles="mafioso; investigator")
    task = estimates(table).under[table.game_id].task  # type: ignore[index]
    assert guarded._pool is not None
    held.go.set()
    await table.bot.remove_cog("Lobby")
    assert guarded._pool is None
    assert task.cancelled() or task.cancelling()


async def test_the_sight_offer_after_waiting_for_the_estimate_still_starts(
        h: Harness, fixed: None) -> None:
    """The start waited (a player joined after the setup: a new estimate) and then a
    seat turned out to read other places: the offer comes in the answer that replaces
    "thinking…", to the master alone, and its button starts the game."""
    import discord

    table = await open_table(h, 7, roles=ROLES)
    await estimates(table).idle()
    late = h.add_member("Late")
    assert (await table.do(late, "game join")).ephemeral
    table.players.append(late)
    h.give_role(table.players[2], h.add_role("Keepers",
                                            permissions=discord.Permissions(manage_threads=True)))
    offer = await table.do(table.master, "game start")
    assert offer.response_type == 5 and offer.custom_ids, offer.text
    to_master_alone(offer, table)
    assert (await table.state()).phase is PhaseKind.SIGNUP
    pressed = await h.click(table.master, offer, offer.custom_ids[0])
    assert pressed.text == t("lobby.started", "en"), pressed.text
    await table.settle()
    assert (await table.state()).phase is not PhaseKind.SIGNUP


async def test_an_estimate_that_cannot_be_made_does_not_hold_the_start(
        h: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(job: Any, start: int, games: int) -> Tally:
        raise RuntimeError("a bug in the simulated players")

    monkeypatch.setattr(balance, "run_chunk", broken)
    table = await open_table(h, 8, roles=ROLES)
    res = await table.do(table.master, "game start")
    to_master_alone(res, table)
    assert res.text == t("lobby.started", "en"), res.text
