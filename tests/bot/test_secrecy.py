"""Secrecy audit: whole games through the Discord harness, and every word a player can read.

Random legal agents play games with different module mixes, every move a slash command.
After every command the audit reads what the bot left in the fake Discord: every message
in every channel (public posts, non-ephemeral interaction responses, private channels,
DMs) and every ephemeral reply, with the players who can read it (channel overwrites as
the fake Discord computes them, `h.visible_channels`). It pairs each role name (the
catalogue's `role.<id>.name`, both languages, and the Russian genitive) with the player
reference it stands next to (a `<@id>` mention or a display name) and checks the pair
against what the rules let that reader know at that moment:

* his own role; his clan mates; the police pairs (investigator + sergeant, investigator +
  operative); the checks the investigator shared with `/share` (police channel);
* his own check results, in ephemeral replies and in his private place only;
* public moves (`/reveal`), the roles of the dead when `reveal_roles` is on (the gas
  chamber's included; hidden roles hide it too), and everything from the game-over
  table on.

Private places (a private thread per seat, cogs/delivery/places.py) are audited after every
move too: exactly the seat's holder among the players is a member of and can view it
(the master and the bot are the other members), and a whisper's text reaches only the
places of the role's holders.

`test_the_checker_catches_leaks` proves the checker fails on a leaked message.
"""

from __future__ import annotations

import random
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import discord
import pytest

from cogs.delivery.places import PLACE_PREFIX
from core.game.engine import legal_targets
from core.game.roles import Role
from core.game.rules.shop import DAY_SPELLS, ITEMS, NIGHT_SPELLS, attacker_kinds
from core.game.state import GameState, PhaseKind, Player
from core.storage import service as service_module
from core.text.i18n import t as tr
from tests.bot.helpers import Table, open_table
from tests.harness import Harness, MessageRecord

Pair = tuple[int, str]  # (player uid, role id)

# --- the checker -------------------------------------------------------------------------
ROLE_WORDS: dict[str, str] = {}
for _role in Role:
    for _key in (f"role.{_role}.name", f"role.{_role}.genitive"):
        for _lang in ("ru", "en"):
            if _lang == "en" and _key.endswith("genitive"):
                continue  # "the mafia": English genitives are the names with an article
            ROLE_WORDS[tr(_key, _lang).casefold()] = str(_role)
ROLE_RE = re.compile(
    r"(?<!\w)(" + "|".join(re.escape(w) for w in sorted(ROLE_WORDS, key=len, reverse=True))
    + r")(?!\w)", re.IGNORECASE)
MENTION_RE = re.compile(r"<@!?(\d+)>")
POLICE = (Role.INVESTIGATOR, Role.SERGEANT)
PUBLIC_COMMANDS = {"checkin", "vote", "unvote"}


def pairs_in(line: str, names: dict[str, int]) -> list[Pair]:
    """(player, role) pairs a line states: each role name goes with the player reference
    right before it (or, when none precedes it, the first one after it)."""
    refs = [(m.start(), int(m.group(1))) for m in MENTION_RE.finditer(line)]
    if names:
        name_re = re.compile(r"(?<!\w)(" + "|".join(
            re.escape(n) for n in sorted(names, key=len, reverse=True)) + r")(?!\w)")
        refs += [(m.start(), names[m.group(1)]) for m in name_re.finditer(line)]
    refs.sort()
    out = []
    for m in ROLE_RE.finditer(line):
        role = ROLE_WORDS[m.group(1).casefold()]
        before = [uid for pos, uid in refs if pos < m.start()]
        after = [uid for pos, uid in refs if pos > m.start()]
        owner = before[-1] if before else (after[0] if after else None)
        if owner is not None:
            out.append((owner, role))
    return out


