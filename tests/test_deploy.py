"""What an operator runs the bot with (issue 44): the container image, the compose file,
the systemd unit, the JSON log, the version. This machine has no Docker and no systemd
to start them: these tests check what can be checked without (docs/operating.md says
what was never run)."""

from __future__ import annotations

import configparser
import io
import json
import logging
import re
import shlex
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

import bot
import cli
from cogs.utils.logs import KEYS, JsonFormatter, bind_interaction, setup_logging
from core.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
SETTINGS = {name.upper() for name in Settings.model_fields}


def _dockerfile() -> list[tuple[str, str]]:
    """(instruction, argument) of every line of the Dockerfile, continuations joined."""
    text = re.sub(r"\\\n", " ", (ROOT / "Dockerfile").read_text(encoding="utf-8"))
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


# --- the image ----------------------------------------------------------------------------
def test_the_image_builds_the_wheel_from_what_the_wheel_test_builds_it_from() -> None:
    from tests.test_wheel import SOURCES

    copied = set()
    for word, arg in _dockerfile():
        if word == "COPY" and not arg.startswith("--from"):
            *sources, _ = arg.split()
            copied |= {s.rstrip("/") for s in sources}
    assert copied == set(SOURCES)
    runs = " && ".join(arg for word, arg in _dockerfile() if word == "RUN")
    # docs/operating.md's install without a checkout: a wheel (`pip wheel --no-deps .`)
    # installed with pip, then `mafia-bot run`
    operating = (ROOT / "docs" / "operating.md").read_text(encoding="utf-8")
    assert "pip wheel --no-deps ." in operating
    assert "pip wheel --no-deps" in runs and runs.rstrip().count("pip install") == 1
    assert "[postgres]" in runs and "postgres" in PYPROJECT["project"]["optional-dependencies"]


def test_the_image_runs_the_console_script_as_a_user_with_its_state_in_a_volume() -> None:
    lines = _dockerfile()
    bases = [arg for word, arg in lines if word == "FROM"]
    assert bases and all(re.match(r"python:3\.(\d+)-slim\b", b) for b in bases)
    wanted = PYPROJECT["project"]["requires-python"]
    assert wanted == ">=3.11" and all(int(b.split(".")[1].split("-")[0]) >= 11 for b in bases)
    final = lines[max(i for i, (w, _) in enumerate(lines) if w == "FROM"):]
    user = [arg for word, arg in final if word == "USER"]
    assert user and user[-1] not in ("root", "0")
    env = " ".join(arg for word, arg in final if word == "ENV")
    data_dir = re.search(r"MAFIA_DATA_DIR=(\S+)", env)
    assert data_dir is not None
    volumes = [json.loads(arg) for word, arg in final if word == "VOLUME"]
    assert volumes == [[data_dir.group(1)]]
    cmd = [json.loads(arg) for word, arg in final if word == "CMD"]
    assert cmd == [["mafia-bot", "run"]]
    assert "mafia-bot" in PYPROJECT["project"]["scripts"]
    assert "run" in _subcommands()


def _subcommands() -> set[str]:
    import argparse

    sub = next(a for a in cli.parser()._actions if isinstance(a, argparse._SubParsersAction))
    return set(sub.choices)


