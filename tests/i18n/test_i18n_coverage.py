"""Everything the game can say has words in both languages.

Static half: every RuleError code raised anywhere (core/, cogs/, bot.py; codes in
variables and conditional expressions resolved), every event kind the engine
emits, every notice kind, and every role, side, action, cause, team, phase, item,
spell, payout reason and ledger reason has its catalogue keys in Russian and in
English.

Dynamic half: whole games are played by the simulator's random agents (every
module on, plus the commands the simulator never sends: crypto posts, master
tools, thanks...), and everything they produce is rendered in both languages in
strict mode -- events, refusals, notices, role cards, the status, the tally, the
signup message, the shop, the payout table, wallet rows.  A Russian text must not
contain Latin words (an untranslated id such as ``alarm_clock`` or ``shop``), an
English text no Cyrillic.
"""

from __future__ import annotations

import ast
import contextlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import discord
import pytest

from cogs.economy import reason_text
from cogs.lobby import REQUIRED_TO_CREATE, REQUIRED_TO_START
from cogs.ui.lobby import MODULES, SHOWN_OPTIONS, signup_embed
from cogs.ui.render import (
    card_embed,
    notice_text,
    payout_table,
    shop_embed,
    status_embed,
    tally_embed,
)
from core.game import commands as c
from core.game.errors import ErrorCode, RuleError
from core.game.events import Event, EventKind
from core.game.roles import Action, Role, Side
from core.game.rules.economy import ledger_entries
from core.game.rules.phases import GRAVEYARD
from core.game.rules.shop import DAY_SPELLS, ITEMS, NIGHT_SPELLS, attacker_kinds
from core.game.state import DeathCause, Options, PhaseKind
from core.play import sim
from core.sight.desk import desk_text
from core.sight.narrate import attacker_name, describe, describe_error
from core.sight.views import lobby_view, shop_view
from core.sight.visibility import card, public_view
from core.text import i18n
from core.text.i18n import has_key, keys, t
from tests.i18n.test_i18n_sources import call_name, python_files, readable, string_values

LANGS = ("ru", "en")
LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z_]+")
MARKUP = re.compile(r"<[^<>]*>")  # mentions and timestamps: <@123>, <t:1767225600:f>


def in_both(key: str) -> list[str]:
    return [f"{lang}: {key}" for lang in LANGS if not has_key(key, lang)]


def matching(pattern: str) -> list[str]:
    """Languages without any key matching a pattern from string_values()."""
    regex = re.compile(pattern)
    return [f"{lang}: {readable(pattern)}" for lang in LANGS
            if not any(regex.fullmatch(k) for k in keys(lang))]


# ─── static: what the code can raise, emit and note ─────────────────────────


@dataclass
class Found:
    patterns: dict[str, list[str]] = field(default_factory=dict)  # pattern -> where
    unresolved: list[str] = field(default_factory=list)

    def add(self, values: set[str] | None, where: str) -> None:
        if values is None:
            self.unresolved.append(where)
            return
        for value in values:
            self.patterns.setdefault(value, []).append(where)

    def literal(self) -> set[str]:
        """The plain values (patterns without regex syntax), unescaped."""
        return {re.sub(r"\\(.)", r"\1", p) for p in self.patterns
                if not re.search(r"(?<!\\)[\[\]()*+?]", p)}


def _error_classes(tree: ast.Module) -> set[str]:
    return {node.name for node in ast.walk(tree) if isinstance(node, ast.ClassDef)
            and any(isinstance(b, ast.Name) and b.id in ("RuleError", "SetupError")
                    for b in node.bases)}


def raised_codes() -> Found:
    """Codes of every RuleError (and subclass) constructed in core/, cogs/, bot.py."""
    found = Found()
    for path, tree in python_files():
        subclasses = _error_classes(tree)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            where = f"{path}:{node.lineno}"
            name = call_name(node)
            if name in ("RuleError", "SetupError") and node.args:
                found.add(string_values(node.args[0], tree), where)
            elif name == "__init__" and isinstance(node.func, ast.Attribute) and \
                    isinstance(node.func.value, ast.Call) and \
                    call_name(node.func.value) == "super" and node.args:
                owner = next((n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)
                              and node in ast.walk(n)), None)
                if owner is not None and owner.name in subclasses:
                    found.add(string_values(node.args[0], tree), where)
    return found


