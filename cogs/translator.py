"""Slash-command localisation through the message catalogue (core/text/i18n.py).

English is the source language: the strings written in the command definitions
are what Discord shows by default.  :class:`CatalogueTranslator` supplies the
Russian ``name_localizations`` / ``description_localizations`` when the command
tree is synced, and returns ``None`` (no localisation) for every locale whose
language (:func:`core.text.i18n.normalize_locale`) is English -- i.e. every Discord
locale except ``ru`` under the current policy.

Key convention for command authors
==================================
1. **Preferred: pass ``key=`` to every ``locale_str``** used in a command
   definition.  The message stays the English source text; the key names the
   catalogue entry::

       from discord.app_commands import locale_str as _T

       @app_commands.command(
           name=_T("create", key="cmd.game.create.name"),
           description=_T("Create a game", key="cmd.game.create.description"),
       )
       @app_commands.rename(players=_T("players", key="cmd.game.create.param.players.name"))
       @app_commands.describe(
           players=_T("How many players", key="cmd.game.create.param.players.description"),
       )
       @app_commands.choices(
           role=[Choice(name=_T("Mafioso", key="role.mafioso.name"), value="mafioso")],
       )

   Any existing key may be reused (choices naming roles use ``role.<id>.name``).

2. **Without ``key=``** (a ``locale_str`` without it, or a plain ``str`` that
   discord.py wraps automatically) the key is derived from where the string is
   (see :func:`key_for`).  ``<path>`` is the command's qualified name with spaces
   replaced by dots (``/game create`` -> ``game.create``); ``<param>`` is the
   Python parameter name (not a renamed display name)::

       command or group name          cmd.<path>.name
       command or group description   cmd.<path>.description
       parameter name                 cmd.<path>.param.<param>.name
       parameter description          cmd.<path>.param.<param>.description
       choice name                    choice.<slug of the English choice name>
       context-menu name              ctx.<slug of the English name>.name
       anything else                  text.<slug of the message>

   The slug is the text lower-cased with every run of characters other than
   ``a-z0-9`` replaced by ``_`` (``"Honest citizen"`` -> ``honest_citizen``).

discord.py's placeholder description ``"…"`` of an option left undescribed is
not looked up.  The key must exist in ``ru.toml`` (and, as every key, in
``en.toml``).  A missing key, a plural entry or a translation Discord would
reject (see the validators below) is logged and left untranslated in
production; in strict mode (:func:`core.text.i18n.set_strict`) it raises, which
fails the sync or the test.

Discord's limits, checked here: slash-command, group and option *names* are
lower case, 1-32 characters of ``^[-_\\p{L}\\p{N}]{1,32}$``; context-menu names
1-32 characters; descriptions and choice names 1-100 characters.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from typing import TYPE_CHECKING, Any

from discord import Locale, app_commands
from discord.app_commands import (
    TranslationContextLocation,
    TranslationContextTypes,
    locale_str,
)

from core.text.i18n import DEFAULT_LANGUAGE, Catalogue, get_catalogue, is_strict, normalize_locale

if TYPE_CHECKING:
    from discord.ext import commands

__all__ = [
    "CatalogueTranslator",
    "is_valid_command_name",
    "is_valid_context_menu_name",
    "is_valid_description",
    "key_for",
    "slugify",
    "validate_translation",
]

log = logging.getLogger(__name__)

MAX_NAME_LENGTH = 32
MAX_DESCRIPTION_LENGTH = 100

_NAME_LOCATIONS = frozenset(
    {
        TranslationContextLocation.command_name,
        TranslationContextLocation.group_name,
        TranslationContextLocation.parameter_name,
    }
)
_DEFAULT_DESCRIPTION = "…"  # what discord.py sends for an option without a description
_SLUG_SEPARATORS = re.compile(r"[^a-z0-9]+")


def is_valid_command_name(name: str) -> bool:
    """Discord's rule for slash-command, group and option names (and their localisations).

    ``^[-_\\p{L}\\p{N}]{1,32}$`` and lower case (every character that has a lower-case
    form is in it): ``"создать"`` and ``"день-1"`` are valid, ``"Создать"``,
    ``"новая игра"`` and ``""`` are not.
    """
    if not 1 <= len(name) <= MAX_NAME_LENGTH or name != name.lower():
        return False
    return all(char in "-_" or unicodedata.category(char)[0] in {"L", "N"} for char in name)


def is_valid_context_menu_name(name: str) -> bool:
    """Context-menu names: 1-32 characters, any case, spaces allowed."""
    return 1 <= len(name) <= MAX_NAME_LENGTH and name.strip() == name


def is_valid_description(text: str) -> bool:
    """Descriptions and choice names: 1-100 characters."""
    return 1 <= len(text) <= MAX_DESCRIPTION_LENGTH


def slugify(text: str) -> str:
    """``"Honest citizen"`` -> ``"honest_citizen"`` (used for derived keys)."""
    return _SLUG_SEPARATORS.sub("_", text.lower()).strip("_")


def _path(qualified_name: str) -> str:
    return ".".join(qualified_name.split())


def _is_context_menu(context: TranslationContextTypes) -> bool:
    return isinstance(context.data, app_commands.ContextMenu)


def key_for(string: locale_str, context: TranslationContextTypes) -> str:
    """The catalogue key of *string*: ``string.extras['key']``, else derived from *context*."""
    explicit = string.extras.get("key")
    if isinstance(explicit, str) and explicit:
        return explicit
    location = context.location
    data: Any = context.data
    if location is TranslationContextLocation.command_name and _is_context_menu(context):
        return f"ctx.{slugify(string.message)}.name"
    if location in (TranslationContextLocation.command_name, TranslationContextLocation.group_name):
        return f"cmd.{_path(data.qualified_name)}.name"
    if location in (
        TranslationContextLocation.command_description,
        TranslationContextLocation.group_description,
    ):
        return f"cmd.{_path(data.qualified_name)}.description"
    if location is TranslationContextLocation.parameter_name:
        return f"cmd.{_path(data.command.qualified_name)}.param.{data.name}.name"
    if location is TranslationContextLocation.parameter_description:
        return f"cmd.{_path(data.command.qualified_name)}.param.{data.name}.description"
    if location is TranslationContextLocation.choice_name:
        return f"choice.{slugify(string.message)}"
    return f"text.{slugify(string.message)}"


def validate_translation(
    text: str, location: TranslationContextLocation, *, context_menu: bool = False
) -> str | None:
    """Why Discord would reject *text* at *location*, or ``None`` if it is acceptable."""
    if location in _NAME_LOCATIONS:
        if context_menu:
            if is_valid_context_menu_name(text):
                return None
            return "context-menu names must be 1-32 characters"
        if is_valid_command_name(text):
            return None
        return "names must be lower case, 1-32 characters of letters, digits, '-' and '_'"
    if is_valid_description(text):
        return None
    return "descriptions and choice names must be 1-100 characters"


class CatalogueTranslator(app_commands.Translator):
    """Translates command names, descriptions, options and choices into Russian.

    Install with ``await bot.tree.set_translator(CatalogueTranslator())`` before
    ``bot.tree.sync()`` (or load this module as an extension, which does it).
    """

    def __init__(self, catalogue: Catalogue | None = None, *, strict: bool | None = None) -> None:
        self.catalogue = catalogue if catalogue is not None else get_catalogue()
        #: ``None`` follows :func:`core.text.i18n.is_strict`.
        self.strict = strict

    def _is_strict(self) -> bool:
        return is_strict() if self.strict is None else self.strict

    def _reject(self, message: str) -> None:
        if self._is_strict():
            raise ValueError(message)
        log.warning("translator: %s", message)

    async def load(self) -> None:
        """(Re)load the catalogue files, so a malformed file fails at start-up."""
        self.catalogue.load()

    async def translate(
        self, string: locale_str, locale: Locale, context: TranslationContextTypes
    ) -> str | None:
        lang = normalize_locale(locale.value)
        if lang == DEFAULT_LANGUAGE:
            return None
        if string.message == _DEFAULT_DESCRIPTION and "key" not in string.extras:
            return None  # discord.py's placeholder for undescribed options: nothing to say
        key = key_for(string, context)
        entry = self.catalogue.entry(key, lang)
        if entry is None:
            self._reject(f"no {lang!r} translation for {string.message!r} (key {key!r})")
            return None
        if not isinstance(entry, str):
            self._reject(f"key {key!r} is a plural entry and cannot localise a command")
            return None
        problem = validate_translation(
            entry, context.location, context_menu=_is_context_menu(context)
        )
        if problem is not None:
            self._reject(f"{lang} translation {entry!r} of key {key!r} is invalid: {problem}")
            return None
        return entry


async def setup(bot: commands.Bot) -> None:
    """Extension entry point: install the translator on the bot's command tree."""
    await bot.tree.set_translator(CatalogueTranslator())


async def teardown(bot: commands.Bot) -> None:
    """Extension exit point: remove the translator."""
    await bot.tree.set_translator(None)
