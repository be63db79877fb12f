"""Internationalisation: message catalogues, plural forms and number formatting.

Catalogue format
================
One TOML file per language, ``data/locales/<lang>.toml`` (``ru.toml``, ``en.toml``),
plus feature files ``data/locales/<lang>/*.toml`` (events, errors, commands...),
read with the standard library's :mod:`tomllib` -- no extra dependency, comments
allowed (so the files can be organised in commented sections), UTF-8 by
definition, and duplicate keys are a parse error rather than a silent override.
gettext ``.po`` files were not chosen because they need a compile step and a
msgid-as-English convention; Fluent would add a dependency; JSON has no comments.

* **Keys are flat and dotted**: ``error.wrong_phase``, ``role.mafioso.name``.  In the
  files every entry is written with its full dotted key at the top level, so a
  key can be found with ``grep``::

      role.mafioso.name = "мафиози"

  TOML turns dotted keys into nested tables; the loader flattens them back.
  Consequences: a key cannot be both a text and a prefix of another key
  (``role.mafioso`` and ``role.mafioso.name`` cannot coexist), key segments are
  ``[a-z0-9_-]`` only, and the CLDR category names below are reserved as the
  last segment of plural tables.
* **Plural forms** are sub-tables keyed by CLDR plural categories
  (``zero one two few many other``), written as one-line inline tables::

      vote.count = { one = "{count} vote", other = "{count} votes" }

  A table whose keys are CLDR categories is a plural entry; it must contain
  ``other``; Russian needs ``one few many other``, English ``one other``
  (:func:`required_plural_categories`).  The form is chosen by Babel's CLDR rules
  applied to the ``count`` parameter (``int``, ``float``, ``Fraction`` or ``Decimal``;
  ``0.5`` is Russian ``other`` -> "0,5 голоса").
* **Placeholders** are :meth:`str.format` fields, ``{name}``; literal braces are
  written ``{{`` and ``}}``.  Numeric parameters are formatted for the language:
  integers plainly (``str(n)``, no digit grouping, so ids stay intact), other
  numbers with :func:`babel.numbers.format_decimal` (``0.5`` -> "0,5" in Russian,
  "0.5" in English; at most three fraction digits, no grouping).  Every language
  must use the same set of placeholders for a key (the tests check it).

Lookup and strictness
=====================
:func:`t` normalises the language with :func:`normalize_locale`, looks the key up
in that language, then in English.  In production a missing key is logged
(once per key and language) and English, or else the key itself, is returned.
In *strict* mode (:func:`set_strict`, or environment ``MAFIA_I18N_STRICT=1``; the
tests turn it on) any missing key -- even one only missing in Russian -- a
missing parameter, a missing ``count`` for a plural entry and a missing plural
form raise instead.

This module does not import discord; Discord ``Locale`` values are passed as
strings (``str(interaction.locale)``).
"""

from __future__ import annotations

import logging
import math
import os
import re
import tomllib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from fractions import Fraction
from functools import cache
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from types import MappingProxyType
from typing import Final, TypeAlias

from babel import Locale
from babel.numbers import format_decimal

__all__ = [
    "DEFAULT_LANGUAGE",
    "LOCALES_DIR",
    "PLURAL_CATEGORIES",
    "SUPPORTED_LANGUAGES",
    "Catalogue",
    "CatalogueError",
    "Entry",
    "PluralForms",
    "format_number",
    "get_catalogue",
    "has_key",
    "is_strict",
    "keys",
    "normalize_locale",
    "plural_category",
    "required_plural_categories",
    "set_strict",
    "t",
]

log = logging.getLogger(__name__)

#: Languages with a catalogue.  English is the source language of the code.
SUPPORTED_LANGUAGES: Final[tuple[str, ...]] = ("ru", "en")
#: Fallback language, both for unknown locales and for missing keys.
DEFAULT_LANGUAGE: Final = "en"


def _locales_dir() -> Traversable:
    """Where the catalogues are: ``<checkout>/data/locales`` beside the code in a source
    checkout (an editable install included), else the copy a wheel ships inside this
    package as ``core/locales`` (setup.py maps data/locales there), found through
    importlib.resources. The checkout is looked at first: a worktree must read its own
    files, not those of whichever tree the environment was installed from."""
    checkout = Path(__file__).resolve().parents[2] / "data" / "locales"
    if checkout.is_dir():
        return checkout
    return files("core") / "locales"


#: The catalogues' folder (a Path in a checkout, a Traversable in general).
LOCALES_DIR: Final[Traversable] = _locales_dir()
#: CLDR plural categories, in CLDR order.
PLURAL_CATEGORIES: Final[tuple[str, ...]] = ("zero", "one", "two", "few", "many", "other")

