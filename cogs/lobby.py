"""Lobby: /game create, setup, options, join, leave, start, status, cancel."""

from __future__ import annotations

import re
from typing import Any

import discord
from discord import app_commands
from discord.app_commands import Choice, Range

from core.game import commands as c
from core.game.errors import ErrorCode, RuleError
from core.game.events import EventKind
from core.sight.vocabulary import Options
from core.storage.observer import (
    ChannelKind,
    DiscordPatch,
    GameInfo,
    OutboxItem,
    game_place_refusal,
)
from core.text.i18n import t

from . import balance
from .base import GameCog
from .delivery import desk
from .ui.components import SignupButton
from .ui.lobby import SIGNUP_POST, signup_embed
from .ui.markup import user_text
from .ui.render import reply_embed, status_embed
from .ui.text import L, command_kwargs, guild_lang, localized, mention, user_lang
from .utils.actions import join_or_leave
from .utils.bot import READER_GAME, MafiaBot, is_admin, now
from .utils.errors import refusal, send_error
from .utils.sight import seat_sights

# The posting permissions are needed to DENY them to the dead in their team channels
# (a bot can set only the permissions it holds: cogs/delivery/overwrites.py). Files and links
# need a message, which Send Messages (always denied) already forbids.
REQUIRED_TO_START = ("manage_channels", "manage_roles", "send_messages", "embed_links",
                     "view_channel", "create_private_threads", "send_messages_in_threads",
                     "manage_threads", "create_public_threads", "add_reactions")
REQUIRED_TO_CREATE = ("send_messages", "embed_links", "view_channel")


def missing_permissions(interaction: discord.Interaction[MafiaBot],
                        needed: tuple[str, ...]) -> list[str]:
    """What the bot lacks here; checked before any state change."""
    perms = interaction.app_permissions
    return [name for name in needed if not getattr(perms, name)]


def refuse_missing(interaction: discord.Interaction[MafiaBot], needed: tuple[str, ...]) -> None:
    missing = missing_permissions(interaction, needed)
    if missing:
        lang = user_lang(interaction)
        names = ", ".join(t(f"permission.{m}", lang) for m in missing)
        raise RuleError(ErrorCode.BOT_MISSING_PERMISSIONS, permissions=names)



