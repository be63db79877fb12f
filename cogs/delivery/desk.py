"""The master's desk: a private channel per game with the live feed of master events,
`/master log` (paged with persistent buttons, or as a file), `/master replace` from the
standby list, and `/game standby`.

Everything the desk shows comes from engine events (core/sight/desk.py words them); the
channel is opened by the outbox when the first master event of a game (the deal at
/game start) is delivered, and looked up before it is created, so a crash between
creating it and storing its id does not open a second one.
"""

from __future__ import annotations

import io
import logging
import re
from typing import Any, Protocol

import discord

from core.game import commands as c
from core.game.errors import ErrorCode, RuleError
from core.game.events import Event, EventKind
from core.sight.desk import (
    PhaseFilter,
    desk_text,
    log_lines,
    master_log,
    paginate,
)
from core.sight.deskpings import PING_KINDS, ping_kind
from core.storage.observer import GameInfo, GameService
from core.storage.outbox import OutboxEntry
from core.text.i18n import t

from ..base import PlayerArg, Refused, ack
from ..ui.components import _guarded
from ..ui.markup import no_pings, only_users, user_data, user_text
from ..ui.text import mention, user_lang
from ..utils.actions import command
from ..utils.bot import MafiaBot, is_admin
from ..utils.sight import member_admin, member_sight
from .overwrites import member_overwrite
from .posting import (
    BOT_ALLOW,
    HIDDEN,
    channel_marker,
    entry_key,
    find_marked,
    legacy_marker,
    marked_topic,
    post,
)

log = logging.getLogger(__name__)


class Delivery(Protocol):
    """What the desk needs of the outbox's deliverer (cogs.delivery.Delivery), named
    here so that desk.py does not import the module that imports it."""

    @property
    def bot(self) -> MafiaBot: ...

    @property
    def service(self) -> GameService: ...

    def _guild(self, info: GameInfo) -> discord.Guild: ...

    async def ensure_category(self, info: GameInfo, guild: discord.Guild
                              ) -> discord.CategoryChannel: ...

    async def record_channel(self, info: GameInfo, key: str, channel: discord.TextChannel,
                             entry: OutboxEntry | None, welcome: str) -> None: ...


DESK = "desk"  # the desk's key among the game's private channels
EMBED_TEXT = 4000  # an embed description holds 4096


# --- the channel and its feed ----------------------------------------------------------
def desk_overwrites(guild: discord.Guild, master_id: int, cohost: int | None = None
                    ) -> dict[Any, discord.PermissionOverwrite]:
    """@everyone denied, the master (and his co-host) read and write, the bot keeps
    access; nobody else."""
    out: dict[Any, discord.PermissionOverwrite] = {
        guild.default_role: HIDDEN, guild.me: BOT_ALLOW,
        discord.Object(id=master_id): member_overwrite(True)}
    if cohost is not None:
        out[discord.Object(id=cohost)] = member_overwrite(True)
    return out


async def hosts_of(delivery: Delivery, info: GameInfo) -> tuple[int, int | None]:
    """The game's master and co-host now (its public view), whom the desk lets in."""
    view = await delivery.bot.observe.view(info.id)
    return view.master, view.cohost


async def follow_hosts(delivery: Delivery, info: GameInfo) -> None:
    """A co-host named or removed, or the game handed over: the desk, if it is open,
    lets in exactly the master and the co-host of now (the former master leaves it)."""
    current = await delivery.service.info(info.id)
    channel_id = current.private_channels.get(DESK)
    guild = delivery._guild(info)
    channel = guild.get_channel(channel_id) if channel_id else None
    if isinstance(channel, discord.TextChannel):
        await channel.edit(overwrites=desk_overwrites(guild, *await hosts_of(delivery, info)))


