"""The Discord bot: the Bot subclass, its start-up, and the `run` entry point.

setup_hook wires storage (service, deadline scheduler), loads the cogs (the
outbox's worker and the request budget first: cogs/delivery/outbox.py), registers the
persistent components and syncs the command tree when it changed since the last sync.
"""

from __future__ import annotations

import asyncio
import gc
import hashlib
import json
import logging
import os
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp
import discord
from discord import app_commands
from discord.ext import commands
from pydantic import ValidationError

from cogs.delivery.budget import RateBudget, global_limit
from cogs.utils import bot as shared
from cogs.utils.errors import send_error
from cogs.utils.logs import bind_interaction, setup_logging
from cogs.utils.observed import COMMAND_FAILED, ERROR, REFUSED, STARTED
from cogs.utils.sight import note_interaction
from core.game.access import GameLimits
from core.game.errors import ErrorCode, RuleError
from core.settings import ConfigError, Settings, database_config
from core.storage.db import close_db, init_db
from core.storage.scheduler import DeadlineScheduler
from core.storage.service import GameService
from core.storage.sharding import guild_filter
from core.text.i18n import normalize_locale, t

log = logging.getLogger("mafia")

#: the extension owning the background delivery (cogs/delivery/outbox.py), loaded at login
DELIVERY = "cogs.delivery.outbox"
EXTENSIONS = (
    "cogs.lobby", "cogs.roles", "cogs.voting", "cogs.night", "cogs.master",
    "cogs.menus", "cogs.economy", "cogs.shop", "cogs.anon", "cogs.lastwords", "cogs.help",
    "cogs.delivery.tally",
    "cogs.stats",
    "cogs.metrics",  # /healthz and /metrics, with METRICS_PORT (nothing without it)
)


class MafiaTree(app_commands.CommandTree["MafiaBot"]):
    """One error handler for every command: refusals become ephemeral messages. Before
    any command or autocomplete, a seated sender's rights are looked at (a right given
    during the game is told to the table: cogs/utils/sight.py)."""

    async def interaction_check(self, interaction: discord.Interaction[Any], /) -> bool:
        """Every command's start: its log lines name its guild and game (cogs/utils/
        logs.py), its latency is measured from here, and a seated sender's rights are
        looked at (cogs/utils/sight.py)."""
        bind_interaction(interaction)
        interaction.extras[STARTED] = time.perf_counter()
        await note_interaction(interaction)
        return True

    async def on_error(self, interaction: discord.Interaction[Any],
                       error: app_commands.AppCommandError) -> None:
        original = getattr(error, "original", error)
        refused = isinstance(original, RuleError) or isinstance(
            error, app_commands.CheckFailure)
        self.client.dispatch(COMMAND_FAILED, interaction, REFUSED if refused else ERROR)
        if isinstance(original, RuleError):
            await send_error(interaction, original)
            return
        if isinstance(error, app_commands.CheckFailure):
            await send_error(interaction, RuleError(ErrorCode.NOT_ALLOWED))
            return
        log.exception("command failed", exc_info=original)
        await send_error(interaction, RuleError(ErrorCode.INTERNAL_ERROR))