def emitted_kinds() -> Found:
    """Event kinds of every ctx.emit(...) in core/."""
    found = Found()
    for path, tree in python_files():
        if not path.startswith("core/"):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and call_name(node) == "emit" and node.args:
                found.add(string_values(node.args[0], tree), f"{path}:{node.lineno}")
    return found


def _in_function(tree: ast.Module, node: ast.AST, name: str) -> bool:
    return any(isinstance(f, ast.FunctionDef) and f.name == name and node in ast.walk(f)
               for f in ast.walk(tree))


def notice_kinds() -> Found:
    """Kinds of the notices on role cards: _notice(p, kind, ...), Notice(kind=...),
    and notices copied under another kind (model_copy(update={"kind": ...}))."""
    found = Found()
    for path, tree in python_files():
        if not path.startswith("core/"):
            continue
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            where = f"{path}:{node.lineno}"
            name = call_name(node)
            if name == "_notice" and len(node.args) > 1:
                found.add(string_values(node.args[1], tree), where)
            elif name == "Notice":
                if _in_function(tree, node, "_notice"):
                    continue  # the helper itself: its callers are scanned
                for keyword in node.keywords:
                    if keyword.arg == "kind":
                        found.add(string_values(keyword.value, tree), where)
            elif name == "model_copy":
                for keyword in node.keywords:
                    if keyword.arg == "update" and isinstance(keyword.value, ast.Dict):
                        for k, v in zip(keyword.value.keys, keyword.value.values, strict=True):
                            if isinstance(k, ast.Constant) and k.value == "kind":
                                found.add(string_values(v, tree), where)
    return found


# describe() (core/sight/narrate.py) renders these kinds from several keys
SPECIAL_EVENTS = {
    "thanked": ["event.thanked", "event.thanked_plain"],
    "clan_kill_failed": ["event.clan_kill_failed", "event.clan_kill_failed_gone"],
    "you_died": [f"event.you_died.{k}" for k in (
        "hanged", "killed", "inactive", "kicked", "gas_chamber", "spiked", "where",
        "where_graveyard", "ghost")],
    "game_result": ["event.game_result.won", "event.game_result.lost",
                    "event.game_result.draw"],
    "phase_started": ["event.phase_started.day", "event.phase_started.night"],
    "morning": ["event.morning.quiet", "event.morning.head", "event.morning.victim",
                "event.morning.story", "event.morning.removed_only", "event.morning.single"],
    "turn_missed": ["event.turn_missed", "event.turn_missed_removed"],
    "buy_done": ["words.buy_done_if", "words.buy_done_unless", "words.buy_done_nobody"],
    "day_result": ["event.day_result.head", "event.day_result.row", "event.day_result.nobody",
                   "event.day_result.tie"],
    "game_over": ["event.game_over.head", "event.game_over.draw", "event.game_over.row",
                  "event.game_over.winner"],
    "vote_cast": ["event.vote_cast", "event.vote_cast_ghost", "event.vote_cast_shout",
                  "event.vote_cast_shout_ghost", "event.vote_shout_again",
                  "event.vote_shout_again_ghost"],
    "player_died": [f"event.{form}.{cause}" for form in ("died", "died_hidden") for cause in (
        "hanged", "killed", "inactive", "kicked", "gas_chamber", "spiked")],
    # the master's desk (core/sight/desk.py)
    "night_explained": [f"desk.night.{k}" for k in (
        "head", "sequence", "void", "actor_dead", "target_gone", "fallback", "blocked",
        "wrecking", "protect", "check", "kill", "kill_again", "armour", "bad_kill", "club",
        "club_armour", "club_dead", "nobody", "death")],
    "day_explained": [f"desk.day.{k}" for k in ("head", "vote", "vote_zero", "row", "nobody",
                                                "tie", "hanged")] + [
        f"desk.day.why.{k}" for k in ("silenced", "asleep", "excluded", "removed",
                                      "no_ghosts", "cancelled")],
    "desk_opened": ["desk.opened.head", "desk.opened.row"],
    "desk_day_kick": ["event.desk_day_kick"] + [f"desk.kick_day.{k}" for k in (
        "standing", "none", "leader", "tie", "rule")],
    "desk_order": ["desk.order.line", "desk.order.fallback", "desk.order.story",
                   "desk.order.replaced"],
    "desk_standby": ["desk.standby.on", "desk.standby.off"],
    "clan_order": ["event.clan_order", "event.clan_order_replaced"],
    "desk_sight": ["desk.event.desk_sight", "desk.sight.all", "desk.sight.threads"],
    "desk_buy_failed": ["event.desk_buy_failed"],
    "reminder": ["event.reminder.checkin", "event.reminder.vote", "event.reminder.night"],
    "reminder_public": ["event.reminder_public.checkin", "event.reminder_public.vote"],
    "reminded": ["event.reminded", "event.reminded_none"],
}