def pieces(record: MessageRecord) -> list[str]:
    """Every text of a message a reader sees, one string per place it is shown."""
    out = [record.content] if record.content else []
    for e in record.embeds:
        out += [str(e[k]) for k in ("title", "description") if e.get(k)]
        out += [str((e.get(k) or {}).get(s) or "") for k, s in (("author", "name"),
                                                                ("footer", "text"))]
        out += [f"{f.get('name', '')}: {f.get('value', '')}" for f in e.get("fields") or []]
    stack = list(record.components)
    while stack:
        c = stack.pop()
        stack += c.get("components") or []
        out += [str(c[k]) for k in ("label", "placeholder", "content") if c.get(k)]
        out += [f"{o.get('label', '')} {o.get('description', '')}" for o in c.get("options") or []]
    return [p for p in out if p]


def knows(p: Player, q: Player) -> bool:
    """The knowledge RULES.md §3 gives one player of another (not through the bot's own
    team list, so a bug there shows up here)."""
    if p.clan is not None and p.clan == q.clan:
        return True
    # "Следователь знает сержанта" is one way; a promoted sergeant (now investigator)
    # meets the police channel: his predecessor and the operative.
    if p.role is Role.INVESTIGATOR and q.role in (*POLICE, Role.OPERATIVE):
        return True
    return {p.role, q.role} == {Role.INVESTIGATOR, Role.OPERATIVE}


@dataclass
class Knowledge:
    """What each player may know; only ever grows, like knowledge does."""

    public: set[Pair] = field(default_factory=set)
    revealed: set[Pair] = field(default_factory=set)  # public moves
    private: dict[int, set[Pair]] = field(default_factory=lambda: defaultdict(set))
    secret: dict[int, set[Pair]] = field(default_factory=lambda: defaultdict(set))
    everything_from: int | None = None  # message id of the game-over (or cancel) table

    def learn(self, state: GameState) -> None:
        reveal = state.options.reveal_roles
        for p in state.players:
            if p.role is None:
                continue
            mine = (p.uid, str(p.role))
            self.private[p.uid].add(mine)
            for q in state.players:
                if q.role is not None and knows(p, q):
                    self.private[p.uid].add((q.uid, str(q.role)))
            if not p.alive and p.death is not None and reveal:
                self.public.add(mine)  # the gas chamber too: hidden roles hide it (issue 16)
            for n in p.notices:
                if n.kind not in ("check", "shared_check"):
                    continue
                pair = (int(n.data["target"] or 0), str(n.data["role"]))
                self.secret[p.uid].add(pair)
                if n.data.get("revealed"):
                    self.public.add(pair)  # /reveal: a public move
                    self.revealed.add(pair)

    def allowed(self, viewer: int, pair: Pair, ephemeral: bool, *, told: bool = False) -> bool:
        """`told`: the text is the game-over table, or comes after it."""
        return told or pair in self.public or pair in self.private[viewer] or (
            ephemeral and pair in self.secret[viewer])

    def after_table(self, message: int) -> bool:
        return self.everything_from is not None and message > self.everything_from


@dataclass(frozen=True)
class Leak:
    message: int
    channel: str
    viewer: int
    player: int
    role: str
    line: str


