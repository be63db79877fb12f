"""Hostile input through the real command tree: one test per (command, situation) cell.

Every cell builds a fresh game in the situation it needs, sends ONE bad interaction and
asserts: the reply is ephemeral, its text is the catalogue's message for the expected
error code in the caller's language (cells alternate Russian and English clients), and
not a single row of any table changed (nor the service's cached state).  Where Discord
itself would refuse the payload (a string over max_length, a value outside the declared
choices, a guild-only command in DMs) the harness raises HarnessError: those cells
assert that instead, since the bot never sees such an interaction.

Situations (the ids): nogame (a channel without a game while a game runs elsewhere),
notplayer, dead, phase (wrong phase), role (wrong role), target (forbidden target), self
(self target where the rules forbid), dup (duplicate submission), other (the channel of
a second game of the same guild: the command must act on THAT game — the cell then runs
the same command in the first game's channel and sees it accepted there), dm,
big/empty (oversized or empty text), unknown (unknown item, role, spell or player name).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field, replace
from typing import Any

import pytest
from tortoise.connection import get_connection

from core.game.roles import Role
from core.game.rules import night as night_rules
from core.storage import wallets
from core.text.i18n import normalize_locale, t
from tests.bot.helpers import Table
from tests.harness import Harness, HarnessError, InteractionResult

ROLES = "mafioso x2; investigator; sergeant; bouncer"


# --- the database, all of it -----------------------------------------------------------
async def dump_db() -> dict[str, list[dict[str, Any]]]:
    """Every row of every table (the list of tables read from the database itself)."""
    conn = get_connection("default")
    names = [r["name"] for r in await conn.execute_query_dict(
        "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    return {n: await conn.execute_query_dict(f'SELECT * FROM "{n}" ORDER BY rowid')
            for n in names}


# --- scenes ------------------------------------------------------------------------------
@dataclass
class Scene:
    h: Harness
    a: Table  # the game under test, in the guild's #general
    b: Table | None = None  # a second game in another channel of the same guild
    empty: int = 0  # a channel without a game
    who: dict[str, Any] = field(default_factory=dict)


async def open_at(h: Harness, channel: int, prefix: str, n: int, roles: str,
                  **create: Any) -> Table:
    master = h.add_member(f"{prefix}Master")
    players = [h.add_member(f"{prefix}{i}") for i in range(1, n + 1)]
    table = Table(h, master, players, channel=channel)
    res = await table.do(master, "game create", title=f"{prefix} table", **create)
    assert res.ephemeral, res.text  # the board itself is posted by the outbox
    info = await table.bot.service.game_in_channel(channel)
    assert info is not None
    table.game_id = info.id
    for p in players:
        assert (await table.do(p, "game join")).ephemeral
    assert (await table.do(master, "game setup", roles=roles)).ephemeral
    await table.settle()
    return table


def refusal(text: str) -> bool:
    """Whether `text` is some error message of the catalogue, in either language."""
    return any(p.fullmatch(text) for p in _error_patterns())


@functools.cache
def _error_patterns() -> list[re.Pattern[str]]:
    from core.text.i18n import get_catalogue

    cat = get_catalogue()
    return [re.compile(re.sub(r"\\\{\w+\\\}", ".*", re.escape(str(cat.entry(k, lang)))),
                       re.S)
            for lang in ("en", "ru") for k in cat.keys(lang) if k.startswith("error.")]


async def ok(res: InteractionResult) -> None:
    """A move of the scene's set-up: it must have been accepted."""
    assert (res.ephemeral or res.embeds) and not refusal(res.text), res.text