class MafiaBot(shared.MafiaBot):
    """The running bot: storage wired up; delivery and the rate budget come with the
    cogs.delivery.outbox extension (the cogs' view of it, with the game lookup, is
    cogs.utils.bot.MafiaBot)."""

    def __init__(self, settings: Settings, *, manage_db: bool = True,
                 state_dir: Path | None = None, **kwargs: Any) -> None:
        # Slash commands and components only: the bot reads no messages, so it asks for
        # none (no MESSAGE_CREATE for every chat line in every guild) and caches none.
        intents = discord.Intents.none()
        intents.guilds = True
        kwargs.setdefault("max_messages", None)
        # Nobody is ever pinged unless a message says whom (cogs/ui/markup.py): user text
        # in any message can never ping a member, a role, @everyone or @here.
        kwargs.setdefault("allowed_mentions", discord.AllowedMentions.none())
        quiet_voice_warnings()
        super().__init__(command_prefix=commands.when_mentioned, intents=intents,
                         tree_cls=MafiaTree, **kwargs)
        self.settings = settings
        self.manage_db = manage_db
        # Runtime state (the command-sync markers) goes to the data directory, never
        # beside the code (core/settings.py, MAFIA_DATA_DIR).
        self.state_dir = state_dir or settings.mafia_data_dir
        # A process holding some of the shards serves only those shards' guilds: their
        # games, deadlines and outbox (docs/scale-out.md).
        self.service = GameService(owns=guild_filter(
            kwargs.get("shard_count"), kwargs.get("shard_ids")), limits=GameLimits(
                per_member=settings.max_games_per_member,
                per_guild=settings.max_games_per_guild))
        self.scheduler = DeadlineScheduler(self.service)
        self.private_index: dict[int, int] = {}  # private channel id -> game id
        # Discord's rate limits planned for, not run into (docs/rate-limits.md): the
        # budget exists from the start (tests put it on their clock before login); the
        # cogs.delivery.outbox extension, loaded first by setup_hook, installs it on the HTTP
        # client and owns the outbox's deliverer and worker and the budget shared with
        # the token's other processes (docs/delivery.md).
        self.budget = RateBudget(global_limit(settings.global_rate_limit))
        self.resumed = 0  # live games found at start-up (their deadlines re-armed)
        self.announced = False
        #: `mafia-bot run` freezes the heap after loading the games (`tune_runtime`):
        #: the loaded states leave the collector's generations, so a full collection does
        #: not walk them again (a 692 ms one was seen at 5,000 games)
        self.freeze_heap = False

    # --- start and stop -------------------------------------------------------------
    async def login(self, token: str) -> None:
        """The delivery extension before anything is sent: its request budget counts
        every request, the login's own included."""
        if DELIVERY not in self.extensions:
            await self.load_extension(DELIVERY)
        await super().login(token)

    async def setup_hook(self) -> None:
        if self.manage_db:
            await init_db(self.settings.database_url)
        for cog in list(self.cogs.values()):  # logged in, the database ready
            after_login = getattr(cog, "after_login", None)
            if after_login is not None:
                await after_login()
        await self.load_extension("cogs.translator")
        for ext in EXTENSIONS:  # by name: each registers its own persistent components
            await self.load_extension(ext)
        self.resumed = 0
        for info in await self.service.active_games():
            self.resumed += 1
            for channel_id in info.private_channels.values():
                self.private_index[channel_id] = info.id
        await self.scheduler.start()
        if self.freeze_heap:
            gc.collect()
            gc.freeze()
        await self.sync_if_changed()

    async def on_ready(self) -> None:
        if not self.announced:  # on_ready fires again after a reconnect: say it once
            self.announced = True
            log.info("%s", ready_line(str(self.user), len(self.guilds), self.resumed,
                                      console_lang()))

    async def before_identify_hook(self, shard_id: int | None, *,
                                   initial: bool = False) -> None:
        """Identify within Discord's max_concurrency buckets, with the other processes."""
        if self.coordination is None:
            await super().before_identify_hook(shard_id, initial=initial)
            return
        await self.coordination.identify.before_identify(shard_id)

    async def close(self) -> None:
        await self.scheduler.stop()
        await super().close()  # unloads the extensions: cogs.delivery.outbox stops the worker
        await self.service.close()
        if self.manage_db:
            await close_db()

    async def sync_if_changed(self) -> None:
        """Sync when the translated command payload differs from the last synced one."""
        guild = discord.Object(self.settings.discord_guild_id) \
            if self.settings.discord_guild_id else None
        if guild is not None:
            self.tree.copy_global_to(guild=guild)
        translator = self.tree.translator
        payload = [await cmd.get_translated_payload(self.tree, translator)
                   if translator else cmd.to_dict(self.tree)
                   for cmd in self.tree.get_commands(guild=guild)]
        digest = hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode())
        marker = self.state_dir / f".commands-{guild.id if guild else 'global'}.sha256"
        if marker.exists() and marker.read_text() == digest.hexdigest():
            return
        await self.tree.sync(guild=guild)
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text(digest.hexdigest())


