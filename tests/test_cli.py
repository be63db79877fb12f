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
    """Each hanging once, whose turn was missed, payouts with figures, the note on shares
    over 100% exactly when they are, no Markdown."""
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
    shares = [float(row.rsplit(None, 1)[1].rstrip("%").replace(",", "."))
              for row in out.split(t("cli.simulate.rates_head", lang, count=30))[1].splitlines()
              if row.startswith("  ")]
    assert (t("balance.overlap", lang) in out) == (round(sum(shares)) > 100), out
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


# --- issue 42, item 9: simulate --setup, archive of a cancelled game, status -------------
@pytest.mark.parametrize("lang", ["en", "ru"])
def test_a_module_role_in_the_setup_switches_its_module_on(
        capsys: pytest.CaptureFixture[str], lang: str) -> None:
    """Not Discord's "enable it when creating the game": the estimate is made with the
    module on, and the printout says so and names the option."""
    setup = "advocate; mafioso x2" if lang == "en" else "адвокат; мафиози x2"
    assert cli.main(["simulate", "--setup", setup, "--games", "4", "--lang", lang]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    assert out.splitlines()[0] == t("cli.simulate.module_on", lang,
                                    module=t("module.additional_roles.name", lang),
                                    option="--modules extra_roles")
    assert t("balance.head", lang, count=4, players=6, days=0.0).split(",")[0] in out


def test_a_refusal_names_roles_in_russian(capsys: pytest.CaptureFixture[str]) -> None:
    """A refusal about a role says the role's Russian name, not its key."""
    assert cli.main(["simulate", "--setup", "оккультист x2; мафиози", "--games", "1",
                     "--lang", "ru"]) == 2
    err = capsys.readouterr().err
    assert "«оккультист»" in err and "occultist" not in err, err


@pytest.mark.parametrize(("lang", "typed", "near"), [("en", "advokat", "“advocate”"),
                                                     ("ru", "следавотель", "«следователь»")])
def test_an_unknown_role_gets_the_nearest_name(capsys: pytest.CaptureFixture[str],
                                               lang: str, typed: str, near: str) -> None:
    assert cli.main(["simulate", "--setup", f"{typed}; mafioso", "--lang", lang]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[1] == t("cli.simulate.nearest", lang, names=near), err


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_an_unknown_role_with_no_near_name_lists_the_known(
        capsys: pytest.CaptureFixture[str], lang: str) -> None:
    from core.game.roles import rows

    assert cli.main(["simulate", "--setup", "qwertyuiop; mafioso", "--lang", lang]) == 2
    err = capsys.readouterr().err.splitlines()
    names = ", ".join(t(f"role.{ri.role}.name", lang) for ri in rows())
    assert err[1] == t("cli.simulate.known_roles", lang, names=names), err
    assert t("role.occultist.name", lang) in err[1]


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_both_outputs_name_the_sides_alike_and_note_shares_over_100(
        capsys: pytest.CaptureFixture[str], lang: str) -> None:
    """The estimate and plain `simulate` print the same side names, and both carry the
    note when their shares add to more than 100% (the town and the neutrals won one
    game together)."""
    assert cli.main(["simulate", "--setup", "mafioso x2; investigator; bouncer",
                     "--games", "30", "--lang", lang]) == 0
    estimate = capsys.readouterr().out
    assert t("balance.overlap", lang) in estimate
    assert cli.main(["simulate", "--games", "30", "--players", "12", "--lang", lang]) == 0
    plain = capsys.readouterr().out
    assert t("balance.overlap", lang) in plain
    rates = plain.split(t("cli.simulate.rates_head", lang, count=30))[1].splitlines()[1:]
    sides = {t(f"balance.side.{k}", lang) for k in ("town", "mafia", "neutral", "draw")}
    named = [row.strip().rsplit(None, 2)[0] for row in rates if row.startswith("  ")]
    assert named and set(named) <= sides, named
    assert t("balance.side.town", lang) in estimate and t("balance.side.town", lang) in named
    for word in ("negative", "positive", "отрицательные", "положительные"):
        assert word not in plain.split(t("cli.simulate.rates_head", lang, count=30))[1]


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_archive_of_a_cancelled_game_says_it_was_cancelled(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        lang: str) -> None:
    import asyncio
    from datetime import UTC, datetime

    from core.game import commands as c
    from core.storage.db import close_db, init_db
    from core.storage.service import GameService

    monkeypatch.setenv("LANG", "ru_RU.UTF-8" if lang == "ru" else "en_US.UTF-8")
    url = f"sqlite://{tmp_path / 'a.db'}"

    async def seed() -> tuple[int, int]:
        await init_db(url)
        svc = GameService()
        at = datetime(2026, 1, 1, tzinfo=UTC)
        cancelled = await svc.create(1, 9, 1, "Never")
        await svc.apply(cancelled, c.Cancel(by=1, at=at))
        running = await svc.create(1, 10, 1, "Still")
        await svc.close()
        await close_db()
        return cancelled, running

    cancelled, running = asyncio.run(seed())
    assert cli.main(["archive", str(cancelled), "--db", url]) == 2
    assert capsys.readouterr().err.strip() == t("cli.archive.cancelled", lang, game=cancelled)
    assert cli.main(["archive", str(running), "--db", url]) == 2
    assert capsys.readouterr().err.strip() == t("cli.archive.not_finished", lang, game=running)
    assert not list(tmp_path.glob("*.html"))


def test_status_calls_a_lane_stuck_past_the_threshold(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """`mafia-bot status` says "stuck" where /healthz would (OUTBOX_STUCK_SECONDS), and
    the line still ends with the parked count."""
    import asyncio
    from datetime import timedelta

    from core.storage.db import close_db, init_db
    from core.storage.models import PARKED, Outbox
    from core.storage.service import DiscordPatch, GameService, OutboxItem
    from core.storage.timing import utcnow

    url = f"sqlite://{tmp_path / 's.db'}"

    async def seed() -> None:
        await init_db(url)
        svc = GameService()
        gid = await svc.create(1, 9, 1, "Status")
        await svc.set_discord(gid, DiscordPatch(), extra_outbox=[
            OutboxItem(kind="place", payload={"seat": 0}),
            OutboxItem(kind="tally", payload={"op": "edit"}),
            OutboxItem(kind="tally", payload={"op": "edit"})])
        rows = await Outbox.filter(game_id=gid).order_by("id")
        await Outbox.filter(id=rows[0].id).update(created_at=utcnow() - timedelta(seconds=1000))
        await Outbox.filter(id=rows[-1].id).update(status=PARKED)
        await svc.close()
        await close_db()

    asyncio.run(seed())
    monkeypatch.setenv("DATABASE_URL", url)
    monkeypatch.setenv("OUTBOX_STUCK_SECONDS", "900")
    assert cli.main(["status"]) == 0
    out = capsys.readouterr().out.strip()
    assert ", stuck (over 900 s)" in out, out
    stuck = [part for part in out.split("; ") if "stuck" in part]
    assert len(stuck) == 1 and stuck[0].startswith("places 1 pending, oldest 1"), out
    assert out.endswith("; parked 1"), out


@pytest.mark.parametrize(("lang", "said"), [("en", "about 1 day long on average."),
                                            ("ru", "в среднем примерно 1 день.")])
def test_the_estimate_head_says_its_mean_length_with_the_right_plural(
        lang: str, said: str) -> None:
    """The estimate's head (here and at /game setup): "about 1 day", not "about 1 days"."""
    from core.play.balance import Estimate, report

    assert report(Estimate(3, 6, [], 1.0), lang)[0].endswith(said)
    assert report(Estimate(3, 6, [], 2.5), "en")[0].endswith("about 2.5 days long on average.")