async def build(h: Harness, stage: str, mods: frozenset[str], other: bool) -> Scene:
    roles = ROLES
    if "occult" in mods:
        roles += "; occultist"
    if "nosgt" in mods:
        roles = "mafioso x2; investigator; bouncer"
    create = {k: True for k in ("currency", "shop", "crypto") if k in mods}
    if "occult" in mods:
        create["extra_roles"] = True
    a = await open_at(h, h.default_guild.general_id, "P", 8, roles, **create)
    scene = Scene(h, a, empty=h.add_text_channel("no-game-here").id)
    scene.who.update(master=a.master, player=a.players[0], outsider=h.add_member("Outsider"))
    changes = {k: v for k, v in (("public_moves", "public_moves" in mods),
                                 ("bouncer_self", "bouncer_self" not in mods),
                                 ("votes_final", "votes_final" in mods)) if v != _DEFAULT[k]}
    if changes:
        await ok(await a.do(a.master, "game options", **changes))
    if other:
        ch = h.add_text_channel("second-table").id
        scene.b = await open_at(h, ch, "Q", 7, ROLES)
        await ok(await scene.b.do(scene.b.master, "game start"))
        await scene.b.settle()
        scene.who.update(bmaster=scene.b.master)
    if "shared" in mods:  # a player of A also signs up for a game in another channel
        ch = h.add_text_channel("third-table").id
        c = await open_at(h, ch, "R", 7, ROLES)
        await ok(await c.do(a.players[-1], "game join"))
        scene.who.update(shared=a.players[-1])
    if stage == "signup":
        return scene
    await ok(await a.do(a.master, "game start"))
    await a.settle()
    state = await a.state()
    holders = {r: [a.member(p.uid) for p in state.players if p.role is r] for r in Role}
    citizens = holders[Role.CITIZEN]
    scene.who.update(inv=holders[Role.INVESTIGATOR][0], bnc=holders[Role.BOUNCER][0],
                     cit=citizens[0], dead=citizens[-1])
    if holders[Role.SERGEANT]:
        scene.who["sgt"] = holders[Role.SERGEANT][0]
    if holders[Role.OCCULTIST]:
        scene.who["occ"] = holders[Role.OCCULTIST][0]
    acting = night_rules.acting_mafioso(state, 1)
    scene.who["maf"] = a.member(acting)  # type: ignore[arg-type]
    scene.who["maf2"] = next(m for m in holders[Role.MAFIOSO] if m.id != acting)
    if stage == "day0":
        return scene
    # day 0: everybody checks in, the master kicks a citizen (a dead player from now on)
    for p in a.players:
        await ok(await a.do(p, "checkin"))
    await ok(await a.do(a.master, "master kick", player=str(scene.who["dead"].id)))
    await a.advance()
    if stage == "night0":
        return scene
    # night 0: the mafia attacks a citizen the bouncer covers (nobody dies)
    cit, bnc = scene.who["cit"], scene.who["bnc"]
    await ok(await a.do(scene.who["maf"], "night", target=str(cit.id)))
    await ok(await a.do(bnc, "night", target=str(cit.id)))
    await a.advance()
    state = await a.state()
    assert state.covered.get(bnc.id) == [cit.id], state.covered
    if stage == "day1":
        return scene
    if stage == "night1":
        await a.advance()
        state = await a.state()
        acting = state.clans[0].acting
        assert acting is not None
        scene.who["maf"] = a.member(acting)
        scene.who["maf2"] = next(m for m in holders[Role.MAFIOSO] if m.id != acting)
        return scene
    assert stage == "over"
    for m in holders[Role.MAFIOSO] + holders[Role.BOUNCER]:  # the positives win
        await ok(await a.do(a.master, "master kick", player=str(m.id)))
    await a.settle()
    assert (await a.state()).over
    return scene


_DEFAULT = {"public_moves": False, "bouncer_self": True, "votes_final": False}


# --- the matrix --------------------------------------------------------------------------
@dataclass(frozen=True)
class Ref:
    """A member of the scene, resolved when the cell runs ('dead', 'maf', ...)."""

    who: str


@dataclass(frozen=True)
class RoleName:
    role: str


@dataclass(frozen=True)
class Text:
    key: str


HARNESS = "harness"  # Discord refuses the payload itself


@dataclass(frozen=True)
class Cell:
    command: str
    situation: str
    stage: str  # signup, day0, night0, day1, night1 or over: how far the game went
    actor: str  # a Scene.who key
    expect: str  # an error code, HARNESS, or "text:<catalogue key>" for plain replies
    options: dict[str, Any] = field(default_factory=dict)
    params: dict[str, Any] = field(default_factory=dict)
    where: str = "a"  # a | b | empty | dm
    mods: frozenset[str] = frozenset()

    @property
    def other(self) -> bool:
        return self.where == "b"