# --- entry point --------------------------------------------------------------------
def console_lang() -> str:
    return normalize_locale((os.environ.get("LANG") or "en").split(".")[0].replace("_", "-"))


def _say(key: str, **params: Any) -> None:
    print(t(key, console_lang(), **params), file=sys.stderr)


def ready_line(user: str, guilds: int, games: int, lang: str) -> str:
    """The one start-up line: "ready as NAME in N guilds, M games resumed"."""
    return t("cli.started", lang, user=user, guilds=t("words.guilds", lang, count=guilds),
             games=t("words.games_resumed", lang, count=games))


def quiet_voice_warnings() -> None:
    """A text-only bot needs neither PyNaCl nor davey: discord.py warns once per process
    (Client.__init__) when they are missing unless VoiceClient's flags are already down."""
    discord.VoiceClient.warn_nacl = False
    discord.VoiceClient.warn_dave = False


def make_bot(settings: Settings, shard_count: int | None = None,
             shard_ids: list[int] | None = None, auto_shard: bool = False) -> MafiaBot:
    if shard_count is None and shard_ids is None and not auto_shard:
        return MafiaBot(settings)
    return ShardedMafiaBot(settings, shard_count=shard_count, shard_ids=shard_ids)


class ShardedMafiaBot(MafiaBot, commands.AutoShardedBot):
    """The Discord way to scale: several shards, or several processes each with some."""


# Collect cyclic garbage less often than CPython's default (700, 10, 10): each command
# makes and frees thousands of short-lived objects (interaction, state copy, JSON), most
# freed by reference counting, so the default runs a young collection every few commands
# and an old one (scanning every cached game) every few hundred, about a fifth of the
# CPU at saturation (bench/, docs/benchmark.md). Cycles are still reclaimed, later.
GC_THRESHOLDS = (20_000, 20, 50)


def tune_runtime() -> None:
    """Process-wide settings of a bot process (`mafia-bot run`, and the benchmark's bot)."""
    gc.set_threshold(*GC_THRESHOLDS)


#: `mafia-bot run`'s exit statuses besides 0 (a crash exits 1): a setting to fix (no
#: token, a bad DATABASE_URL or value), a token Discord refused, Discord unreachable.
#: Restarting helps only the last (deploy/mafia-bot.service: RestartPreventExitStatus).
EXIT_CONFIG, EXIT_TOKEN, EXIT_UNREACHABLE = 2, 3, 4


def main(shard_count: int | None = None, shard_ids: str | None = None,
         auto_shard: bool = False) -> int:
    try:
        settings = Settings()
    except ValidationError as exc:  # e.g. LOG_FORMAT=xml, METRICS_PORT=abc
        _say("cli.config_error", error=str(exc))
        return EXIT_CONFIG
    setup_logging(settings.log_format)
    if not settings.discord_token:
        _say("cli.token_missing")
        return EXIT_CONFIG
    try:
        database_config(settings.database_url)
    except ConfigError as exc:
        _say("cli.config_error", error=str(exc))
        return EXIT_CONFIG
    ids = [int(x) for x in shard_ids.split(",")] if shard_ids else None
    tune_runtime()
    bot = make_bot(settings, shard_count, ids, auto_shard)
    bot.freeze_heap = True
    try:
        asyncio.run(_run(bot, settings.discord_token))
    except discord.LoginFailure as exc:
        _say("cli.login_failed", error=str(exc))
        return EXIT_TOKEN
    except (TimeoutError, aiohttp.ClientError, OSError) as exc:
        # not 3: a network that is down now may be back soon (a service manager that
        # stops restarting on 2 and 3 restarts on this: deploy/mafia-bot.service)
        _say("cli.unreachable", error=str(exc) or type(exc).__name__)
        return EXIT_UNREACHABLE
    except KeyboardInterrupt:
        return 0
    return 0


async def _run(bot: MafiaBot, token: str) -> None:
    async with bot:
        await bot.start(token)