class Lobby(GameCog):
    game = app_commands.Group(**command_kwargs("game"), guild_only=True)

    def __init__(self, bot: MafiaBot) -> None:
        super().__init__(bot)
        settings = bot.settings
        # the balance estimates being made, within each member's and server's allowance
        self.estimates = balance.Estimates(settings.balance_per_member_minute,
                                           settings.balance_per_guild_minute)
        if settings.balance_workers:
            balance.ESTIMATOR.workers = settings.balance_workers

    async def cog_unload(self) -> None:
        """The bot stops: its estimates, and the worker processes with them."""
        self.estimates.cancel_all()
        balance.ESTIMATOR.close()

    @game.command(**command_kwargs("game.create"))
    @localized("game.create", "title", "plot", "extra_roles", "currency", "shop", "crypto",
               "day_minutes", "night_minutes", "start")
    async def create(self, interaction: discord.Interaction[MafiaBot],
                     title: Range[str, 1, 100], plot: Range[str, 0, 1500] = "",
                     extra_roles: bool = False, currency: bool = False, shop: bool = False,
                     crypto: bool = False, day_minutes: Range[int, 1, 20160] = 1440,
                     night_minutes: Range[int, 1, 20160] = 720,
                     start: Range[str, 1, 40] | None = None) -> None:
        """Open signup; with `start`, the planned start as a scheduled event
        (cogs/delivery/scheduled.py), refused before anything changes when it cannot be
        read or made."""
        from .delivery import scheduled as events

        planned = events.parse_start(start, now()) if start is not None else None
        refuse_missing(interaction, REQUIRED_TO_CREATE)
        if planned is not None:
            events.refuse_no_events(interaction)
        await self.refuse_place(interaction)
        lang = guild_lang(interaction.guild)
        options = Options(extra_roles=extra_roles, currency=currency or shop, shop=shop,
                          crypto=crypto, day_minutes=day_minutes, night_minutes=night_minutes,
                          language=lang)
        assert interaction.guild is not None and interaction.channel_id is not None
        # The board is a public record: the outbox posts it in this channel (a crash
        # before the reply still gets it posted); the reply only confirms, to the master.
        game = await self.service.create(
            interaction.guild.id, interaction.channel_id, interaction.user.id, title, plot,
            options, language=lang, extra_outbox=[OutboxItem(kind=SIGNUP_POST, payload={})])
        interaction.extras[READER_GAME] = game  # the master's language (his desk's)
        text = t("lobby.created", user_lang(interaction), title=user_text(title))
        if planned is not None:
            await interaction.response.defer(ephemeral=True, thinking=True)
            await events.plan(interaction, await self.service.info(game), planned, lang)
            await interaction.followup.send(
                "\n".join([text, t("events.planned", user_lang(interaction))]), ephemeral=True)
            return
        await interaction.response.send_message(text, ephemeral=True)

    async def refuse_place(self, interaction: discord.Interaction[MafiaBot]) -> None:
        """Games open only in ordinary text channels no game owns (core.game.access decides)."""
        channel = interaction.channel
        # a channel not in the cache comes as a PartialMessageable: its type says
        kind: ChannelKind = "thread" if isinstance(channel, discord.Thread) else \
            "text" if isinstance(channel, discord.TextChannel) or getattr(
                channel, "type", None) is discord.ChannelType.text else "other"
        channel_id = interaction.channel_id or 0
        owner = self.bot.private_index.get(channel_id)
        if owner is None and kind == "text":
            owner = await self.service.channel_owner(channel_id)
        refusal = game_place_refusal(kind, owner)
        if refusal is not None:
            raise refusal

    @game.command(**command_kwargs("game.notify"))
    @localized("game.notify", "switch")
    @app_commands.choices(switch=[Choice(name=L("notify.choice.on"), value="on"),
                                  Choice(name=L("notify.choice.off"), value="off")])
    async def notify(self, interaction: discord.Interaction[MafiaBot], switch: str) -> None:
        """The server's opt-in list of members pinged when a signup opens
        (cogs/delivery/notify.py)."""
        from .delivery.notify import switch as set_notify

        on = switch == "on"
        if on:
            refuse_missing(interaction, ("manage_roles",))
        assert isinstance(interaction.user, discord.Member)
        changed = await set_notify(interaction.user, on, guild_lang(interaction.guild))
        key = ("notify.on" if changed else "notify.already_on") if on else \
            ("notify.off" if changed else "notify.already_off")
        await interaction.response.send_message(t(key, user_lang(interaction)),
                                                ephemeral=True)

    @game.command(**command_kwargs("game.setup"))
    @localized("game.setup", "roles")
    async def setup(self, interaction: discord.Interaction[MafiaBot],
                    roles: Range[str, 1, 1500]) -> None:
        info = await self.game_here(interaction)
        applied = await self.apply(interaction, info, c.Configure, roles=roles)
        event = next(e for e in applied.events if e.kind is EventKind.ROLES_SET)
        lang = user_lang(interaction)
        warnings = []  # the engine's judgement, worded here
        if event.data["size"] > event.data["signed_up"]:
            warnings.append(t("lobby.setup_waits_players", lang, size=event.data["size"],
                              signed_up=event.data["signed_up"]))
        if event.data["lopsided"]:
            warnings.append(t("lobby.setup_lopsided", lang, negatives=event.data["negatives"],
                              players=event.data["players"]))
        asked = self.estimates.ask(info.id, interaction.user.id, interaction.guild_id)
        await interaction.response.send_message(
            "\n".join([*warnings, asked.line(lang)]),
            embed=reply_embed(event, lang), ephemeral=True,
            allowed_mentions=discord.AllowedMentions.none())
        if asked.made:
            self.estimates.start(interaction, info.id, interaction.guild_id,
                                 applied.balance_job(), warnings, lang)
        else:  # the older estimate describes another setup
            self.estimates.drop(info.id)

    @game.command(**command_kwargs("game.options"))
    @localized("game.options", "reveal_roles", "votes_final", "bouncer_self", "dead_write",
               "public_moves", "master_sees_anon", "archive_channels", "graveyard", "language",
               "sergeant_in_police", "inherit_checks", "master_reads_teams",
               "open_team_channels", "reminder_minutes", "early_night",
               "spectators_see_teams", "dead_public", "removed_prize", "hammer",
               "hammer_confirm", "last_words_minutes")
    @app_commands.choices(language=[Choice(name=L("meta.language_name_ru"), value="ru"),
                                    Choice(name=L("meta.language_name_en"), value="en")])
    async def options(self, interaction: discord.Interaction[MafiaBot],
                      reveal_roles: bool | None = None, votes_final: bool | None = None,
                      bouncer_self: bool | None = None, dead_write: bool | None = None,
                      public_moves: bool | None = None, master_sees_anon: bool | None = None,
                      archive_channels: bool | None = None, graveyard: bool | None = None,
                      language: str | None = None, sergeant_in_police: bool | None = None,
                      inherit_checks: bool | None = None,
                      master_reads_teams: bool | None = None,
                      open_team_channels: bool | None = None,
                      reminder_minutes: Range[int, 0, 20160] | None = None,
                      early_night: bool | None = None,
                      spectators_see_teams: bool | None = None,
                      dead_public: bool | None = None,
                      removed_prize: bool | None = None, hammer: bool | None = None,
                      hammer_confirm: bool | None = None,
                      last_words_minutes: Range[int, 0, 1440] | None = None) -> None:
        info = await self.game_here(interaction)
        given: dict[str, Any] = {
            "reveal_roles": reveal_roles, "votes_final": votes_final,
            "bouncer_self": bouncer_self, "dead_write": dead_write,
            "public_moves": public_moves, "master_sees_anon": master_sees_anon,
            "archive_channels": archive_channels, "graveyard": graveyard,
            "language": language, "sergeant_in_police": sergeant_in_police,
            "inherit_checks": inherit_checks, "master_reads_teams": master_reads_teams,
            "open_team_channels": open_team_channels,
            "reminder_minutes": reminder_minutes, "early_night": early_night,
            "spectators_see_teams": spectators_see_teams,
            "dead_public": dead_public, "removed_prize": removed_prize,
            "hammer": hammer, "hammer_confirm": hammer_confirm,
            "last_words_minutes": last_words_minutes}
        changes = {k: v for k, v in given.items() if v is not None}
        applied = await self.apply(interaction, info, c.SetOptions, changes=changes)
        if language:
                await self.service.set_discord(info.id, DiscordPatch(language=language))
        lang = user_lang(interaction)
        # the setup can still change: estimate it (within the allowance)
        asked = None if applied.started else self.estimates.ask(
            info.id, interaction.user.id, interaction.guild_id)
        await interaction.response.send_message(
            asked.line(lang) if asked is not None else None,
            embed=signup_embed(applied.lobby(), lang),
            ephemeral=True, allowed_mentions=discord.AllowedMentions.none())
        if asked is not None and asked.made:
            self.estimates.start(interaction, info.id, interaction.guild_id,
                                 applied.balance_job(), [], lang)
        elif asked is not None:
            self.estimates.drop(info.id)

    @game.command(**command_kwargs("game.join"))
    async def join(self, interaction: discord.Interaction[MafiaBot]) -> None:
        await join_or_leave(interaction, await self.game_here(interaction), "join")

    @game.command(**command_kwargs("game.leave"))
    async def leave(self, interaction: discord.Interaction[MafiaBot]) -> None:
        await join_or_leave(interaction, await self.game_here(interaction), "leave")

    @game.command(**command_kwargs("game.start"))
    @localized("game.start", "confirm")
    async def start(self, interaction: discord.Interaction[MafiaBot],
                    confirm: bool = False) -> None:
        await start_game(self, interaction, await self.game_here(interaction), confirm,
                         confirm_sight=False)

    @game.command(**command_kwargs("game.status"))
    async def status(self, interaction: discord.Interaction[MafiaBot]) -> None:
        info = await self.game_here(interaction, finished=True)
        view = await self.view(info)
        await interaction.response.send_message(
            embed=status_embed(view, user_lang(interaction)), ephemeral=True)

    @game.command(**command_kwargs("game.standby"))
    async def standby(self, interaction: discord.Interaction[MafiaBot]) -> None:
        await desk.standby(interaction, await self.game_here(interaction))

    @game.command(**command_kwargs("game.spectate"))
    async def spectate(self, interaction: discord.Interaction[MafiaBot]) -> None:
        from .spectate import spectate

        await spectate(interaction, await self.game_here(interaction))

    @game.command(**command_kwargs("game.cancel"))
    async def cancel(self, interaction: discord.Interaction[MafiaBot]) -> None:
        info = await self.game_here(interaction)
        await self.apply(interaction, info, c.Cancel)
        self.estimates.drop(info.id)
        await interaction.response.send_message(t("lobby.cancelled", user_lang(interaction)),
                                                ephemeral=True)