def cell(command: str, situation: str, stage: str, actor: str, expect: str,
         where: str = "a", mods: str = "", params: dict[str, Any] | None = None,
         **options: Any) -> Cell:
    return Cell(command, situation, stage, actor, expect, options, params or {}, where,
                frozenset(mods.split()))


def common(command: str, stage: str = "day1", actor: str = "cit", mods: str = "",
           *, notplayer: str | None = "not_a_player", other: str | None = "not_a_player",
           dm: bool = True, **options: Any) -> list[Cell]:
    """The cells most commands share: no game here, not a player, another game's channel,
    DMs (guild-only: the harness refuses; else the DM resolves the caller's game)."""
    out = [cell(command, "nogame", stage, actor, "no_game_here", where="empty", mods=mods,
                **options)]
    if notplayer:
        out.append(cell(command, "notplayer", stage, "outsider", notplayer, mods=mods,
                        **options))
    if other:
        out.append(cell(command, "other", stage, actor, other, where="b", mods=mods,
                        **options))
    if dm:
        out.append(cell(command, "dm", stage, actor, HARNESS, where="dm", mods=mods,
                        **options))
    return out


def dm_cells(command: str, stage: str = "day1", **options: Any) -> list[Cell]:
    """Commands Discord allows in DMs: the caller's game is found by membership."""
    return [
        cell(command, "dm-nogame", stage, "outsider", "no_game_for_you", where="dm", **options),
        cell(command, "dm-twogames", stage, "shared", "dm_which_game", where="dm",
             mods="shared", **options),
    ]


