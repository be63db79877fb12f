"""Slash-command localisation over the REAL command tree (bot.py + every cog).

The bot is built without logging in: the cogs are loaded as setup_hook loads them,
the CatalogueTranslator is installed, and the payload Discord would receive on
sync is produced for every command.  Each name, description, option and choice
must have a Russian translation Discord accepts; the English source strings in
the cogs must be the catalogue's English (cogs write them through
cogs/ui/text.py L()/command_kwargs/localized, never inline).
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import discord
import pytest_asyncio
from discord import Locale
from discord.app_commands import TranslationContextLocation, TranslationContextTypes, locale_str

from bot import EXTENSIONS, MafiaBot
from cogs.translator import (
    CatalogueTranslator,
    is_valid_command_name,
    is_valid_context_menu_name,
    is_valid_description,
    key_for,
)
from core.text import i18n
from core.text.i18n import t
from tests.bot.helpers import new_bot

SUBCOMMAND = discord.AppCommandOptionType.subcommand.value
SUBCOMMAND_GROUP = discord.AppCommandOptionType.subcommand_group.value
NAME_LOCATIONS = {
    TranslationContextLocation.command_name,
    TranslationContextLocation.group_name,
    TranslationContextLocation.parameter_name,
}


class RecordingTranslator(CatalogueTranslator):
    """The production translator, remembering every string it was asked about."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[locale_str, TranslationContextLocation, str, str | None]] = []

    async def translate(
        self, string: locale_str, locale: Locale, context: TranslationContextTypes
    ) -> str | None:
        result = await super().translate(string, locale, context)
        if locale is Locale.russian:
            self.seen.append((string, context.location, key_for(string, context), result))
        return result


@pytest_asyncio.fixture
async def tree(tmp_path: Path) -> AsyncIterator[tuple[MafiaBot, RecordingTranslator]]:
    bot = new_bot(tmp_path)
    translator = RecordingTranslator()
    await bot.tree.set_translator(translator)
    for ext in EXTENSIONS:
        await bot.load_extension(ext)
    try:
        yield bot, translator
    finally:
        for ext in EXTENSIONS:
            await bot.unload_extension(ext)


async def payloads(bot: MafiaBot, translator: CatalogueTranslator) -> list[dict[str, Any]]:
    return [await cmd.get_translated_payload(bot.tree, translator)
            for cmd in bot.tree.get_commands()]


# ─── the checker ─────────────────────────────────────────────────────────────


def _check_level(items: list[dict[str, Any]], where: str, out: list[str]) -> None:
    """Names at one level (top-level commands, a group's subcommands, a command's
    options) must be unique in English and in Russian."""
    for lang in ("en", "ru"):
        seen: dict[str, str] = {}
        for item in items:
            name = item["name"] if lang == "en" else item.get("name_localizations", {}).get("ru")
            if name is None:
                continue
            if name in seen:
                out.append(f"{where}: {item['name']!r} and {seen[name]!r} are both {name!r} "
                           f"in {lang}")
            seen[name] = item["name"]


def _check_item(item: dict[str, Any], where: str, out: list[str]) -> None:
    path = f"{where} {item['name']}".strip()
    ru_name = item.get("name_localizations", {}).get("ru")
    ru_description = item.get("description_localizations", {}).get("ru")
    if ru_name is None:
        out.append(f"{path}: no Russian name")
    elif not is_valid_command_name(ru_name):
        out.append(f"{path}: Russian name {ru_name!r} is not a valid Discord name")
    if not is_valid_command_name(item["name"]):
        out.append(f"{path}: English name {item['name']!r} is not a valid Discord name")
    description = item.get("description", "")
    if description in ("", "…"):
        out.append(f"{path}: no description")
    if ru_description is None:
        out.append(f"{path}: no Russian description")
    for text in (description, ru_description or ""):
        if len(text) > 100:
            out.append(f"{path}: description longer than 100 characters: {text!r}")
    for choice in item.get("choices", []):
        ru_choice = choice.get("name_localizations", {}).get("ru")
        if ru_choice is None:
            out.append(f"{path}: choice {choice['name']!r} has no Russian name")
        for text in (choice["name"], ru_choice or ""):
            if not is_valid_description(text) and text:
                out.append(f"{path}: choice name {text!r} is not 1-100 characters")
    if item.get("choices"):
        _check_level([{"name": c["name"], "name_localizations": c.get("name_localizations", {})}
                      for c in item["choices"]], f"{path} (choices)", out)
    options = item.get("options", [])
    _check_level(options, path, out)
    for option in options:
        _check_item(option, path, out)
    if item.get("type", 1) == 1 and options and not any(
            o.get("type") in (SUBCOMMAND, SUBCOMMAND_GROUP) for o in options):
        # Discord wants required options before optional ones
        required = [o.get("required", False) for o in options]
        if required != sorted(required, reverse=True):
            out.append(f"{path}: a required option follows an optional one")


