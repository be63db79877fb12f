"""The extension that owns the bot's background delivery: the request budget on
discord.py's HTTP client, the budget shared with the token's other processes, the
outbox's deliverer and its worker (issue 31, item 4: bot.py imports no cog; this work
lives with what it serves). Loaded by name when the bot logs in, before any request.

`wire` puts them on the bot (`budget`, `budgeted`, `delivery`, `outbox`) and has the
service write its outbox rows as the catalogue lists them (core/storage/kinds.py);
the cog starts the worker once the guild caches are ready and stops it, and the
shared budget's lease, when the bot closes (Bot.close unloads it).
"""

from __future__ import annotations

import logging

from discord.ext import commands

from core.storage.outbox import OutboxWorker

from ..utils.bot import MafiaBot
from . import sharedbudget
from .budget import RateBudget, global_limit
from .catalogue import LANE_CHANNELS, LANE_DESK, LANE_NAMES, LANE_WEIGHTS, LANES, lane
from .deliverer import Delivery, outbox_settings
from .gathering import GATHERED_BATCH
from .ratelimits import install

log = logging.getLogger(__name__)
#: entries offered to the deliverer at once, per lane: one command's announcements
#: merge within 10; the desk and the team channels gather a window's lines, all of
#: which a run must see to close on its pinged or phase-change line (cogs/delivery/gathering.py)
BATCHES = tuple(GATHERED_BATCH if n in (LANE_DESK, LANE_CHANNELS) else 10
                for n in range(LANES))


def wire(bot: MafiaBot) -> None:
    """The budget, the deliverer and the worker, set on the bot once: every REST request
    waits for the budget (docs/rate-limits.md); the outbox serves its lanes by weight
    (docs/delivery.md)."""
    if getattr(bot, "outbox", None) is not None:
        return
    # the route, derivers and bundlers of the outbox's catalogue (core/storage/kinds.py)
    bot.service.use_catalogue()
    if getattr(bot, "budget", None) is None:  # bot.py makes it; a bare bot has none
        bot.budget = RateBudget(global_limit(bot.settings.global_rate_limit))
    bot.budgeted = install(bot, bot.budget)
    bot.delivery = delivery = Delivery(bot)
    bot.outbox = OutboxWorker(delivery.deliver, notify_parked=delivery.parked,
                              service=bot.service, deliver_batch=delivery.deliver_batch,
                              lane=lane, lanes=LANES, weights=LANE_WEIGHTS,
                              max_concurrent=32, names=LANE_NAMES, batch_size=BATCHES,
                              **outbox_settings(bot.settings))


class Background(commands.Cog):
    """Starts and stops what `wire` set up, with the bot."""

    def __init__(self, bot: MafiaBot) -> None:
        self.bot = bot

    async def after_login(self) -> None:
        """Called by bot.py's setup_hook (logged in, the database ready): a sharded
        process on PostgreSQL shares the token's budget and coordinates its identifies
        (cogs/delivery/sharedbudget.py)."""
        bot = self.bot
        if bot.coordination is None and bot.shard_count is not None and bot.http.token:
            bot.coordination = await sharedbudget.coordinate(
                bot.http, bot.budget, bot.http.token, bot.settings.database_url,
                bot.shard_count, getattr(bot, "shard_ids", None),
                limit=global_limit(bot.settings.global_rate_limit))

    @commands.Cog.listener()
    async def on_ready(self) -> None:
        await self.bot.outbox.start()  # guild caches are ready: channels resolve

    async def cog_unload(self) -> None:
        try:
            await self.bot.outbox.stop()
        finally:
            coordination = self.bot.coordination
            self.bot.coordination = None
            if isinstance(coordination, sharedbudget.Coordination):
                await sharedbudget.close(coordination)


async def setup(bot: MafiaBot) -> None:
    wire(bot)
    await bot.add_cog(Background(bot))
