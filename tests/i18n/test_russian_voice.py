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
  vote post with "всего против", a private thread ("ветка", not "личное место");
- issue 42, item 10: a quoted item or spell name after its generic noun ("заклинание
  «Немота»", "предмет «…»"), never "покупает «Немота»"; no plural noun before a list that
  may hold one name ("напомнили игрокам: @Игорь"); no capital after a colon in prose;
  the vote's end said as a master says it, not "итоги подводятся <дата>"; the desk's
  days and nights by the public posts' words ("нулевая ночь", not "Ночь 0").

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
    "signup.phase_lengths",
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
    r"у игрока \{target\} — \{votes\}|[Ии]тоги подводятся|Больше всех голосов набирает|"
    r"ход никому не нужен|Из вашей команды выбывает|отметка \{ref\}|: повешение\.")
#: a quoted item or spell name needs its generic noun before it (issue 42, item 10)
BARE_THING = re.compile(r"(?<!заклинание )(?<!предмет )(?<!заказ )(?<!заказа )"
                        r"«\{(item|spell)\}»", re.IGNORECASE)
#: a plural noun before a list of names, which may hold one name
PLURAL_BEFORE_LIST = re.compile(r"(игрокам|игроков|игроки|игроках): \{(owing|names)\}")
#: a capital letter after a colon in prose (titles and labels named below aside)
CAPITAL_AFTER_COLON = re.compile(r"[а-яё»)]: [А-ЯЁ]")
LABELS = frozenset({"vote.embed_title_shout"})
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
    if BARE_THING.search(text):
        found.append("a quoted item or spell name without its generic noun")
    if PLURAL_BEFORE_LIST.search(text):
        found.append("a plural noun before a list that may hold one name")
    if base not in LABELS and CAPITAL_AFTER_COLON.search(text):
        found.append("a capital after a colon")
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
    # issue 42, item 10
    ("event.phase_started.day", "Наступает {day_nom}. Итоги подводятся {deadline}."),
    ("desk.day.hanged", "Больше всех голосов набирает {name}: повешение."),
    ("event.reminded_none", "Сейчас ход никому не нужен — напоминать некому."),
    ("event.desk_purchase", "{uid} покупает «{item}» за {cost_lira_acc}."),
    ("desk.buy.what", "«{item}»"),
    ("event.reminded", "Лично напомнили игрокам: {owing}."),
    ("master.prod", "Лично напомнили игрокам: {names}."),
    ("event.mate_died", "Из вашей команды выбывает {uid}: {cause}."),
    ("places.footer", "«{title}»: ваши личные новости, отметка {ref}"),
    ("help.rules.side", "Сторона: Город.\nЦель стороны: Вывести из игры всех."),
    ("desk.night.head", "Ночь {night} по шагам:"),
    ("desk.day.head", "День {number}: чем закончилось голосование"),
    ("desk.order.line", "{actor} ({role}), ночь {night}: {action} → {target}."),
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


# --- issue 42, item 10: the lines a native master read, as they now read -------------
def test_one_victim_is_one_victim() -> None:
    from core.game.events import Audience, Event, EventKind
    from core.sight.narrate import describe

    morning = Event(kind=EventKind.MORNING, audience=Audience.public(), data={
        "number": 1, "victims": [{"uid": 5, "role": "citizen"}],
        "removed": [{"uid": 6, "role": "killer"}]})
    for lang, head in (("ru", "Утро первого дня. Жертва этой ночи:"),
                       ("en", "Morning of day 1. Killed in the night:")):
        text = describe(morning, lambda u: f"@P{u}", lang)
        assert text.splitlines()[0] == head, text
    two = Event(kind=EventKind.MORNING, audience=Audience.public(), data={
        "number": 1, "victims": [{"uid": 5, "role": "citizen"}, {"uid": 7, "role": "citizen"}]})
    assert describe(two, lambda u: f"@P{u}", "ru").splitlines()[0] == \
        "Утро первого дня. Жертвы этой ночи:"


