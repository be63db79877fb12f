"""The Russian catalogue reads like a master's post (issue 32): guards against the
notary's patterns coming back, over every Russian key.

- money in words, with its plural: "за 20 лир", never "(лир: 20)" or "цена в лирах";
- a number before a counted noun comes from a plural table ("3 игрока", "5 лир"), never
  a bare "{count} игроков" nor a dodge like "(игроков: {count})";
- a day or a night in prose by its ordinal ("первый день", "нулевая ночь", through
  core.sight.narrate.phase_words), "день 1" only in compact lists and headings named below;
- a noun before every bare mention in an accusative (or other oblique) slot:
  "против игрока @X", "проверяет игрока @X", never "против @X" (a mention cannot be
  declined);
- word order and the old forms the issue quoted: "ходит @Вера, а не вы" (never "не вы,
  а"), a death by its verb ("повешен игрок @X", not "выбывает из игры: повешение"), a
  vote post with "всего против", a private thread ("ветка", not "личное место").

Each rule is also run over the lines the issue quoted, so that it can fail.
"""

from __future__ import annotations

import glob
import re
import tomllib
from collections.abc import Iterator
from typing import Any

import pytest

from core.sight.narrate import phase_words
from core.text.i18n import t

PLURAL_FORMS = frozenset({"one", "few", "many", "other"})

#: Compact places where a number stays a number: status lines, headings and labels of
#: the archive and the desk, the signup's phase lengths, the desk's one-line orders,
#: the card's dated notices, and the turn numbering of inactivity ("ход 2 (день 2 и ночь
#: после него)").
COMPACT = frozenset({
    "signup.phase_lengths", "desk.order.line", "desk.night.head", "desk.day.head",
    "card.night", "master.log_order", "event.turn_missed", "event.turn_warning",
    "event.away_noted", "event.away_ack", "error.away_until_past",
})
COMPACT_PREFIXES = ("phase.", "status.phase.", "archive.", "alt.", "notice.")

PHASE_NUMBER = re.compile(
    r"(?<![а-яё])(день|дня|дню|днём|ночь|ночи|ночью) (\{|\d)", re.IGNORECASE)
#: placeholders that become a player's mention (core.sight.narrate._PLAYER_KEYS and the like)
MENTION = (r"\{(uid|voter|target|actor|fallback|previous|old|new|by|acting|hanged|master|"
           r"if_hanged|unless_hanged|passed|name|names|decider|bouncer|owing)\}")
BARE_MENTION = re.compile(
    r"(?<![а-яё])((против|над|для|у|от|к|за|по|с|перед|место|голос|голоса|призрака) |"
    r"(проверяет|проверить|защищает|защитить|заменяет|убивает|убить|повесят|вешают|"
    r"бьёт по):? )" + MENTION, re.IGNORECASE)
COUNTED_NOUN = re.compile(
    r"\{\w+\} (голос|голоса|голосов|лира|лиры|лиру|лир|игрок|игрока|игроков|дней|дня|день|"
    r"ночей|ночи|ночь|минута|минуты|минут|минуту|партия|партии|партий|записей|записи|запись)"
    r"(?![а-яё])")
BRACKETED_COUNT = re.compile(
    r"\((лир|игроков|голосов|дней|ночей|минут|партий|записей|ходов|цена[^:)]*): \{")
#: counted nouns that stay bare: the range's noun agrees with its upper end, always > 20
COUNTED_OK = frozenset({"error.setup_player_count"})
OLD_FORMS = re.compile(
    r"не вы, а|личн\w* мест|Днём голосуйте|из игры: \{cause\}|из игры: (повешение|убийство)|"
    r"^Заказано|^Наложено|напоминания отправлены|погибли:|\(лир:|цена в лирах|"
    r"у игрока \{target\} — \{votes\}")
VOTE_POSTS = ("event.vote_cast", "event.vote_shout_again")


def _flat(table: dict[str, Any], prefix: str = "") -> Iterator[tuple[str, str]]:
    for key, value in table.items():
        if isinstance(value, dict) and set(value) <= PLURAL_FORMS:
            for form, text in value.items():  # a plural table: its forms are one key
                yield f"{prefix}{key}#{form}", str(text)
        elif isinstance(value, dict):
            yield from _flat(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}", str(value)


def russian() -> dict[str, str]:
    """Every Russian text by key; a plural table's forms as `key#form`."""
    out: dict[str, str] = {}
    for path in ["data/locales/ru.toml", *sorted(glob.glob("data/locales/ru/*.toml"))]:
        with open(path, "rb") as f:
            out.update(_flat(tomllib.load(f)))
    return out