class Audit:
    """Reads the fake Discord after every move and records every leak."""

    def __init__(self, h: Harness, t: Table, *, game_over_texts: Iterable[str] = ()) -> None:
        self.h, self.t = h, t
        self.knowledge = Knowledge()
        self.leaks: list[Leak] = []
        self.problems: list[str] = []
        self.seen: dict[int, Any] = {}
        self.secrets: set[str] = set()  # whisper texts: never in a message others can read
        self.whispered: dict[str, set[int]] = {}  # whisper text -> who may read it
        self.places: dict[int, int] = {}  # private place (thread id) -> its seat's holder
        self.places_checked = 0
        self.scanned = 0
        self.pairs = 0
        self.heads = [x for x in game_over_texts if x]

    @property
    def players(self) -> dict[int, Any]:
        return {p.id: p for p in self.t.players}

    async def step(self) -> None:
        await self.t.settle()
        state = await self.t.state()
        self.knowledge.learn(state)
        if state.over and self.knowledge.everything_from is None:
            self.knowledge.everything_from = self._table_message()
        info = await self.t.bot.service.info(self.t.game_id)
        # each player's view once a step, after the last await: 20 places read by 20
        # players would otherwise be 400 views of every channel
        views = {uid: self.h.visible_channels(uid) for uid in self.players}
        self.check_places(state, info.private_channels, views)
        self.scan(views)

    def check_places(self, state: GameState, channels: dict[str, int],
                     views: dict[int, Any]) -> None:
        """Exactly the seat's holder (of the players) is in and can view each place."""
        world = self.h.world
        for key, thread in channels.items():
            if not key.startswith(PLACE_PREFIX):
                continue
            holder = state.players[int(key[len(PLACE_PREFIX):])].uid
            self.places[thread] = holder
            members = world.thread_members.get(thread, set()) - {world.bot_id, self.t.master.id}
            if members != {holder}:
                self.problems.append(f"place of {holder} has members {members}")
            readers = {uid for uid, view in views.items() if view.can_view(thread)}
            if readers != {holder}:
                self.problems.append(f"place of {holder} is read by {readers}")
            self.places_checked += 1

    def _table_message(self) -> int | None:
        for m in self.h.messages_in(self.t.channel):
            if any(head in m.text for head in self.heads):
                return m.id
        return None

    def scan(self, views: dict[int, Any]) -> None:
        world = self.h.world
        names = {p.name: p.id for p in self.t.players}
        fresh = [(mid, s) for mid, s in world.messages.items()
                 if mid not in self.seen or self.seen[mid] != s.payload.get("edited_timestamp")]
        if not fresh:
            return
        for mid, stored in fresh:
            self.seen[mid] = stored.payload.get("edited_timestamp")
            record = world.message_record(mid)
            if record.author_id != world.bot_id:
                continue
            viewers, where = self._viewers(record, views)
            if not viewers:
                continue
            self.scanned += 1
            ephemeral = record.ephemeral_for is not None
            own = self.places.get(record.channel_id)  # the holder of this private place
            meta = record.payload.get("interaction_metadata")
            if meta and not ephemeral and meta.get("type") == 2 \
                    and meta.get("name") not in PUBLIC_COMMANDS:
                self.problems.append(f"/{meta.get('name')} answered in public: {record.text}")
            k = self.knowledge
            for text in pieces(record):
                for secret in self.secrets:
                    if secret not in text or ephemeral:
                        continue
                    if own is None or own not in self.whispered.get(secret, set()):
                        self.problems.append(f"a whisper in {where}: {text}")
                # the table itself (one embed of its message), and whatever comes after it
                told = k.after_table(mid) or (mid == k.everything_from
                                              and any(x in text for x in self.heads))
                for line in text.splitlines():
                    for pair in pairs_in(line, names):
                        self.pairs += 1
                        for v in viewers:
                            if not k.allowed(v, pair, ephemeral or v == own, told=told):
                                self.leaks.append(Leak(mid, where, v, *pair, line))

    def _viewers(self, record: MessageRecord, views: dict[int, Any]) -> tuple[set[int], str]:
        if record.ephemeral_for is not None:
            return ({record.ephemeral_for} & set(views)), "ephemeral"
        world = self.h.world
        cid = record.channel_id
        recipient = world.dm_recipient(cid) if cid in world.channels else None
        if recipient is not None:
            return ({recipient} & set(views)), "DM"
        channel = world.channels.get(cid) or world.deleted_channels.get(cid) or {}
        name = str(channel.get("name", cid))
        if cid not in world.channels:  # deleted: who could read it then is unknown
            return set(views), name
        return {uid for uid, v in views.items() if v.can_view(cid)}, name

    def report(self) -> str:
        lines = [f"{len(self.leaks)} leak(s):"] + [
            f"  msg {x.message} in {x.channel}: reader {self.t.member(x.viewer).name} learns "
            f"{self.t.member(x.player).name} is {x.role}: {x.line!r}" for x in self.leaks[:20]]
        return "\n".join(lines + self.problems[:20])


def game_over_heads() -> list[str]:
    """How the game-over (or cancel) table starts, in both languages."""
    heads = []
    for lang in ("ru", "en"):
        heads.append(tr("event.game_over.head", lang, winners="\x00").split("\x00")[0])
        heads.append(tr("event.game_over.draw", lang))
        heads.append(tr("event.cancelled", lang))
    return heads


