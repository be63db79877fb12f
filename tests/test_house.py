"""House rules that keep the code base honest: layering, lint, types."""

from __future__ import annotations

import ast
import re
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
    cogs.delivery.outbox); the cogs' type of the bot is cogs.utils.bot.MafiaBot."""
    cogs = {i for i in import_graph(typing=True)["bot"]
            if _top(i) == "cogs" and not i.startswith("cogs.utils")
            and i != "cogs.delivery.budget"}  # the request budget is no cog
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
FORBIDDEN_TO_BOT = ("core.game.rules", "core.game.state", "core.game.engine")

#: What a cog may import from core/: the commands it sends, the refusals and events it
#: renders, the words, the vocabulary, the views (what a reader may see) and the facade
#: that answers them (core.storage.observer). Never a GameState, never the rules.
COGS_MAY_IMPORT = ("core.game.commands", "core.game.errors", "core.game.events",
                   "core.text.i18n", "core.sight.narrate", "core.sight.vocabulary",
                   "core.sight.views", "core.sight.visibility", "core.sight.guide",
                   "core.sight.desk", "core.sight.deskpings", "core.storage.observer",
                   # the catalogue of outbox kinds: what a row carries (its payload
                   # models), never a state (core/storage/kinds.py)
                   "core.storage.kinds",
                   # where an event goes, from its kind and audience (no state)
                   "core.sight.destinations")

#: Files that need more, and why (none of it is a game's state).
COGS_ALSO = {
    # the bot as the cogs know it: the machinery bot.py wires
    "cogs/utils/bot.py": ("core.settings", "core.storage.outbox",
                          "core.storage.scheduler", "core.storage.service"),
    # the REST budget (Discord's limits live here, not in core/): storage's generic
    # weighted turns
    "cogs/delivery/budget.py": ("core.storage.turns",),
    # deliverers of outbox entries
    "cogs/delivery/posting.py": ("core.storage.outbox",),
    "cogs/delivery/desk.py": ("core.storage.outbox",),
    "cogs/delivery/places.py": ("core.storage.outbox",),
    "cogs/delivery/catalogue.py": ("core.storage.outbox",),
    "cogs/delivery/pictures.py": ("core.storage.outbox",),
    # which desk and team lines wait to be gathered: their entries and the clock
    "cogs/delivery/gathering.py": ("core.storage.outbox", "core.storage.timing"),
    # the deliverer: its entries, the operator's settings, and `mafia-bot status` (reads
    # the outbox's backlog from the database, no bot)
    "cogs/delivery/deliverer.py": ("core.settings", "core.storage.db", "core.storage.outbox",
                         "core.storage.timing"),
    # the background work: the outbox's worker, wired once with the REST budget
    "cogs/delivery/outbox.py": ("core.storage.outbox",),
    # the budget shared by a sharded process, on the database the settings name
    "cogs/delivery/sharedbudget.py": ("core.settings",),
    # /healthz and /metrics: the database's parked entries (which prove it answers)
    "cogs/metrics.py": ("core.storage.probe",),
    "cogs/delivery/tally.py": ("core.storage.outbox", "core.sight.tallies"),
    # the server's records and the balance estimate (it knows the setup only), and how
    # many estimates a member and a server may ask for (a clock, no game state)
    "cogs/balance.py": ("core.play.allowance", "core.play.balance", "core.play.setups",
                        "core.storage.setups"),
    # ... and its ratings and achievements (rows kept per member, no game state)
    "cogs/stats.py": ("core.play.setups", "core.storage.setups", "core.storage.ratings"),
    "cogs/economy.py": ("core.storage.stats", "core.storage.wallets", "core.storage.ratings"),
    "cogs/shop.py": ("core.storage.wallets",),
}

