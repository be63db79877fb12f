"""A role is a row: a second protector registered at test time, through
`core.game.roles.registered` only, is dealt, ordered, protected by, shown and simulated
by the generic code (issue #21, item 3). No other rules file names it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from core.game import commands as c
from core.game.errors import RuleError
from core.game.roles import CATALOGUE, Action, Role, RoleInfo, Side, info, registered
from core.game.rules import shop
from core.game.rules.setup import parse, validate
from core.game.state import GameState, Options, PhaseKind
from core.play.sim import MASTER, Table, play
from core.sight.guide import guide
from core.sight.narrate import describe, describe_error, role_name
from core.sight.visibility import card
from core.text.i18n import has_key

TEXTS = {
    "en": {"role.bodyguard.name": "bodyguard", "role.bodyguard.genitive": "the bodyguard",
           "role.bodyguard.power": "Protects one player every night.",
           "help.role.bodyguard.duty": "Vote every day. Protect one player every night."},
    "ru": {"role.bodyguard.name": "телохранитель", "role.bodyguard.genitive": "телохранителя",
           "role.bodyguard.power": "Каждую ночь защищает одного игрока.",
           "help.role.bodyguard.duty": "Голосуйте каждый день. Каждую ночь защищайте игрока."},
}
ROLES = "mafioso; investigator; bodyguard; citizen x3"


def bodyguard(role: Role) -> RoleInfo:
    """A neutral protector acting in the bouncer's slot, needing an investigator."""
    return RoleInfo(role, Side.NEUTRAL, Action.PROTECT, 0, order=0, unique=True,
                    requires=(Role.INVESTIGATOR,), aliases=("телохранитель",))


@pytest.fixture
def guard() -> Iterator[Role]:
    with registered("bodyguard", bodyguard, TEXTS) as role:
        yield role


def seat(table: Table, role: Role) -> int:
    return next(p.uid for p in table.state.players if p.role is role)


def test_the_registered_row_is_dealt_and_the_composition_rules_read_it(guard: Role) -> None:
    comp = validate(parse("mafioso; investigator; телохранитель"), 6, extra_roles=False)
    assert comp.counts()[guard] == 1
    with pytest.raises(RuleError) as unique:
        validate(parse("mafioso; investigator; bodyguard x2"), 6, extra_roles=False)
    assert unique.value.code == "setup_unique_role"
    with pytest.raises(RuleError) as needs:
        validate(parse("mafioso; bodyguard"), 6, extra_roles=False)
    assert needs.value.code == "setup_needs_investigator"
    table = Table(3, 6, roles=ROLES)
    started = table.send(c.Start(by=MASTER, at=table.clock, confirm=True))
    assert sum(1 for p in table.state.players if p.role is guard) == 1
    stored = GameState.model_validate_json(table.state.model_dump_json())  # as storage does
    assert [p.role for p in stored.players] == [p.role for p in table.state.players]
    opening = next(e for e in started if e.kind == "game_started")
    assert "телохранитель" in describe(opening, str, "ru")
    assert role_name(str(guard), "en") == "bodyguard"


def test_a_requirement_on_another_role_is_named_in_both_languages() -> None:
    """`requires` is generic: a squire needs the killer, and the refusal names both."""
    texts = {lang: {"role.squire.name": name} for lang, name in (("en", "squire"),
                                                                 ("ru", "оруженосец"))}
    with registered("squire", lambda r: RoleInfo(r, Side.NEUTRAL, None, 0,
                                                 requires=(Role.KILLER,)), texts):
        validate(parse("mafioso; squire; killer"), 6, extra_roles=False)
        with pytest.raises(RuleError) as needs:
            validate(parse("mafioso; squire"), 6, extra_roles=False)
        assert needs.value.code == "setup_needs_role"
        text = describe_error(needs.value.code, needs.value.params, str, "ru")
        assert "«оруженосец»" in text and "«убийца»" in text


# Seeds whose dice would put the mafioso first: only the row's fixed slot saves the target.
@pytest.mark.parametrize("seed", [0, 4, 7])
def test_the_bodyguard_protects_the_mafias_target_in_the_fixed_slot(guard: Role,
                                                                     seed: int) -> None:
    table = Table(seed, 6, roles=ROLES)
    table.send(c.Start(by=MASTER, at=table.clock, confirm=True))
    s = table.state
    mafioso, guard_uid = seat(table, Role.MAFIOSO), seat(table, guard)
    victim = next(p.uid for p in s.players if p.role is Role.CITIZEN)
    for p in s.players:
        table.send(c.CheckIn(by=p.uid, at=table.tick()))
    table.send(c.Advance(by=MASTER, at=table.tick()))
    assert table.state.phase is PhaseKind.NIGHT and table.state.number == 0

    mine = card(table.state, guard_uid)
    assert (mine.night_move, mine.moves, mine.side) == (Action.PROTECT, 1, Side.NEUTRAL)
    assert "night" in guide(table.state, guard_uid).commands
    # the mafioso first, so only the fixed slot (not the order of arrival) puts the
    # bodyguard ahead of him
    table.send(c.NightOrder(by=mafioso, at=table.tick(), target=victim))
    table.send(c.NightOrder(by=guard_uid, at=table.tick(), target=victim))
    events = table.send(c.Advance(by=MASTER, at=table.tick()))

    after = table.state
    assert after.player(victim).alive  # type: ignore[union-attr]
    steps = next(e for e in events if e.kind == "night_explained").data["steps"]
    assert steps[0] == {"step": "sequence", "actors": [guard_uid, mafioso]}
    assert {"step": "blocked", "actor": mafioso, "target": victim,
            "bouncer": guard_uid}.items() <= next(
        st for st in steps if st["step"] == "blocked").items()
    assert any(n.kind == "action_failed" for n in after.player(mafioso).notices)  # type: ignore[union-attr]
    # no attacker kind in its row: no 'Protection from the bodyguard' is sold
    assert str(guard) not in shop.attacker_kinds(after)


def test_the_simulator_plays_whole_games_with_it(guard: Role) -> None:
    for seed in range(4):
        played = play(seed, 8, Options(shop=True, currency=True),
                      roles=f"{ROLES}; killer; citizen")
        assert played.state.over
        assert any(p.role is guard for p in played.state.players)
        assert any(e.kind == "desk_order" and e.data["role"] == str(guard)
                   and e.data["action"] == "protect" for e in played.events)


def test_the_role_is_gone_after_the_block() -> None:
    with registered("bodyguard", bodyguard, TEXTS) as role:
        assert info(role).action is Action.PROTECT and has_key("role.bodyguard.name", "ru")
    assert "bodyguard" not in [str(r) for r in Role] and len(CATALOGUE) == len(Role)
    assert not has_key("role.bodyguard.name", "ru")
    with pytest.raises(ValueError):
        Role("bodyguard")
    with pytest.raises(ValueError), registered("bouncer", bodyguard, TEXTS):
        pass  # an existing role is not replaced
    assert info(Role.BOUNCER).attacker == "bouncer"


def test_no_rules_file_names_the_registered_role() -> None:
    """The test's role lives here only: nothing under core/ or data/ knows it."""
    root = Path(__file__).resolve().parents[2]
    for path in [*(root / "core").rglob("*.py"), *(root / "data").rglob("*.toml")]:
        assert "bodyguard" not in path.read_text(encoding="utf-8"), path
