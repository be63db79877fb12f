"""Tests of the message catalogues and core.text.i18n."""

from __future__ import annotations

import logging
import string
import subprocess
import sys
import tomllib
from decimal import Decimal
from fractions import Fraction
from io import BufferedReader
from pathlib import Path

import pytest

from core.text import i18n
from core.text.i18n import (
    LOCALES_DIR,
    SUPPORTED_LANGUAGES,
    Catalogue,
    CatalogueError,
    format_number,
    get_catalogue,
    has_key,
    keys,
    normalize_locale,
    plural_category,
    required_plural_categories,
    t,
)

REPO = Path(__file__).resolve().parents[2]

ROLES = {
    "mafioso": "мафиози",
    "investigator": "следователь",
    "sergeant": "сержант",
    "bouncer": "вышибала",
    "killer": "убийца",
    "citizen": "честный житель",
    "advocate": "адвокат",
    "operative": "опер",
    "occultist": "оккультист",
}
SIDES = {
    "negative": "отрицательные",
    "positive": "положительные",
    "neutral": "нейтральные",
    "citizens": "честные жители",
}
ITEMS = {
    "protection": "Защита от…",
    "alarm_clock": "Будильник",
    "cheque_book": "Чековая книжка",
    "spiked_club": "Шипованная дубина",
}
SPELLS = {
    "sleep": "Усыпление",
    "silence": "Немота",
    "shout": "Крик",
    "free_speech": "Свобода слова",
    "helplessness": "Беспомощность",
    "doubling": "Удвоение",
    "destruction": "Разрушение",
}


def placeholders(entry: i18n.Entry) -> set[str]:
    texts = [entry] if isinstance(entry, str) else list(entry.values())
    names: set[str] = set()
    for text in texts:
        for _literal, field, _spec, _conversion in string.Formatter().parse(text):
            if field is not None:
                names.add(field.split(".")[0].split("[")[0])
    return names


def write(directory: Path, lang: str, text: str) -> None:
    (directory / f"{lang}.toml").write_text(text, encoding="utf-8")


# ─── the shipped catalogues ─────────────────────────────────────────────────


def test_locales_dir_is_in_the_repository() -> None:
    assert LOCALES_DIR == REPO / "data" / "locales"
    for lang in SUPPORTED_LANGUAGES:
        assert (LOCALES_DIR / f"{lang}.toml").is_file()


def test_catalogues_load_and_are_not_empty() -> None:
    catalogue = Catalogue()
    catalogue.load()
    for lang in SUPPORTED_LANGUAGES:
        assert len(catalogue.keys(lang)) > 50


def test_every_key_exists_in_both_languages() -> None:
    ru, en = keys("ru"), keys("en")
    assert sorted(ru - en) == [], "keys only in ru.toml"
    assert sorted(en - ru) == [], "keys only in en.toml"


def test_entry_kinds_match_between_languages() -> None:
    catalogue = get_catalogue()
    for key in keys("en"):
        ru, en = catalogue.entry(key, "ru"), catalogue.entry(key, "en")
        assert isinstance(ru, str) == isinstance(en, str), key


def test_required_plural_categories() -> None:
    assert required_plural_categories("ru") == {"one", "few", "many", "other"}
    assert required_plural_categories("en") == {"one", "other"}


@pytest.mark.parametrize("lang", SUPPORTED_LANGUAGES)
def test_plural_tables_have_exactly_the_categories_the_language_needs(lang: str) -> None:
    catalogue = get_catalogue()
    needed = required_plural_categories(lang)
    tables = 0
    for key in keys(lang):
        entry = catalogue.entry(key, lang)
        if isinstance(entry, str):
            continue
        tables += 1
        assert entry is not None
        assert set(entry) == needed, f"{lang}: {key} has {sorted(entry)}, needs {sorted(needed)}"
        assert all(text.strip() for text in entry.values()), key
    assert tables >= 5


def test_placeholders_are_the_same_in_both_languages() -> None:
    catalogue = get_catalogue()
    for key in keys("en"):
        ru, en = catalogue.entry(key, "ru"), catalogue.entry(key, "en")
        assert ru is not None and en is not None
        assert placeholders(ru) == placeholders(en), key


def test_plural_forms_all_use_count() -> None:
    catalogue = get_catalogue()
    for lang in SUPPORTED_LANGUAGES:
        for key in keys(lang):
            entry = catalogue.entry(key, lang)
            if entry is not None and not isinstance(entry, str):
                for category, text in entry.items():
                    assert "{count}" in text, f"{lang}: {key}.{category}"


def test_no_empty_texts() -> None:
    catalogue = get_catalogue()
    for lang in SUPPORTED_LANGUAGES:
        for key in keys(lang):
            entry = catalogue.entry(key, lang)
            if isinstance(entry, str):
                assert entry.strip(), f"{lang}: {key}"


@pytest.mark.parametrize(("role", "name"), ROLES.items())
def test_roles(role: str, name: str) -> None:
    assert t(f"role.{role}.name", "ru") == name
    for lang in SUPPORTED_LANGUAGES:
        assert t(f"role.{role}.name", lang)
        assert t(f"role.{role}.genitive", lang)
        power = t(f"role.{role}.power", lang)
        assert power.endswith("."), power