def _all_imports(path: Path) -> set[str]:
    """Every module `path` names in an import, at any depth (function bodies and
    `if TYPE_CHECKING:` blocks included): `from core.game import rules` names
    core.game.rules.
    Relative imports stay inside cogs/, so they are left out."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names |= {f"{node.module}.{a.name}" for a in node.names}
    return names


def _under(name: str, modules: tuple[str, ...]) -> bool:
    return any(name == m or name.startswith(m + ".") for m in modules)


def _forbidden(names: set[str]) -> list[str]:
    return sorted(n for n in names if _under(n, FORBIDDEN_TO_BOT))


#: Bare packages: only the way to spell `from core.game import commands`.
PACKAGES = ("core", "core.storage", "core.text", "core.game", "core.sight", "core.play")


def _not_allowed(names: set[str], also: tuple[str, ...] = ()) -> list[str]:
    """Project names a cog imports beyond its allow-list (a bare package of core/ is
    only the way to spell `from core.game import commands`)."""
    return sorted(n for n in names if _top(n) == "core" and n not in PACKAGES
                  and not _under(n, COGS_MAY_IMPORT + also))


def discord_layer_leaks(root: Path = ROOT) -> dict[str, list[str]]:
    """bot.py's imports of the rules' insides, and every cog's import beyond its list."""
    found: dict[str, list[str]] = {}
    if (root / "bot.py").exists():
        found["bot.py"] = _forbidden(_all_imports(root / "bot.py"))
    for f in sorted((root / "cogs").rglob("*.py")):
        name = str(f.relative_to(root))
        also = COGS_ALSO.get(name, ())
        found[name] = _not_allowed(_all_imports(f), also)
    return {f: names for f, names in found.items() if names}


def test_cogs_import_only_views_commands_words_and_the_facade() -> None:
    """Cogs read views through the facade (core.storage.observer); secrecy then holds by
    construction, not by convention. bot.py never imports the rules or the state."""
    assert discord_layer_leaks() == {}


def test_the_leak_test_would_catch_a_hidden_import(tmp_path: Path) -> None:
    (tmp_path / "cogs").mkdir()
    (tmp_path / "bot.py").write_text(
        "from core.sight import views\nfrom core.game.state import S\n")
    (tmp_path / "cogs" / "a.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from core.game.state import X\n")
    (tmp_path / "cogs" / "b.py").write_text("def f():\n    import core.game.engine\n")
    (tmp_path / "cogs" / "c.py").write_text(
        "from core.game import rules\nfrom core.sight import views\n")
    (tmp_path / "cogs" / "d.py").write_text(
        "from core.storage import service\nfrom core.storage.observer import GameInfo\n")
    assert discord_layer_leaks(tmp_path) == {
        "bot.py": ["core.game.state", "core.game.state.S"],
        "cogs/a.py": ["core.game.state", "core.game.state.X"], "cogs/b.py": ["core.game.engine"],
        "cogs/c.py": ["core.game.rules"], "cogs/d.py": ["core.storage.service"]}


def state_reads(root: Path = ROOT) -> dict[str, list[int]]:
    """Lines of cogs that touch a `.state` attribute (`service.state(…)`, `applied.state`):
    a cog asks the facade instead."""
    out: dict[str, list[int]] = {}
    for f in sorted((root / "cogs").rglob("*.py")):
        name = str(f.relative_to(root))
        lines = sorted({n.lineno for n in ast.walk(ast.parse(f.read_text(encoding="utf-8")))
                        if isinstance(n, ast.Attribute) and n.attr == "state"})
        if lines:
            out[name] = lines
    return out


def test_no_cog_reads_a_game_state() -> None:
    assert state_reads() == {}


def test_the_state_test_would_catch_a_read(tmp_path: Path) -> None:
    (tmp_path / "cogs").mkdir()
    (tmp_path / "cogs" / "a.py").write_text(
        "async def f(bot, applied):\n    s = await bot.service.state(1)\n"
        "    return applied.state.players\n")
    assert state_reads(tmp_path) == {"cogs/a.py": [2, 3]}


# --- short functions ----------------------------------------------------------------------
MAX_FUNCTION_LINES = 60

#: Functions allowed over the limit: none. A name here that is already short fails the
#: test, so the list only shrinks.
LONG_FUNCTIONS: set[str] = set()


def _product_files(root: Path) -> list[Path]:
    files = [root / "bot.py", root / "cli.py"]
    for top in ("core", "cogs", "archive"):
        files += sorted((root / top).rglob("*.py"))
    return [f for f in files if f.exists() and "migrations" not in f.parts]


def long_functions(root: Path = ROOT, limit: int = MAX_FUNCTION_LINES) -> dict[str, int]:
    """Every function (method, nested function) longer than `limit` lines, def line to
    last line, by dotted name: long bodies hide branches that no test names."""
    found: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}.{child.name}"
                end = child.end_lineno or child.lineno
                if (not isinstance(child, ast.ClassDef)
                        and end - child.lineno + 1 > limit):
                    found[name] = end - child.lineno + 1
                visit(child, name)
            else:
                visit(child, prefix)

    for f in _product_files(root):
        module = ".".join(f.relative_to(root).with_suffix("").parts).removesuffix(".__init__")
        visit(ast.parse(f.read_text(encoding="utf-8")), module)
    return found