# --- random legal agents, through slash commands -------------------------------------------
@dataclass
class Setup:
    name: str
    players: int
    create: dict[str, Any] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)
    roles: str | None = None


EVERY_MODULE = {"extra_roles": True, "currency": True, "shop": True, "crypto": True}
GAMES = [
    Setup("base-reveal", 8),
    Setup("base-hidden-graveyard", 10, options={"reveal_roles": False, "graveyard": True}),
    Setup("extra-roles", 12, {"extra_roles": True},
          roles="mafioso x2; advocate; investigator; sergeant; operative; occultist; bouncer;"
                " killer"),
    Setup("extra-crypto-hidden", 14, {"extra_roles": True, "crypto": True},
          {"reveal_roles": False, "public_moves": True}),
    Setup("currency-shop", 10, {"currency": True, "shop": True}, {"dead_write": True}),
    Setup("crypto-public-moves", 9, {"crypto": True},
          {"public_moves": True, "master_sees_anon": True}),
    Setup("everything-hidden", 13,
          {"extra_roles": True, "currency": True, "shop": True, "crypto": True},
          {"reveal_roles": False, "public_moves": True, "graveyard": True},
          roles="clan A: mafioso x2, advocate; clan B: mafioso x2; investigator; sergeant;"
                " operative; occultist; bouncer; killer"),
    Setup("two-clans", 11, roles="clan A: mafioso x2; clan B: mafioso; investigator;"
                                 " sergeant; bouncer; killer"),
    # the table sizes forums play (issue 41): every module on, the dealt roles of the size
    Setup("every-module-12", 12, EVERY_MODULE,
          {"public_moves": True, "graveyard": True, "dead_write": True}),
    Setup("every-module-20-hidden", 20, EVERY_MODULE,
          {"reveal_roles": False, "public_moves": True, "graveyard": True,
           "master_sees_anon": True}),
]


