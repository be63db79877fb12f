"""What a member's Discord rights let him read of a game's private places (RULES.md §8,
"Who can read the private places").

Discord shows every private thread of a channel to the members who hold Manage Threads
there, and everything to Administrators: the seats' places (private threads of the game
channel) are then open to them. This module only works the rights out, in the game
channel, as discord.py resolves them (`channel.permissions_for(member)`: the member's
roles and the channel's overwrites); what follows from them is core's rule
(core.game.access.seat_refusal, the engine's `Start` and `Sight`).

The bot asks for no privileged intent, so it does not see GUILD_MEMBER_UPDATE: a right
given during the game is seen at the member's next interaction with the game, whatever
it is: every application command and every option's autocomplete goes through
`note_interaction` before it runs (bot.py, the command tree's `interaction_check`), the
buttons and menus through `note_sight`; also at /master replace and at /game start. The
interaction carries the member's roles and permissions: no request is made.
"""

from __future__ import annotations

import logging

import discord

from core.game import commands as c
from core.game.errors import RuleError
from core.storage.observer import GameInfo, Sight

from .bot import MafiaBot, now

log = logging.getLogger(__name__)


def sight_of(perms: discord.Permissions) -> Sight:
    if perms.administrator:
        return "all"
    if perms.manage_threads:
        return "threads"
    return "none"


def member_sight(bot: MafiaBot, info: GameInfo, member: discord.abc.User,
                 fallback: discord.Permissions | None = None) -> Sight:
    """`member`'s sight in the game channel; `fallback` (the interaction's permissions,
    in the channel it was used in) when the channel or the member's roles are unknown."""
    channel = bot.get_channel(info.channel_id)
    if isinstance(member, discord.Member) and isinstance(channel, discord.abc.GuildChannel):
        return sight_of(channel.permissions_for(member))
    return sight_of(fallback) if fallback is not None else "none"


def member_admin(member: discord.abc.User) -> bool:
    """The member may use master tools (what cogs.utils.bot.is_admin says of a caller)."""
    if not isinstance(member, discord.Member):
        return False
    perms = member.guild_permissions
    return bool(perms.manage_guild or perms.administrator)


async def seat_sights(bot: MafiaBot, info: GameInfo, uids: list[int]) -> dict[int, Sight]:
    """Every seated player's sight now (at /game start): from the member cache, else
    fetched (one request a player not in the cache; a member gone from the guild reads
    nothing)."""
    guild = bot.get_guild(info.guild_id)
    out: dict[int, Sight] = {}
    if guild is None:
        return out
    for uid in uids:
        member = guild.get_member(uid)
        if member is None:
            try:
                member = await guild.fetch_member(uid)
            except discord.NotFound:
                continue
        out[uid] = member_sight(bot, info, member)
    return out


NOTED = "mafia.sight"  # Interaction.extras: the games whose sight this interaction noted


async def note_sight(interaction: discord.Interaction[MafiaBot], info: GameInfo) -> None:
    """A seated player whose rights now show him more than the table was told (a role
    given during the game): the engine tells the table before his command is applied.
    Once per interaction and game (the tree's check and the command both ask)."""
    noted: set[int] = interaction.extras.setdefault(NOTED, set())
    if info.id in noted:
        return
    noted.add(info.id)
    bot = interaction.client
    if not await bot.observe.seated(info.id, interaction.user.id):
        return
    sight = member_sight(bot, info, interaction.user, interaction.permissions)
    if sight == "none" or not await bot.observe.sight_rose(info.id, interaction.user.id,
                                                           sight):
        return
    await bot.apply(info, c.Sight(by=interaction.user.id, at=now(), sight=sight))


async def note_interaction(interaction: discord.Interaction[MafiaBot]) -> None:
    """Before any command or autocomplete runs: the sender's rights in the game it is
    about, if he holds a seat there (read-only commands and autocomplete included:
    RULES.md §8). Never in the way: no game here, a refusal or a failure leaves the
    interaction to run as it would."""
    try:
        info = await interaction.client.find_game(interaction)
    except RuleError:  # no running game here (or which one is unclear): nothing to note
        return
    try:
        await note_sight(interaction, info)
    except RuleError:  # the game moved on meanwhile (over, or he was replaced)
        return
    except Exception:  # the command itself will meet it, or run without it
        log.exception("game %s: sight of %s not noted", info.id, interaction.user.id)