BIG = "x" * 1501
CELLS: list[Cell] = [
    # /game create (a channel holds one running game)
    cell("game create", "dup", "signup", "outsider", "channel_has_game", title="Again"),
    cell("game create", "big", "signup", "outsider", HARNESS, where="empty", title="t" * 101),
    cell("game create", "empty", "signup", "outsider", HARNESS, where="empty", title=""),
    cell("game create", "dm", "signup", "outsider", HARNESS, where="dm", title="Mine"),
    # /game join
    *common("game join", "signup", "outsider", notplayer=None, other="signup_closed",
            dm=True),
    cell("game join", "self", "signup", "master", "master_cannot_play"),
    cell("game join", "dup", "signup", "player", "already_signed_up"),
    cell("game join", "phase", "day0", "outsider", "signup_closed"),
    # /game leave
    *common("game leave", "signup", "player", other="signup_closed"),
    cell("game leave", "phase", "day0", "cit", "signup_closed"),
    # /game start
    *common("game start", "signup", "master", notplayer="not_master", other="not_master"),
    cell("game start", "role", "signup", "player", "not_master"),
    cell("game start", "phase", "day0", "master", "already_started"),
    # /game setup
    *common("game setup", "signup", "master", notplayer="not_master", other="not_master",
            roles="mafioso x2"),
    cell("game setup", "role", "signup", "player", "not_master", roles="mafioso x2"),
    cell("game setup", "phase", "day0", "master", "signup_closed", roles="mafioso x2"),
    cell("game setup", "unknown", "signup", "master", "setup_unknown_role",
         params={"name": "dragon"}, roles="dragon x2"),
    cell("game setup", "big", "signup", "master", HARNESS, roles=BIG),
    cell("game setup", "empty", "signup", "master", HARNESS, roles=""),
    # the longest unknown name still fits in one reply
    cell("game setup", "big-unknown", "signup", "master", "setup_unknown_role",
         params={"name": "q" * 1500}, roles="q" * 1500),
    # /game options
    *common("game options", "signup", "master", notplayer="not_master", other="not_master",
            votes_final=True),
    cell("game options", "phase", "day0", "master", "signup_closed", votes_final=True),
    # /game cancel
    *common("game cancel", "day1", "master", notplayer="not_master", other="not_master"),
    cell("game cancel", "role", "day1", "cit", "not_master"),
    # a finished game's channel: every game command says the game is over (issue 32)
    cell("game cancel", "phase", "over", "master", "game_over"),
    # /game status: public, so only the routing cells apply
    cell("game status", "nogame", "day1", "cit", "no_game_here", where="empty"),
    cell("game status", "other", "day1", "cit", "status:b", where="b"),
    cell("game status", "dm", "day1", "cit", HARNESS, where="dm"),
    # /role
    *common("role", "day1", "cit", dm=False),
    *dm_cells("role"),
    # /checkin
    *common("checkin", "day0", "cit"),
    cell("checkin", "dead", "day1", "dead", "you_are_dead"),
    cell("checkin", "phase", "day1", "cit", "checkin_day_zero_only"),
    cell("checkin", "signup", "signup", "player", "not_started"),
    cell("checkin", "dup", "day0", "cit", "already_checked_in"),
    # /vote
    *common("vote", "day1", "cit", other="not_voting_time", player=Ref("maf")),
    cell("vote", "dead", "day1", "dead", "you_are_dead", player=Ref("maf")),
    cell("vote", "phase", "night0", "cit", "not_voting_time", player=Ref("maf")),
    cell("vote", "day0", "day0", "cit", "not_voting_time", player=Ref("maf")),
    cell("vote", "target", "day1", "cit", "target_dead", params={"target": Ref("dead")},
         player=Ref("dead")),
    cell("vote", "target-master", "day1", "cit", "not_a_player_target",
         params={"target": Ref("master")}, player=Ref("master")),
    cell("vote", "dup", "day1", "cit", "already_voted_for", params={"target": Ref("maf")},
         player=Ref("maf")),
    cell("vote", "final", "day1", "cit", "votes_final", mods="votes_final",
         player=Ref("maf2")),
    cell("vote", "unknown", "day1", "cit", "unknown_player", params={"name": "Nobody"},
         player="Nobody"),
    cell("vote", "empty", "day1", "cit", "unknown_player", params={"name": ""}, player=""),
    cell("vote", "big", "day1", "cit", "unknown_player", params={"name": "y" * 50},
         player="y" * 5000),
    cell("vote", "huge", "day1", "cit", HARNESS, player="y" * 6001),
    cell("vote", "unknown-id", "day1", "cit", "not_a_player_target",
         params={"target": "<@" + "9" * 30 + ">"}, player="9" * 30),
    # /unvote
    *common("unvote", "day1", "cit", other="not_voting_time"),
    cell("unvote", "dead", "day1", "dead", "you_are_dead"),
    cell("unvote", "phase", "night0", "cit", "not_voting_time"),
    cell("unvote", "dup", "day1", "cit", "no_vote_to_withdraw"),
    cell("unvote", "final", "day1", "cit", "votes_final", mods="votes_final"),
    # /votes: a public tally; refuses only outside a voting day
    cell("votes", "nogame", "day1", "cit", "no_game_here", where="empty"),
    cell("votes", "phase", "night0", "cit", "text:votes.not_voting"),
    cell("votes", "other", "day1", "cit", "text:votes.not_voting", where="b"),
    cell("votes", "dm", "day1", "cit", HARNESS, where="dm"),
    # /night
    *common("night", "night1", "maf", dm=False, target=Ref("inv")),
    *dm_cells("night", target=Ref("inv")),
    cell("night", "dead", "night1", "dead", "you_are_dead", target=Ref("inv")),
    cell("night", "phase", "signup", "player", "not_started", target=Ref("master")),
    cell("night", "role", "night1", "cit", "no_night_action", target=Ref("inv")),
    cell("night", "role-sergeant", "night1", "sgt", "no_night_action", target=Ref("inv")),
    cell("night", "role-night0", "night0", "inv", "no_move_tonight", target=Ref("cit")),
    cell("night", "turn", "night1", "maf2", "not_your_turn", params={"acting": Ref("maf")},
         target=Ref("inv")),
    cell("night", "target", "night1", "maf", "own_clan_target", params={"target": Ref("maf2")},
         target=Ref("maf2")),
    cell("night", "target-dead", "night1", "maf", "target_dead",
         params={"target": Ref("dead")}, target=Ref("dead")),
    cell("night", "recover", "night1", "bnc", "already_covered",
         params={"target": Ref("cit")}, target=Ref("cit")),
    cell("night", "self", "night1", "maf", "no_self_target", target=Ref("maf")),
    cell("night", "self-bouncer", "night1", "bnc", "no_self_target", mods="bouncer_self",
         target=Ref("bnc")),
    cell("night", "fallback", "night1", "maf", "fallback_same", target=Ref("inv"),
         fallback=Ref("inv")),
    cell("night", "unknown", "night1", "maf", "unknown_player", params={"name": "Nobody"},
         target="Nobody"),
    cell("night", "big", "night1", "maf", HARNESS, target=Ref("inv"), story=BIG),
    cell("night", "empty", "night1", "maf", HARNESS, target=Ref("inv"), story=""),
    # /share
    *common("share", "night1", "inv", dm=False),
    *dm_cells("share"),
    cell("share", "role", "night1", "cit", "wrong_role",
         params={"role": RoleName("investigator")}),
    cell("share", "dead", "night1", "dead", "you_are_dead"),
    cell("share", "phase", "signup", "player", "not_started"),
    cell("share", "nosergeant", "night1", "inv", "no_sergeant", mods="nosgt"),
    # /away
    *common("away", "day1", "cit", dm=False),
    *dm_cells("away"),
    cell("away", "dead", "day1", "dead", "you_are_dead"),
    cell("away", "phase", "signup", "player", "not_started"),
    cell("away", "big", "day1", "cit", HARNESS, reason="z" * 301),
    cell("away", "past", "day1", "cit", "away_until_past", params={"day": 1}, until=0),
    cell("away", "empty", "day1", "cit", HARNESS, reason=""),
    # /occult exclude
    *common("occult exclude", "day1", "occ", mods="occult", dm=False, player=Ref("dead")),
    *dm_cells("occult exclude", player=Ref("dead")),
    cell("occult exclude", "role", "day1", "cit", "wrong_role", mods="occult",
         params={"role": RoleName("occultist")}, player=Ref("dead")),
    cell("occult exclude", "target", "day1", "occ", "target_alive", mods="occult",
         params={"target": Ref("cit")}, player=Ref("cit")),
    cell("occult exclude", "dup", "day1", "occ", "already_excluded", mods="occult",
         params={"target": Ref("dead")}, player=Ref("dead")),
    cell("occult exclude", "phase", "signup", "player", "not_started", mods="occult",
         player=Ref("master")),
    # /wallet and /profile: not about a game; only Discord's own refusal applies
    cell("wallet", "dm", "day1", "cit", HARNESS, where="dm"),
    cell("profile", "dm", "day1", "cit", HARNESS, where="dm"),
    # /shop
    cell("shop", "nogame", "day1", "cit", "no_game_here", where="empty", mods="shop"),
    cell("shop", "module", "day1", "cit", "module_off", params={"module": Text(
        "signup.module.shop")}),
    cell("shop", "other", "day1", "cit", "module_off", where="b", mods="shop",
         params={"module": Text("signup.module.shop")}),
    cell("shop", "dm", "day1", "cit", HARNESS, where="dm", mods="shop"),
    # /buy
    *common("buy", "day1", "cit", mods="shop", other="not_a_player", item="alarm_clock"),
    cell("buy", "module", "day1", "cit", "module_off", item="alarm_clock",
         params={"module": Text("signup.module.shop")}),
    cell("buy", "dead", "day1", "dead", "you_are_dead", mods="shop", item="alarm_clock"),
    cell("buy", "phase", "signup", "player", "not_started", mods="shop", item="alarm_clock"),
    cell("buy", "role", "day1", "cit", "wrong_role", mods="shop", item="spiked_club",
         params={"role": RoleName("bouncer")}),
    cell("buy", "unknown", "day1", "cit", HARNESS, mods="shop", item="dragon_egg"),
    cell("buy", "unknown-target", "day1", "cit", "unknown_protection", mods="shop",
         params={"name": "dragons"}, item="protection", target="dragons"),
    cell("buy", "big", "day1", "cit", HARNESS, mods="shop", item="protection",
         target="d" * 100),
    # /cast
    *common("cast", "day1", "cit", mods="shop", spell="sleep", target=Ref("maf")),
    cell("cast", "module", "day1", "cit", "module_off", spell="sleep", target=Ref("maf"),
         params={"module": Text("signup.module.shop")}),
    cell("cast", "dead", "day1", "dead", "you_are_dead", mods="shop", spell="sleep",
         target=Ref("maf")),
    # a day spell by night is bought for the next day; conditions belong to the day
    cell("cast", "phase", "night1", "cit", "condition_day_only", mods="shop", spell="sleep",
         target=Ref("maf"), if_nobody_hanged=True),
    cell("cast", "conditions", "day1", "cit", "one_condition", mods="shop", spell="sleep",
         target=Ref("maf"), if_hanged=Ref("inv"), if_nobody_hanged=True),
    cell("cast", "role", "day1", "cit", "destruction_role", mods="shop", spell="destruction",
         target=Ref("cit")),
    cell("cast", "self", "day1", "maf", "self_only", mods="shop", spell="destruction",
         target=Ref("inv")),
    # a day spell on the dead: no vote to act on (issue 33, S34); a night spell: dead
    cell("cast", "target", "day1", "cit", "target_no_vote", mods="shop", spell="sleep",
         params={"target": Ref("dead")}, target=Ref("dead")),
    cell("cast", "target-night", "day1", "cit", "target_dead", mods="shop",
         spell="helplessness", params={"target": Ref("dead")}, target=Ref("dead")),
    cell("cast", "unknown", "day1", "cit", HARNESS, mods="shop", spell="fireball",
         target=Ref("maf")),
    # /anon
    *common("anon", "day1", "cit", mods="crypto", text="hello"),
    cell("anon", "module", "day1", "cit", "module_off", text="hello",
         params={"module": Text("signup.module.crypto")}),
    cell("anon", "dead", "day1", "dead", "you_are_dead", mods="crypto", text="hello"),
    cell("anon", "phase", "signup", "player", "not_started", mods="crypto", text="hello"),
    cell("anon", "unknown", "day1", "cit", "unknown_role", mods="crypto", text="hello",
         params={"name": RoleName("killer")}, signature="killer"),
    cell("anon", "dup", "day1", "cit", "post_too_soon", mods="crypto", text="hello"),
    cell("anon", "big", "day1", "cit", HARNESS, mods="crypto", text=BIG),
    cell("anon", "empty", "day1", "cit", HARNESS, mods="crypto", text=""),
    # /whisper
    *common("whisper", "day1", "cit", mods="crypto", role="investigator", text="psst"),
    cell("whisper", "module", "day1", "cit", "module_off", role="investigator", text="psst",
         params={"module": Text("signup.module.crypto")}),
    cell("whisper", "unknown", "day1", "cit", "unknown_role", mods="crypto", role="killer",
         text="psst", params={"name": RoleName("killer")}),
    cell("whisper", "unknown-choice", "day1", "cit", HARNESS, mods="crypto", role="dragon",
         text="psst"),
    cell("whisper", "big", "day1", "cit", HARNESS, mods="crypto", role="investigator",
         text=BIG),
    cell("whisper", "empty", "day1", "cit", HARNESS, mods="crypto", role="investigator",
         text=""),
    cell("whisper", "dead", "day1", "dead", "you_are_dead", mods="crypto", role="investigator",
         text="psst"),
    # /reveal
    *common("reveal", "day1", "inv", mods="crypto public_moves"),
    cell("reveal", "module", "day1", "inv", "module_off",
         params={"module": Text("signup.module.crypto")}),
    cell("reveal", "option", "day1", "inv", "public_moves_off", mods="crypto"),
    cell("reveal", "role", "day1", "cit", "wrong_role", mods="crypto public_moves",
         params={"role": RoleName("investigator")}),
    cell("reveal", "nothing", "day1", "inv", "nothing_to_reveal", mods="crypto public_moves"),
    cell("reveal", "dead", "day1", "dead", "you_are_dead", mods="crypto public_moves"),
    # /master advance
    *common("master advance", "day1", "master", notplayer="not_master", other="not_master"),
    cell("master advance", "role", "day1", "cit", "not_master"),
    cell("master advance", "phase", "signup", "master", "not_started"),
    # /master extend
    *common("master extend", "day1", "master", notplayer="not_master", other="not_master",
            minutes=30),
    cell("master extend", "phase", "signup", "master", "not_started", minutes=30),
    cell("master extend", "zero", "day1", "master", HARNESS, minutes=0),
    # /master kick
    *common("master kick", "day1", "master", notplayer="not_master", other="not_master",
            player=Ref("cit")),
    cell("master kick", "phase", "signup", "master", "not_started", player=Ref("player")),
    cell("master kick", "target", "day1", "master", "target_dead",
         params={"target": Ref("dead")}, player=Ref("dead")),
    cell("master kick", "self", "day1", "master", "not_a_player_target",
         params={"target": Ref("master")}, player=Ref("master")),
    cell("master kick", "unknown", "day1", "master", "unknown_player",
         params={"name": "Nobody"}, player="Nobody"),
    # /master bonus
    *common("master bonus", "day1", "master", mods="currency", notplayer="not_master",
            other="not_master", player=Ref("cit"), amount=5, reason="style"),
    cell("master bonus", "module", "day1", "master", "module_off", player=Ref("cit"),
         amount=5, reason="style", params={"module": Text("signup.module.currency")}),
    cell("master bonus", "phase", "signup", "master", "not_started", mods="currency",
         player=Ref("player"), amount=5, reason="style"),
    cell("master bonus", "target", "day1", "master", "not_a_player_target", mods="currency",
         params={"target": Ref("outsider")}, player=Ref("outsider"), amount=5, reason="x"),
    cell("master bonus", "zero", "day1", "master", HARNESS, mods="currency",
         player=Ref("cit"), amount=0, reason="style"),
    cell("master bonus", "big", "day1", "master", HARNESS, mods="currency",
         player=Ref("cit"), amount=5, reason="r" * 301),
    # /master log
    *common("master log", "day1", "master", notplayer="not_master", other="not_master"),
    cell("master log", "role", "day1", "cit", "not_master"),
    # /master replace
    *common("master replace", "day1", "master", notplayer="not_master", other="not_master",
            old=Ref("cit"), new=Ref("outsider")),
    cell("master replace", "dup", "day1", "master", "already_joined", old=Ref("cit"),
         new=Ref("maf")),
    cell("master replace", "self", "day1", "master", "master_cannot_play", old=Ref("cit"),
         new=Ref("master")),
    cell("master replace", "target", "day1", "master", "not_a_player_target",
         params={"target": Ref("outsider")}, old=Ref("outsider"), new=Ref("outsider")),
    # /master prod
    *common("master prod", "day1", "master", notplayer="not_master", other="not_master"),
    cell("master prod", "role", "day1", "cit", "not_master"),
    # /thank (after the game)
    cell("thank", "nogame", "over", "cit", "no_game_here", where="empty", mods="currency"),
    cell("thank", "notplayer", "over", "outsider", "not_a_player", mods="currency"),
    cell("thank", "module", "over", "cit", "module_off",
         params={"module": Text("signup.module.currency")}),
    cell("thank", "phase", "day1", "cit", "thank_after_game", mods="currency"),
    cell("thank", "dup", "over", "cit", "already_thanked", mods="currency"),
    cell("thank", "funds", "over", "cit", "not_enough_lira", mods="currency",
         params={"need": 100000, "have": Ref("balance")}, amount=100000),
    cell("thank", "other", "over", "cit", "module_off", where="b", mods="currency",
         params={"module": Text("signup.module.currency")}),  # B plays without currency
    cell("thank", "dm", "over", "cit", HARNESS, where="dm", mods="currency"),
]
LOCALES = ("ru", "en-US")
MATRIX = [(c, LOCALES[i % 2]) for i, c in enumerate(CELLS)]