def test_the_day_says_until_when_the_vote_runs() -> None:
    assert t("event.phase_started.day", "ru", **phase_words(1, "ru"), deadline="8 дек. 21:00") \
        == "Наступает первый день. Голосование — до 8 дек. 21:00."


def test_reminders_and_the_desk_read_as_a_master_writes() -> None:
    assert t("event.reminded_none", "ru") == "Все уже сходили — напоминать некому."
    assert t("event.reminded", "ru", owing="@Игорь", count=1) == "Лично напомнили: @Игорь."
    assert t("master.prod", "ru", names="@Игорь") == "Лично напомнили: @Игорь."
    assert t("desk.day.hanged", "ru", name="@Лёва") == \
        "Повешен игрок @Лёва: против него больше всех голосов."


def test_items_and_spells_are_named_with_their_noun() -> None:
    from core.sight.narrate import readable

    spell = readable({"item": "silence"}, str, "ru")
    item = readable({"item": "protection", "against": "killer"}, str, "ru")
    assert spell["item_called"] == "заклинание «Немота»"
    assert item["item_called"] == "предмет «Защита от убийцы»"
    assert t("event.desk_purchase", "ru", uid="@Алиса", item_called=spell["item_called"],
             cost_lira_acc="8 лир", spent="8 лир", cap="20 лир").startswith(
        "@Алиса покупает заклинание «Немота» за 8 лир")


def test_the_team_hears_a_death_in_the_public_lines_shape() -> None:
    from core.game.events import Audience, Event, EventKind
    from core.sight.narrate import describe

    for cause, line in (("killed", "Убит игрок @Вера."),
                        ("hanged", "По итогам дня повешен игрок @Вера.")):
        event = Event(kind=EventKind.MATE_DIED, audience=Audience.to(2),
                      data={"uid": 9, "cause": cause})
        assert describe(event, lambda u: "@Вера", "ru") == f"Потеря в вашей команде. {line}"
        assert describe(event, lambda u: "@Vera", "en").startswith("Your team loses a member. ")


def test_the_footer_number_is_not_a_checkin_and_goals_follow_a_colon_in_lower_case() -> None:
    assert t("places.footer", "ru", title="Т", ref=25) == "«Т»: ваши личные новости, № 25"
    assert t("places.footer", "en", title="T", ref=25) == "“T”: your private news, no. 25"
    for side in ("negative", "positive", "neutral", "citizens"):
        for lang in ("ru", "en"):
            goal = t(f"side.{side}.goal", lang)
            assert goal[0].islower(), (lang, side, goal)
    assert t("help.rules.side", "ru", side="положительные",
             goal=t("side.positive.goal", "ru")).endswith(
        "Цель стороны: вывести из игры всех отрицательных и нейтральных игроков.")


def test_the_desk_names_days_and_nights_as_the_public_posts_do() -> None:
    from core.game.events import Audience, Event, EventKind
    from core.sight.desk import desk_text

    night = Event(kind=EventKind.NIGHT_EXPLAINED, audience=Audience.master(),
                  data={"night": 0, "steps": [], "deaths": {}})
    day = Event(kind=EventKind.DAY_EXPLAINED, audience=Audience.master(),
                data={"number": 1, "votes": [], "tally": [], "hanged": None})
    assert desk_text(night, str, "ru").splitlines()[0] == "Нулевая ночь по шагам:"
    assert desk_text(night, str, "en").splitlines()[0] == "Night 0, step by step:"
    assert desk_text(day, str, "ru").splitlines()[0] == \
        "Первый день: чем закончилось голосование"


def test_english_says_his_not_their_of_one_player() -> None:
    assert t("signup.option.bouncer_self.on", "en") == "the bouncer may protect himself"
    assert "from his own wallet" in t("event.thanked", "en", uid="A", master="M",
                                      premium_lira="2 lira")
    from core.text.i18n import get_catalogue

    catalogue = get_catalogue()
    english = " ".join(str(catalogue.entry(k, "en")) for k in catalogue.keys("en"))
    assert "protect themselves" not in english and "their own wallet" not in english