def test_the_static_scan_finds_codes_kinds_and_notices() -> None:
    codes, kinds, notices = raised_codes(), emitted_kinds(), notice_kinds()
    assert {"wrong_phase", "not_master", "game_not_found", "dm_which_game",
            "no_game_for_you", "internal_error", "setup_unknown_role"} <= codes.literal()
    assert {"vote_cast", "kill_done", "shot_done", "payouts", "anon_post"} <= kinds.literal()
    assert {"check", "kill_done", "shot_done", "whisper", "shared_check"} <= notices.literal()


def test_every_code_is_resolved() -> None:
    """A code in a variable must be traceable to literals (else name it here)."""
    assert raised_codes().unresolved == []
    assert emitted_kinds().unresolved == []
    assert notice_kinds().unresolved == []


def test_the_vocabularies_are_what_the_code_raises_and_emits() -> None:
    """Every code raised and every kind emitted is a member (a bare string in the Discord
    layer too), and no member is left that nothing produces."""
    assert raised_codes().literal() == {str(code) for code in ErrorCode}
    assert emitted_kinds().literal() == {str(kind) for kind in EventKind}


def test_every_error_code_and_event_kind_has_words() -> None:
    missing = [problem for code in ErrorCode for problem in in_both(f"error.{code}")]
    missing += [problem for kind in EventKind
                for key in SPECIAL_EVENTS.get(kind, [f"event.{kind}"]) for problem in in_both(key)]
    assert missing == []


def test_every_raised_code_has_an_error_message() -> None:
    missing = []
    for pattern, where in raised_codes().patterns.items():
        for problem in matching(r"error\." + pattern):
            missing.append(f"{problem} (raised at {where[0]})")
    assert missing == []


def test_every_emitted_event_has_a_rendering() -> None:
    missing = []
    for kind in emitted_kinds().literal():
        for key in SPECIAL_EVENTS.get(kind, [f"event.{kind}"]):
            missing += in_both(key)
    assert missing == []


def test_every_notice_has_a_text() -> None:
    missing = []
    for kind in notice_kinds().literal():
        missing += in_both(f"notice.{kind}")
    assert missing == []


def test_rule_terms_have_keys() -> None:
    wanted: list[str] = []
    for role in Role:
        wanted += [f"role.{role}.name", f"role.{role}.genitive", f"role.{role}.power"]
    for side in Side:
        wanted += [f"side.{side}.name", f"side.{side}.goal", f"team.{side}"
                   if side is not Side.NEGATIVE else "team.clan"]
    wanted += [f"action.{a}" for a in Action]
    wanted += [f"cause.{cause}" for cause in DeathCause.__args__]
    for phase in PhaseKind:
        wanted += [f"status.phase.{phase}", f"signup.closed.{phase}"]
    for item in ITEMS:
        wanted += [f"item.{item}.name", f"item.{item}.effect"]
    for spell in DAY_SPELLS | NIGHT_SPELLS | {"shout"}:
        wanted += [f"spell.{spell}.name", f"spell.{spell}.effect"]
    for team in ("police", "opcop", GRAVEYARD):
        wanted += [f"team.{team}", f"channel.{team}"]
    wanted += ["team.clan", "channel.clan", "item.protection.name_against"]
    wanted += [f"permission.{p}" for p in {*REQUIRED_TO_CREATE, *REQUIRED_TO_START}]
    wanted += [f"signup.module.{m}" for m in MODULES]
    wanted += [f"signup.option.{o}.{s}" for o in SHOWN_OPTIONS for s in ("on", "off")]
    wanted += [f"payouts.reason.{r}" for r in
               ("days", "votes", "kills", "saves", "prize", "bonus", "master")]
    missing = [problem for key in wanted for problem in in_both(key)]
    assert missing == []


