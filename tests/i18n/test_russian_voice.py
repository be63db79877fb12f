"""The Russian catalogue reads like a master's post (issue 32): guards against the
notary's patterns coming back.

- money in words, with its plural: "за 20 лир", never "(лир: 20)" or "цена в лирах";
- a day or a night in prose by its ordinal ("первый день", "нулевая ночь", through
  core.narrate.phase_words), "день 1" only in compact lists and headings named below;
- a noun before every bare mention in an accusative slot: "против игрока @X",
  "проверяет игрока @X", never "против @X" (the mention cannot be declined).
"""

from __future__ import annotations

import glob
import re
import tomllib
from collections.abc import Iterator
from typing import Any

from core.i18n import t
from core.narrate import phase_words

#: Compact places where a number stays a number: status lines, the archive's phase
#: labels, the signup's phase lengths, the desk's one-line orders, card notices, and the
#: turn numbering of inactivity ("ход 2 (день 2 и ночь после него)").
COMPACT = frozenset({
    "status.phase.day", "status.phase.night", "archive.html.phase.day",
    "archive.html.phase.night", "signup.phase_lengths", "desk.order.line",
    "notice.shared_check", "event.turn_missed", "event.turn_warning",
    "event.away_noted", "event.away_ack", "error.away_until_past",
})
PHASE_NUMBER = re.compile(r"(?<![а-яё])(день|дня|дню|днём|ночь|ночи|ночью) \{")
BARE_MENTION = re.compile(
    r"(?<![а-яё])(против|проверяет|проверить|защищает|заменяет|убивает|убить|повесят|"
    r"вешают|бьёт по) \{(target|uid|name|old|new|if_hanged|unless_hanged)\}")


def _flat(table: dict[str, Any], prefix: str = "") -> Iterator[tuple[str, str]]:
    for key, value in table.items():
        if isinstance(value, dict):
            yield from _flat(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}", str(value)


def russian() -> dict[str, str]:
    out: dict[str, str] = {}
    for path in ["data/locales/ru.toml", *sorted(glob.glob("data/locales/ru/*.toml"))]:
        with open(path, "rb") as f:
            out.update(_flat(tomllib.load(f)))
    return out


def test_money_is_said_with_its_plural() -> None:
    bad = {k: v for k, v in russian().items() if "(лир:" in v or "в лирах:" in v
           or "цена в лирах" in v}
    assert bad == {}
    assert t("currency.lira_acc", "ru", count=20) == "20 лир"
    assert t("currency.lira_acc", "ru", count=21) == "21 лиру"


def test_days_and_nights_in_prose_are_ordinal_words() -> None:
    bad = {k: v for k, v in russian().items()
           if k not in COMPACT and PHASE_NUMBER.search(v)}
    assert bad == {}
    words = phase_words(0, "ru")
    assert (words["day_nom"], words["night_nom"], words["night_acc"]) == (
        "нулевой день", "нулевая ночь", "нулевую ночь")
    assert phase_words(1, "ru")["day_gen"] == "первого дня"
    assert phase_words(12, "ru")["night_gen"] == "12-й ночи"
    assert t("event.phase_started.day", "ru", **phase_words(1, "ru"), deadline="…") \
        .startswith("Наступает первый день.")


def test_a_noun_stands_before_every_bare_mention_in_an_accusative_slot() -> None:
    bad = {k: v for k, v in russian().items() if BARE_MENTION.search(v)}
    assert bad == {}


def test_command_names_do_not_echo_or_differ_by_one_letter() -> None:
    words = russian()
    names = {k: v for k, v in words.items() if k.startswith("cmd.") and k.endswith(".name")}
    assert all("_" not in v for v in names.values()), [v for v in names.values() if "_" in v]
    assert words["cmd.vote.name"] != words["cmd.votes.name"].rstrip("а")
    assert words["cmd.cast.name"] != words["cmd.cast.param.spell.name"]