def test_functions_fit_in_sixty_lines() -> None:
    found = long_functions()
    assert sorted(set(found) - LONG_FUNCTIONS) == []
    assert sorted(LONG_FUNCTIONS - set(found)) == [], "shrunk: take it off LONG_FUNCTIONS"


def test_the_length_check_counts_methods_and_nested_functions(tmp_path: Path) -> None:
    (tmp_path / "core").mkdir()

    def body(n: int, indent: str) -> str:
        return "".join(f"{indent}x{i} = {i}\n" for i in range(n))

    (tmp_path / "core" / "a.py").write_text(
        "def fits():\n" + body(59, "    ")
        + "class K:\n    def m(self):\n" + body(60, "        ")
        + "def outer():\n    def inner():\n" + body(60, "        "))
    assert long_functions(tmp_path) == {"core.a.K.m": 61, "core.a.outer": 62,
                                        "core.a.outer.inner": 61}
# --- event kinds are read as EventKind members, never as strings --------------------------
#: Where kinds are made, and so may be spelt: the engine, its rules and the enum itself.
KIND_MAKERS = ("core/game/engine.py", "core/game/events.py", "core/game/rules/")
#: Functions whose `kind` is not an event's (a card notice's kinds share a few words).
NOT_EVENT_KINDS = {"notice_text"}


def _event_kind_values() -> frozenset[str]:
    from core.game.events import EventKind

    return frozenset(k.value for k in EventKind)