def _check_menu(item: dict[str, Any], out: list[str]) -> None:
    """A context menu: a name of 1-32 characters (spaces and capitals allowed) in both
    languages, and no description (Discord takes none)."""
    ru_name = item.get("name_localizations", {}).get("ru")
    for name in (item["name"], ru_name):
        if name is None or not is_valid_context_menu_name(name):
            out.append(f"menu {item['name']!r}: name {name!r} is not a valid menu name")


def problems(payload: list[dict[str, Any]]) -> list[str]:
    """Everything Discord (or a Russian reader) would object to in a synced tree."""
    out: list[str] = []
    slash = [p for p in payload if p.get("type", 1) == 1]
    _check_level(slash, "/", out)
    _check_level([p for p in payload if p.get("type", 1) != 1], "menus", out)
    for command in payload:
        if command.get("type", 1) == 1:
            _check_item(command, "", out)
        else:
            _check_menu(command, out)
    return out


def test_the_checker_finds_problems() -> None:
    bad = [
        {"name": "vote", "description": "Vote", "name_localizations": {"ru": "голос"},
         "description_localizations": {"ru": "Голос"},
         "options": [
             {"name": "player", "description": "Who", "required": False,
              "name_localizations": {"ru": "игрок"},
              "description_localizations": {"ru": "Кто"}},
             {"name": "target", "description": "…", "required": True,
              "name_localizations": {"ru": "Игрок"},
              "description_localizations": {"ru": "д" * 101}},
             {"name": "again", "description": "Again",
              "name_localizations": {"ru": "игрок"}},
         ]},
        {"name": "votes", "description": "All votes", "name_localizations": {"ru": "голос"},
         "description_localizations": {"ru": "Голоса"}},
    ]
    found = "\n".join(problems(bad))
    assert "'votes' and 'vote' are both 'голос' in ru" in found
    assert "'again' and 'player' are both 'игрок' in ru" in found
    assert "Russian name 'Игрок' is not a valid Discord name" in found
    assert "vote target: no description" in found
    assert "longer than 100" in found
    assert "vote again: no Russian description" in found
    assert "a required option follows an optional one" in found
    assert problems([{"name": "ok", "description": "Fine", "name_localizations": {"ru": "ок"},
                      "description_localizations": {"ru": "Хорошо"}}]) == []


# ─── the real tree ───────────────────────────────────────────────────────────


async def test_every_command_is_translated_and_valid(
    tree: tuple[MafiaBot, RecordingTranslator],
) -> None:
    bot, translator = tree
    payload = await payloads(bot, translator)  # strict: a missing key raises here
    names = {p["name"] for p in payload}
    assert {"game", "vote", "night", "master", "role", "wallet", "anon"} <= names
    assert problems(payload) == []


async def test_russian_names_are_the_catalogue_entries(
    tree: tuple[MafiaBot, RecordingTranslator],
) -> None:
    bot, translator = tree
    payload = await payloads(bot, translator)
    by_name = {p["name"]: p for p in payload}
    game = by_name["game"]
    assert game["name_localizations"] == {"ru": t("cmd.game.name", "ru")}
    create = next(o for o in game["options"] if o["name"] == "create")
    assert create["name_localizations"] == {"ru": t("cmd.game.create.name", "ru")}
    title = next(o for o in create["options"] if o["name"] == "title")
    assert title["name_localizations"] == {"ru": t("cmd.game.create.param.title.name", "ru")}
    # only Russian is localised: every other locale sees the English source
    for command in payload:
        assert set(command["name_localizations"]) == {"ru"}
        if command.get("type", 1) == 1:  # a context menu has no description
            assert set(command["description_localizations"]) == {"ru"}
    menus = {p["name"]: p["name_localizations"] for p in payload if p.get("type") == 2}
    assert menus == {t("ctx.vote_against.name", "en"): {"ru": t("ctx.vote_against.name", "ru")},
                     t("ctx.night_order_on.name", "en"):
                         {"ru": t("ctx.night_order_on.name", "ru")}}


