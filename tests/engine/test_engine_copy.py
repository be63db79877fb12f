"""The engine's cheap private copy (a day's votes and night orders copy only the list
they change) gives what the whole copy gives, and never touches the input state."""

from __future__ import annotations

from unittest import mock

import pytest

from core.game import commands as c
from core.game import engine
from core.game.errors import RuleError
from core.game.events import Event
from core.game.state import GameState, Options
from core.play.sim import Table, play


def _outcome(state: GameState, cmd: c.Command) -> tuple[str, list[Event]] | str:
    try:
        out = engine.apply(state, cmd)
    except RuleError as exc:
        return f"refused {exc.code}"
    return out.state.model_dump_json(), out.events


def _whole(state: GameState, cmd: c.Command) -> tuple[str, list[Event]] | str:
    """The reference: the handler works on a whole copy of the state."""
    with mock.patch.object(engine, "_private", lambda s, _cmd, _json: engine.copy_state(s)):
        return _outcome(state, cmd)


class CheckedTable(Table):
    """A sim table that checks every command it sends, and a few it only tries: the
    same vote again (refused), its withdrawal, a shouted vote, the same order again."""

    checked = 0

    def check(self, cmd: c.Command) -> None:
        state = self.played.state
        before = state.model_dump_json()
        fast = _outcome(state, cmd)
        assert state.model_dump_json() == before, f"{cmd.kind} changed its input state"
        assert fast == _whole(state, cmd), f"{cmd.kind}: the cheap copy differs"
        self.checked += 1

    def send(self, cmd: c.Command) -> list[Event]:
        if isinstance(cmd, c.Vote):
            for probe in (cmd.model_copy(update={"shout": True}),
                          c.Unvote(by=cmd.by, at=cmd.at, funds=cmd.funds)):
                self.check(probe)
        self.check(cmd)
        events = super().send(cmd)
        if isinstance(cmd, c.Vote | c.NightOrder):
            self.check(cmd.model_copy(update={"at": self.tick()}))  # again: refused/replaced
        return events


@pytest.mark.parametrize(("seed", "players"), [(3, 12), (8, 12), (5, 20)])
def test_cheap_copy_equals_whole_copy(seed: int, players: int) -> None:
    """Every module on: shouted votes, Doubling's second move and the night's spells."""
    options = Options(extra_roles=True, currency=True, shop=True, crypto=True)
    with mock.patch("core.play.sim.Table", CheckedTable):
        played = play(seed, players, options)
    kinds = {type(cmd) for cmd in played.commands}
    assert {c.Vote, c.NightOrder} <= kinds  # the cheap paths were taken


def test_a_third_order_under_doubling_leaves_the_input_untouched() -> None:
    """Doubling keeps two orders: a third drops the oldest and renumbers the one kept
    (an order of the input state changed in place, were it shared)."""
    options = Options(extra_roles=True, currency=True, shop=True, crypto=True)
    table = Table(4, 12, options)
    table.send(c.Start(by=1, at=table.clock, confirm=True))
    while not (table.state.phase == "day" and table.state.number >= 1):
        table.send(c.Advance(by=1, at=table.tick()))
    state = table.state
    actor = next(p.uid for p in state.living() if engine.night_move(state, p.uid))
    state = state.model_copy(update={"doubled": {actor: state.number}})
    targets = engine.legal_targets(state, actor, "night")
    slots = []
    for target in targets[:3]:
        cmd = c.NightOrder(by=actor, at=table.tick(), target=target)
        before = state.model_dump_json()
        fast = _outcome(state, cmd)
        assert state.model_dump_json() == before
        assert fast == _whole(state, cmd)
        state = engine.apply(state, cmd).state
        slots.append([o.slot for o in state.orders if o.actor == actor])
    assert slots == [[0], [0, 1], [0, 1]]