class Agents:
    def __init__(self, h: Harness, t: Table, audit: Audit, seed: int) -> None:
        self.h, self.t, self.audit = h, t, audit
        self.rng = random.Random(seed)
        self.posts = 0
        self.whispers = 0
        self.anon_checked = 0
        self.reveals = 0

    async def do(self, uid: int, command: str, **options: Any) -> Any:
        res = await self.t.do(self.t.member(uid), command, **options)
        await self.audit.step()
        return res

    async def play(self, max_phases: int = 40) -> GameState:
        res = await self.t.do(self.t.master, "game start")
        assert res.ephemeral, res.text
        await self.audit.step()
        for _ in range(max_phases):
            state = await self.t.state()
            if state.over:
                return state
            for p in list(state.players):
                await self.act(p.uid)
            if self.rng.random() < 0.3:
                await self.do(self.rng.choice(self.t.players).id, "game status")
            if (await self.t.state()).over:
                continue
            await self.t.advance()
            await self.audit.step()
        res = await self.t.do(self.t.master, "game cancel")
        await self.audit.step()
        return await self.t.state()

    async def act(self, uid: int) -> None:
        rng = self.rng
        s = await self.t.state()
        p = s.player(uid)
        if s.over or p is None:
            return
        if rng.random() < 0.06:
            res = await self.do(uid, "role")
            assert res.ephemeral
        if not p.alive:
            if s.phase is PhaseKind.DAY and s.number > 0 and s.with_role(Role.OCCULTIST) \
                    and rng.random() < 0.5:
                await self.do(uid, "vote", player=str(rng.choice([q.uid for q in s.living()])))
            return
        if rng.random() < 0.06:
            return  # idle this turn
        if s.phase is PhaseKind.DAY and s.number == 0:
            await self.do(uid, "checkin")
        elif s.phase is PhaseKind.DAY:
            targets = [x for x in legal_targets(s, uid, "vote") if x != uid]
            mine = [x for x in targets if (q := s.player(x)) and (p.clan is None
                                                                 or q.clan != p.clan)]
            if mine or targets:
                shout = s.options.shop and rng.random() < 0.1
                res = await self.do(uid, "vote", player=str(rng.choice(mine or targets)),
                                    shout=shout)
                if rng.random() < 0.03:
                    await self.do(uid, "unvote")
        else:
            targets = legal_targets(s, uid, "night")
            if targets:
                options: dict[str, Any] = {"target": str(rng.choice(targets))}
                if len(targets) > 1 and rng.random() < 0.3:
                    options["fallback"] = str(rng.choice(
                        [x for x in targets if str(x) != options["target"]]))
                res = await self.do(uid, "night", **options)
                assert res.ephemeral, res.text
        await self.extras(uid)

    async def extras(self, uid: int) -> None:
        rng = self.rng
        s = await self.t.state()
        p = s.player(uid)
        assert p is not None
        if s.over or not p.alive:
            return
        if s.options.crypto:
            if rng.random() < 0.12:
                await self.anon(uid, s)
            elif rng.random() < 0.1:
                await self.whisper(uid, s)
            if p.role in (Role.INVESTIGATOR, Role.ADVOCATE) and rng.random() < 0.5:
                res = await self.do(uid, "reveal")
                assert res.ephemeral
                self.reveals += res.text == tr("anon.revealed", "en")
        if p.role is Role.INVESTIGATOR and rng.random() < 0.2:
            res = await self.do(uid, "share")
            assert res.ephemeral
        if p.role is Role.OCCULTIST and rng.random() < 0.3:
            dead = legal_targets(s, uid, "occult")
            if dead:
                await self.do(uid, "occult exclude", player=str(rng.choice(dead)))
        if s.options.shop and rng.random() < 0.25:
            living = [q.uid for q in s.living()]
            if rng.random() < 0.5:
                item = rng.choice(ITEMS)
                options: dict[str, Any] = {"item": item}
                if item == "protection":
                    options["target"] = rng.choice(attacker_kinds(s))
                res = await self.do(uid, "buy", **options)
            else:
                spell = rng.choice(sorted(DAY_SPELLS | NIGHT_SPELLS))
                target = uid if spell == "destruction" else rng.choice(living)
                res = await self.do(uid, "cast", spell=spell, target=str(target))
            assert res.ephemeral
        if rng.random() < 0.02:
            res = await self.do(uid, "away")
            assert res.ephemeral

    async def anon(self, uid: int, s: GameState) -> None:
        """The post carries no trace of the sender: a plain bot message from the outbox."""
        self.posts += 1
        text = f"anonymous note {self.posts} from somebody"
        roles = sorted({str(q.role) for q in s.players})
        options: dict[str, Any] = {"text": text}
        if self.rng.random() < 0.5:
            options["signature"] = self.rng.choice(roles)
        res = await self.do(uid, "anon", **options)
        assert res.ephemeral, "the /anon reply must be ephemeral"
        if res.text != tr("anon.sent", "en"):
            return  # refused (rate limit): nothing posted
        posts = [m for m in self.h.messages_in(self.t.channel)
                 if any(e.get("description") == text for e in m.embeds)]
        assert len(posts) == 1, text
        post = posts[0]
        sender = self.t.member(uid)
        assert post.author_id == self.h.world.bot_id
        for key in ("interaction_metadata", "interaction", "webhook_id", "application_id",
                    "message_reference"):
            assert key not in post.payload, key
        assert post.payload["mentions"] == []
        assert str(uid) not in post.text and sender.name not in post.text.split()
        assert not post.ephemeral
        self.anon_checked += 1

    async def whisper(self, uid: int, s: GameState) -> None:
        """Reaches exactly the living holders of the role (their card), nobody else."""
        self.whispers += 1
        text = f"whisper token {self.whispers}x{self.rng.randrange(10**6)}"
        role = self.rng.choice(sorted({str(q.role) for q in s.players}))
        holders = {q.uid for q in s.living() if str(q.role) == role}
        self.audit.secrets.add(text)
        self.audit.whispered[text] = holders  # their private places may show it
        res = await self.do(uid, "whisper", role=role, text=text)
        assert res.ephemeral
        if res.text != tr("anon.whispered", "en"):
            return
        for q in self.t.players:
            card = await self.do(q.id, "role")
            assert card.ephemeral
            assert (text in card.text) == (q.id in holders), (q.name, role, card.text)


