"""The one place a refusal is rendered (commands via the tree's handler, components via
their guard): ephemeral, in the user's language."""

from __future__ import annotations

from typing import Any

import discord

from core.game.errors import RuleError
from core.sight.narrate import describe_error
from core.text.i18n import has_key, t

from ..ui.text import mention, user_lang


def readable_params(code: str, params: dict[str, Any], lang: str) -> dict[str, Any]:
    """Identifiers in a refusal's parameters as words: a role id by the role's name."""
    out = dict(params)
    name = out.get("name")
    if code == "unknown_role" and isinstance(name, str) and has_key(f"role.{name}.name", lang):
        out["name"] = t(f"role.{name}.name", lang)
    return out


def refusal(err: RuleError, lang: str) -> str:
    """A refusal's words in `lang`."""
    return describe_error(err.code, readable_params(err.code, err.params, lang), mention, lang)


async def send_error(interaction: discord.Interaction[Any], err: RuleError) -> None:
    """The one place a refusal is rendered: ephemeral, in the user's language."""
    text = refusal(err, user_lang(interaction))
    if interaction.response.is_done():
        await interaction.followup.send(text, ephemeral=True)
    else:
        await interaction.response.send_message(text, ephemeral=True)