async def test_english_source_strings_are_the_catalogues_english(
    tree: tuple[MafiaBot, RecordingTranslator],
) -> None:
    bot, translator = tree
    await payloads(bot, translator)
    assert len(translator.seen) > 150
    wrong = []
    for string, location, key, result in translator.seen:
        if not i18n.has_key(key, "en"):
            wrong.append(f"{string.message!r}: no English key {key!r}")
            continue
        if string.message != t(key, "en"):
            wrong.append(f"{key}: the cog says {string.message!r}, the catalogue "
                         f"{t(key, 'en')!r}")
        if "key" not in string.extras:
            wrong.append(f"{key}: {string.message!r} is written inline, not through L()")
        if result is None:
            wrong.append(f"{key}: no Russian")
        elif location in NAME_LOCATIONS:  # a context menu's name has its own rule
            valid = is_valid_context_menu_name if key.startswith("ctx.") \
                else is_valid_command_name
            assert valid(result), (key, result)
    assert wrong == []


async def test_command_names_differ_from_each_other_in_russian(
    tree: tuple[MafiaBot, RecordingTranslator],
) -> None:
    """A Russian user types the Russian name: it must lead to exactly one command."""
    bot, translator = tree
    payload = await payloads(bot, translator)
    paths: dict[str, str] = {}

    def walk(items: list[dict[str, Any]], en: str, ru: str) -> None:
        for item in items:
            if item.get("type", 1) not in (1, SUBCOMMAND, SUBCOMMAND_GROUP):
                continue
            en_path = f"{en} {item['name']}".strip()
            ru_path = f"{ru} {item['name_localizations']['ru']}".strip()
            assert ru_path not in paths, (en_path, paths.get(ru_path))
            paths[ru_path] = en_path
            walk(item.get("options", []), en_path, ru_path)

    walk(payload, "", "")
    assert paths[f"{t('cmd.game.name', 'ru')} {t('cmd.game.create.name', 'ru')}"] \
        == "game create"



MENTION = re.compile(r"(?<![\w:/.])/([^\W\d_][\w-]*)(?: ([^\W\d_][\w-]*))?")


def command_mentions(text: str) -> list[tuple[str, str | None]]:
    return [(m.group(1), m.group(2)) for m in MENTION.finditer(text)]


def test_command_mentions_are_found() -> None:
    assert command_mentions("Хода ещё нет: /ночь.") == [("ночь", None)]
    assert command_mentions("Use /game create, see https://x.org/a and sqlite:///db") == [
        ("game", "create")]


async def test_texts_name_commands_as_the_reader_sees_them(
    tree: tuple[MafiaBot, RecordingTranslator],
) -> None:
    """A Russian client shows /игра создать, an English one /game create: a text
    telling the user to run a command must use the name of his language."""
    bot, translator = tree
    payload = await payloads(bot, translator)
    groups: dict[str, dict[str, set[str]]] = {"en": {}, "ru": {}}
    for command in payload:
        subs = [o for o in command.get("options", [])
                if o.get("type") in (SUBCOMMAND, SUBCOMMAND_GROUP)]
        groups["en"][command["name"]] = {o["name"] for o in subs}
        groups["ru"][command["name_localizations"]["ru"]] = {
            o["name_localizations"]["ru"] for o in subs}
    catalogue = i18n.get_catalogue()
    wrong = []
    mentions = 0
    for lang in ("en", "ru"):
        for key in sorted(i18n.keys(lang)):
            entry = catalogue.entry(key, lang)
            texts = [entry] if isinstance(entry, str) else list((entry or {}).values())
            for text in texts:
                for name, sub in command_mentions(text):
                    mentions += 1
                    if name not in groups[lang]:
                        wrong.append(f"{lang} {key}: /{name} is not a command in {lang}")
                    elif groups[lang][name] and sub not in groups[lang][name]:
                        wrong.append(f"{lang} {key}: /{name} {sub} is not a command in {lang}")
    assert mentions >= 6
    assert wrong == []