async def ensure_desk(delivery: Delivery, info: GameInfo,
                      entry: OutboxEntry | None = None) -> discord.TextChannel:
    """The game's desk channel: the stored one, else one an interrupted try created
    (found by its topic's marker), else a new one; its id is stored before the welcome
    is posted (with a nonce, so a repeated try does not post it twice)."""
    guild = delivery._guild(info)
    current = await delivery.service.info(info.id)
    lang = await master_language(delivery.service, info)
    channel_id = current.private_channels.get(DESK)
    channel = guild.get_channel(channel_id) if channel_id else None
    if isinstance(channel, discord.TextChannel):
        return channel
    category = await delivery.ensure_category(current, guild)
    hosts = await hosts_of(delivery, info)
    marker = channel_marker(info.id, DESK)
    found = find_marked(guild, marker, exclude=set(current.private_channels.values()),
                        legacy=legacy_marker(info.id, DESK))
    if found is None:
        topic = t("desk.channel.topic", lang, title=user_text(info.title))
        found = await guild.create_text_channel(
            t("desk.channel.name", lang)[:100], category=category,
            topic=marked_topic(topic, marker),
            overwrites=desk_overwrites(guild, *hosts))
    else:
        log.warning("game %s: adopting desk channel %s from an interrupted try", info.id,
                    found.id)
        await found.edit(overwrites=desk_overwrites(guild, *hosts),
                         category=category)
    await delivery.record_channel(info, DESK, found, entry, t(
        "desk.channel.welcome", lang, title=user_text(info.title)))
    return found


async def master_language(service: GameService, info: GameInfo) -> str:
    """The desk is the master's alone: written in the language he last used with the
    bot (the game's until he has used any)."""
    return await service.readers.language(info.id, info.master_id, info.language)


def escaped(event: Event) -> Event:
    """User text republished on the desk cannot format or link (markup escaped)."""
    return event.model_copy(update={"data": user_data(event.data)})


def embeds_of(text: str) -> list[discord.Embed]:
    return [discord.Embed(description=page, colour=discord.Colour.dark_teal())
            for page in paginate(text.split("\n"), EMBED_TEXT)]


async def master_event(delivery: Delivery, info: GameInfo, event: Event,
                       entry: OutboxEntry) -> None:
    """One master event posted on the desk (a long explanation over several embeds and,
    if need be, messages; each message with its nonce), in the master's language."""
    await master_events(delivery, info, [(entry, event)])


async def master_events(delivery: Delivery, info: GameInfo,
                        lines: list[tuple[OutboxEntry, Event]]) -> None:
    """Several master events as one desk post (a burst of orders costs one request),
    named by the first entry's nonce. It pings nobody, unless a line is of a kind the
    master chose to be pinged for (`/master pings`; core/sight/deskpings.py): then him alone."""
    channel = await ensure_desk(delivery, info, lines[0][0])
    lang = await master_language(delivery.service, info)
    text = "\n".join(desk_text(escaped(event), mention, lang) for _, event in lines)
    kinds = {ping_kind(event.kind) for _, event in lines} - {None}
    ping: dict[str, Any] = {}
    if kinds and kinds & set(await delivery.service.readers.desk_pings(
            info.id, info.master_id)):
        ping = {"content": mention(info.master_id), "mentions": only_users([info.master_id])}
    await post(channel, entry_key(lines[0][0]), embeds=embeds_of(text), **ping)


# --- /master pings -----------------------------------------------------------------------
async def choose_pings(interaction: discord.Interaction[MafiaBot], info: GameInfo,
                       asked: dict[str, bool | None]) -> None:
    """/master pings: turn kinds of desk line on or off (the ones not given stay as they
    were), then tell the master, in his language, which lines ping him now. The desk is
    the game's master's: his choice is what is stored, whoever of the master's tools'
    users asks."""
    readers = interaction.client.service.readers
    chosen = set(await readers.desk_pings(info.id, info.master_id))
    if any(on is not None for on in asked.values()):
        chosen |= {k for k, on in asked.items() if on}
        chosen -= {k for k, on in asked.items() if on is False}
        await readers.set_desk_pings(info.id, info.master_id, chosen)
    lang = user_lang(interaction)
    title = user_text(info.title)
    kinds = [t(f"desk.pings.kind.{k}", lang) for k in PING_KINDS if k in chosen]
    text = t("desk.pings.now", lang, title=title, kinds="; ".join(kinds)) if kinds \
        else t("desk.pings.none", lang, title=title)
    await interaction.response.send_message(text, ephemeral=True)


# --- /master log -------------------------------------------------------------------------
_PHASES: dict[str, PhaseFilter] = {"a": None, "d": "day", "n": "night"}


class LogFilter:
    """What a /master log asked for; it travels in the page buttons' custom_id."""

    def __init__(self, phase: PhaseFilter = None, number: int | None = None,
                 player: int | None = None) -> None:
        self.phase, self.number, self.player = phase, number, player

    def code(self) -> str:
        phase = {None: "a", "day": "d", "night": "n"}[self.phase]
        return f"{phase}:{'-' if self.number is None else self.number}:{self.player or 0}"

    @classmethod
    def parse(cls, match: re.Match[str]) -> LogFilter:
        number = None if match["number"] == "-" else int(match["number"])
        return cls(_PHASES[match["phase"]], number, int(match["player"]) or None)