async def start_game(cog: GameCog, interaction: discord.Interaction[MafiaBot], info: GameInfo,
                     confirm: bool, *, confirm_sight: bool) -> None:
    """/game start, and its "Start anyway" button. Before the deal the master is told
    which seated players' Discord rights show them the others' places (RULES.md §8), and
    starts only by confirming; the engine then tells the table publicly."""
    observe = cog.observe
    master = await observe.may_master(info.id, interaction.user.id, admin=is_admin(interaction))
    if master:
        refuse_missing(interaction, REQUIRED_TO_START)
    started = await observe.started(info.id)  # the engine refuses it: no rights to look up
    sights = await seat_sights(cog.bot, info, await observe.seats(info.id)) \
        if master and not started else {}
    seeing = await observe.seated_sight(info.id, sights)
    lang = user_lang(interaction)
    if master and not started and not confirm:
        await balance_gate(cog, interaction, info, lang, wait=not confirm_sight)
    if master and seeing and not confirm_sight and not started:
        lines = [t("secrets.sight.head", lang)]
        lines += [t(f"secrets.sight.{what}", lang, uid=mention(uid))
                  for uid, what in seeing.items()]
        lines.append(t("secrets.sight.fix", lang))
        view = discord.ui.View(timeout=None)
        view.add_item(StartAnyway(info.id, confirm, t("secrets.sight.confirm", lang)))
        await answer(interaction, "\n".join(lines), view)
        return
    await cog.apply(interaction, info, c.Start, confirm=confirm, sights=sights,
                    confirm_sight=confirm_sight)
    estimates = getattr(cog, "estimates", None)
    if isinstance(estimates, balance.Estimates):
        estimates.drop(info.id)  # dealt: the setup no longer changes
    if confirm_sight:  # the offer's button: its message says so, and loses the button
        await interaction.response.edit_message(content=t("lobby.started", lang), view=None)
    else:
        await answer(interaction, t("lobby.started", lang))


