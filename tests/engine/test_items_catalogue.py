"""The shop's catalogue (core/game/rules/items.py): one row per item and spell, read by the
shop, the night, the rules reference and the renderers; stored names unchanged."""

from __future__ import annotations

import importlib

from core.game.rules import shop
from core.game.rules.items import WARES, ItemKind, Moment, SpellKind, is_item, items, spells
from core.game.state import Item, Options, PendingBuy, SpellCast
from core.sight.guide import price_of, spell_time, topic_ids
from core.sight.narrate import item_name
from core.text.i18n import t


def test_the_stored_names_are_the_enum_values() -> None:
    """Games, logs and typed commands hold these strings: they must not change."""
    assert [str(k) for k in ItemKind] == ["protection", "alarm_clock", "cheque_book",
                                          "spiked_club"]
    assert [str(k) for k in SpellKind] == ["sleep", "silence", "shout", "free_speech",
                                           "helplessness", "doubling", "destruction"]
    stored = Item.model_validate_json('{"kind": "alarm_clock"}')
    assert stored.kind == ItemKind.ALARM_CLOCK
    cast = SpellCast.model_validate_json(
        '{"spell": "sleep", "caster": 1, "target": 2, "phase": "day", "number": 1, "seq": 3}')
    assert cast.spell == SpellKind.SLEEP
    assert PendingBuy(uid=1, what=SpellKind.DOUBLING, day=1, seq=1).model_dump()["what"] == \
        "doubling"


def test_the_shops_old_names_read_the_catalogue() -> None:
    """The rules' prices and limits (RULES.md, 'Shop'), now from the one table."""
    assert shop.ITEMS == ("protection", "alarm_clock", "cheque_book", "spiked_club")
    assert shop.ITEM_PRICES == {"alarm_clock": 20, "cheque_book": 30, "spiked_club": 30}
    assert shop.SPELL_PRICES == {"sleep": 3, "silence": 8, "shout": 5, "free_speech": 10,
                                 "helplessness": 40, "doubling": 80, "destruction": 15}
    assert {"sleep", "silence", "free_speech"} == shop.DAY_SPELLS
    assert {"helplessness", "doubling", "destruction"} == shop.NIGHT_SPELLS
    assert shop.PER_DAY_LIMIT == {"sleep": 2, "shout": 2}
    assert shop.PER_TURN_LIMIT == {"silence": 2}  # "дважды за один ход" (issue 43)
    assert shop.PROTECTION_BASE == 10
    assert spells(Moment.VOTE) == (SpellKind.SHOUT,)


def test_every_effect_names_a_function_of_the_rules() -> None:
    for w in WARES.values():
        module, _, name = w.effect.partition(".")
        assert callable(getattr(importlib.import_module(f"core.game.rules.{module}"), name)), w


def test_the_readers_split_items_from_spells_by_the_catalogue() -> None:
    assert [k for k in WARES if is_item(k)] == list(items())
    assert not is_item("sleep") and not is_item("nothing")
    assert price_of("protection") == 10 and price_of("doubling") == 80
    assert price_of("nothing") is None
    assert [spell_time(s) for s in ("sleep", "shout", "destruction")] == ["day", "vote", "night"]
    topics = topic_ids()
    assert [t for t in topics if t.startswith("item:")] == [f"item:{k}" for k in items()]
    assert sorted(t for t in topics if t.startswith("spell:")) == sorted(
        f"spell:{s}" for s in SpellKind)
    for kind in WARES:
        area = "item" if is_item(kind) else "spell"
        assert item_name(kind, None, "ru") == t(f"{area}.{kind}.name", "ru")


def test_the_shop_view_places_each_line_by_the_catalogue() -> None:
    from tests.engine.scenario import Game

    g = Game({"Don": "mafioso:1", "Kate": "killer", "Bob": "bouncer", "C1": "citizen",
              "C2": "citizen", "C3": "citizen"}, Options(shop=True, currency=True))
    rows = shop.shop_rows(g.state, g.id("C1"))
    assert [(r.kind, r.against, r.price) for r in rows] == shop.catalogue(g.state, g.id("C1"))
    assert [r.kind for r in rows if r.item] == ["protection"] * 3 + [
        "alarm_clock", "cheque_book", "spiked_club"]
    assert [r.against for r in rows if r.kind == "protection"] == ["mafia:1", "killer",
                                                                   "bouncer"]
    assert {r.kind: r.moment for r in rows}["shout"] is Moment.VOTE
