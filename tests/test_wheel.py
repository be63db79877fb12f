"""The wheel runs: built from the sources, installed (not editable) into a fresh virtual
environment, started from a folder outside the checkout (docs/layout.md).

The environment reuses the test environment's dependencies through a .pth line (pip
resolves against them with --no-index: a pin that excludes an installed version fails
here), so only the wheel itself is installed. Building it needs setuptools and wheel
(pip's isolated build, from its cache or the index).
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: What the wheel is built from: the packaging files, the shipped code, the catalogues.
SOURCES = ("pyproject.toml", "setup.py", "README.md", "bot.py", "cli.py", "core", "cogs",
           "archive", "data/locales")
TOP_LEVEL = {"core", "cogs", "archive", "bot.py", "cli.py"}


def _copy_sources(to: Path) -> None:
    """The sources in a scratch folder: the build's build/ and *.egg-info never land in the
    checkout, and parallel test workers never share them."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.db", "*.db-*", ".commands-*")
    for name in SOURCES:
        src, dst = ROOT / name, to / name
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, dst, ignore=ignore)
        else:
            shutil.copy2(src, dst)


class Installed:
    def __init__(self, wheel: Path, venv: Path, site: Path, cwd: Path) -> None:
        self.wheel, self.venv, self.site, self.cwd = wheel, venv, site, cwd

    def run(self, *args: str, lang: str = "en_US.UTF-8", cwd: Path | None = None,
            **env: str) -> subprocess.CompletedProcess[str]:
        clean = {k: v for k, v in os.environ.items()
                 if not k.startswith(("DISCORD_", "DATABASE_", "MAFIA_", "PYTHON"))}
        clean.update({"LANG": lang, **env})
        return subprocess.run([str(self.venv / "bin" / "mafia-bot"), *args], cwd=cwd or self.cwd,
                              env=clean, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    base = tmp_path_factory.mktemp("wheel")
    src, out, venv, cwd = base / "src", base / "dist", base / "venv", base / "elsewhere"
    _copy_sources(src)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out),
                    str(src)], check=True, capture_output=True, timeout=600)
    (wheel,) = out.glob("mafia_bot-*.whl")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                   timeout=120)
    site = Path(subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()"
         "['purelib'])"], check=True, capture_output=True, text=True).stdout.strip())
    parent = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (site / "zz_test_dependencies.pth").write_text("\n".join(sorted(parent)) + "\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-index",
                    "--no-cache-dir", str(wheel)], check=True, capture_output=True, env=env,
                   cwd=base, timeout=300)
    cwd.mkdir()
    yield Installed(wheel, venv, site, cwd)


def test_the_wheel_ships_the_code_and_the_catalogues_and_nothing_else(
        installed: Installed) -> None:
    names = zipfile.ZipFile(installed.wheel).namelist()
    tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert tops == TOP_LEVEL  # no bench/, no tests/, no data/ at the top of site-packages
    locales = ROOT / "data" / "locales"
    expected = {f"core/locales/{p.relative_to(locales).as_posix()}"
                for p in locales.rglob("*.toml")}
    assert expected and expected <= set(names)


def test_nothing_in_the_wheel_imports_what_it_does_not_ship(installed: Installed) -> None:
    """Every project import of a shipped module names a shipped module (bench and tests
    stay behind)."""
    wheel = zipfile.ZipFile(installed.wheel)
    shipped = {n.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
               for n in wheel.namelist() if n.endswith(".py")}
    project = {"core", "cogs", "archive", "bot", "cli", "bench", "tests"}
    wrong = []
    for name in wheel.namelist():
        if not name.endswith(".py"):
            continue
        for node in ast.walk(ast.parse(wheel.read(name))):
            modules = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module] if isinstance(node, ast.ImportFrom) and node.module \
                and not node.level else []
            for module in modules:
                if module.split(".")[0] in project and not any(
                        module == s or module.startswith(f"{s}.") or s.startswith(f"{module}.")
                        for s in shipped):
                    wrong.append((name, module))
    assert wrong == []


def test_the_installed_code_is_the_wheel_s(installed: Installed) -> None:
    python = installed.venv / "bin" / "python"
    found = subprocess.run([str(python), "-c", "import core, cli; print(core.__file__); "
                            "print(cli.__file__)"], cwd=installed.cwd, capture_output=True,
                           text=True, check=True, env={"PATH": os.environ.get("PATH", "")})
    for line in found.stdout.split():
        assert Path(line).is_relative_to(installed.site), line


def test_help_and_the_simulator_in_both_languages(installed: Installed) -> None:
    helped = installed.run("--help")
    assert helped.returncode == 0, helped.stderr
    assert "simulate" in helped.stdout and "archive" in helped.stdout
    sim_help = installed.run("simulate", "--help")
    assert "(default: 100)" in sim_help.stdout
    for lang, rates in (("en_US.UTF-8", "Wins by side"), ("ru_RU.UTF-8", "Победы по сторонам")):
        played = installed.run("simulate", "--games", "3", "--seed", "2", lang=lang)
        assert played.returncode == 0, played.stderr
        assert rates in played.stdout


def test_the_installed_bot_says_its_version(installed: Installed) -> None:
    """`mafia-bot --version` is pyproject's version (the installed metadata)."""
    import tomllib

    wanted = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    shown = installed.run("--version")
    assert (shown.returncode, shown.stdout.strip()) == (0, f"mafia-bot {wanted}")


def test_simulate_through_the_database_needs_nothing_it_does_not_ship(
        installed: Installed) -> None:
    """`simulate --db` (the soak: migrations, the service, the outbox) from the wheel."""
    played = installed.run("simulate", "--games", "2", "--db", "sqlite://soak.db")
    assert played.returncode == 0, played.stderr
    assert (installed.cwd / "soak.db").is_file()


def test_run_fails_on_the_missing_token_only(installed: Installed) -> None:
    ran = installed.run("run")
    assert ran.returncode == 2
    assert "DISCORD_TOKEN is not set" in ran.stderr
    assert "Traceback" not in ran.stderr


def test_the_installed_package_stays_as_installed(installed: Installed, tmp_path: Path
                                                  ) -> None:
    """Runtime state goes to the data directory, never into site-packages."""
    before = sorted(p for p in installed.site.rglob("*") if "__pycache__" not in p.parts)
    data = tmp_path / "state"
    read = installed.run("archive", "1", cwd=tmp_path, MAFIA_DATA_DIR=str(data))
    assert read.returncode == 2 and str(data / "mafia.db") in read.stderr
    assert not data.exists()  # a command that only reads creates no database
    installed.run("simulate", "--games", "1", cwd=tmp_path)
    after = sorted(p for p in installed.site.rglob("*") if "__pycache__" not in p.parts)
    assert after == before


def test_only_the_soak_leaf_of_storage_imports_the_simulator() -> None:
    """core/storage/soak.py ships for `simulate --db`; the storage layer itself does not
    depend on the simulator (issue 21), and nothing in it imports the soak."""
    storage = ROOT / "core" / "storage"
    for path in storage.rglob("*.py"):
        if path.name == "soak.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)} | {
            a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        assert not names & {"core.play.sim", "core.storage.soak"}, path


def test_ci_runs_the_readme_s_test_command_word_for_word() -> None:
    """The README's two commands stay true: CI runs its test command as written."""
    import re

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    commands = re.findall(r"^ {4,}(\.venv/bin/pip install .+)$", readme, re.MULTILINE)
    assert len(commands) == 2 and commands[0].endswith("mafia-bot run")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()
    assert ci[-1] == commands[1].strip()