class LogPage(discord.ui.DynamicItem[discord.ui.Button[Any]],
              template=r"mafia:desklog:(?P<game>\d+):(?P<page>\d+):(?P<phase>[adn]):"
                       r"(?P<number>-|\d+):(?P<player>\d+)"):
    """'Previous' / 'Next' under a /master log page: game, page and filters live in the
    custom_id, so the buttons work after a restart."""

    def __init__(self, game_id: int, page: int, flt: LogFilter, label: str = "",
                 disabled: bool = False) -> None:
        super().__init__(discord.ui.Button(
            label=label or None, style=discord.ButtonStyle.secondary, disabled=disabled,
            custom_id=f"mafia:desklog:{game_id}:{page}:{flt.code()}"))
        self.game_id, self.page, self.flt = game_id, page, flt

    @classmethod
    async def from_custom_id(cls, interaction: discord.Interaction[Any], item: Any,
                             match: re.Match[str]) -> LogPage:
        return cls(int(match["game"]), int(match["page"]), LogFilter.parse(match))

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        await _guarded(interaction, turn_page(interaction, self.game_id, self.page, self.flt),
                       self.game_id)


async def _log_pages(bot: MafiaBot, info: GameInfo, flt: LogFilter, lang: str
                     ) -> tuple[list[str], int]:
    history = await bot.service.log(info.id)
    entries = [e.model_copy(update={"event": escaped(e.event)}) for e in master_log(
        history, phase=flt.phase, number=flt.number, player=flt.player)]
    return paginate(log_lines(entries, mention, lang)), len(entries)


def _page_view(info: GameInfo, page: int, pages: int, flt: LogFilter, lang: str
               ) -> discord.ui.View | None:
    if pages <= 1:
        return None
    view = discord.ui.View(timeout=None)
    view.add_item(LogPage(info.id, max(page - 1, 0), flt, t("desk.log.prev", lang),
                          disabled=page == 0))
    view.add_item(LogPage(info.id, min(page + 1, pages - 1), flt, t("desk.log.next", lang),
                          disabled=page >= pages - 1))
    return view


def _page_embed(info: GameInfo, pages: list[str], page: int, count: int, lang: str
                ) -> discord.Embed:
    embed = discord.Embed(title=t("desk.log.title", lang, title=user_text(info.title))[:256],
                          description=pages[page] or t("desk.log.empty", lang),
                          colour=discord.Colour.dark_teal())
    embed.set_footer(text=t("desk.log.page", lang, page=page + 1, pages=len(pages),
                            count=count))
    return embed


async def _check_master(interaction: discord.Interaction[MafiaBot], info: GameInfo) -> None:
    """The master's tools are his (core.game.access decides, players never). A stand-in host
    who reads the log is written down first (engine `Host`): he is never seated."""
    bot = interaction.client
    await bot.observe.require_master(info.id, interaction.user.id, admin=is_admin(interaction))
    if await bot.observe.records_host(info.id, interaction.user.id):
        await command(interaction, info, c.Host, noted=True)


async def send_log(interaction: discord.Interaction[MafiaBot], info: GameInfo, *, file: bool,
                   phase: str | None, number: int | None, player: int | None) -> None:
    """/master log: the whole history for the master, ephemeral, never cut."""
    bot = interaction.client
    await _check_master(interaction, info)
    lang = user_lang(interaction)
    flt = LogFilter(phase if phase in ("day", "night") else None, number, player)  # type: ignore[arg-type]
    if file:
        history = await bot.service.log(info.id)
        names = await bot.observe.log_names(info.id, history)
        entries = master_log(history, phase=flt.phase, number=flt.number, player=flt.player)
        text = "\n".join(log_lines(entries, lambda u: names.get(u, str(u)), lang))
        await interaction.response.send_message(
            t("desk.log.file", lang, count=len(entries)), ephemeral=True,
            allowed_mentions=no_pings(),
            file=discord.File(io.BytesIO(text.encode()), filename=f"game-{info.id}-log.txt",
                              description=t("alt.master_log", lang, count=len(entries))))
        return
    pages, count = await _log_pages(bot, info, flt, lang)
    last = len(pages) - 1  # opens on the latest page: the master usually wants the news
    kwargs: dict[str, Any] = {"embed": _page_embed(info, pages, last, count, lang),
                              "ephemeral": True, "allowed_mentions": no_pings()}
    view = _page_view(info, last, len(pages), flt, lang)
    if view is not None:
        kwargs["view"] = view
    await interaction.response.send_message(**kwargs)