@pytest.mark.parametrize(("side", "name"), SIDES.items())
def test_sides(side: str, name: str) -> None:
    assert t(f"side.{side}.name", "ru") == name
    assert t(f"side.{side}.goal", "en")


@pytest.mark.parametrize(("item", "name"), ITEMS.items())
def test_items(item: str, name: str) -> None:
    assert t(f"item.{item}.name", "ru") == name
    assert t(f"item.{item}.effect", "en")


@pytest.mark.parametrize(("spell", "name"), SPELLS.items())
def test_spells(spell: str, name: str) -> None:
    assert t(f"spell.{spell}.name", "ru") == name
    assert t(f"spell.{spell}.effect", "en")


def test_protection_against_a_role() -> None:
    attacker = t("role.killer.genitive", "ru")
    assert t("item.protection.name_against", "ru", attacker=attacker) == "Защита от убийцы"


# ─── plurals and numbers ────────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("count", "expected"),
    [
        (1, "1 голос"),
        (2, "2 голоса"),
        (5, "5 голосов"),
        (11, "11 голосов"),
        (21, "21 голос"),
        (22, "22 голоса"),
        (0.5, "0,5 голоса"),
        (Fraction(1, 2), "0,5 голоса"),
        (Decimal("0.5"), "0,5 голоса"),
        (Fraction(3, 2), "1,5 голоса"),
        (0, "0 голосов"),
        (2.0, "2 голоса"),
        (Decimal("5.0"), "5 голосов"),
        (Fraction(42, 2), "21 голос"),
        (111, "111 голосов"),
    ],
)
def test_russian_votes(count: int | float | Fraction | Decimal, expected: str) -> None:
    assert t("vote.count", "ru", count=count) == expected


@pytest.mark.parametrize(("count", "expected"), [(1, "1 лира"), (2, "2 лиры"), (5, "5 лир")])
def test_russian_lira(count: int, expected: str) -> None:
    assert t("currency.lira", "ru", count=count) == expected


@pytest.mark.parametrize(
    ("key", "count", "expected"),
    [
        ("day.count", 1, "1 день"),
        ("day.count", 3, "3 дня"),
        ("day.count", 7, "7 дней"),
        ("player.count", 21, "21 игрок"),
        ("player.count", 4, "4 игрока"),
        ("player.count", 12, "12 игроков"),
    ],
)
def test_russian_other_plurals(key: str, count: int, expected: str) -> None:
    assert t(key, "ru", count=count) == expected


@pytest.mark.parametrize(
    ("count", "expected"),
    [
        (1, "1 vote"),
        (2, "2 votes"),
        (0.5, "0.5 votes"),
        (Fraction(1, 2), "0.5 votes"),
        (0, "0 votes"),
    ],
)
def test_english_votes(count: int | float | Fraction, expected: str) -> None:
    assert t("vote.count", "en", count=count) == expected


def test_english_other_plurals() -> None:
    assert t("day.count", "en-US", count=1) == "1 day"
    assert t("player.count", "en-GB", count=9) == "9 players"
    assert t("currency.lira", "en", count=60) == "60 lira"


def test_format_number() -> None:
    assert format_number(0.5, "ru") == "0,5"
    assert format_number(0.5, "en") == "0.5"
    assert format_number(Decimal("2.50"), "ru") == "2,5"
    assert format_number(1234567, "ru") == "1234567"  # integers plain: ids stay intact
    assert format_number(1234.5, "ru") == "1234,5"
    assert format_number(Fraction(1, 3), "en") == "0.333"
    assert format_number(3.0, "ru") == "3"


def test_plural_category() -> None:
    assert plural_category(0.5, "ru") == "other"
    assert plural_category(21, "ru") == "one"
    assert plural_category(1, "en") == "one"
    with pytest.raises(TypeError):
        plural_category("1", "ru")  # type: ignore[arg-type]


def test_numeric_params_are_localised() -> None:
    assert t("phase.day.name", "ru", number=2) == "День 2"
    assert t("spell.shout.effect", "ru").count("0,5") == 1  # literal text untouched
    assert t("term.clan_numbered", "ru", number=Fraction(3)) == "клан 3"


def test_bool_and_str_params_are_not_numbers() -> None:
    assert t("phase.night.name", "en", number="IV") == "Night IV"
    assert t("phase.night.name", "en", number=True) == "Night True"


# ─── normalize_locale ───────────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("ru", "ru"),
        ("ru-RU", "ru"),
        ("RU", "ru"),
        ("ru_RU", "ru"),
        (" ru ", "ru"),
        ("be", "ru"),
        ("be-BY", "ru"),
        ("en", "en"),
        ("en-US", "en"),
        ("en-GB", "en"),
        ("uk", "en"),
        ("de", "en"),
        ("zh-CN", "en"),
        ("es-419", "en"),
        ("", "en"),
        (None, "en"),
    ],
)
def test_normalize_locale(value: str | None, expected: str) -> None:
    assert normalize_locale(value) == expected


