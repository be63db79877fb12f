"""Source scan: no user-facing text outside the message catalogues.

Every word a player, a master or an operator reads comes from data/locales via
core.text.i18n.t (cogs: cogs/ui/text.py).  This test parses cogs/, core/, bot.py and
cli.py with :mod:`ast` and flags

* string literals passed where Discord (or the console) shows them: message
  content (``send``, ``send_message``, ``followup.send``, ``edit``...), embed
  titles, descriptions, fields and footers, button and select labels, modal
  and text-input titles/labels/placeholders, channel names and topics, choice
  names, ``print(...)``, and such literals as parameter defaults;
* ``RuleError`` messages that are not codes (``RuleError("Not your turn")``);
* any Cyrillic string literal outside a short allow-list (what the rules parser
  *reads*: Russian role names in a composition);
* catalogue keys used in the code (``t("...")``, ``L("...")``, ``command_kwargs``,
  ``localized``, f-string keys such as ``f"role.{role}.name"``) that do not exist.

Allowed in those places: texts with no letters once ``{placeholders}`` are
removed (``"{}"``, ``" · "``, ``"—"``, emoji), and calls (``t(...)``) rather than
literals.  The module's helpers (:func:`string_values`, :func:`python_files`) are
reused by tests/i18n/test_i18n_coverage.py.
"""

from __future__ import annotations

import ast
import re
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from core.game.errors import ErrorCode
from core.game.events import EventKind
from core.text.i18n import keys

REPO = Path(__file__).resolve().parents[2]
SCANNED = ("cogs", "core", "bot.py", "cli.py")

CYRILLIC = re.compile(r"[А-Яа-яЁё]")
FIELD = re.compile(r"\{[^{}]*\}")
CODE = re.compile(r"^[a-z][a-z0-9_]*$")
ANY_SEGMENTS = r"[a-z0-9_-]+(?:\.[a-z0-9_-]+)*"  # what an f-string field in a key stands for
# Vocabularies whose members (ErrorCode.GAME_OVER) are read as their string values.
VOCABULARIES: dict[str, type[ErrorCode] | type[EventKind]] = {
    "ErrorCode": ErrorCode, "EventKind": EventKind}

# call name -> keyword arguments shown to users ("0" = the first positional argument)
SHOWN: dict[str, frozenset[str]] = {
    name: frozenset(args.split())
    for name, args in {
        "send": "0 content",
        "send_message": "0 content",
        "edit": "content topic name",
        "edit_message": "content",
        "edit_original_response": "content",
        "reply": "0 content",
        "print": "0 1 2 3",
        "Embed": "title description",
        "add_field": "name value",
        "insert_field_at": "name value",
        "set_field_at": "name value",
        "set_footer": "text",
        "set_author": "name",
        "Button": "label",
        "Select": "placeholder",
        "SelectOption": "label description",
        "Modal": "title",
        "TextInput": "label placeholder default",
        "Choice": "name",
        "create_text_channel": "0 name topic reason",
        "create_category": "0 name reason",
        "delete": "reason",
    }.items()
}
# parameters whose literal default would be shown (def f(label="Role"))
SHOWN_DEFAULTS = frozenset({"label", "title", "description", "placeholder", "content", "text"})
ERRORS = frozenset({"RuleError", "SetupError"})

# Cyrillic allowed where the code *reads* Russian (module-level name or function):
# the composition parser's role names and keywords, the protection-target parser
CYRILLIC_ALLOWED = {
    ("core/game/roles.py", "CATALOGUE"),
    ("core/game/rules/setup.py", "_COUNT"),
    ("core/game/rules/setup.py", "_CLAN"),
    ("core/game/rules/shop.py", "parse_attacker"),
}

# functions taking a catalogue key: name -> index of the key argument
KEY_ARGUMENT = {"t": 0, "L": 0, "has_key": 0, "_say": 0, "tr": 1}


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    what: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.what}"