async def turn_page(interaction: discord.Interaction[MafiaBot], game_id: int, page: int,
                    flt: LogFilter) -> None:
    bot = interaction.client
    info = await bot.service.info(game_id)
    await _check_master(interaction, info)
    lang = user_lang(interaction)
    pages, count = await _log_pages(bot, info, flt, lang)
    page = min(page, len(pages) - 1)
    await interaction.response.edit_message(
        embed=_page_embed(info, pages, page, count, lang),
        view=_page_view(info, page, len(pages), flt, lang), allowed_mentions=no_pings())


# --- standby and replacement -------------------------------------------------------------
async def standby(interaction: discord.Interaction[MafiaBot], info: GameInfo) -> None:
    """/game standby: put oneself on the standby list of the running game, or off it."""
    bot = interaction.client
    applied = await command(
        interaction, info, c.Standby, noted=True, name=interaction.user.display_name[:100],
        bot=interaction.user.bot, handle=interaction.user.name[:100],
        sight=member_sight(bot, info, interaction.user, interaction.permissions))
    lang = user_lang(interaction)
    told = next(e for e in applied.events
                if e.kind in (EventKind.STANDBY_JOINED, EventKind.STANDBY_LEFT))
    key = "desk.standby.joined" if told.kind is EventKind.STANDBY_JOINED else "desk.standby.left"
    await interaction.response.send_message(
        t(key, lang, title=user_text(info.title), count=told.data["count"]), ephemeral=True)


async def replace(interaction: discord.Interaction[MafiaBot], info: GameInfo, old: int,
                  new: discord.Member | None, waiting: int | None = None) -> None:
    """/master replace old [new | standby]: neither names the first on the standby list."""
    bot = interaction.client
    fields: dict[str, Any] = {"old": old}
    if new is not None:
        fields |= {"new": new.id, "name": new.display_name[:100], "bot": new.bot,
                   "handle": new.name[:100]}
    elif waiting is not None:
        names = dict(await bot.observe.standby(info.id))
        if waiting not in names:
            raise RuleError(ErrorCode.UNKNOWN_PLAYER, name=str(waiting))
        fields |= {"new": waiting, "name": names[waiting]}
    else:
        waiting_list = await bot.observe.standby(info.id)
        if waiting_list:
            fields |= {"new": waiting_list[0][0], "name": waiting_list[0][1]}
    if "new" in fields:  # his rights now, in the game channel (RULES.md §8)
        member = new if new is not None else await _member(interaction, fields["new"])
        if member is not None:
            fields |= {"new_admin": member_admin(member), "handle": member.name[:100],
                       "new_sight": member_sight(bot, info, member)}
    await command(interaction, info, c.Replace, noted=True, **fields)
    await ack(interaction, "master.replaced")


async def _member(interaction: discord.Interaction[MafiaBot], uid: int
                  ) -> discord.Member | None:
    """A member of the interaction's guild: cached, else fetched; None if he left."""
    guild = interaction.guild
    if guild is None:
        return None
    member = guild.get_member(uid)
    if member is not None:
        return member
    try:
        return await guild.fetch_member(uid)
    except discord.NotFound:
        return None


class StandbyArg(PlayerArg):
    """A string option offering the game's standby list (for /master replace): what
    arrives is the id autocomplete sent (whether it is on the list is checked with the
    master's other choices, in `replace`)."""

    async def transform(self, interaction: discord.Interaction[MafiaBot],  # type: ignore[override]
                        value: str) -> int:
        if not value.strip().isdigit():
            raise Refused(RuleError(ErrorCode.UNKNOWN_PLAYER, name=value[:50]))
        return int(value)

    async def offered(self, interaction: discord.Interaction[MafiaBot], info: GameInfo
                      ) -> list[tuple[int, str]]:
        observe = interaction.client.observe
        if not await observe.may_master(info.id, interaction.user.id,
                                        admin=is_admin(interaction)):
            return []
        return await observe.standby(info.id)


DESK_ITEMS = (LogPage,)