def fix_seeds(monkeypatch: pytest.MonkeyPatch, base: int = 1000) -> None:
    """Deal the same roles every run: game seeds come from here, not from `secrets`."""
    counter = iter(range(base, base + 10**6))
    monkeypatch.setattr(service_module, "secrets",
                        SimpleNamespace(randbits=lambda _bits: next(counter) * 7919))


@pytest.fixture
def seeds(monkeypatch: pytest.MonkeyPatch) -> None:
    fix_seeds(monkeypatch)


#: Two runs (two seeds) of each mix; one of the 20-seat game, the sweep's longest (its
#: audit reads 20 views after each of some 4,000 commands).
CASES = [pytest.param(g, run, id=f"{g.name}-{run}") for g in GAMES for run in (0, 1)
         if run == 0 or g.players < 20]


@pytest.mark.parametrize(("setup", "run"), CASES)
async def test_no_role_leaks_in_a_whole_game(h: Harness, monkeypatch: pytest.MonkeyPatch,
                                             setup: Setup, run: int) -> None:
    fix_seeds(monkeypatch, 1000 + 500 * run)
    t = await open_table(h, setup.players, roles=setup.roles, **setup.create)
    if setup.options:
        res = await t.do(t.master, "game options", **setup.options)
        assert res.ephemeral, res.text
    audit = Audit(h, t, game_over_texts=game_over_heads())
    agents = Agents(h, t, audit, seed=len(setup.name) * 31 + setup.players + run)
    state = await agents.play()
    await audit.step()
    assert state.over
    assert audit.knowledge.everything_from is not None, "the game-over table was not found"
    assert not audit.leaks and not audit.problems, audit.report()
    # the audit read something: role cards, morning reports, the final table...
    assert audit.scanned > 50 and audit.pairs > setup.players, (audit.scanned, audit.pairs)
    assert audit.places_checked >= setup.players  # the private places were audited
    if setup.roles is None and setup.players >= 20:
        assert len(state.clans) == 2  # the deal of 20 seats: two clans, two channels
    if setup.create.get("crypto"):
        assert agents.anon_checked + agents.whispers > 0
    reveal = state.options.reveal_roles
    dead_hidden = [p for p in state.players if p.death]
    if not reveal and dead_hidden:
        # nothing public named a dead player's role before the table
        told = audit.knowledge.public - audit.knowledge.revealed
        assert not any(pair[0] == p.uid for p in dead_hidden for pair in told)
    graveyard = [c for c in h.channels() if c.name == tr("channel.graveyard", "ru")]
    assert bool(graveyard) == (state.options.graveyard and any(not p.alive
                                                               for p in state.players))


# --- the checker fails when it should ------------------------------------------------------
def test_pairs_in_attributes_roles_to_the_nearest_player() -> None:
    names = {"P1": 1, "P2": 2}
    assert pairs_in("• <@5> (мафиози)", names) == [(5, "mafioso")]
    assert pairs_in("<@5> выбывает из игры: убит ночью. Роль: следователь.", names) \
        == [(5, "investigator")]
    assert pairs_in("Роль вышибалы: <@7>", names) == [(7, "bouncer")]
    assert pairs_in("P2 is the Investigator, P1 an honest citizen", names) \
        == [(2, "investigator"), (1, "citizen")]
    assert pairs_in("P10 is a mafioso", names) == []  # P1 is not P10
    assert pairs_in("Подпись: мафиози", names) == []  # a role with nobody next to it
    assert pairs_in("<@5> operation", names) == []  # "опер"/"operative" as whole words only