def _kind_strings(node: ast.expr, kinds: frozenset[str]) -> bool:
    """A string that is an event kind, or a literal collection made only of them."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and node.value in kinds
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
            and node.func.id in ("frozenset", "set", "tuple") and len(node.args) == 1:
        return _kind_strings(node.args[0], kinds)
    items = node.elts if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else \
        [k for k in node.keys if k is not None] if isinstance(node, ast.Dict) else []
    return len(items) >= 2 and all(_kind_strings(i, kinds) for i in items)


def _is_kind(node: ast.expr) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "kind") or \
        (isinstance(node, ast.Name) and node.id in ("kind", "kinds"))


def string_kind_reads(root: Path = ROOT) -> list[str]:
    """Places outside the engine that compare an event kind with a string, or spell a
    set (or dict) of kinds as strings: such a read survives a renamed kind silently."""
    kinds = _event_kind_values()
    files = [root / "bot.py", root / "cli.py",
             *(p for d in ("core", "cogs", "archive") for p in sorted((root / d).rglob("*.py")))]
    found: set[tuple[str, int]] = set()
    for path in files:
        rel = path.relative_to(root).as_posix()
        if not path.exists() or rel.startswith(KIND_MAKERS):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = {id(n) for f in ast.walk(tree) if isinstance(f, ast.FunctionDef)
                and f.name in NOT_EVENT_KINDS for n in ast.walk(f)}
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            if isinstance(node, ast.Compare):
                sides = [node.left, *node.comparators]
                bad = any(_is_kind(s) for s in sides) and any(_kind_strings(s, kinds)
                                                              for s in sides)
            elif isinstance(node, ast.Match):
                bad = _is_kind(node.subject) and any(
                    isinstance(c.pattern, ast.MatchValue)
                    and _kind_strings(c.pattern.value, kinds) for c in node.cases)
            else:
                bad = isinstance(node, (ast.Set, ast.Dict, ast.Call)) \
                    and _kind_strings(node, kinds)
            if bad:
                found.add((rel, getattr(node, "lineno", 0)))
    return [f"{rel}:{line}" for rel, line in sorted(found)]


def test_event_kinds_are_read_as_members_outside_the_engine() -> None:
    """`e.kind is EventKind.VOTE_CAST`, not `e.kind == "vote_cast"` (issue 31)."""
    assert string_kind_reads() == []


def test_the_kind_check_would_catch_a_string_read(tmp_path: Path) -> None:
    (tmp_path / "cogs").mkdir()
    (tmp_path / "core" / "game" / "rules").mkdir(parents=True)
    (tmp_path / "archive").mkdir()
    (tmp_path / "cogs" / "a.py").write_text(
        'if e.kind == "vote_cast":\n    pass\n'
        'if kind in ("game_over", "cancelled"):\n    pass\n'
        'S = frozenset({"joined", "left"})\n'
        'C = {"morning": 1, "payouts": 2}\n'
        'match e.kind:\n    case "morning":\n        pass\n'
        'ok = e.audience.kind == "public" or s.kind in ("whisper", "anon")\n'
        'def notice_text(kind):\n    return kind == "whisper"\n')
    (tmp_path / "core" / "game" / "rules" / "b.py").write_text('x = e.kind == "vote_cast"\n')
    assert string_kind_reads(tmp_path) == [
        "cogs/a.py:1", "cogs/a.py:3", "cogs/a.py:5", "cogs/a.py:6", "cogs/a.py:7"]


# --- core's wings: text < game < sight < play < storage ---------------------------------
#: core's wings, bottom to top: each imports only the wings before it (core.settings,
#: the process's configuration, sits beside them and imports none).
CORE_WINGS = ("core.text", "core.game", "core.sight", "core.play", "core.storage")


def _wing(module: str) -> int | None:
    for n, wing in enumerate(CORE_WINGS):
        if module == wing or module.startswith(wing + "."):
            return n
    return None


def wing_violations(root: Path = ROOT) -> list[tuple[str, str]]:
    graph = import_graph(root, typing=True)
    return sorted((m, i) for m, imports in graph.items() for i in imports
                  if ((a := _wing(m)) is not None and (b := _wing(i)) is not None and b > a)
                  or (m == "core.settings" and _wing(i) is not None))


def test_core_wings_import_downwards() -> None:
    """The folder names are the layers: text < game < sight < play < storage."""
    assert wing_violations() == []


def test_every_core_module_lives_in_a_wing() -> None:
    loose = sorted(m for m in import_graph() if m.startswith("core.")
                   and _wing(m) is None and m != "core.settings")
    assert loose == []


def test_the_wing_check_sees_an_import_up(tmp_path: Path) -> None:
    for wing in ("text", "game"):
        (tmp_path / "core" / wing).mkdir(parents=True)
    (tmp_path / "core" / "text" / "a.py").write_text("from core.game import b\n")
    (tmp_path / "core" / "game" / "b.py").write_text("from core.text import a\n")
    assert wing_violations(tmp_path) == [("core.text.a", "core.game.b")]


# --- Discord's limits are the Discord layer's ---------------------------------------------
#: What only code that knows Discord's limits spells: its 429, the request budget, the
#: global limit, a REST route (issue 30: the budget moved out of core/storage).
DISCORD_LIMITS = re.compile(
    r"\b429\b|GLOBAL_LIMIT|RateBudget|requests? per second|/(?:channels|guilds)/\{", re.I)


def discord_limit_mentions(root: Path = ROOT) -> list[str]:
    """Lines of core/ that know Discord's rate limits (they belong in cogs/)."""
    return [f"{p.relative_to(root).as_posix()}:{n}"
            for p in sorted((root / "core").rglob("*.py"))
            for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
            if DISCORD_LIMITS.search(line)]


def test_core_knows_nothing_of_discords_limits() -> None:
    """core/storage holds storage (the outbox, its generic worker); the request budget
    and Discord's limits live in cogs/ (cogs/delivery/budget.py, cogs/delivery/ratelimits.py)."""
    assert discord_limit_mentions() == []


def test_the_limits_check_would_catch_a_budget_in_core(tmp_path: Path) -> None:
    (tmp_path / "core" / "storage").mkdir(parents=True)
    (tmp_path / "core" / "storage" / "budget.py").write_text(
        "GLOBAL_LIMIT = 50  # Discord: 50 requests per second\nok = 1\n"
        "class RateBudget: ...\nif status == 429: pass\n"
        'R = "POST /channels/{channel_id}/messages"\n')
    assert discord_limit_mentions(tmp_path) == [
        f"core/storage/budget.py:{n}" for n in (1, 3, 4, 5)]


# --- the catalogue of outbox kinds ------------------------------------------------------
def test_every_outbox_kind_has_exactly_one_discord_entry() -> None:
    """core/storage/kinds.py lists the kinds; cogs/delivery/catalogue.py gives each its lane and
    deliverer, and nothing else (a kind half-wired fails here and at import)."""
    from cogs.delivery.catalogue import DISCORD, LANES
    from core.storage.kinds import KINDS

    assert sorted(DISCORD) == sorted(KINDS)
    for on in DISCORD.values():
        assert callable(on.deliver)
        assert callable(on.lane) or on.lane in range(LANES)