def test_plural_tables_the_game_counts_with() -> None:
    for key in ("vote.count", "currency.lira"):
        assert set(i18n.get_catalogue().entry(key, "ru") or {}) == {"one", "few", "many",
                                                                     "other"}
        assert set(i18n.get_catalogue().entry(key, "en") or {}) == {"one", "other"}
    assert [t("currency.lira", "ru", count=n) for n in (1, 2, 5, 21, 60)] == [
        "1 лира", "2 лиры", "5 лир", "21 лира", "60 лир"]
    assert [t("currency.lira", "en", count=n) for n in (1, 2)] == ["1 lira", "2 lira"]


def test_the_static_scan_resolves_variables_and_subclasses() -> None:
    snippet = ast.parse(
        "class Gone(RuleError):\n"
        "    def __init__(self, n):\n"
        "        super().__init__('gone_away', n=n)\n"
        "def f(ctx, mine, action):\n"
        "    kind = 'kill_done' if action else 'shot_done'\n"
        "    ctx.emit(kind)\n"
        "    raise RuleError('a' if mine else 'b')\n"
        "def g(code):\n"
        "    raise RuleError(code)\n")
    assert _error_classes(snippet) == {"Gone"}
    calls = [n for n in ast.walk(snippet) if isinstance(n, ast.Call)]
    emit = next(n for n in calls if call_name(n) == "emit")
    assert string_values(emit.args[0], snippet) == {"kill_done", "shot_done"}
    raised = [n for n in calls if call_name(n) == "RuleError"]
    assert string_values(raised[0].args[0], snippet) == {"a", "b"}
    assert string_values(raised[1].args[0], snippet) is None  # reported as unresolved


# ─── dynamic: play games and render everything they produce ─────────────────


def names(uid: int) -> str:
    return f"<@{uid}>"


def when(iso: str) -> str:
    return "<t:1767225600:f>"


def wrong_script(text: str, lang: str) -> str | None:
    """Latin words in Russian, Cyrillic in English (markup and mentions aside)."""
    bare = MARKUP.sub("", text)
    if lang == "ru":
        word = LATIN_WORD.search(bare)
        return word.group(0) if word else None
    word = re.search(r"[А-Яа-яЁё]+", bare)
    return word.group(0) if word else None


def embed_texts(embed: discord.Embed) -> list[str]:
    data = embed.to_dict()
    out = [data.get("title", ""), data.get("description", "")]
    out += [part for f in data.get("fields", []) for part in (f["name"], f["value"])]
    out.append(data.get("footer", {}).get("text", ""))
    return [text for text in out if text]


