"""House rules that keep the code base honest: layering, lint, types."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_core_never_imports_discord() -> None:
    offenders = [str(p.relative_to(ROOT)) for p in (ROOT / "core").rglob("*.py")
                 if "discord" in _imports(p)]
    assert offenders == []


def test_the_layering_test_would_catch_an_import(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("from discord import Embed\n", encoding="utf-8")
    assert "discord" in _imports(bad)


def _tool(name: str) -> str:
    found = Path(sys.executable).parent / name
    return str(found) if found.exists() else (shutil.which(name) or name)


def test_ruff_clean() -> None:
    run = subprocess.run([_tool("ruff"), "check", "."], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr


def test_mypy_clean_on_core() -> None:
    run = subprocess.run([_tool("mypy"), "core"], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