# --- compose ------------------------------------------------------------------------------
def _compose() -> dict[str, Any]:
    data = yaml.safe_load((ROOT / "compose.yaml").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def test_compose_starts_the_bot_after_a_healthy_postgres() -> None:
    services = _compose()["services"]
    postgres, bot_ = services["postgres"], services["bot"]
    assert postgres["image"].startswith("postgres:")
    assert "pg_isready" in " ".join(postgres["healthcheck"]["test"])
    assert bot_["depends_on"] == {"postgres": {"condition": "service_healthy"}}
    assert bot_["build"] == "."
    assert bot_["image"] == f"mafia-bot:{PYPROJECT['project']['version']}"  # bumped with it
    assert bot_["env_file"] == ".env"  # the token: DISCORD_TOKEN in .env
    volumes = set(_compose()["volumes"])
    named = {v.split(":")[0] for s in services.values() for v in s.get("volumes", [])}
    assert named == volumes == {"pgdata", "botdata"}


def test_compose_names_only_the_bots_real_settings() -> None:
    bot_ = _compose()["services"]["bot"]
    environment = bot_["environment"]
    assert set(environment) <= SETTINGS, set(environment) - SETTINGS
    # the database is compose's PostgreSQL, a URL the bot accepts
    env = {k: str(v) for k, v in environment.items()}
    url = re.sub(r"\$\{(\w+):-([^}]*)\}", r"\2", env["DATABASE_URL"])
    from core.settings import database_config

    config = database_config(url, create_dirs=False)["connections"]["default"]
    assert config["engine"] == "tortoise.backends.asyncpg"
    assert config["credentials"]["host"] == "postgres"
    settings = Settings(**{k.lower(): re.sub(r"\$\{(\w+):-([^}]*)\}", r"\2", v)
                           for k, v in env.items()})
    assert (settings.metrics_port, settings.log_format) == (9100, "json")
    published = bot_["ports"][0].rsplit(":", 1)[1]
    assert int(published) == settings.metrics_port
    assert str(settings.metrics_port) in " ".join(bot_["healthcheck"]["test"])
    # the data volume is the image's state directory
    data_dir = re.search(r"MAFIA_DATA_DIR=(\S+)", (ROOT / "Dockerfile").read_text())
    assert data_dir is not None
    assert f"botdata:{data_dir.group(1)}" in bot_["volumes"]


def test_every_variable_of_env_example_is_a_setting_or_composes() -> None:
    names = set(re.findall(r"^#? ?([A-Z][A-Z0-9_]+)=", (ROOT / ".env.example").read_text(),
                           re.M))
    interpolated = set(re.findall(r"\$\{(\w+)", (ROOT / "compose.yaml").read_text()))
    assert names - SETTINGS == interpolated == {"POSTGRES_PASSWORD"}


# --- systemd ------------------------------------------------------------------------------
def _unit() -> configparser.ConfigParser:
    unit = configparser.ConfigParser(strict=False, interpolation=None)
    unit.optionxform = str  # type: ignore[assignment,method-assign]
    unit.read(ROOT / "deploy" / "mafia-bot.service", encoding="utf-8")
    return unit


def test_the_unit_runs_the_installed_console_script() -> None:
    exec_start = shlex.split(_unit()["Service"]["ExecStart"])
    assert Path(exec_start[0]).name in PYPROJECT["project"]["scripts"]
    assert Path(exec_start[0]).parent.name == "bin"  # a virtual environment's script
    assert exec_start[1:] == ["run"]


def test_the_unit_restarts_on_crashes_but_not_on_settings_or_the_token() -> None:
    service = _unit()["Service"]
    assert service["Restart"] == "on-failure"
    kept = {int(x) for x in service["RestartPreventExitStatus"].split()}
    assert kept == {bot.EXIT_CONFIG, bot.EXIT_TOKEN} == {2, 3}
    assert bot.EXIT_UNREACHABLE not in kept
    assert service["User"] not in ("root", "0")
    assert "StartLimitBurst" in _unit()["Unit"]


def test_the_exit_statuses_the_unit_relies_on(monkeypatch: pytest.MonkeyPatch) -> None:
    import discord

    async def refused(client: object, token: str) -> None:
        raise discord.LoginFailure("Improper token has been passed.")

    async def unreachable(client: object, token: str) -> None:
        raise OSError("Network is unreachable")

    monkeypatch.setenv("DISCORD_TOKEN", "x")
    monkeypatch.setenv("DATABASE_URL", "sqlite://:memory:")
    monkeypatch.setattr(bot, "tune_runtime", lambda: None)
    monkeypatch.setattr(bot, "setup_logging", lambda fmt: None)
    monkeypatch.setattr(bot, "_run", refused)
    assert bot.main() == 3
    monkeypatch.setattr(bot, "_run", unreachable)
    assert bot.main() == 4
    monkeypatch.setenv("LOG_FORMAT", "xml")  # a value no setting takes
    assert bot.main() == 2
    monkeypatch.delenv("LOG_FORMAT")
    monkeypatch.setenv("DISCORD_TOKEN", "")
    assert bot.main() == 2


# --- the log ------------------------------------------------------------------------------
def _record(message: str, *args: Any, exc: bool = False, **extra: Any) -> logging.LogRecord:
    exc_info = None
    if exc:
        try:
            raise ValueError("boom")
        except ValueError:
            exc_info = sys.exc_info()
    record = logging.LogRecord("mafia.outbox", logging.WARNING, __file__, 1, message, args,
                               exc_info)
    record.__dict__.update(extra)
    return record


def test_a_json_log_line_is_one_object_with_the_keys() -> None:
    line = JsonFormatter().format(_record("entry %s of game %s\nparked", 7, 3, game=3,
                                          guild=41))
    assert "\n" not in line
    data = json.loads(line)
    assert list(data) == list(KEYS)
    assert data["level"] == "WARNING" and data["logger"] == "mafia.outbox"
    assert (data["game"], data["guild"]) == (3, 41)
    assert data["message"] == "entry 7 of game 3\nparked"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", data["time"])
    failed = json.loads(JsonFormatter().format(_record("failed", exc=True)))
    assert (failed["game"], failed["guild"]) == (None, None)
    assert "ValueError: boom" in failed["exception"] and "\n" not in JsonFormatter().format(
        _record("failed", exc=True))


def test_a_commands_lines_name_its_guild_and_game() -> None:
    import contextvars

    from cogs.utils.bot import FOUND

    class Found:
        id = 12

    class Interaction:
        def __init__(self) -> None:
            self.guild_id = 99
            self.extras: dict[str, Any] = {}

    def during_the_command() -> dict[str, Any]:
        interaction = Interaction()
        bind_interaction(interaction)
        before = json.loads(JsonFormatter().format(_record("looking up")))
        interaction.extras = {FOUND: {False: Found()}}
        after = json.loads(JsonFormatter().format(_record("found")))
        return {"before": (before["game"], before["guild"]),
                "after": (after["game"], after["guild"])}

    seen = contextvars.copy_context().run(during_the_command)
    assert seen == {"before": (None, 99), "after": (12, 99)}
    # another task's lines are not the command's
    assert json.loads(JsonFormatter().format(_record("elsewhere")))["guild"] is None


def test_the_log_format_setting_picks_the_formatter(monkeypatch: pytest.MonkeyPatch) -> None:
    root = logging.getLogger()
    saved, level = list(root.handlers), root.level
    try:
        setup_logging("json")
        (handler,) = root.handlers
        assert isinstance(handler.formatter, JsonFormatter)
        stream = io.StringIO()
        handler.setStream(stream)  # type: ignore[attr-defined]
        logging.getLogger("mafia").info("ready")
        assert json.loads(stream.getvalue())["message"] == "ready"
        setup_logging("plain")
        (handler,) = root.handlers
        assert not isinstance(handler.formatter, JsonFormatter)
    finally:
        root.handlers[:] = saved
        root.setLevel(level)
    assert Settings().log_format == "plain"
    monkeypatch.setenv("LOG_FORMAT", "json")
    assert Settings().log_format == "json"


# --- the version --------------------------------------------------------------------------
def test_version_prints_the_installed_version(capsys: pytest.CaptureFixture[str]) -> None:
    from importlib.metadata import version

    with pytest.raises(SystemExit) as done:
        cli.main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == f"mafia-bot {version('mafia-bot')}"


def test_the_changelog_records_this_version() -> None:
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    versions = re.findall(r"^## (\d+\.\d+\.\d+)\b", changelog, re.M)
    assert versions and versions[0] == PYPROJECT["project"]["version"]
    assert len(versions) == len(set(versions))
