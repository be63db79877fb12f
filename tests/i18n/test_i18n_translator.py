"""Tests of cogs.translator.CatalogueTranslator (slash-command localisation)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import discord
import pytest
from discord import Locale, app_commands
from discord.app_commands import TranslationContext, TranslationContextLocation, locale_str

from cogs.translator import (
    CatalogueTranslator,
    is_valid_command_name,
    is_valid_context_menu_name,
    is_valid_description,
    key_for,
    slugify,
    validate_translation,
)
from core.text import i18n
from core.text.i18n import Catalogue, get_catalogue, keys

L = TranslationContextLocation

RU_CATALOGUE = """
# commands
cmd.game.name = "игра"
cmd.game.description = "Команды игры"
cmd.game.create.name = "создать"
cmd.game.create.description = "Создать игру"
cmd.game.create.param.players.name = "игроки"
cmd.game.create.param.players.description = "Сколько игроков"
cmd.game.create.param.role.name = "роль"
cmd.game.create.param.role.description = "Роль"
cmd.game.vote.name = "голос"
cmd.game.vote.description = "Проголосовать"
cmd.game.vote.param.target.name = "цель"
choice.honest_citizen = "честный житель"
ctx.report_player.name = "Пожаловаться"
role.mafioso.name = "мафиози"
bad.name = "Новая игра"
bad.long = "LONG"
vote.count = { one = "{count} голос", few = "{count} голоса", other = "{count} голоса" }
"""


@pytest.fixture
def catalogue(tmp_path: Path) -> Catalogue:
    ru = RU_CATALOGUE.replace("LONG", "д" * 101)
    (tmp_path / "ru.toml").write_text(ru, encoding="utf-8")
    (tmp_path / "en.toml").write_text("", encoding="utf-8")  # only Russian is consulted
    return Catalogue(tmp_path)


@pytest.fixture
async def tree() -> AsyncIterator[app_commands.CommandTree[discord.Client]]:
    client = discord.Client(intents=discord.Intents.none())
    yield app_commands.CommandTree(client)
    await client.close()


def make_context(location: TranslationContextLocation, data: object) -> Any:
    """A TranslationContext as discord.py builds it (typed loosely for the tests)."""
    return TranslationContext(location, data)  # type: ignore[call-overload]


def make_group() -> app_commands.Group:
    group = app_commands.Group(name="game", description="Game commands")

    @group.command(
        name=locale_str("create", key="cmd.game.create.name"),
        description=locale_str("Create a game", key="cmd.game.create.description"),
    )
    @app_commands.rename(players=locale_str("players", key="cmd.game.create.param.players.name"))
    @app_commands.describe(
        players=locale_str("How many players", key="cmd.game.create.param.players.description"),
        role="Role",  # plain str: derived key cmd.game.create.param.role.description
    )
    @app_commands.choices(
        role=[
            app_commands.Choice(
                name=locale_str("Mafioso", key="role.mafioso.name"), value="mafioso"
            ),
            # plain str: derived key choice.honest_citizen
            app_commands.Choice(name="Honest citizen", value="citizen"),
        ]
    )
    async def create(interaction: discord.Interaction, players: int, role: str) -> None:
        """Unused."""

    @group.command(name="vote", description="Vote")  # derived keys, target left undescribed
    async def vote(interaction: discord.Interaction, target: str) -> None:
        """Unused."""

    return group


# ─── validators ─────────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    "name", ["создать", "игра", "день-1", "ночь_0", "a", "ё" * 32, "x1", "голос"]
)
def test_valid_command_names(name: str) -> None:
    assert is_valid_command_name(name)


@pytest.mark.parametrize(
    "name", ["", "Создать", "новая игра", "ё" * 33, "игра!", "a.b", "ROLE", "тест\n"]
)
def test_invalid_command_names(name: str) -> None:
    assert not is_valid_command_name(name)


def test_other_validators() -> None:
    assert is_valid_context_menu_name("Пожаловаться на игрока")
    assert not is_valid_context_menu_name("x" * 33)
    assert not is_valid_context_menu_name("")
    assert is_valid_description("д" * 100)
    assert not is_valid_description("д" * 101)
    assert not is_valid_description("")
    assert validate_translation("Игра", L.command_name) is not None
    assert validate_translation("Игра", L.command_description) is None
    assert validate_translation("Игра", L.command_name, context_menu=True) is None


def test_slugify() -> None:
    assert slugify("Honest citizen") == "honest_citizen"
    assert slugify("  Report player!  ") == "report_player"


# ─── key derivation ─────────────────────────────────────────────────────────


def contexts(group: app_commands.Group) -> dict[str, tuple[locale_str, Any]]:
    create = group.get_command("create")
    assert isinstance(create, app_commands.Command)
    players = create.get_parameter("players")
    role = create.get_parameter("role")
    assert players is not None and role is not None
    return {
        "group_name": (locale_str("game"), TranslationContext(L.group_name, group)),
        "group_description": (
            locale_str("Game commands"),
            TranslationContext(L.group_description, group),
        ),
        "command_name": (locale_str("create"), TranslationContext(L.command_name, create)),
        "command_description": (
            locale_str("Create a game"),
            TranslationContext(L.command_description, create),
        ),
        "parameter_name": (locale_str("players"), TranslationContext(L.parameter_name, players)),
        "parameter_description": (
            locale_str("Role"),
            TranslationContext(L.parameter_description, role),
        ),
        "choice_name": (
            locale_str("Honest citizen"),
            TranslationContext(L.choice_name, role.choices[1]),
        ),
        "other": (locale_str("Hello, world"), TranslationContext(L.other, None)),
    }


def test_derived_keys() -> None:
    ctx = contexts(make_group())
    derived = {name: key_for(string, context) for name, (string, context) in ctx.items()}
    assert derived == {
        "group_name": "cmd.game.name",
        "group_description": "cmd.game.description",
        "command_name": "cmd.game.create.name",
        "command_description": "cmd.game.create.description",
        "parameter_name": "cmd.game.create.param.players.name",
        "parameter_description": "cmd.game.create.param.role.description",
        "choice_name": "choice.honest_citizen",
        "other": "text.hello_world",
    }


def test_explicit_key_wins() -> None:
    _string, context = contexts(make_group())["command_name"]
    assert key_for(locale_str("create", key="some.key"), context) == "some.key"


def test_context_menu_key() -> None:
    async def report(interaction: discord.Interaction, member: discord.Member) -> None:
        """Unused."""

    menu = app_commands.ContextMenu(name="Report player", callback=report)
    context = make_context(L.command_name, menu)
    assert key_for(locale_str("Report player"), context) == "ctx.report_player.name"


# ─── translation ────────────────────────────────────────────────────────────


async def test_russian_translations_are_valid(catalogue: Catalogue) -> None:
    translator = CatalogueTranslator(catalogue)
    await translator.load()
    for name, (string, context) in contexts(make_group()).items():
        if name == "other":
            continue
        result = await translator.translate(string, Locale.russian, context)
        assert result is not None, name
        if context.location in {L.group_name, L.command_name, L.parameter_name}:
            assert is_valid_command_name(result), result


@pytest.mark.parametrize(
    "locale", [Locale.american_english, Locale.british_english, Locale.ukrainian, Locale.german]
)
async def test_other_locales_are_not_translated(catalogue: Catalogue, locale: Locale) -> None:
    translator = CatalogueTranslator(catalogue)
    for string, context in contexts(make_group()).values():
        assert await translator.translate(string, locale, context) is None


async def test_full_payload(
    catalogue: Catalogue, tree: app_commands.CommandTree[discord.Client]
) -> None:
    group = make_group()
    tree.add_command(group)
    payload = await group.get_translated_payload(tree, CatalogueTranslator(catalogue))
    assert payload["name"] == "game"
    assert payload["name_localizations"] == {"ru": "игра"}
    assert payload["description_localizations"] == {"ru": "Команды игры"}
    create, vote = payload["options"]
    assert create["name_localizations"] == {"ru": "создать"}
    assert create["description_localizations"] == {"ru": "Создать игру"}
    players, role = create["options"]
    assert players["name"] == "players"
    assert players["name_localizations"] == {"ru": "игроки"}
    assert players["description_localizations"] == {"ru": "Сколько игроков"}
    assert role["name_localizations"] == {"ru": "роль"}
    assert [c["name_localizations"] for c in role["choices"]] == [
        {"ru": "мафиози"},
        {"ru": "честный житель"},
    ]
    assert vote["name_localizations"] == {"ru": "голос"}
    target = vote["options"][0]
    assert target["name_localizations"] == {"ru": "цель"}
    assert "description_localizations" not in target  # "…" placeholder is left alone
    for option in (payload, create, vote, players, role, target):
        for name in option["name_localizations"].values():
            assert is_valid_command_name(name)


async def test_missing_key(catalogue: Catalogue) -> None:
    string, context = locale_str("x", key="no.such.key"), make_context(L.other, None)
    with pytest.raises(ValueError, match=r"no\.such\.key"):
        await CatalogueTranslator(catalogue).translate(string, Locale.russian, context)
    lenient = CatalogueTranslator(catalogue, strict=False)
    assert await lenient.translate(string, Locale.russian, context) is None


@pytest.mark.parametrize(
    ("key", "location"),
    [("bad.name", L.command_name), ("bad.long", L.command_description), ("vote.count", L.other)],
)
async def test_rejected_translations(
    catalogue: Catalogue, key: str, location: TranslationContextLocation
) -> None:
    group = make_group()
    string = locale_str("x", key=key)
    context = make_context(location, group.get_command("create"))
    with pytest.raises(ValueError, match=key):
        await CatalogueTranslator(catalogue).translate(string, Locale.russian, context)
    lenient = CatalogueTranslator(catalogue, strict=False)
    assert await lenient.translate(string, Locale.russian, context) is None


async def test_strict_failure_aborts_the_payload(
    catalogue: Catalogue, tree: app_commands.CommandTree[discord.Client]
) -> None:
    @app_commands.command(name="undocumented", description="Not in the catalogue")
    async def undocumented(interaction: discord.Interaction) -> None:
        """Unused."""

    with pytest.raises(app_commands.TranslationError):
        await undocumented.get_translated_payload(tree, CatalogueTranslator(catalogue))


# ─── the shipped catalogue ──────────────────────────────────────────────────


async def test_shipped_role_names_translate_choices() -> None:
    translator = CatalogueTranslator()
    await translator.load()
    for role in ("mafioso", "investigator", "citizen", "occultist"):
        string = locale_str(role.capitalize(), key=f"role.{role}.name")
        context = make_context(L.choice_name, app_commands.Choice(name=string, value=role))
        ru = await translator.translate(string, Locale.russian, context)
        assert ru == get_catalogue().t(f"role.{role}.name", "ru")
        assert await translator.translate(string, Locale.american_english, context) is None


def test_shipped_command_strings_respect_discord_limits() -> None:
    catalogue = get_catalogue()
    for key in keys("ru"):
        entry = catalogue.entry(key, "ru")
        if key.startswith(("cmd.", "ctx.", "choice.")):
            assert isinstance(entry, str), f"{key} must be a plain text"
        if not isinstance(entry, str):
            continue
        if key.startswith("cmd.") and key.endswith(".name"):
            assert is_valid_command_name(entry), f"{key} = {entry!r}"
        elif key.startswith("ctx.") and key.endswith(".name"):
            assert is_valid_context_menu_name(entry), f"{key} = {entry!r}"
        elif key.startswith("choice.") or (key.startswith("cmd.") and key.endswith(".description")):
            assert is_valid_description(entry), f"{key} = {entry!r}"


def test_discord_locale_strings_normalise() -> None:
    assert i18n.normalize_locale(str(Locale.russian)) == "ru"
    assert i18n.normalize_locale(str(Locale.american_english)) == "en"
    assert i18n.normalize_locale(Locale.ukrainian.value) == "en"