async def answer(interaction: discord.Interaction[MafiaBot], text: str,
                 view: discord.ui.View | None = None) -> None:
    """The start's ephemeral answer: the reply, or (after waiting for the estimate
    behind a deferral) the follow-up that replaces its "thinking" message."""
    mentions = discord.AllowedMentions.none()
    if interaction.response.is_done():
        if view is None:
            await interaction.followup.send(text, ephemeral=True, allowed_mentions=mentions)
        else:
            await interaction.followup.send(text, view=view, ephemeral=True,
                                            allowed_mentions=mentions)
    else:
        await interaction.response.send_message(text, view=view or discord.utils.MISSING,
                                                ephemeral=True, allowed_mentions=mentions)


async def balance_gate(cog: GameCog, interaction: discord.Interaction[MafiaBot],
                       info: GameInfo, lang: str, *, wait: bool) -> None:
    """/game start without confirm waits for the balance estimate of the setup it
    would deal, a few seconds at most, and is refused (RuleError, nothing changed) if
    the estimate is not ready by then or its warning fires (RULES.md, "The balance
    estimate at the start"; core.play.balance.start_refusal decides). The offer's
    button does not wait (its click must be answered within Discord's 3 s)."""
    estimator = balance.ESTIMATOR
    estimates = getattr(cog, "estimates", None)
    if not estimator.guards_start or not isinstance(estimates, balance.Estimates):
        return
    job = await cog.observe.balance_job(info.id)
    # an estimate the start makes itself (none was made of this setup on these seats)
    # stops in time to be waited for
    budget = max(0.5, min(estimator.budget_s, estimator.start_wait_s - 1.0))
    ready = await estimates.for_start(info.id, interaction.guild_id, job, 0.0, budget)
    if ready is None and wait:
        await interaction.response.defer(ephemeral=True, thinking=True)
        ready = await estimates.for_start(info.id, interaction.guild_id, job,
                                          estimator.start_wait_s, budget)
    if ready is None and estimates.could_not(info.id, job):
        return  # no estimate can be had: nothing to warn about (the failure is logged)
    refused = estimates.start_refusal(ready, lang)
    if refused is not None:
        raise refused