PluralForms: TypeAlias = Mapping[str, str]
#: A catalogue entry: a text, or a plural table {CLDR category: text}.
Entry: TypeAlias = str | PluralForms

_CATEGORY_SET: Final = frozenset(PLURAL_CATEGORIES)
_KEY_SEGMENT: Final = re.compile(r"[a-z0-9_-]+")
_MAX_FRACTION_DIGITS: Final = 3
_QUANTUM: Final = Decimal(1).scaleb(-_MAX_FRACTION_DIGITS)

# Language policy for Discord locales (and anything else passed in).
#   ru, ru-*          -> ru
#   be, be-* (Belarusian; not a Discord locale, but may come from user settings)
#                     -> ru: Russian is co-official in Belarus and universally read.
#   uk (Ukrainian)    -> en, deliberately: a user who chose a Ukrainian client is not
#                        pushed into Russian; English is the neutral default and a
#                        per-user/per-game language setting can still choose Russian.
#                        To change the policy, add "uk" to _RUSSIAN_LANGUAGES.
#   en, en-US, en-GB  -> en
#   anything else, None, "" -> en
_RUSSIAN_LANGUAGES: Final = frozenset({"ru", "be"})

_ENV_STRICT: Final = "MAFIA_I18N_STRICT"
_strict: bool = os.environ.get(_ENV_STRICT, "").strip().lower() in {"1", "true", "yes", "on"}


class CatalogueError(ValueError):
    """A catalogue file is missing or malformed."""


def set_strict(enabled: bool) -> None:
    """Turn strict mode on (tests) or off (production, the default)."""
    global _strict
    _strict = enabled


def is_strict() -> bool:
    """Whether missing keys, parameters and plural forms raise instead of being logged."""
    return _strict


def normalize_locale(value: str | None) -> str:
    """Map a Discord locale (``'ru'``, ``'en-US'``, ``'uk'``...) or None to ``'ru'``/``'en'``.

    Accepts ``_`` or ``-`` separators in any case.  See the policy comment above
    ``_RUSSIAN_LANGUAGES``: Russian and Belarusian -> ``'ru'``; everything else,
    Ukrainian included, -> ``'en'``.
    """
    if value is None:
        return DEFAULT_LANGUAGE
    language = str(value).strip().replace("_", "-").split("-", 1)[0].lower()
    if language in _RUSSIAN_LANGUAGES:
        return "ru"
    if language in SUPPORTED_LANGUAGES:
        return language
    return DEFAULT_LANGUAGE


@cache
def _babel_locale(lang: str) -> Locale:
    return Locale.parse(lang)


def required_plural_categories(lang: str) -> frozenset[str]:
    """CLDR categories a plural table of *lang* needs (ru: one few many other; en: one other)."""
    return _babel_locale(normalize_locale(lang)).plural_form.tags | {"other"}


