"""A real MafiaBot on a temp SQLite file, driven through the Discord harness."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import discord
import pytest_asyncio

from bot import MafiaBot
from core.settings import Settings
from tests.harness import Harness

EVERYTHING = discord.Permissions(
    view_channel=True, send_messages=True, embed_links=True, read_message_history=True,
    manage_channels=True, manage_roles=True, create_private_threads=True,
    send_messages_in_threads=True, manage_threads=True, create_public_threads=True,
    add_reactions=True, attach_files=True)


@pytest_asyncio.fixture
async def h(tmp_path: Path) -> AsyncIterator[Harness]:
    settings = Settings(discord_token="x", database_url=f"sqlite://{tmp_path / 'bot.db'}")
    bot = MafiaBot(settings, state_dir=tmp_path)
    # A generous per-interaction timeout: a loaded 2-core machine must not cancel a
    # command mid-transaction (that is a test artefact, not a bot behaviour).
    async with Harness(bot, timeout=30.0) as harness:
        harness.add_guild("Mafia Club", locale="ru")
        harness.set_bot_permissions(EVERYTHING)
        # The live count waits `interval` real seconds between two edits of a message;
        # every settle after a vote would sit that out. test_tally sets its own.
        bot.delivery.tallies.interval = 0.0
        yield harness