def test_t_accepts_any_locale_string() -> None:
    assert t("role.killer.name", "ru-RU") == "убийца"
    assert t("role.killer.name", "en-GB") == "killer"
    assert t("role.killer.name", "fr") == "killer"


# ─── lookup, fallback, strictness ───────────────────────────────────────────


def test_has_key_and_keys() -> None:
    assert has_key("role.mafioso.name")
    assert has_key("role.mafioso.name", "ru")
    assert has_key("vote.count", "en-US")
    assert not has_key("role.mafioso")  # a prefix, not a key
    assert not has_key("no.such.key", "ru")
    assert "role.mafioso.power" in keys("ru")
    assert isinstance(keys("en"), frozenset)


def test_missing_key_raises_in_strict_mode() -> None:
    with pytest.raises(KeyError, match=r"no\.such\.key"):
        t("no.such.key", "ru")


def test_missing_key_returns_key_in_production(caplog: pytest.LogCaptureFixture) -> None:
    i18n.set_strict(False)
    with caplog.at_level(logging.WARNING, logger="core.text.i18n"):
        assert t("no.such.key.for.sure", "ru") == "no.such.key.for.sure"
    assert "no.such.key.for.sure" in caplog.text


@pytest.fixture
def without_other(tmp_path: Path) -> Catalogue:
    write(
        tmp_path,
        "ru",
        'both = "оба {name}"\n'
        'vote = { one = "{count} голос", few = "{count} голоса", many = "{count} голосов" }\n',
    )
    write(
        tmp_path,
        "en",
        'both = "both {name}"\n'
        'only_en = "English only"\n'
        'vote = { one = "{count} vote", other = "{count} votes" }\n',
    )
    return Catalogue(tmp_path)


def test_table_without_other_is_rejected(without_other: Catalogue) -> None:
    with pytest.raises(CatalogueError, match="other"):
        without_other.load()


@pytest.fixture
def fallback(tmp_path: Path) -> Catalogue:
    write(tmp_path, "ru", 'both = "оба {name}"\n')
    write(
        tmp_path,
        "en",
        'both = "both {name}"\nonly_en = "English only"\n'
        'vote = { one = "{count} vote", other = "{count} votes" }\n',
    )
    return Catalogue(tmp_path)


def test_fallback_to_english_in_production(fallback: Catalogue) -> None:
    fallback.strict = False
    assert fallback.t("only_en", "ru") == "English only"
    # the English form is chosen with English rules
    assert fallback.t("vote", "ru", count=0.5) == "0.5 votes"


def test_missing_in_requested_language_raises_in_strict_mode(fallback: Catalogue) -> None:
    with pytest.raises(KeyError, match="only_en"):
        fallback.t("only_en", "ru")


def test_missing_parameter(fallback: Catalogue) -> None:
    with pytest.raises(KeyError, match="name"):
        fallback.t("both", "ru")
    fallback.strict = False
    assert fallback.t("both", "ru") == "оба {name}"


def test_plural_without_count(fallback: Catalogue) -> None:
    with pytest.raises(TypeError, match="count"):
        fallback.t("vote", "en")
    fallback.strict = False
    assert fallback.t("vote", "en") == "{count} votes"


def test_extra_parameters_are_ignored(fallback: Catalogue) -> None:
    assert fallback.t("both", "ru", name="A", unused=1) == "оба A"


def test_catalogue_is_cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "ru", 'a = "а"\n')
    write(tmp_path, "en", 'a = "a"\n')
    calls: list[object] = []
    real_load = tomllib.load

    def counting_load(handle: object) -> object:
        calls.append(handle)
        assert isinstance(handle, BufferedReader)
        return real_load(handle)

    monkeypatch.setattr(tomllib, "load", counting_load)
    catalogue = Catalogue(tmp_path)
    for _ in range(3):
        assert catalogue.t("a", "ru") == "а"
        assert catalogue.t("a", "en") == "a"
    assert len(calls) == 2
    write(tmp_path, "ru", 'a = "б"\n')
    catalogue.reload()
    assert catalogue.t("a", "ru") == "б"
    assert get_catalogue() is get_catalogue()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('x = { one = "1", other = "2", extra = "3" }\n', "mixes"),
        ('x = { one = "1" }\n', "other"),
        ('Bad.Key = "x"\n', "segments"),
        ("x = 3\n", "string"),
        ('x = "a"\nx = "b"\n', "overwrite"),
    ],
)
def test_malformed_catalogues(tmp_path: Path, text: str, message: str) -> None:
    write(tmp_path, "ru", text)
    write(tmp_path, "en", 'x = "x"\n')
    with pytest.raises(CatalogueError, match=message):
        Catalogue(tmp_path).load()


def test_missing_file(tmp_path: Path) -> None:
    write(tmp_path, "en", 'x = "x"\n')
    with pytest.raises(CatalogueError, match="missing"):
        Catalogue(tmp_path).load()


def test_core_i18n_does_not_import_discord() -> None:
    code = "import sys, core.text.i18n; assert 'discord' not in sys.modules, 'discord imported'"
    subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True)