async def test_the_checker_catches_leaks(h: Harness, seeds: None) -> None:
    t = await open_table(h, 8, roles="mafioso x2; investigator; sergeant; bouncer")
    audit = Audit(h, t, game_over_texts=game_over_heads())
    res = await t.do(t.master, "game start")
    assert res.ephemeral
    await audit.step()
    assert not audit.leaks, audit.report()
    state = await t.state()
    mafia = state.with_role(Role.MAFIOSO)
    citizen = next(p for p in state.players if p.role not in (Role.MAFIOSO, *POLICE))
    bot = t.bot
    ru = tr(f"role.{Role.MAFIOSO}.name", "ru")
    clan = bot.get_channel(h.channel_named(tr("channel.clan", "ru", number=1)).id)
    police = bot.get_channel(h.channel_named(tr("channel.police", "ru")).id)
    game = bot.get_channel(t.channel)
    assert isinstance(clan, discord.TextChannel) and isinstance(police, discord.TextChannel)
    assert isinstance(game, discord.TextChannel)

    # allowed: clan mates name each other in their own channel
    await clan.send(f"<@{mafia[0].uid}> — {ru}, <@{mafia[1].uid}> — {ru}")
    await audit.step()
    assert not audit.leaks, audit.report()
    # a living mafioso named in public: every non-mafioso reader is a leak
    await game.send(embed=discord.Embed(description=f"• <@{mafia[0].uid}> ({ru})"))
    await audit.step()
    readers = {x.viewer for x in audit.leaks}
    assert readers == {p.uid for p in state.players if p.clan is None}, audit.report()
    audit.leaks.clear()
    # in the police channel, by display name, in English
    await police.send(f"{t.member(citizen.uid).name} is the bouncer"
                      if citizen.role is Role.BOUNCER else
                      f"{t.member(citizen.uid).name} is an honest citizen")
    await audit.step()
    assert {(x.player, x.viewer) for x in audit.leaks} == {  # the sergeant is not there
        (citizen.uid, p.uid) for p in state.players if p.role is Role.INVESTIGATOR}, \
        audit.report()
    audit.leaks.clear()
    # a check result is for the investigator's eyes only, and in an ephemeral reply
    inv = state.with_role(Role.INVESTIGATOR)[0]
    audit.knowledge.secret[inv.uid].add((mafia[0].uid, "mafioso"))
    await police.send(f"<@{mafia[0].uid}> — {ru}")
    await audit.step()
    assert {x.viewer for x in audit.leaks} == {p.uid for p in state.players
                                              if p.role is Role.INVESTIGATOR}, audit.report()
    audit.leaks.clear()
    # a whisper text in a public message is reported
    audit.secrets.add("psst-123")
    await game.send("psst-123")
    await audit.step()
    assert audit.problems and "whisper" in audit.problems[0]


async def test_the_checker_catches_leaks_in_private_places(h: Harness, seeds: None) -> None:
    t = await open_table(h, 8, roles="mafioso x2; investigator; sergeant; bouncer")
    audit = Audit(h, t, game_over_texts=game_over_heads())
    assert (await t.do(t.master, "game start")).ephemeral
    await audit.step()
    assert not audit.leaks and not audit.problems, audit.report()
    assert audit.places_checked == 8
    state = await t.state()
    mafia = state.with_role(Role.MAFIOSO)
    citizen = next(p for p in state.players if p.role is Role.CITIZEN)
    inv = state.with_role(Role.INVESTIGATOR)[0]
    place = {uid: thread for thread, uid in audit.places.items()}
    ru = tr(f"role.{Role.MAFIOSO}.name", "ru")
    send = t.bot.get_partial_messageable
    # his own check in the investigator's place is fine; in a citizen's place it leaks
    audit.knowledge.secret[inv.uid].add((mafia[0].uid, "mafioso"))
    await send(place[inv.uid]).send(f"<@{mafia[0].uid}> — {ru}")
    await audit.step()
    assert not audit.leaks, audit.report()
    await send(place[citizen.uid]).send(f"<@{mafia[0].uid}> — {ru}")
    await audit.step()
    assert {(x.viewer, x.player) for x in audit.leaks} == {(citizen.uid, mafia[0].uid)}
    audit.leaks.clear()
    # a whisper reaches the places of its recipients only
    audit.secrets.add("psst-456")
    audit.whispered["psst-456"] = {mafia[0].uid}
    await send(place[mafia[0].uid]).send("psst-456")
    await audit.step()
    assert not audit.problems, audit.report()
    await send(place[citizen.uid]).send("psst-456")
    await audit.step()
    assert audit.problems and "whisper" in audit.problems[0]
    audit.problems.clear()
    # another player let into someone's place is reported
    await t.bot.http.add_user_to_thread(place[citizen.uid], mafia[1].uid)
    await audit.step()
    assert any("members" in x for x in audit.problems), audit.report()
    assert any("read by" in x for x in audit.problems), audit.report()