def _as_number(value: object) -> int | Decimal | None:
    """*value* as an int or a Decimal rounded to the displayed precision; None if not a number.

    Integral values (``2.0``, ``Decimal('2.0')``, ``Fraction(4, 2)``) become ``int`` so the
    plural form matches the digits shown ("2 голоса", not the fractional form).
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, Decimal):
        number = value
    elif isinstance(value, Fraction):
        number = Decimal(value.numerator) / Decimal(value.denominator)
    elif isinstance(value, float):
        if not math.isfinite(value):
            return None
        number = Decimal(repr(value))
    else:
        return None
    if not number.is_finite():
        return None
    try:
        rounded = number.quantize(_QUANTUM, rounding=ROUND_HALF_EVEN)
    except InvalidOperation:  # too many digits for the context: show it as is
        rounded = number
    if rounded == rounded.to_integral_value():
        return int(rounded)
    return rounded.normalize()


def format_number(value: int | float | Decimal | Fraction, lang: str) -> str:
    """Format a number for *lang*: integers plainly, others with the locale's decimal sign.

    ``format_number(0.5, 'ru') == '0,5'``, ``format_number(Fraction(3, 2), 'en') == '1.5'``.
    """
    number = _as_number(value)
    if number is None:
        return str(value)
    return _format_exact(number, normalize_locale(lang))


def _format_exact(number: int | Decimal, lang: str) -> str:
    if isinstance(number, int):
        return str(number)
    return format_decimal(number, locale=_babel_locale(lang), group_separator=False)


def _format_param(value: object, lang: str) -> object:
    number = _as_number(value)
    return value if number is None else _format_exact(number, lang)


def plural_category(count: int | float | Decimal | Fraction, lang: str) -> str:
    """CLDR plural category of *count* in *lang* (``plural_category(0.5, 'ru') == 'other'``)."""
    number = _as_number(count)
    if number is None:
        raise TypeError(f"plural count must be a number, got {count!r}")
    return _babel_locale(normalize_locale(lang)).plural_form(number)


def _flatten(table: Mapping[str, object], prefix: str, out: dict[str, Entry],
             source: Traversable) -> None:
    for segment, value in table.items():
        key = f"{prefix}.{segment}" if prefix else segment
        if not _KEY_SEGMENT.fullmatch(segment):
            raise CatalogueError(f"{source}: key {key!r}: segments must match [a-z0-9_-]+")
        if isinstance(value, str):
            out[key] = value
        elif isinstance(value, dict):
            categories = set(value) & _CATEGORY_SET
            if not categories:
                _flatten(value, key, out, source)
                continue
            if set(value) - _CATEGORY_SET:
                raise CatalogueError(
                    f"{source}: {key!r} mixes plural categories with other keys: {sorted(value)}"
                )
            if "other" not in value:
                raise CatalogueError(f"{source}: plural table {key!r} has no 'other' form")
            forms: dict[str, str] = {}
            for category, text in value.items():
                if not isinstance(text, str):
                    raise CatalogueError(f"{source}: {key}.{category} must be a string")
                forms[category] = text
            out[key] = MappingProxyType(forms)
        else:
            raise CatalogueError(
                f"{source}: {key!r} must be a string or a plural table, got {type(value).__name__}"
            )


class _Params(dict[str, object]):
    """Format arguments; records missing names and leaves their ``{placeholder}`` visible."""

    def __init__(self, params: Mapping[str, object]) -> None:
        super().__init__(params)
        self.missing: list[str] = []

    def __missing__(self, name: str) -> str:
        self.missing.append(name)
        return "{" + name + "}"


class Catalogue:
    """The entries of every supported language, loaded from ``<directory>/<lang>.toml``.

    Files are read on first use and kept; :meth:`reload` re-reads them.  The
    module-level functions use one shared instance (:func:`get_catalogue`);
    tests may build their own over a temporary directory.
    """

    def __init__(
        self,
        directory: Traversable = LOCALES_DIR,
        languages: tuple[str, ...] = SUPPORTED_LANGUAGES,
        *,
        strict: bool | None = None,
    ) -> None:
        self.directory = directory
        self.languages = languages
        #: ``None`` follows the module-wide :func:`set_strict` setting.
        self.strict = strict
        self._entries: dict[str, dict[str, Entry]] | None = None
        self._warned: set[tuple[str, str]] = set()

    # -- loading -------------------------------------------------------------

    def load(self) -> None:
        """Read (or re-read) all catalogue files; raise :class:`CatalogueError` if malformed."""
        entries: dict[str, dict[str, Entry]] = {}
        for lang in self.languages:
            main = self.directory / f"{lang}.toml"
            if not main.is_file():
                raise CatalogueError(f"catalogue file {main} is missing")
            # Feature files (<lang>/*.toml) keep one area's strings together.
            area = self.directory / lang
            parts = area.iterdir() if area.is_dir() else iter(())
            paths = [main, *sorted((p for p in parts if p.name.endswith(".toml")
                                    and p.is_file()), key=lambda p: p.name)]
            flat: dict[str, Entry] = {}
            for path in paths:
                try:
                    with path.open("rb") as handle:
                        data = tomllib.load(handle)
                except tomllib.TOMLDecodeError as exc:
                    raise CatalogueError(f"{path}: {exc}") from exc
                part: dict[str, Entry] = {}
                _flatten(data, "", part, path)
                clash = sorted(set(part) & set(flat))
                if clash:
                    raise CatalogueError(f"{path}: keys defined twice: {', '.join(clash[:5])}")
                flat.update(part)
            entries[lang] = flat
        self._entries = entries
        self._warned.clear()

    reload = load

    @contextmanager
    def extended(self, texts: Mapping[str, Mapping[str, str]]) -> Iterator[None]:
        """Extra entries (`{lang: {key: text}}`) for the span of a `with`: the names of a
        role registered at run time (core.game.roles.registered). Existing keys stay."""
        data = self._data()
        added = [(lang, key) for lang, entries in texts.items() for key in entries
                 if key not in data.setdefault(normalize_locale(lang), {})]
        for lang, key in added:
            data[normalize_locale(lang)][key] = texts[lang][key]
        try:
            yield
        finally:
            for lang, key in added:
                data[normalize_locale(lang)].pop(key, None)

    def _data(self) -> dict[str, dict[str, Entry]]:
        if self._entries is None:
            self.load()
            assert self._entries is not None
        return self._entries

    def _is_strict(self) -> bool:
        return is_strict() if self.strict is None else self.strict

    # -- queries -------------------------------------------------------------

    def keys(self, lang: str) -> frozenset[str]:
        """All keys defined in *lang* (no fallback)."""
        return frozenset(self._data().get(normalize_locale(lang), {}))

    def has_key(self, key: str, lang: str | None = None) -> bool:
        """Whether *key* is defined in *lang*; with no *lang*, in English (so t() resolves it)."""
        entries = self._data().get(normalize_locale(lang), {})
        return key in entries

    def entry(self, key: str, lang: str) -> Entry | None:
        """The raw entry (text or plural table) of *key* in *lang*, without fallback."""
        return self._data().get(normalize_locale(lang), {}).get(key)

    # -- translation ---------------------------------------------------------

    def _problem(self, message: str, key: str, exc_type: type[Exception]) -> None:
        if self._is_strict():
            raise exc_type(message)
        if (key, message) not in self._warned:
            self._warned.add((key, message))
            log.warning("i18n: %s", message)

    def t(self, key: str, lang: str, /, **params: object) -> str:
        """Translate *key* into *lang*; see :func:`t`."""
        lang = normalize_locale(lang)
        data = self._data()
        entry = data.get(lang, {}).get(key)
        used = lang
        if entry is None:
            fallback = data.get(DEFAULT_LANGUAGE, {}).get(key)
            if fallback is None:
                self._problem(
                    f"key {key!r} is missing in {lang!r} and in the {DEFAULT_LANGUAGE!r} fallback "
                    f"(catalogues in {self.directory})",
                    key,
                    KeyError,
                )
                return key
            self._problem(
                f"key {key!r} is missing in {lang!r}; using {DEFAULT_LANGUAGE!r}", key, KeyError
            )
            entry, used = fallback, DEFAULT_LANGUAGE

        template = entry if isinstance(entry, str) else self._choose_form(key, used, entry, params)

        args = _Params({name: _format_param(value, used) for name, value in params.items()})
        try:
            text = template.format_map(args)
        except (ValueError, IndexError, AttributeError) as exc:
            self._problem(
                f"key {key!r} ({used}): bad template {template!r}: {exc}", key, ValueError
            )
            return template
        if args.missing:
            self._problem(
                f"key {key!r} ({used}) needs parameter(s) {sorted(set(args.missing))}",
                key,
                KeyError,
            )
        return text

    def _choose_form(
        self, key: str, lang: str, forms: PluralForms, params: Mapping[str, object]
    ) -> str:
        if "count" not in params:
            self._problem(f"key {key!r} is a plural entry: pass count=", key, TypeError)
            return forms["other"]
        count = params["count"]
        number = _as_number(count)
        if number is None:
            self._problem(f"key {key!r}: count must be a number, got {count!r}", key, TypeError)
            return forms["other"]
        category = _babel_locale(lang).plural_form(number)
        form = forms.get(category)
        if form is None:
            self._problem(f"key {key!r} ({lang}) has no plural form {category!r}", key, KeyError)
            return forms["other"]
        return form


_default_catalogue: Catalogue | None = None


def get_catalogue() -> Catalogue:
    """The shared catalogue over :data:`LOCALES_DIR`, loaded on first use."""
    global _default_catalogue
    if _default_catalogue is None:
        _default_catalogue = Catalogue()
    return _default_catalogue


def t(key: str, lang: str, /, **params: object) -> str:
    """Translate *key* into *lang* (any locale string; see :func:`normalize_locale`).

    Plural entries choose their form from ``count``; numeric parameters are
    formatted for the language::

        t("vote.count", "ru", count=0.5)  # '0,5 голоса'
        t("vote.count", "en-US", count=2)  # '2 votes'

    A key missing in *lang* falls back to English, then to the key itself (with a
    logged warning); in strict mode it raises :class:`KeyError`.
    """
    return get_catalogue().t(key, lang, **params)


def has_key(key: str, lang: str | None = None) -> bool:
    """Whether *key* exists in *lang* (no fallback); with no *lang*, in English."""
    return get_catalogue().has_key(key, lang)


def keys(lang: str) -> frozenset[str]:
    """All keys of *lang* in the shared catalogue."""
    return get_catalogue().keys(lang)
