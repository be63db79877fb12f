"""The engine's dispatch groups (core.game.engine._dispatch): mypy checks each match is
exhaustive; this checks the groups split the command union exactly, each kind once."""

from typing import get_args

from core.game import commands as c
from core.game import engine


def test_every_command_kind_is_in_exactly_one_dispatch_group() -> None:
    union = get_args(c.Command)[0]
    kinds = set(get_args(union))
    groups = [get_args(g) for g in (engine._Lobby, engine._Move, engine._Table)]
    grouped = [k for g in groups for k in g]
    assert len(grouped) == len(set(grouped))
    assert set(grouped) == kinds
