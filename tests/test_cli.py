"""The console script: simulate offline, and run's clear messages instead of tracebacks."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import cli
from core.text.i18n import t

ROOT = Path(__file__).resolve().parents[1]


def test_simulate_prints_a_log_and_win_rates(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["simulate", "--games", "5", "--players", "8", "--seed", "3",
                     "--modules", "extra_roles,currency,shop,crypto", "--lang", "en"]) == 0
    out = capsys.readouterr().out
    assert t("cli.simulate.log_head", "en", seed=3, players=8) in out
    assert t("cli.simulate.rates_head", "en", count=5) in out
    assert "Game over" in out


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_simulate_log_reads_like_a_console_log(capsys: pytest.CaptureFixture[str],
                                               lang: str) -> None:
    """Each hanging once, whose turn was missed, payouts with figures, the citizens' note,
    no Markdown."""
    import re

    from core.game.state import Options
    from core.play.sim import play

    assert cli.main(["simulate", "--games", "30", "--players", "12", "--seed", "1",
                     "--modules", "extra_roles,currency,shop,crypto", "--lang", lang]) == 0
    out = capsys.readouterr().out
    first = play(1, 12, Options(extra_roles=True, currency=True, shop=True, crypto=True,
                                language=lang))
    names = {p.uid: p.name for p in first.state.players}
    hanged = [d.hanged for d in first.state.days if d.hanged is not None]
    assert hanged
    before, after = t("event.died.hanged", lang, uid="@@", role="##").split("@@")
    after = after.split("##")[0]
    for uid in hanged:  # announced by exactly one line (not also by the day's result)
        assert len([ln for ln in out.splitlines()
                    if f"{before}{names[uid]}{after}" in ln]) == 1
    assert t("event.you_died.where", lang) not in out
    missed = t("event.turn_missed", lang, uid="@@", turn=0).split("@@")[1].split("0")[0]
    assert re.search(r"\[" + t("term.master", lang) + r"\] Player\d+" + re.escape(missed), out)
    assert re.search(r"Player\d+: \d+ \w+ — ", out)  # payouts with figures
    assert t("cli.simulate.rates_note", lang) in out
    assert "**" not in out and "\n> " not in out


def test_simulate_refuses_an_unknown_module(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["simulate", "--games", "1", "--modules", "chess"]) == 2
    assert "chess" in capsys.readouterr().err


# `cli.py run` with Discord's API at `api` (an address that refuses connections): the
# patch lives here, in the test, not in the bot's entry point.
_AT_API = ("import runpy, sys\n"
           "import discord\n"
           "discord.http.Route.BASE = sys.argv.pop(1)\n"
           "sys.argv[0] = {cli!r}\n"
           "sys.path.insert(0, {root!r})\n"
           "runpy.run_path(sys.argv[0], run_name='__main__')\n")


def _run(tmp_path: Path, api: str | None = None, **env: str
         ) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("DISCORD_", "DATABASE_"))}
    base.update({"LANG": "en_US.UTF-8", "DATABASE_URL": f"sqlite://{tmp_path / 'x.db'}"})
    base.update(env)
    cli_py = str(ROOT / "cli.py")
    argv = [sys.executable, "-c", _AT_API.format(cli=cli_py, root=str(ROOT)), api, "run"] \
        if api else [sys.executable, cli_py, "run"]
    return subprocess.run(argv, cwd=tmp_path, env=base, capture_output=True, text=True,
                          timeout=60)


def test_run_without_a_token_says_so(tmp_path: Path) -> None:
    done = _run(tmp_path)
    assert done.returncode == 2
    assert "DISCORD_TOKEN is not set" in done.stderr
    assert "Traceback" not in done.stderr


def test_run_with_a_fake_token_and_no_discord_exits_cleanly(tmp_path: Path) -> None:
    done = _run(tmp_path, api="http://127.0.0.1:9/api/v10", DISCORD_TOKEN="fake.token.value")
    # 4, not 3 (a refused token): a network that is down may come back, so a service
    # manager restarts on 4 and not on 2 or 3 (deploy/mafia-bot.service)
    assert done.returncode == 4, done.stderr
    assert t("cli.unreachable", "en", error="")[:20] in done.stderr
    assert "Traceback" not in done.stderr


def test_run_with_a_bad_database_url_says_so(tmp_path: Path) -> None:
    done = _run(tmp_path, DISCORD_TOKEN="fake", DATABASE_URL="mysql://nope")
    assert done.returncode == 2
    assert "DATABASE_URL" in done.stderr and "Traceback" not in done.stderr


def test_run_tunes_the_collector_before_the_bot_starts(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """`mafia-bot run` collects garbage less often than CPython's default (bot.py)."""
    import gc

    import bot

    seen: list[tuple[int, int, int]] = []

    async def fake_run(client: object, token: str) -> None:
        seen.append(gc.get_threshold())

    before = gc.get_threshold()
    gc.set_threshold(700, 10, 10)  # CPython's default (an earlier test may have tuned it)
    monkeypatch.setenv("DISCORD_TOKEN", "x")
    monkeypatch.setattr(bot, "_run", fake_run)
    try:
        assert bot.main() == 0
    finally:
        gc.set_threshold(*before)
    assert seen == [bot.GC_THRESHOLDS] and bot.GC_THRESHOLDS[0] > 700


@pytest.mark.parametrize("lang", ["en_US.UTF-8", "ru_RU.UTF-8"])
def test_every_option_says_what_it_does_and_its_default(
        lang: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import argparse

    monkeypatch.setenv("LANG", lang)
    word = {"en_US.UTF-8": "default", "ru_RU.UTF-8": "по умолчанию"}[lang]
    subparsers = next(a for a in cli.parser()._actions
                      if isinstance(a, argparse._SubParsersAction))
    missing = [(name, action.dest) for name, sub in subparsers.choices.items()
               for action in sub._actions
               if action.option_strings and not isinstance(action, argparse._HelpAction)
               and not action.required and word not in (action.help or "")]
    assert missing == []
    for name in ("archive", "web"):
        assert "--db" in subparsers.choices[name]._option_string_actions


def test_archive_and_web_read_the_database_given_and_never_create_one(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LANG", "en_US.UTF-8")
    missing = tmp_path / "nowhere" / "mafia.db"
    for command in (["archive", "1"], ["web"]):
        assert cli.main([*command, "--db", f"sqlite://{missing}"]) == 2
        assert capsys.readouterr().err.strip() == t("cli.db_missing", "en", path=str(missing))
    assert not missing.parent.exists()
