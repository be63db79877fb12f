"""Start-up: one "ready" line, and no voice-support warnings for a text-only bot."""

from __future__ import annotations

import logging
from pathlib import Path

import discord
import pytest

from bot import ready_line
from tests.bot.helpers import EVERYTHING, TIMEOUT, new_bot, open_table, start, started
from tests.harness import Harness


def test_a_text_only_bot_does_not_warn_about_voice(caplog: pytest.LogCaptureFixture,
                                                   tmp_path: Path) -> None:
    # as on a machine without PyNaCl and davey: discord.py would warn in Client.__init__
    discord.VoiceClient.warn_nacl = True
    discord.VoiceClient.warn_dave = True
    with caplog.at_level(logging.WARNING):
        new_bot(tmp_path)
    assert [r.getMessage() for r in caplog.records if "voice" in r.getMessage()] == []


def test_the_ready_line_in_both_languages() -> None:
    assert ready_line("Mafia#0001", 1, 0, "en") == (
        "Ready as Mafia#0001 in 1 guild, 0 games resumed.")
    assert ready_line("Mafia#0001", 21, 2, "en") == (
        "Ready as Mafia#0001 in 21 guilds, 2 games resumed.")
    assert ready_line("Mafia", 5, 1, "ru") == (
        "Готов к работе как Mafia: 5 серверов, возобновлена 1 игра.")


async def test_a_restarted_bot_says_ready_once_with_the_games_it_resumed(
        h: Harness, tmp_path: Path, caplog: pytest.LogCaptureFixture,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LANG", "en_US.UTF-8")  # the console's language
    table = await open_table(h, 6)
    await start(table)
    await h.bot.close()
    bot = new_bot(tmp_path)
    with caplog.at_level(logging.INFO, logger="mafia"):
        async with Harness(bot, timeout=30.0) as again:
            again.add_guild("Mafia Club", locale="ru")
            again.set_bot_permissions(EVERYTHING)
            await bot.on_ready()  # a reconnect fires it again: still one line
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("Ready as")]
    assert len(lines) == 1 and lines[0].endswith("1 game resumed."), lines


async def test_a_run_freezes_the_heap_after_loading_the_games(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 45: `mafia-bot run` moves what start-up loaded out of the collector's
    generations (gc.freeze), once, after the games are loaded; a bot built by a test
    does not (its heap is the test process's)."""
    import bot as bot_module

    frozen: list[int] = []
    monkeypatch.setattr(bot_module.gc, "freeze", lambda: frozen.append(1))
    (tmp_path / "a").mkdir()
    plain = new_bot(tmp_path / "a")
    h = await started(plain, Harness(plain, timeout=TIMEOUT))
    await h.close()
    assert frozen == []
    (tmp_path / "b").mkdir()
    running = new_bot(tmp_path / "b")
    running.freeze_heap = True
    h = await started(running, Harness(running, timeout=TIMEOUT))
    await h.close()
    assert frozen == [1]
