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


STRICT = ["core", "cogs", "archive", "bot.py", "cli.py"]  # strict in pyproject.toml's mypy override


def test_mypy_strict_clean_on_core_cogs_archive_bot_and_cli() -> None:
    run = subprocess.run([_tool("mypy"), *STRICT], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr


def test_the_strict_override_names_what_the_mypy_test_checks() -> None:
    """The files checked are checked strictly: the override lists each of them."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    strict = {m for o in config["tool"]["mypy"]["overrides"] if o.get("strict")
              for m in o["module"]}
    wanted = {p.removesuffix(".py") if p.endswith(".py") else f"{p}.*" for p in STRICT}
    assert wanted <= strict


# --- the import graph: no circles, every import points down the layers -----------------
LAYERS = ("bot.py", "cli.py", "cogs", "core", "archive")


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _modules(root: Path) -> dict[str, Path]:
    out = {}
    for top in LAYERS:
        path = root / top
        for f in [path] if path.suffix == ".py" else sorted(path.rglob("*.py")):
            if not f.exists():
                continue
            parts = list(f.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = f
    return out


def _runtime_imports(name: str, path: Path, known: set[str], *,
                     typing: bool = False) -> set[str]:
    """The project modules `name` imports when it runs (function bodies included,
    `if TYPE_CHECKING:` blocks left out unless `typing`)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    def add(module: str) -> None:
        while module and module not in known:
            module = module.rpartition(".")[0]
        if module and module != name:
            found.add(module)

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child.test) and not typing:
                for stmt in child.orelse:
                    visit_one(stmt)
                continue
            visit_one(child)

    def visit_one(node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([module] if module else []))
            for alias in node.names:
                add(f"{module}.{alias.name}" if f"{module}.{alias.name}" in known else module)
        visit(node)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return found


def import_graph(root: Path = ROOT, *, typing: bool = False) -> dict[str, set[str]]:
    """Who imports whom; `typing`: the imports made for the type checker alone too."""
    modules = _modules(root)
    return {n: _runtime_imports(n, p, set(modules), typing=typing) for n, p in modules.items()}


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def strong(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return out


def _extensions(root: Path = ROOT) -> set[str]:
    """Cog modules loaded by name (they define `setup`)."""
    out = set()
    for name, path in _modules(root).items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if name.startswith("cogs.") and any(
                isinstance(n, ast.AsyncFunctionDef | ast.FunctionDef) and n.name == "setup"
                for n in tree.body):
            out.add(name)
    return out


def _top(module: str) -> str:
    return module.split(".")[0]


def test_no_import_cycles() -> None:
    assert import_cycles(import_graph()) == []


def test_no_import_cycles_even_for_the_type_checker() -> None:
    """The cogs type the bot as cogs.utils.bot.MafiaBot, never as bot.py's class: no
    circle hides behind `if TYPE_CHECKING:` either."""
    assert import_cycles(import_graph(typing=True)) == []


def test_imports_point_down_the_layers() -> None:
    graph = import_graph(typing=True)
    extensions = _extensions()
    wrong = sorted(
        (m, i) for m, imports in graph.items() for i in imports
        if (_top(m) == "core" and _top(i) in ("cogs", "bot", "cli", "archive"))
        # the rules never reach down into storage (core.settings only names its modules)
        or (_top(m) == "core" and not m.startswith("core.storage")
            and i.startswith("core.storage"))
        or (_top(m) in ("cogs", "archive") and _top(i) in ("bot", "cli"))
        or (m == "bot" and i in extensions))
    assert wrong == []


def test_bot_imports_no_cog() -> None:
    """Extensions load by name (the outbox's worker and the request budget with
    cogs.outbox); the cogs' type of the bot is cogs.utils.bot.MafiaBot."""
    cogs = {i for i in import_graph(typing=True)["bot"]
            if _top(i) == "cogs" and not i.startswith("cogs.utils")}
    assert cogs == set()


def test_the_graph_sees_a_circle_through_a_function_body(tmp_path: Path) -> None:
    (tmp_path / "core").mkdir()
    (tmp_path / "core" / "__init__.py").write_text("")
    (tmp_path / "core" / "a.py").write_text("from core import b\n")
    (tmp_path / "bot.py").write_text("")
    (tmp_path / "core" / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import bot\n"
        "def f():\n    from .a import x\n")
    graph = import_graph(tmp_path)
    assert import_cycles(graph) == [["core.a", "core.b"]]
    assert "bot" not in graph["core.b"]
    assert "bot" in import_graph(tmp_path, typing=True)["core.b"]


# --- the Discord layer sees views, never the rules' insides ---------------------------------
FORBIDDEN_TO_COGS = ("core.rules", "core.state", "core.engine")


def _all_imports(path: Path) -> set[str]:
    """Every module `path` names in an import, at any depth (function bodies and
    `if TYPE_CHECKING:` blocks included): `from core import rules` names core.rules.
    Relative imports stay inside cogs/, so they are left out."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names |= {f"{node.module}.{a.name}" for a in node.names}
    return names


def _forbidden(names: set[str]) -> list[str]:
    return sorted(n for n in names
                  if any(n == f or n.startswith(f + ".") for f in FORBIDDEN_TO_COGS))


def discord_layer_leaks(root: Path = ROOT) -> dict[str, list[str]]:
    files = [root / "bot.py", *sorted((root / "cogs").rglob("*.py"))]
    found = {str(f.relative_to(root)): _forbidden(_all_imports(f)) for f in files if f.exists()}
    return {f: names for f, names in found.items() if names}


def test_cogs_and_bot_never_import_the_rules_the_state_or_the_engine() -> None:
    """Cogs read views (core.views, core.visibility) and the vocabulary (core.vocabulary);
    secrecy then holds by construction, not by convention."""
    assert discord_layer_leaks() == {}


def test_the_leak_test_would_catch_a_hidden_import(tmp_path: Path) -> None:
    (tmp_path / "cogs").mkdir()
    (tmp_path / "bot.py").write_text("from core import views\n")
    (tmp_path / "cogs" / "a.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from core.state import X\n")
    (tmp_path / "cogs" / "b.py").write_text("def f():\n    import core.engine\n")
    (tmp_path / "cogs" / "c.py").write_text("from core import rules\n")
    assert discord_layer_leaks(tmp_path) == {
        "cogs/a.py": ["core.state", "core.state.X"], "cogs/b.py": ["core.engine"],
        "cogs/c.py": ["core.rules"]}