def problems(key: str, text: str) -> list[str]:
    """What in one Russian text reads like a form rather than a master's post."""
    base, _, form = key.partition("#")
    found = []
    if "(лир:" in text or "цена в лирах" in text or BRACKETED_COUNT.search(text):
        found.append("a number dodged in brackets")
    if not form and base not in COUNTED_OK and COUNTED_NOUN.search(text):
        found.append("a number before a counted noun outside a plural table")
    if base not in COMPACT and not base.startswith(COMPACT_PREFIXES) \
            and PHASE_NUMBER.search(text):
        found.append("a day or night by its number in prose")
    if BARE_MENTION.search(text):
        found.append("a bare mention in an oblique slot")
    if OLD_FORMS.search(text):
        found.append("an old form")
    if base.startswith(VOTE_POSTS) and "всего против" not in text:
        found.append("a vote post without the running total")
    return found


def test_the_whole_russian_catalogue_reads_like_a_master() -> None:
    bad = {k: (v, problems(k, v)) for k, v in russian().items() if problems(k, v)}
    assert bad == {}


@pytest.mark.parametrize(("key", "old"), [
    ("event.morning.head", "Утро дня {number}. Этой ночью погибли:"),
    ("event.vote_cast", "{voter} голосует против игрока {target} (у игрока {target} — "
                        "{votes})."),
    ("event.player_died", "{uid} выбывает из игры: {cause}. Роль: {role}."),
    ("event.you_died.killed", "Вы выбыли из игры: убийство ночью."),
    ("error.not_your_turn", "Сегодня от клана ходит не вы, а {acting}."),
    ("desk.night.check", "• {actor} проверяет {target}: {result}."),
    ("desk.night.protect", "• {actor} защищает: {target}."),
    ("places.welcome", "Это ваше личное место в игре «{title}»."),
    ("help.role.citizen.duty", "Днём голосуйте каждый день."),
    ("event.purchase", "Куплено: {item} (цена в лирах: {cost})."),
    ("event.bonus_granted", "Мастер выдаёт бонус игроку {uid} (лир: {amount}): «{reason}»."),
    ("error.checkin_day_zero_only", "Отмечаться нужно только в день 0."),
    ("event.clan_order", "{actor} заказывает на ночь {night}: {target}."),
    ("shop.ordered", "Заказано на вечер: {item}."),
    ("shop.cast", "Наложено: {item}."),
    ("master.prod", "Личные напоминания отправлены: {names}"),
    ("event.joined", "{uid} записывается на игру (игроков: {count})."),
    ("wallet.balance", "Баланс: {balance} лир"),
    ("event.replaced", "{new} заменяет {old}."),
    ("desk.night.wrecking", "• {actor} проходит сквозь защиту над {target}."),
])
def test_each_rule_catches_the_lines_the_issue_quoted(key: str, old: str) -> None:
    assert problems(key, old), old


def test_money_is_said_with_its_plural() -> None:
    assert t("currency.lira_acc", "ru", count=20) == "20 лир"
    assert t("currency.lira_acc", "ru", count=21) == "21 лиру"
    assert t("event.purchase", "ru", item="Будильник",
             cost_lira_acc=t("currency.lira_acc", "ru", count=20)) == \
        "Куплено: Будильник за 20 лир."
    assert t("event.joined", "ru", uid="@Вера", count=3) == \
        "@Вера записывается на игру — теперь в ней 3 игрока."


def test_days_and_nights_in_prose_are_ordinal_words() -> None:
    words = phase_words(0, "ru")
    assert (words["day_nom"], words["night_nom"], words["night_acc"]) == (
        "нулевой день", "нулевая ночь", "нулевую ночь")
    assert phase_words(1, "ru")["day_gen"] == "первого дня"
    assert phase_words(12, "ru")["night_gen"] == "12-й ночи"
    assert t("event.phase_started.day", "ru", **phase_words(1, "ru"), deadline="…") \
        .startswith("Наступает первый день.")
    assert t("event.morning.single", "ru", **phase_words(1, "ru"), name="@Егор",
             role="убийца") == "Утро первого дня. Этой ночью убит игрок @Егор (убийца)."


def test_the_most_seen_lines_read_as_the_issue_asks() -> None:
    assert t("event.died.hanged", "ru", uid="@Алиса", role="убийца") == \
        "По итогам дня повешен игрок @Алиса. Роль: убийца."
    assert t("event.vote_cast", "ru", voter="@Вера", target="@Егор", total="1 голос") == \
        "@Вера голосует против игрока @Егор (всего против: 1 голос)."
    assert t("error.not_your_turn", "ru", acting="@Вера") == \
        "Сегодня от клана ходит @Вера, а не вы."
    assert t("places.welcome", "ru", title="Т").startswith(
        "Это ваша личная ветка в игре «Т»: её видите только вы и мастер.")
    assert t("help.role.citizen.duty", "ru").startswith("Голосуйте каждый день")


def test_command_names_do_not_echo_or_differ_by_one_letter() -> None:
    words = russian()
    names = {k: v for k, v in words.items() if k.startswith("cmd.") and k.endswith(".name")}
    assert all("_" not in v for v in names.values()), [v for v in names.values() if "_" in v]
    assert words["cmd.vote.name"] != words["cmd.votes.name"].rstrip("а")
    assert words["cmd.cast.name"] != words["cmd.cast.param.spell.name"]
