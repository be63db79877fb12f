"""What every game cog shares: finding the game, applying a command, replying.

A cog turns an interaction into an engine command and the outcome into a
reply; the rules decide everything. Refusals (RuleError) are rendered once, in
the tree's error handler, as an ephemeral message in the user's language.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import discord
from discord import app_commands
from discord.ext import commands

from core import commands as c
from core.errors import RuleError
from core.state import GameState
from core.storage.service import Applied, GameInfo
from core.visibility import PublicView, player_labels, public_view

if TYPE_CHECKING:
    from bot import MafiaBot

MAX_CHOICES = 25
_MENTION = re.compile(r"^<@!?(\d+)>$")


def now() -> datetime:
    return datetime.now(UTC)


def is_admin(interaction: discord.Interaction[Any]) -> bool:
    perms = interaction.permissions
    return bool(perms.manage_guild or perms.administrator)



class GameCog(commands.Cog):
    def __init__(self, bot: MafiaBot) -> None:
        self.bot = bot

    @property
    def service(self):
        return self.bot.service

    async def game_here(self, interaction: discord.Interaction[Any], *,
                        finished: bool = False) -> GameInfo:
        return await self.bot.find_game(interaction, finished=finished)

    async def apply(self, interaction: discord.Interaction[Any], info: GameInfo,
                    cmd: type[c._Cmd], **fields: Any) -> Applied:
        command = c.stamped(cmd(by=interaction.user.id, at=now(), admin=is_admin(interaction),
                                **fields), info.seen)
        return await self.bot.apply(info, command)  # type: ignore[arg-type]

    async def view(self, info: GameInfo) -> tuple[GameState, PublicView]:
        state = await self.service.state(info.id)
        return state, public_view(state)


# --- player options: autocomplete of the game's players ---------------------------------
def parse_player(value: str, state: GameState) -> int:
    """A player option: an id (what autocomplete sends), a mention or a name."""
    text = value.strip()
    m = _MENTION.match(text)
    if m:
        return int(m.group(1))
    if text.isdigit():
        return int(text)
    folded = text.casefold()
    matches = [p.uid for p in state.players if p.name.casefold() == folded]
    if len(matches) == 1:
        return matches[0]
    raise RuleError("unknown_player", name=text[:50])


class PlayerArg(app_commands.Transformer):
    """A string option offering the game's players; `kind` picks which ones."""

    def __init__(self, kind: str = "living") -> None:
        self.kind = kind

    @property
    def type(self) -> discord.AppCommandOptionType:
        return discord.AppCommandOptionType.string

    async def transform(self, interaction: discord.Interaction[Any], value: str) -> str:
        return value  # resolved against the game in the command, where the state is loaded

    async def autocomplete(self, interaction: discord.Interaction[Any],  # type: ignore[override]
                           value: str) -> list[app_commands.Choice[str]]:
        bot: MafiaBot = interaction.client  # type: ignore[assignment]
        try:
            info = await bot.find_game(interaction, finished=False)
        except RuleError:
            return []
        state = await bot.service.state(info.id)
        from core.engine import legal_targets

        uids = legal_targets(state, interaction.user.id, self.kind)
        shown = {}
        guild = interaction.guild
        for p in state.players:
            member = guild.get_member(p.uid) if guild else None
            if member is not None:
                shown[p.uid] = member.display_name
        labels = player_labels(state, shown)  # look-alike names get the unique name added
        member_names = {u: labels.get(u, str(u)) for u in uids}
        typed = value.casefold()
        return [app_commands.Choice(name=member_names[u][:100], value=str(u)) for u in uids
                if typed in member_names[u].casefold()][:MAX_CHOICES]
