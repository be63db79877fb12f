"""Persistent buttons and menus: the game id lives in the custom_id, so they keep
working after a restart (registered with `bot.add_dynamic_items` in setup_hook)."""

from __future__ import annotations

import logging
import re
from typing import Any

import discord

from core.game import commands as c
from core.game.errors import ErrorCode, RuleError
from core.text.i18n import t

from ..utils.actions import cast_vote, join_or_leave, send_card
from ..utils.bot import MafiaBot
from ..utils.errors import send_error

MAX_OPTIONS = 25
log = logging.getLogger("mafia")


def payload(interaction: discord.Interaction[Any]) -> dict[str, Any]:
    """The component's raw data (custom_id, chosen values), whichever kind it is."""
    return dict(interaction.data or {})


async def _guarded(interaction: discord.Interaction[MafiaBot], work: Any,
                   game: int | None = None) -> None:
    """Component callbacks report refusals and failures like commands do (MafiaTree);
    one that went through notes the presser's language for `game`, as a slash command
    does (MafiaBot.on_app_command_completion): a refusal changes nothing."""
    try:
        await work
    except RuleError as err:
        await send_error(interaction, err)
        return
    except Exception:
        log.exception("component %s failed", payload(interaction).get("custom_id"))
        await send_error(interaction, RuleError(ErrorCode.INTERNAL_ERROR))
        return
    if game is not None:
        await interaction.client.note_reader(interaction, {game})


class RoleButton(discord.ui.DynamicItem[discord.ui.Button[Any]],
                 template=r"mafia:role:(?P<game>\d+)"):
    """'Show my role': answers with the caller's card, ephemerally."""

    def __init__(self, game_id: int, label: str | None = None) -> None:
        # no label when rebuilt from a custom_id: the message keeps its localized one
        super().__init__(discord.ui.Button(label=label, style=discord.ButtonStyle.secondary,
                                           custom_id=f"mafia:role:{game_id}", emoji="🃏"))
        self.game_id = game_id

    @classmethod
    async def from_custom_id(cls, interaction: discord.Interaction[Any], item: Any,
                             match: re.Match[str]) -> RoleButton:
        return cls(int(match["game"]))

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        await _guarded(interaction, send_card(interaction, self.game_id), self.game_id)


class SignupButton(discord.ui.DynamicItem[discord.ui.Button[Any]],
                   template=r"mafia:(?P<action>join|leave):(?P<game>\d+)"):
    def __init__(self, action: str, game_id: int, label: str = "") -> None:
        style = discord.ButtonStyle.success if action == "join" else \
            discord.ButtonStyle.secondary
        super().__init__(discord.ui.Button(label=label or action, style=style,
                                           custom_id=f"mafia:{action}:{game_id}"))
        self.action, self.game_id = action, game_id

    @classmethod
    async def from_custom_id(cls, interaction: discord.Interaction[Any], item: Any,
                             match: re.Match[str]) -> SignupButton:
        return cls(match["action"], int(match["game"]))

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        await _guarded(interaction, join_or_leave(interaction, self.game_id, self.action),
                       self.game_id)


class VoteSelect(discord.ui.DynamicItem[discord.ui.Select[Any]],
                 template=r"mafia:vote:(?P<game>\d+):(?P<day>\d+)"):
    """A menu of living players on the day announcement: an extra to /vote."""

    def __init__(self, game_id: int, day: int,
                 options: list[discord.SelectOption] | None = None, placeholder: str = "") -> None:
        super().__init__(discord.ui.Select(
            custom_id=f"mafia:vote:{game_id}:{day}", placeholder=placeholder or None,
            options=options or [discord.SelectOption(label="-", value="0")],
            min_values=1, max_values=1))
        self.game_id, self.day = game_id, day

    @classmethod
    async def from_custom_id(cls, interaction: discord.Interaction[Any], item: Any,
                             match: re.Match[str]) -> VoteSelect:
        return cls(int(match["game"]), int(match["day"]))

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        values = payload(interaction).get("values", [])
        target = int(values[0]) if values else 0
        await _guarded(interaction, cast_vote(interaction, self.game_id, target,
                                              shout=False, day=self.day), self.game_id)


def role_view(game_id: int, lang: str) -> discord.ui.View:
    view = discord.ui.View(timeout=None)
    view.add_item(RoleButton(game_id, t("button.role", lang)))
    return view


def signup_view(game_id: int, lang: str) -> discord.ui.View:
    view = discord.ui.View(timeout=None)
    view.add_item(SignupButton("join", game_id, t("button.join", lang)))
    view.add_item(SignupButton("leave", game_id, t("button.leave", lang)))
    return view


def day_view(bot: MafiaBot, game_id: int, day: int, living: list[tuple[int, str]],
             lang: str) -> discord.ui.View:
    view = role_view(game_id, lang)
    if day > 0 and living:
        options = [discord.SelectOption(label=name[:100], value=str(uid))
                   for uid, name in living[:MAX_OPTIONS]]
        view.add_item(VoteSelect(game_id, day, options, t("button.vote_placeholder", lang)))
    return view


__all__ = ["RoleButton", "SignupButton", "VoteSelect", "c"]