def cell_id(c: Cell, locale: str) -> str:
    return f"{c.command.replace(' ', '-')}:{c.situation}:{locale}"


# --- running a cell ----------------------------------------------------------------------
def resolve(scene: Scene, name: str, value: Any) -> Any:
    if isinstance(value, Ref):
        member = scene.who[value.who]
        return member if name in MEMBER_OPTIONS else str(member.id)
    return value


MEMBER_OPTIONS = {"new", "user"}  # discord.Member options; the others are strings


def render(scene: Scene, value: Any, lang: str) -> Any:
    if isinstance(value, Ref):
        return f"<@{scene.who[value.who].id}>"
    if isinstance(value, RoleName):
        return t(f"role.{value.role}.name", lang)
    if isinstance(value, Text):
        return t(value.key, lang)
    return value


async def send(scene: Scene, c: Cell, locale: str, **override: Any) -> InteractionResult:
    user = scene.who[c.actor]
    options = {k: resolve(scene, k, v) for k, v in c.options.items()} | override
    if c.where == "dm":
        return await scene.h.dm_slash(user, c.command, locale=locale, options=options)
    channel = {"a": scene.a.channel, "empty": scene.empty,
               "b": scene.b.channel if scene.b else 0}[c.where]
    return await scene.h.slash(user, c.command, channel=channel, locale=locale,
                               options=options)


