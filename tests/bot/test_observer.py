"""The cogs' door to a game (core.storage.observer): views out, never a state; a player
option resolved once, in its transformer; a command's game looked up once."""

from __future__ import annotations

import inspect
from typing import Any, get_type_hints

from core.game.events import Event, EventKind
from core.game.state import GameState
from core.storage.observer import Observer, Outcome
from tests.bot.helpers import confirmed, day_one
from tests.harness import Harness


def test_the_facade_never_hands_out_a_state() -> None:
    """Every public method and property of the facade and of a command's outcome
    answers with a view or a plain value: no GameState leaves it."""
    for cls in (Observer, Outcome):
        for name, member in inspect.getmembers(cls):
            if name.startswith("_"):
                continue
            func = member.fget if isinstance(member, property) else member
            if not callable(func):
                continue
            returned = get_type_hints(func).get("return")
            assert "GameState" not in repr(returned), (cls.__name__, name)
            assert returned is not GameState, (cls.__name__, name)


def counting(bot: Any, names: tuple[str, ...]) -> dict[str, int]:
    """Count the calls of the service's game lookups (wrapped on the instance)."""
    calls = dict.fromkeys(names, 0)
    for name in names:
        real = getattr(bot.service, name)

        async def wrapped(*args: Any, _real: Any = real, _name: str = name,
                          **kwargs: Any) -> Any:
            calls[_name] += 1
            return await _real(*args, **kwargs)

        setattr(bot.service, name, wrapped)
    return calls


LOOKUPS = ("game_in_channel", "info", "last_game_in_channel", "games_of_user")


async def test_a_vote_by_name_finds_its_game_once_and_names_its_player(h: Harness) -> None:
    t = await day_one(h)
    state = await t.state()
    voter, target = (t.member(p.uid) for p in state.living()[:2])
    name = state.player(target.id).name  # type: ignore[union-attr]
    await t.settle()
    await t.bot.outbox.stop()  # its deliveries look games up too: only the command counts
    calls = counting(t.bot, LOOKUPS)
    res = await t.do(voter, "vote", player=name)
    assert confirmed(res), res.text
    assert calls == {"game_in_channel": 1, "info": 0, "last_game_in_channel": 0,
                     "games_of_user": 0}
    assert [(m.voter, m.target) for m in (await t.state()).vote_log] == [(voter.id, target.id)]


async def test_an_unknown_name_in_an_option_is_refused_and_changes_nothing(
        h: Harness) -> None:
    t = await day_one(h)
    state = await t.state()
    voter = t.member(state.living()[0].uid)
    before = state.model_dump_json()
    res = await t.do(voter, "vote", player="Nobody at all")
    assert res.ephemeral and not res.embeds
    assert res.text == "No player called “Nobody at all” in this game."
    assert (await t.state()).model_dump_json() == before
    # the master's kick names a player the same way, resolved before the command runs
    res = await t.do(t.master, "master kick", player="Nobody at all")
    assert res.ephemeral and res.text == "No player called “Nobody at all” in this game."
    assert (await t.state()).model_dump_json() == before


async def test_a_seats_news_is_what_its_holder_may_still_read_in_one_look(h: Harness) -> None:
    """cogs/delivery/places.py's push asks once: the seat's holder, the news whose reason holds
    (a reminder of a phase long gone is dropped) and his card only when a role is dealt."""
    t = await day_one(h)
    state = await t.state()
    holder = state.players[2].uid
    observe = t.bot.observe
    gone = Event(kind=EventKind.REMINDER, data={"what": "vote", "number": 99})
    dealt = Event(kind=EventKind.ROLE_DEALT)
    calls = counting(t.bot, ("state",))
    news = await observe.seat_news(t.game_id, 2, [gone])
    assert calls == {"state": 1}
    assert news is not None and news.holder == holder
    assert news.events == [] and news.card is None
    news = await observe.seat_news(t.game_id, 2, [gone, dealt])
    assert news is not None and news.events == [dealt]
    assert news.card == await observe.card(t.game_id, holder)
    assert await observe.seat_news(t.game_id, len(state.players), [dealt]) is None