def python_files() -> Iterator[tuple[str, ast.Module]]:
    for entry in SCANNED:
        root = REPO / entry
        paths = [root] if root.is_file() else sorted(root.rglob("*.py"))
        for path in paths:
            rel = path.relative_to(REPO).as_posix()
            yield rel, ast.parse(path.read_text(encoding="utf-8"), rel)


def call_name(node: ast.Call) -> str | None:
    func = node.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _parents(tree: ast.AST) -> dict[ast.AST, ast.AST]:
    return {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def _scope(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> ast.AST:
    while node in parents:
        node = parents[node]
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return node
    return node


def string_values(node: ast.AST | None, tree: ast.AST,
                  parents: dict[ast.AST, ast.AST] | None = None,
                  depth: int = 0) -> set[str] | None:
    """The strings an expression can evaluate to, as regular expressions.

    Constants, vocabulary members (``ErrorCode.GAME_OVER``), ``a if c else b``,
    ``a or b``, f-strings (each ``{field}`` becomes a dotted identifier pattern) and
    local names assigned from those; ``None`` when
    the value cannot be known statically (a parameter, a call...).
    """
    if node is None or depth > 5:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {re.escape(node.value)}
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
            and node.value.id in VOCABULARIES:
        return {re.escape(VOCABULARIES[node.value.id][node.attr].value)}
    if isinstance(node, ast.IfExp):
        a = string_values(node.body, tree, parents, depth + 1)
        b = string_values(node.orelse, tree, parents, depth + 1)
        return None if a is None or b is None else a | b
    if isinstance(node, ast.BoolOp):
        out: set[str] = set()
        for value in node.values:
            got = string_values(value, tree, parents, depth + 1)
            if got is None:
                return None
            out |= got
        return out
    if isinstance(node, ast.JoinedStr):
        pattern = ""
        for part in node.values:
            if isinstance(part, ast.Constant):
                pattern += re.escape(str(part.value))
            else:
                pattern += ANY_SEGMENTS
        return {pattern}
    if isinstance(node, ast.Name):
        parents = parents if parents is not None else _parents(tree)
        scope = _scope(node, parents)
        found: set[str] = set()
        assigned = False
        for sub in ast.walk(scope):
            if isinstance(sub, ast.Assign) and any(
                    isinstance(target, ast.Name) and target.id == node.id
                    for target in sub.targets):
                assigned = True
                got = string_values(sub.value, tree, parents, depth + 1)
                if got is None:
                    return None
                found |= got
        return found if assigned else None
    return None


def _shown_literals(node: ast.AST) -> Iterator[tuple[ast.AST, str]]:
    """Literal text an argument expression puts on screen as is."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node, node.value
    elif isinstance(node, ast.JoinedStr):
        text = "".join(str(p.value) for p in node.values if isinstance(p, ast.Constant))
        yield node, text
    elif isinstance(node, ast.IfExp):
        yield from _shown_literals(node.body)
        yield from _shown_literals(node.orelse)
    elif isinstance(node, ast.BoolOp):
        for value in node.values:
            yield from _shown_literals(value)
    elif isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mod)):
        yield from _shown_literals(node.left)
        yield from _shown_literals(node.right)
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr == "format":
        yield from _shown_literals(node.func.value)


def has_words(text: str) -> bool:
    """Whether a literal says something: letters left once {fields} are removed."""
    return any(char.isalpha() for char in FIELD.sub("", text))


def _assigned_name(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> str | None:
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                isinstance(node.targets[0], ast.Name):
            return node.targets[0].id
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            return node.target.id
        if isinstance(node, ast.stmt):
            return None
    return None


def scan(path: str, tree: ast.Module) -> list[Finding]:
    """User-facing literals, non-code RuleErrors and stray Cyrillic in one module."""
    found: list[Finding] = []
    parents = _parents(tree)

    def flag(node: ast.AST, what: str) -> None:
        found.append(Finding(path, getattr(node, "lineno", 0), what))

    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = call_name(node)
            if name in SHOWN:
                shown = SHOWN[name]
                args = [(str(i), a) for i, a in enumerate(node.args)]
                args += [(k.arg, k.value) for k in node.keywords if k.arg]
                for arg, value in args:
                    if arg not in shown:
                        continue
                    for literal, text in _shown_literals(value):
                        if has_words(text):
                            flag(literal, f"{name}({arg}=...) shows the literal {text!r}")
            if name in ERRORS:
                if node.args:
                    for literal, text in _shown_literals(node.args[0]):
                        if not CODE.match(text):
                            flag(literal, f"{name}({text!r}): the message must be an "
                                          f"error code (error.<code> in the catalogue)")
                for keyword in node.keywords:
                    for literal, text in _shown_literals(keyword.value):
                        if has_words(text) and not CODE.match(text):
                            flag(literal, f"{name}({keyword.arg}={text!r}): a sentence "
                                          f"as a parameter")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            arguments = node.args
            positional = [*arguments.posonlyargs, *arguments.args]
            pairs = list(zip(positional[len(positional) - len(arguments.defaults):],
                             arguments.defaults, strict=True))
            pairs += [(a, d) for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults,
                                             strict=True) if d is not None]
            for arg, default in pairs:
                if arg.arg in SHOWN_DEFAULTS:
                    for literal, text in _shown_literals(default):
                        if has_words(text):
                            flag(literal, f"{node.name}({arg.arg}={text!r}): a shown default")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            parent = parents.get(node)
            if isinstance(parent, ast.Expr):
                continue  # docstring
            scope = _scope(node, parents)
            owners = {_assigned_name(node, parents), getattr(scope, "name", None)}
            if CYRILLIC.search(node.value) and \
                    not {(path, owner) for owner in owners} & CYRILLIC_ALLOWED:
                flag(node, f"Russian text in the code: {node.value!r}")
    return found


def used_keys(path: str, tree: ast.Module) -> Iterator[tuple[int, str, set[str]]]:
    """(line, call, patterns) for every catalogue key the module names."""
    parents = _parents(tree)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = call_name(node)
        if name in KEY_ARGUMENT and len(node.args) > KEY_ARGUMENT[name]:
            if name == "tr" and not path.startswith("cogs/"):
                continue
            values = string_values(node.args[KEY_ARGUMENT[name]], tree, parents)
            if values is not None:
                yield node.lineno, name, values
        elif name in ("command_kwargs", "localized") and node.args:
            paths = string_values(node.args[0], tree, parents)
            if paths is None:
                continue
            if name == "command_kwargs":
                for suffix in ("name", "description"):
                    yield node.lineno, name, {rf"cmd\.{p}\.{suffix}" for p in paths}
            else:
                for param in node.args[1:]:
                    names = string_values(param, tree, parents) or set()
                    for p in paths:
                        for n in names:
                            for suffix in ("name", "description"):
                                yield node.lineno, name, {rf"cmd\.{p}\.param\.{n}\.{suffix}"}


def readable(pattern: str) -> str:
    """A key pattern as people write it: ``role.{…}.name``."""
    return pattern.replace(ANY_SEGMENTS, "{…}").replace("\\", "")


def missing_keys(path: str, tree: ast.Module) -> list[Finding]:
    out: list[Finding] = []
    for lang in ("en", "ru"):
        known = keys(lang)
        for line, name, patterns in used_keys(path, tree):
            for pattern in patterns:
                regex = re.compile(pattern)
                if not any(regex.fullmatch(key) for key in known):
                    out.append(Finding(path, line, f"{name}(): no {lang} key "
                                                   f"{readable(pattern)}"))
    return out


# ─── the shipped sources ────────────────────────────────────────────────────


def test_the_scan_covers_the_code() -> None:
    files = dict(python_files())
    assert {"cogs/lobby.py", "cogs/ui/render.py", "core/sight/narrate.py", "bot.py"} <= set(files)
    assert len(files) > 30
    found = sum(len(list(used_keys(p, tree))) for p, tree in files.items())
    assert found > 200  # the scan does see the t()/L() calls


def test_no_user_facing_text_outside_the_catalogues() -> None:
    findings = [str(f) for path, tree in python_files() for f in scan(path, tree)]
    assert findings == []


def test_every_key_the_code_names_exists_in_both_languages() -> None:
    findings = [str(f) for path, tree in python_files() for f in missing_keys(path, tree)]
    assert findings == []


# ─── the scan itself can fail ───────────────────────────────────────────────

BAD = textwrap.dedent('''
    """Module docstring: ignored, even with Русский текст."""
    import discord
    from core.game.errors import RuleError
    from core.text.i18n import t

    class Menu(discord.ui.View):
        def __init__(self, label: str = "Show my role") -> None:
            super().__init__()

    async def handler(interaction, lang, n):
        await interaction.response.send_message("You are not the master", ephemeral=True)
        await interaction.followup.send(f"Day {n} begins")
        embed = discord.Embed(title="Votes", description="Итоги дня")
        embed.add_field(name=t("status.master", lang), value="nobody")
        embed.set_footer(text="Signed: " + lang)
        discord.ui.Button(label="Join" if n else t("button.join", lang))
        discord.SelectOption(label="{name}", value="x")
        print("Bot started")
        raise RuleError("Not your turn", target="the mafioso")

    async def fine(interaction, lang, n, name):
        await interaction.response.send_message(t("lobby.started", lang), ephemeral=True)
        await interaction.followup.send(f"{n} · {name}")
        discord.ui.Button(label="🃏", custom_id=f"mafia:role:{n}")
        discord.SelectOption(label="-", value="0")
        raise RuleError("not_master", module="shop")
''')


def test_the_scan_flags_a_bad_snippet() -> None:
    findings = scan("cogs/bad.py", ast.parse(BAD))
    text = "\n".join(str(f) for f in findings)
    for expected in (
        "__init__(label='Show my role')",
        "send_message(0=...) shows the literal 'You are not the master'",
        "send(0=...) shows the literal 'Day  begins'",
        "Embed(title=...) shows the literal 'Votes'",
        "Embed(description=...) shows the literal 'Итоги дня'",
        "Russian text in the code: 'Итоги дня'",
        "add_field(value=...) shows the literal 'nobody'",
        "set_footer(text=...) shows the literal 'Signed: '",
        "Button(label=...) shows the literal 'Join'",
        "print(0=...) shows the literal 'Bot started'",
        "RuleError('Not your turn')",
        "RuleError(target='the mafioso')",
    ):
        assert expected in text, expected
    lines = {f.line for f in findings}
    fine_from = BAD.splitlines().index("async def fine(interaction, lang, n, name):") + 1
    assert not [line for line in lines if line >= fine_from], text
    assert "docstring" not in text
    assert len(findings) == 12, text


def test_missing_keys_are_found() -> None:
    snippet = textwrap.dedent('''
        from core.text.i18n import t
        def f(lang, role, ok):
            key = "lobby.joined" if ok else "lobby.no_such_thing"
            return (t(key, lang), t(f"role.{role}.name", lang), t(f"role.{role}.colour", lang),
                    command_kwargs("game.create"), command_kwargs("game.explode"),
                    localized("vote", "player", "weapon"))
    ''')
    text = "\n".join(str(f) for f in missing_keys("cogs/x.py", ast.parse(snippet)))
    assert "no en key lobby.no_such_thing" in text and "lobby.joined" not in text
    assert "no ru key role.{…}.colour" in text and "role.{…}.name" not in text
    assert "cmd.game.explode.name" in text and "game.create" not in text
    assert "cmd.vote.param.weapon.name" in text and "param.player" not in text


@pytest.mark.parametrize(("text", "words"), [
    ("{}", False), (" · ", False), ("—", False), ("🃏", False), ("{name}: {value}", False),
    ("\n", False), ("Day {n}", True), ("Итоги", True), ("x", True),
])
def test_has_words(text: str, words: bool) -> None:
    assert has_words(text) is words