async def prepare_duplicate(scene: Scene, c: Cell, locale: str) -> None:
    """The first, accepted submission before the refused second one."""
    if (c.command, c.situation) in {("vote", "dup"), ("anon", "dup"), ("thank", "dup"),
                                    ("occult exclude", "dup"), ("checkin", "dup")}:
        first = await send(scene, c, locale)
    elif c.situation == "final":  # a vote stands; votes are final in this game
        first = await scene.a.do(scene.who[c.actor], "vote", player=str(scene.who["maf"].id))
    else:
        return
    await ok(first)
    await scene.a.settle()


@pytest.mark.parametrize(("c", "locale"), MATRIX, ids=[cell_id(c, loc) for c, loc in MATRIX])
async def test_bad_input(h: Harness, c: Cell, locale: str) -> None:
    scene = await build(h, c.stage, c.mods, c.other)
    lang = normalize_locale(locale)
    await prepare_duplicate(scene, c, locale)
    if c.command == "thank":
        balance = (await wallets.balances(None, h.default_guild.id,
                                          [scene.who[c.actor].id])).get(scene.who[c.actor].id, 0)
        scene.who["balance"] = balance
    await scene.a.settle()
    cached = (await scene.a.state()).model_dump_json()
    before = await dump_db()

    if c.expect == HARNESS:
        # Discord refuses this payload itself (max_length/min_length, min_value, declared
        # choices, guild-only commands in DMs): the bot never receives it, and the harness,
        # which only builds what Discord could send, raises instead.
        with pytest.raises(HarnessError):
            await send(scene, c, locale)
        assert await dump_db() == before
        return

    res = await send(scene, c, locale)
    await scene.a.settle()
    assert res.ephemeral, (res.text, res.embeds)
    if c.expect.startswith("text:"):
        assert res.text == t(c.expect[5:], lang)
    elif c.expect == "status:b":
        assert scene.b is not None and "Q table" in res.text and "P table" not in res.text
    else:
        params = {k: (scene.who["balance"] if v == Ref("balance") else render(scene, v, lang))
                  for k, v in c.params.items()}
        if c.expect == "post_too_soon":
            assert res.text in {t("error.post_too_soon", lang, seconds=s) for s in range(1, 21)}
        else:
            assert res.text == t(f"error.{c.expect}", lang, **params)
    assert await dump_db() == before, "a refused command changed the database"
    assert (await scene.a.state()).model_dump_json() == cached

    if c.other:  # the same command in the first game's channel: accepted (or refused for
        control = await send(scene, replace(c, where="a"), locale)  # a reason of A's own)
        if c.command in IN_A:
            assert control.text == t(f"error.{IN_A[c.command]}", lang), control.text
        else:
            assert not refusal(control.text), control.text


IN_A = {"unvote": "no_vote_to_withdraw", "reveal": "nothing_to_reveal"}