@pytest.mark.parametrize("reveal", [False, True], ids=["hidden", "revealed"])
async def test_roles_of_the_dead_follow_the_option(h: Harness, seeds: None, reveal: bool
                                                    ) -> None:
    """reveal_roles off: the kick is announced without the role (the audit would flag
    it); on: the role is part of the announcement."""
    t = await open_table(h, 8, roles="mafioso x2; investigator; sergeant; bouncer")
    res = await t.do(t.master, "game options", reveal_roles=reveal)
    assert res.ephemeral
    audit = Audit(h, t, game_over_texts=game_over_heads())
    await t.do(t.master, "game start")
    await audit.step()
    victim = next(p for p in (await t.state()).players if p.role is Role.BOUNCER)
    res = await t.do(t.master, "master kick", player=str(victim.uid))
    assert res.ephemeral
    await audit.step()
    assert not audit.leaks, audit.report()
    notice = h.messages_in(t.channel)[-1]
    assert f"<@{victim.uid}>" in notice.text
    assert (tr("role.bouncer.name", "ru") in notice.text) == reveal, notice.text
    assert ((victim.uid, "bouncer") in audit.knowledge.public) == reveal


# --- graveyard -------------------------------------------------------------------------------
async def test_graveyard_channel_for_the_dead(h: Harness, seeds: None) -> None:
    t = await open_table(h, 8, roles="mafioso x2; investigator; sergeant; bouncer")
    res = await t.do(t.master, "game options", graveyard=True, reveal_roles=False)
    assert res.ephemeral
    await t.do(t.master, "game start")
    await t.settle()
    name = tr("channel.graveyard", "ru")
    assert not [c for c in h.channels() if c.name == name]  # nobody is dead yet
    state = await t.state()
    first, second = state.with_role(Role.BOUNCER)[0], state.with_role(Role.MAFIOSO)[0]
    await t.do(t.master, "master kick", player=str(first.uid))
    await t.settle()
    grave = h.channel_named(name)
    info = await t.bot.service.info(t.game_id)
    assert grave.parent_id == info.category_id and info.private_channels["graveyard"] == grave.id
    assert grave.overwrites[h.default_guild.id].denies("view_channel")

    async def check() -> None:
        s = await t.state()
        for p in s.players:
            view = h.visible_channels(p.uid)
            assert view.can_view(grave.id) == (not p.alive), p.name
            assert view.can_send(grave.id) == (not p.alive), p.name
        assert not h.visible_channels(t.master).can_view(grave.id)

    await check()
    # the dead talk there; the living cannot read it
    await h.user_message(first.uid, grave.id, "hello from beyond")
    await t.do(t.master, "master kick", player=str(second.uid))
    await t.settle()
    await check()
    # a dead player's card does not list the other dead (roles of the dead are hidden)
    card = await t.do(t.member(first.uid), "role")
    assert card.ephemeral and f"<@{second.uid}>" not in card.text
    # the mafioso's clan mate still knows him
    mate = state.with_role(Role.MAFIOSO)[1]
    card = await t.do(t.member(mate.uid), "role")
    assert f"<@{second.uid}>" in card.text
    # at the end the graveyard is archived like the others: the dead read, nobody writes
    await t.do(t.master, "game cancel")
    await t.settle()
    assert h.visible_channels(first.uid).can_view(grave.id)
    assert not h.visible_channels(first.uid).can_send(grave.id)


async def test_no_graveyard_when_the_option_is_off(h: Harness) -> None:
    t = await open_table(h, 8, roles="mafioso x2; investigator; sergeant; bouncer")
    await t.do(t.master, "game start")
    victim = (await t.state()).players[0]
    await t.do(t.master, "master kick", player=str(victim.uid))
    await t.settle()
    assert tr("channel.graveyard", "ru") not in {c.name for c in h.channels()}
    assert "graveyard" not in (await t.bot.service.info(t.game_id)).private_channels
