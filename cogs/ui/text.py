"""Catalogue-backed text for the Discord layer: command strings, locales, names.

Cogs never write user-facing words inline: command names and descriptions come
from `cmd.*` keys (English is the source, Russian via the translator), replies
from the catalogue in the user's or the game's language.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, TypeVar

import discord
from discord import app_commands
from discord.app_commands import locale_str

from core.text.i18n import normalize_locale, t

F = TypeVar("F", bound=Callable[..., Any])


def L(key: str) -> locale_str:
    """A command string: English from the catalogue, the key for the translator."""
    return locale_str(t(key, "en"), key=key)


def localized(path: str, *params: str) -> Callable[[F], F]:
    """Name and describe a command's parameters from `cmd.<path>.param.<p>.*`."""

    def deco(func: F) -> F:
        if params:
            func = app_commands.rename(
                **{p: L(f"cmd.{path}.param.{p}.name") for p in params})(func)
            func = app_commands.describe(
                **{p: L(f"cmd.{path}.param.{p}.description") for p in params})(func)
        return func

    return deco


def command_kwargs(path: str) -> dict[str, Any]:
    return {"name": L(f"cmd.{path}.name"), "description": L(f"cmd.{path}.description")}


def user_lang(interaction: discord.Interaction[Any]) -> str:
    return normalize_locale(str(interaction.locale))


def guild_lang(guild: discord.Guild | None) -> str:
    """A new game's language: the guild's preferred locale (Russian for a Russian guild)."""
    if guild is None:
        return "ru"
    return normalize_locale(str(guild.preferred_locale))


def mention(uid: int) -> str:
    return f"<@{uid}>"


def when(iso: str | datetime) -> str:
    """A moment as Discord timestamps: every reader sees it in his own time zone, to the
    second (a deadline sits at its game's own second of the minute, RULES.md section 4):
    the date, the time with seconds (`T`; `f` would show 20:00 for 20:00:37) and how
    long until then."""
    moment = datetime.fromisoformat(iso) if isinstance(iso, str) else iso
    unix = int(moment.timestamp())
    return f"<t:{unix}:d> <t:{unix}:T> (<t:{unix}:R>)"