class Recorder(sim.Table):
    """The simulator's table, keeping the refusals too."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.errors: list[RuleError] = []
        super().__init__(*args, **kwargs)

    def send(self, cmd: c.Command) -> list[Event]:
        try:
            return super().send(cmd)
        except RuleError as err:
            self.errors.append(err)
            raise


def extras(table: Recorder) -> None:
    """What the simulator never does: crypto, master tools, warnings, withdrawals."""
    s, rng = table.state, table.rng
    living = [p.uid for p in s.living()]
    dead = [p.uid for p in s.players if not p.alive]
    if not living:
        return
    who = rng.choice(living)
    roles = sorted({str(p.role) for p in s.players if p.role})
    at = table.tick()
    attempts: list[c.Command] = [
        c.Anon(by=who, at=at, text="12345", signature=rng.choice([None, *roles])),
        c.Whisper(by=who, at=at, role=rng.choice(roles), text="12345",
                  signature=rng.choice([None, *roles])),
        c.Reveal(by=who, at=at),
        c.Share(by=who, at=at),
        c.Away(by=who, at=at, reason=rng.choice([None, "12345"])),
        c.Unvote(by=who, at=at),
        c.Vote(by=who, at=at, target=rng.choice(living), shout=True),
        c.Extend(by=sim.MASTER, at=at, minutes=30),
        c.Bonus(by=sim.MASTER, at=at, target=who, amount=rng.choice([1, 2, 5]),
                reason="12345", secret=rng.random() < 0.5),
        c.CheckIn(by=who, at=at),
        c.Thank(by=who, at=at, premium=1),
        c.Buy(by=who, at=at, item="protection", against="999"),
        c.Cast(by=who, at=at, spell="doubling", target=who),
    ]
    if dead:
        attempts.append(c.OccultExclude(by=who, at=at, target=rng.choice(dead)))
        attempts.append(c.Vote(by=rng.choice(dead), at=at, target=who))
    if rng.random() < 0.05:
        attempts.append(c.Kick(by=sim.MASTER, at=at, target=rng.choice(living)))
    if rng.random() < 0.05:
        attempts.append(c.Replace(by=sim.MASTER, at=at, old=who, new=9000 + s.seq, name="X"))
    for cmd in rng.sample(attempts, k=min(6, len(attempts))):
        with contextlib.suppress(RuleError):
            table.send(cmd)


@dataclass
class Rendered:
    texts: list[tuple[str, str, str]] = field(default_factory=list)  # (lang, what, text)
    kinds: set[str] = field(default_factory=set)
    codes: set[str] = field(default_factory=set)

    def add(self, lang: str, what: str, text: str) -> None:
        assert text.strip(), what
        self.texts.append((lang, what, text))

    def embed(self, lang: str, what: str, embed: discord.Embed) -> None:
        for text in embed_texts(embed):
            self.add(lang, what, text)


def render_state(out: Rendered, table: Recorder) -> None:
    s = table.state
    for lang in LANGS:
        view = public_view(s)
        out.embed(lang, f"status {s.phase}", status_embed(view, lang))
        if s.phase is PhaseKind.DAY:
            out.embed(lang, "tally", tally_embed(public_view(s), lang))
        out.embed(lang, "signup", signup_embed(lobby_view(s), lang))
        for p in s.players:
            out.embed(lang, f"card {p.role}", card_embed(card(s, p.uid), lang))
        if s.options.shop and s.living():
            uid = s.living()[0].uid
            out.embed(lang, "shop", shop_embed(shop_view(s, uid), lang, 37))
            for kind in attacker_kinds(s):
                out.add(lang, f"attacker {kind}", attacker_name(kind, lang))


def play(seed: int, options: Options, players: int, out: Rendered,
         cancel: bool = False) -> Recorder:
    table = Recorder(seed, players, options)
    # the title is the master's words, in either script: keep it out of the check
    table.played.state = table.state.model_copy(update={"title": f"#{seed}"})
    render_state(out, table)
    if cancel:
        table.send(c.Start(by=sim.MASTER, at=table.clock))
        table.send(c.Cancel(by=sim.MASTER, at=table.tick()))
        return table
    table.send(c.SetOptions(by=sim.MASTER, at=table.clock,
                            changes={"public_moves": True, "reveal_roles": seed % 2 == 0,
                                     "graveyard": True}))
    table.send(c.Start(by=sim.MASTER, at=table.clock))
    for _ in range(60):
        if table.state.over:
            break
        sim.random_phase(table)
        if not table.state.over:
            extras(table)
        render_state(out, table)
    for p in table.state.players[:3]:
        with contextlib.suppress(RuleError):
            table.send(c.Thank(by=p.uid, at=table.tick(), premium=p.uid % 3))
    return table


def render_events(out: Rendered, table: Recorder) -> None:
    state = table.state
    for event in table.played.events:
        out.kinds.add(event.kind)
        for lang in LANGS:
            text = desk_text(event, names, lang) if event.audience.kind == "master" \
                else describe(event, names, lang, when)  # the master's desk words its own
            out.add(lang, f"event {event.kind}", text)
            if event.kind == "payouts":
                out.add(lang, "payout table", payout_table(event, lang))
            for _uid, _amount, reason in ledger_entries(event.kind, event.data, state.master):
                out.add(lang, f"ledger {reason}", reason_text(reason, lang))
    for err in table.errors:
        out.codes.add(err.code)
        for lang in LANGS:
            out.add(lang, f"error {err.code}", describe_error(err.code, err.params, names, lang))
    for p in state.players:
        for notice in p.notices:
            for lang in LANGS:
                out.add(lang, f"notice {notice.kind}",
                        notice_text(notice.kind, notice.data, notice.night, lang))
    for lang in LANGS:
        out.add(lang, "ledger opening", reason_text("opening", lang))


ALL_ON = Options(extra_roles=True, currency=True, shop=True, crypto=True)
SCENARIOS: list[tuple[str, Callable[[Rendered], list[Recorder]]]] = [
    ("base", lambda out: [play(seed, Options(), 8, out) for seed in range(4)]),
    ("all modules", lambda out: [play(seed, ALL_ON, n, out)
                                 for seed, n in ((1, 12), (2, 9), (3, 16), (4, 7), (5, 10))]),
    ("cancelled", lambda out: [play(9, ALL_ON, 8, out, cancel=True)]),
]


@pytest.fixture(scope="module")
def rendered() -> Rendered:
    previous = i18n.is_strict()
    i18n.set_strict(True)
    try:
        out = Rendered()
        for _name, scenario in SCENARIOS:
            for table in scenario(out):
                render_events(out, table)
        return out
    finally:
        i18n.set_strict(previous)


def test_games_exercise_most_of_the_catalogue(rendered: Rendered) -> None:
    assert len(rendered.texts) > 5000
    assert {"vote_cast", "payouts", "anon_post", "whisper", "bonus_granted", "extended",
            "away_noted", "morning", "game_over", "cancelled", "purchase"} <= rendered.kinds
    assert len(rendered.codes) >= 10


def test_russian_texts_have_no_english_words(rendered: Rendered) -> None:
    bad = sorted({f"{what}: {word!r} in {text!r}" for lang, what, text in rendered.texts
                  if lang == "ru" and (word := wrong_script(text, "ru"))})
    assert bad == []


def test_english_texts_have_no_russian_words(rendered: Rendered) -> None:
    bad = sorted({f"{what}: {word!r} in {text!r}" for lang, what, text in rendered.texts
                  if lang == "en" and (word := wrong_script(text, "en"))})
    assert bad == []


def test_nothing_is_left_as_a_placeholder_or_key(rendered: Rendered) -> None:
    bad = sorted({f"{lang} {what}: {text!r}" for lang, what, text in rendered.texts
                  if re.search(r"\{[a-z_]+\}|\b(?:event|error|notice|role|item)\.[a-z_]+",
                               text)})
    assert bad == []


def test_the_script_check_can_fail() -> None:
    assert wrong_script("Куплено: alarm_clock за 5 лир.", "ru") == "alarm_clock"
    assert wrong_script("<@12> голосует против <@13> (<t:1:R>)", "ru") is None
    assert wrong_script("Bought: Будильник.", "en") == "Будильник"



@pytest.mark.parametrize("lang", LANGS)
def test_player_ids_in_event_data_become_names(lang: str) -> None:
    thanked = describe(Event(kind="thanked", data={"uid": 5, "master": 7, "premium": 0}),
                       names, lang)
    assert "<@5>" in thanked and "<@7>" in thanked
    away = describe(Event(kind="away_noted", data={"uid": 5, "reason": None, "until": 3}),
                    names, lang)
    assert "None" not in away and "<@5>" in away
