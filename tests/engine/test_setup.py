"""Role composition: presets for every size and the master's text format."""

from __future__ import annotations

from collections import Counter

import pytest

from core.game.errors import SetupError
from core.game.roles import Role
from core.game.rules.setup import composition_for, parse, preset, validate


@pytest.mark.parametrize("players", range(6, 31))
@pytest.mark.parametrize("extra", [False, True])
def test_presets_cover_6_to_30(players: int, extra: bool) -> None:
    comp = preset(players, extra_roles=extra)
    assert comp.size == players
    counts = comp.counts()
    assert counts[Role.MAFIOSO] >= 1 and counts[Role.INVESTIGATOR] == 1
    assert (counts[Role.OPERATIVE] > 0) <= extra


def test_text_format_with_clans_counts_and_russian_names() -> None:
    comp = parse("clan A: mafioso x2, advocate; клан B: 2x мафиози; следователь; сержант;"
                 " вышибала; killer; citizen ×4")
    assert Counter(comp.roles) == Counter({Role.MAFIOSO: 4, Role.ADVOCATE: 1,
                                           Role.INVESTIGATOR: 1, Role.SERGEANT: 1,
                                           Role.BOUNCER: 1, Role.KILLER: 1, Role.CITIZEN: 4})
    clans = {(r, cl) for r, cl in zip(comp.roles, comp.clans, strict=True)}
    assert (Role.MAFIOSO, 1) in clans and (Role.MAFIOSO, 2) in clans and (Role.ADVOCATE, 1) in clans


def test_spare_seats_become_citizens() -> None:
    comp = composition_for("mafioso; investigator", 7, extra_roles=False)
    assert comp.counts()[Role.CITIZEN] == 5


@pytest.mark.parametrize(
    ("text", "players", "code"),
    [
        ("mafioso; wizard", 8, "setup_unknown_role"),
        ("investigator; citizen x3", 8, "setup_no_mafia"),
        ("mafioso x8", 8, "setup_already_won"),
        ("mafioso; investigator x2", 8, "setup_unique_role"),
        ("mafioso x9", 8, "setup_too_many_roles"),
        ("clan A: investigator", 8, "setup_not_clan_role"),
        ("mafioso; sergeant", 8, "setup_needs_investigator"),
        ("", 8, "setup_empty"),
        ("mafioso", 5, "setup_player_count"),
        ("mafioso x0", 8, "setup_bad_count"),
    ],
)
def test_impossible_setups_are_refused_with_a_code(text: str, players: int, code: str) -> None:
    with pytest.raises(SetupError) as err:
        validate(parse(text), players, extra_roles=False)
    assert err.value.code == code
