"""Every catalogue string of both languages, rendered with sample values.

Each key of each language goes through the real renderer (core.text.i18n.t, strict
mode, the same formatting of numbers and plural choice the bot uses) with
sample values: names of both genders (and mentions), titles with quotes, counts
0, 1, 2, 5, 11, 21 and fractional votes. Checked: no placeholder or key left, no
English (Latin words) in Russian text beyond the allowed tokens (command-line
flags, environment variables, product names, URLs, the "x2" multiplier), no
Russian in English, the plural forms the CLDR rules choose, and Russian without a
grammatical gender we cannot know next to a player's name or the master.
(tests/i18n/test_i18n_coverage.py renders whole simulated games through describe(),
the embeds and the tables; this file covers the keys those games never reach.)
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from decimal import Decimal
from fractions import Fraction

import pytest

from core.text import i18n
from core.text.i18n import get_catalogue, plural_category, t

LANGS = ("ru", "en")
COUNTS: tuple[int | float | Fraction, ...] = (0, 1, 2, 5, 11, 21, 0.5, Fraction(3, 2))
NAME_KEYS = {"uid", "voter", "target", "actor", "fallback", "old", "new", "by", "acting",
             "master", "name", "if_hanged", "user"}
NUMBER_KEYS = {"number", "night", "cost", "cap", "need", "have", "left", "limit", "max", "min",
               "premium", "rank", "seconds", "seed", "spent", "moves", "games", "place",
               "living", "players", "roles", "negatives", "last", "rows", "wallets",
               "matching", "hours", "minutes", "amount", "balance", "clan", "price"}
#: Names of both genders, as the bot would show them (plain, and as a mention).
NAMES = {"ru": [["Дина", "Вера"], ["Олег", "Игорь"], ["<@101>", "<@102>"]],
         "en": [["Dina", "Vera"], ["Oleg", "Igor"], ["<@101>", "<@102>"]]}
TITLES = {"ru": "Ночь «длинных ножей»", "en": 'The "Long Knives" night'}
WORDS = {"ru": "вышибала", "en": "bouncer"}
MARKUP = re.compile(r"<[@#:][^<>]*>|<t:[^<>]*>")
#: Latin tokens a Russian text may hold: flags, variables, product names, URLs, ×N, file
#: names, keys (Ctrl+C) and language codes as a command line takes them (ru, en).
ALLOWED_LATIN = re.compile(
    r"--[a-z-]+|\b[A-Z][A-Z_]+\b|\.env(?:\.example)?|[a-z]+://\S+|\bx\d+\b"
    r"|[\w-]*\.(?:html|db|toml|png|json)\b|\bCtrl\+\w\b|\b(?:ru|en)\b"
    r"|\b(?:Discord|PostgreSQL|SQLite|English)\b")
LATIN_WORD = re.compile(r"[A-Za-z]{2,}")
#: Keys whose text names another language on purpose.
OTHER_SCRIPT = {"meta.language_name_en", "meta.language_name_ru"}


def placeholders(text: str) -> set[str]:
    return set(re.findall(r"(?<!\{)\{([a-z_]+)\}", text))


def forms(key: str, lang: str) -> list[str]:
    entry = get_catalogue().entry(key, lang)
    assert entry is not None, key
    return [entry] if isinstance(entry, str) else list(entry.values())


def samples(key: str, lang: str) -> Iterator[dict[str, object]]:
    """Parameter sets for one key: each gender of names, every count."""
    wanted = set().union(*(placeholders(f) for f in forms(key, lang)))
    plural = not isinstance(get_catalogue().entry(key, lang), str)
    counts = COUNTS if plural or "count" in wanted else (1,)
    for names in NAMES[lang]:
        for count in counts:
            params: dict[str, object] = {}
            for i, p in enumerate(sorted(wanted)):
                if p in NAME_KEYS:
                    params[p] = names[i % 2]
                elif p in ("title", "game"):
                    params[p] = TITLES[lang]
                elif p == "count":
                    params[p] = count
                elif p in NUMBER_KEYS:
                    params[p] = 5
                else:
                    params[p] = WORDS[lang]
            if plural:
                params["count"] = count
            yield params


def rendered() -> Iterator[tuple[str, str, dict[str, object], str]]:
    cat = get_catalogue()
    for lang in LANGS:
        for key in sorted(cat.keys(lang)):
            for params in samples(key, lang):
                yield lang, key, params, t(key, lang, **params)


def test_both_languages_have_the_same_keys() -> None:
    assert get_catalogue().keys("ru") == get_catalogue().keys("en")


def test_no_placeholder_or_key_is_left() -> None:
    bad = [f"{lang} {key}: {text!r}" for lang, key, _p, text in rendered()
           if re.search(r"(?<!\{)\{[a-z_]+\}(?!\})", text)
           or re.search(r"\b(?:event|error|notice|help|words)\.[a-z_]+\b", text)]
    assert bad == []


def latin_in(text: str) -> list[str]:
    bare = ALLOWED_LATIN.sub(" ", MARKUP.sub(" ", text))
    return LATIN_WORD.findall(bare)


def test_no_english_in_russian_and_no_russian_in_english() -> None:
    bad = []
    for lang, key, _p, text in rendered():
        if key in OTHER_SCRIPT:
            continue
        if lang == "ru" and latin_in(text):
            bad.append(f"ru {key}: {latin_in(text)} in {text!r}")
        if lang == "en" and re.search(r"[А-Яа-яЁё]", MARKUP.sub("", text)):
            bad.append(f"en {key}: {text!r}")
    assert bad == []


def test_the_latin_check_can_fail() -> None:
    assert latin_in("Куплено: alarm_clock за 5 лир.") == ["alarm", "clock"]
    assert latin_in("Укажите DISCORD_TOKEN и --shard-count; мафиози x2; <@12>") == []


def test_plural_forms_follow_cldr() -> None:
    cat = get_catalogue()
    for lang in LANGS:
        required = i18n.required_plural_categories(lang)
        for key in sorted(cat.keys(lang)):
            entry = cat.entry(key, lang)
            if isinstance(entry, str) or entry is None:
                continue
            assert required <= set(entry), f"{lang} {key}: {sorted(entry)}"
            if lang == "ru":  # "1 голос" and "5 голосов" are different words
                assert entry["one"] != entry["many"] and entry["few"] != entry["many"], key
            for count in COUNTS:
                form = entry[plural_category(count, lang)]
                params = next(p for p in samples(key, lang) if p["count"] == count)
                assert t(key, lang, **params) == form.format(
                    **{**params, "count": i18n.format_number(count, lang)})  # type: ignore[arg-type]


@pytest.mark.parametrize(("count", "text"), [
    (0, "0 голосов"), (1, "1 голос"), (2, "2 голоса"), (5, "5 голосов"), (11, "11 голосов"),
    (21, "21 голос"), (0.5, "0,5 голоса"), (Fraction(3, 2), "1,5 голоса"),
    (Decimal("2.5"), "2,5 голоса")])
def test_russian_vote_counts(count: object, text: str) -> None:
    assert t("vote.count", "ru", count=count) == text


def test_english_counts() -> None:
    assert [t("vote.count", "en", count=n) for n in (0, 1, 2, 0.5)] == [
        "0 votes", "1 vote", "2 votes", "0.5 votes"]
    assert t("player.count", "en", count=21) == "21 players"


# ─── Russian without a gender we cannot know ───────────────────────────────
#: A verb or short adjective that agrees with its subject's gender, right after a player's
#: name ("{target} жив", "{target} уже выбыл") or after "Мастер" in the past tense.
GENDERED_AFTER_NAME = re.compile(
    r"\{(?:" + "|".join(sorted(NAME_KEYS)) + r")\}\s+(?:уже\s+|ещё\s+|не\s+)?"
    r"(?:был|была|жив|жива|мёртв|мертва|убит|убита|повешен|повешена|исключён|исключена"
    r"|голосовал|голосовала|выбыл|выбыла|сходил|сходила|предупредил|предупредила)\b")
MASTER_PAST = re.compile(r"\b[Мм]астер\s+(?:уже\s+)?[а-яё]+л\b")
#: A name after a preposition or as an object, where Russian would decline it.
NAME_AFTER_PREPOSITION = re.compile(
    r"\b(?:против|с|у|на|для|от|о|об)\s+\{(?:" + "|".join(sorted(NAME_KEYS - {"name"})) + r")\}")


def russian_values() -> Iterator[tuple[str, str]]:
    for key in sorted(get_catalogue().keys("ru")):
        for text in forms(key, "ru"):
            yield key, text


def test_russian_needs_no_gender_next_to_a_name() -> None:
    bad = [f"{key}: {text!r}" for key, text in russian_values()
           if GENDERED_AFTER_NAME.search(text) or MASTER_PAST.search(text)]
    assert bad == []


def test_russian_names_never_need_declension() -> None:
    """"против {target}" would need the genitive of a name we cannot decline: the catalogue
    says "против игрока {target}" instead."""
    bad = [f"{key}: {text!r}" for key, text in russian_values()
           if NAME_AFTER_PREPOSITION.search(text)]
    assert bad == []


def test_the_gender_checks_can_fail() -> None:
    assert GENDERED_AFTER_NAME.search("{target} уже выбыл из игры.")
    assert GENDERED_AFTER_NAME.search("{target} жив: исключать можно только мёртвых.")
    assert MASTER_PAST.search("Мастер отменил игру.")
    assert not MASTER_PAST.search("Мастер отменяет игру.")
    assert NAME_AFTER_PREPOSITION.search("{voter} голосует против {target}.")
    assert not NAME_AFTER_PREPOSITION.search("{voter} голосует против игрока {target}.")


def test_titles_and_datives_read_right() -> None:
    title = TITLES["ru"]
    assert t("lobby.joined", "ru", title=title, count=3) == (
        "Вы записались на игру «Ночь «длинных ножей»»: теперь в ней 3 игрока.")
    assert t("lobby.left", "ru", title=title, count=2).startswith(
        "Вы снялись с игры «Ночь")
    assert t("event.bonus_granted", "ru", uid="@Дина", amount_lira=t("currency.lira", "ru",
                                                                      count=5),
             reason="за рассказ") == "Мастер выдаёт игроку @Дина бонус — 5 лир: «за рассказ»."
    assert t("help.duty.voted", "ru").startswith("Ваш голос засчитан")
    assert t("event.died_hidden.hanged", "ru", uid="Дина") == \
        "По итогам дня повешен игрок Дина."