# The engine's refusals that mean a start offer no longer applies, whoever presses it.
STALE_OFFER = frozenset({ErrorCode.ALREADY_STARTED, ErrorCode.GAME_OVER})


class StartAnyway(discord.ui.DynamicItem[discord.ui.Button[Any]],
                  template=r"mafia:sightok:(?P<game>\d+):(?P<confirm>[01])"):
    """The master's confirmation that the game starts although some players can read
    other seats' places (the rights are worked out again when it is pressed)."""

    def __init__(self, game_id: int, confirm: bool, label: str = "") -> None:
        super().__init__(discord.ui.Button(
            label=label or None, style=discord.ButtonStyle.danger,
            custom_id=f"mafia:sightok:{game_id}:{int(confirm)}"))
        self.game_id, self.confirm = game_id, confirm

    @classmethod
    async def from_custom_id(cls, interaction: discord.Interaction[Any], item: Any,
                             match: re.Match[str]) -> StartAnyway:
        return cls(int(match["game"]), match["confirm"] == "1")

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        from .ui.components import _guarded

        bot: MafiaBot = interaction.client
        cog = bot.get_cog("Lobby")
        assert isinstance(cog, GameCog)
        await _guarded(interaction, self.press(cog, interaction), self.game_id)

    async def press(self, cog: GameCog, interaction: discord.Interaction[MafiaBot]) -> None:
        """Start; an offer that no longer applies (the engine says the game has started,
        or is over) is refused in the presser's words, and loses its button: its own
        message is edited by the click's answer, at no cost to the bot's budget."""
        info = await cog.service.info(self.game_id)
        try:
            await start_game(cog, interaction, info, self.confirm, confirm_sight=True)
        except RuleError as err:
            if err.code not in STALE_OFFER or interaction.response.is_done():
                raise
            lang = user_lang(interaction)
            await interaction.response.edit_message(
                content="\n".join([refusal(err, lang), t("secrets.sight.stale", lang)]),
                view=None, allowed_mentions=discord.AllowedMentions.none())


async def setup(bot: MafiaBot) -> None:
    await bot.add_cog(Lobby(bot))
    bot.add_dynamic_items(SignupButton, StartAnyway)  # join / leave; the start's confirmation


__all__ = ["Lobby", "join_or_leave", "send_error"]
