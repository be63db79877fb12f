"""Ten times the games: N live games (5,000; 12 players each) in one bot process.

Measured through the real bot and the harness, as bench/e2e.py measures 500 games:

  p99        interaction latency under Poisson arrivals of 0.02 commands/s per game
             (100 commands/s over 5,000 games; /vote, /night and /role), target <= 50 ms
  memory     resident memory per live game of a fresh process that loaded every state
             (bench/resume.py: its growth minus the same on an empty database, over N),
             target <= 40 KiB
  restart    a fresh bot on the database: ready (setup_hook done, every deadline
             re-armed) in < 2 s; then every state loaded, one by one, as commands would
             load them (lazily, at a game's first use)

Set-up. Building 5,000 games through the service (about 180 ms a game here) would take
15 minutes, so only the first guild's games (`templates`, 50) are built that way: created,
joined, started, played to day 1 with every module on, their private channels, places
and ping role delivered by the outbox. Every further guild is a copy of that guild:

  in the fake Discord  the guild, its roles, channels, threads and members, each with a
                       new id (the bot learns them by GUILD_CREATE, as at a real start)
  in the database      each game's row (state, private channels, ids), its seats, its
                       command log and its players' wallets, with every id of the
                       template guild replaced by its copy's (one transaction)

Not copied: the messages already posted (the copies' live vote counts start afresh at
their first vote, `live_messages` empty) and the delivered outbox rows (history only).
The copies are games the service never saw: loaded from the database at first use.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tortoise.transactions import in_transaction

from core.storage.models import EventLog, Game, GamePlayer, Wallet

from . import resume
from .e2e import GAMES_PER_GUILD, Bench, LiveGame, open_loop, running_bot

P99_TARGET_MS = 50.0
MEMORY_TARGET_KIB = 40.0
READY_TARGET_S = 2.0
RATE_PER_GAME = 0.02  # commands/s per game (issue 22)

_ID = re.compile(r"\d{15,20}")


def _remap(value: Any, ids: dict[int, int]) -> Any:
    """`value` with every id of `ids` replaced (ints, digit strings, dict keys)."""
    if isinstance(value, dict):
        return {_remap(k, ids): _remap(v, ids) for k, v in value.items()}
    if isinstance(value, list):
        return [_remap(v, ids) for v in value]
    if isinstance(value, set):
        return {_remap(v, ids) for v in value}
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return ids.get(value, value)
    if isinstance(value, str) and value.isdigit():
        new = ids.get(int(value))
        return str(new) if new is not None else value
    return value


def _remap_text(text: str, ids: dict[int, int]) -> str:
    """JSON (or any) text with every id of `ids` replaced (ids are 15+ digit snowflakes:
    nothing else in a game's text is that long a number)."""
    return _ID.sub(lambda m: str(ids.get(int(m.group()), m.group())), text)


def clone_guild(bench: Bench, template: int, copy: int) -> dict[int, int]:
    """Copy the template guild in the fake Discord (roles, channels, threads, members;
    not messages) under new ids, announce it to the bot, and return old id -> new id."""
    from tests.harness.world import GuildState, clone

    world = bench.h.world
    g = world.guild(template)
    keep = {world.bot_id, world.owner.id}
    ids: dict[int, int] = {template: world.next_id()}
    for rid in g.roles:
        ids.setdefault(rid, world.next_id())
    for cid in g.channel_ids:
        ids[cid] = world.next_id()
    for uid in g.members:
        if uid not in keep:
            ids[uid] = world.next_id()
    for old, new in ids.items():
        if old in world.users:
            user = clone(world.users[old])
            user.update(id=str(new), username=f"{user['username']}~{copy}",
                        global_name=f"{user['global_name']}~{copy}")
            world.users[new] = user
            world.user_locales[new] = world.user_locales.get(old, "en-US")
    data = _remap(clone(g.data), ids)
    data["name"] = f"{data['name']} ~{copy}"
    new_guild = GuildState(
        data=data, roles={ids[r]: _remap(clone(v), ids) for r, v in g.roles.items()},
        members={ids.get(u, u): _remap(clone(m), ids) for u, m in g.members.items()},
        channel_ids=[ids[c] for c in g.channel_ids], bot_role_id=ids[g.bot_role_id])
    world.guilds[ids[template]] = new_guild
    for cid in g.channel_ids:
        channel = _remap(clone(world.channels[cid]), ids)
        if "last_message_id" in channel:
            channel["last_message_id"] = None
        world.channels[ids[cid]] = channel
        world.channel_messages[ids[cid]] = []
        if cid in world.thread_members:
            world.thread_members[ids[cid]] = {ids.get(u, u) for u in world.thread_members[cid]}
    world.emit("GUILD_CREATE", world.guild_payload(ids[template], gateway=True))
    return ids


async def clone_rows(template_games: list[int], ids: dict[int, int]) -> list[int]:
    """Copy the template games' rows with the ids replaced; the new games' ids."""
    games = await Game.filter(id__in=template_games).order_by("id")
    seats = await GamePlayer.filter(game_id__in=template_games).values_list(
        "game_id", "guild_id", "user_id", "seat")
    log = await EventLog.filter(game_id__in=template_games).values_list(
        "game_id", "seq", "command", "events", "created_at")
    guilds = {g.guild_id for g in games}
    wallets = await Wallet.filter(guild_id__in=list(guilds)).values_list(
        "guild_id", "user_id", "balance")
    async with in_transaction() as tx:
        new_ids: dict[int, int] = {}
        for g in games:
            row = Game(
                guild_id=ids[g.guild_id], channel_id=ids[g.channel_id],
                active_channel_id=ids[g.channel_id] if g.active_channel_id else None,
                master_id=ids.get(g.master_id, g.master_id),
                title=_remap_text(g.title, ids), plot=g.plot, options=g.options, seed=g.seed,
                state=_remap_text(g.state, ids), phase=g.phase, active=g.active,
                deadline=g.deadline, seq=g.seq, outbox_seq=g.outbox_seq, language=g.language,
                signup_message_id=None,
                category_id=ids.get(g.category_id, g.category_id) if g.category_id else None,
                private_channels=_remap_text(g.private_channels, ids), live_messages="{}")
            await row.save(using_db=tx)
            new_ids[g.id] = row.id
        await GamePlayer.bulk_create(
            [GamePlayer(game_id=new_ids[gid], guild_id=ids[guild], user_id=ids.get(uid, uid),
                        seat=seat) for gid, guild, uid, seat in seats], using_db=tx)
        await EventLog.bulk_create(
            [EventLog(game_id=new_ids[gid], seq=seq, command=_remap_text(cmd, ids),
                      events=_remap_text(events, ids), created_at=at)
             for gid, seq, cmd, events, at in log], batch_size=500, using_db=tx)
        await Wallet.bulk_create(
            [Wallet(guild_id=ids[guild], user_id=ids.get(uid, uid), balance=balance)
             for guild, uid, balance in wallets], using_db=tx)
    return [new_ids[g.id] for g in games]


async def _copy(bench: Bench, template: list[LiveGame], total: int,
                log: Callable[[str], None]) -> float:
    """Copy the template guild until there are `total` live games; seconds taken."""
    start = time.perf_counter()
    bot = bench.bot
    guild = template[0].guild_id
    copy = 0
    while len(bench.games) < total:
        copy += 1
        take = template[:total - len(bench.games)]
        ids = clone_guild(bench, guild, copy)
        new = await clone_rows([g.id for g in take], ids)
        for game, gid in zip(take, new, strict=True):
            bench.games.append(LiveGame(gid, ids[game.guild_id], ids[game.channel_id],
                                        ids.get(game.master, game.master),
                                        [ids[p] for p in game.players]))
            info = await bot.service.info(gid)
            for channel_id in info.private_channels.values():
                bot.private_index[channel_id] = gid
            bot.scheduler.note(gid, info.deadline)
        if copy % 10 == 0:
            log(f"  scale: {len(bench.games)} games ...")
        await asyncio.sleep(0)  # let the gateway events reach discord.py's cache
    await bench.h.settle()
    return time.perf_counter() - start


async def measure(workdir: Path, games: int, *, samples: int,
                  rate_per_game: float = RATE_PER_GAME, templates: int = GAMES_PER_GUILD,
                  seed: int = 11, log: Callable[[str], None] = print) -> dict[str, Any]:
    """The section: `games` live games (`templates` of them, one guild, built through the
    service; the rest copies of that guild), the open-loop latency over all of them, then
    restart and memory in fresh processes. `workdir` must exist."""
    templates = min(games, templates, GAMES_PER_GUILD)
    async with running_bot(workdir) as bench:
        log(f"  scale: building {templates} games through the service ...")
        await bench.grow(templates)
        await bench.quiesce()
        built_s = bench.setup_seconds
        log(f"  scale: built in {built_s:.1f} s; copying to {games} games ...")
        copied_s = await _copy(bench, list(bench.games), games, log)
        log(f"  scale: copied in {copied_s:.1f} s; loading every state ...")
        start = time.perf_counter()
        for game in bench.games:  # a bot that has run a while holds what it serves
            await bench.service.state(game.id)
        warm_s = time.perf_counter() - start
        await bench.quiesce()
        rate = rate_per_game * len(bench.games)
        log(f"  scale: {samples} commands at {rate:.0f}/s over {len(bench.games)} games ...")
        parked = bench.bot.outbox.parked
        latency = await open_loop(bench, bench.games, samples, rate, seed=seed)
        await bench.bot.outbox.idle(within=300)
        await bench.h.settle()
        # the copies must behave as games built through the service: nothing refused,
        # parked or failed, and no channel opened again for want of a copied one
        rest = [r for r in bench.h.fake.requests if r.kind == "rest"]
        health = {"rest_calls": len(rest), "failed": sum(1 for r in rest if r.status >= 400),
                  "channels_created": sum(1 for r in rest
                                          if r.route == "POST /guilds/{guild_id}/channels"),
                  "parked": bench.bot.outbox.parked - parked}
    log("  scale: restart and memory in fresh processes ...")
    db = workdir / "bench.db"
    empty = workdir / "empty.db"
    await _empty_db(empty)
    full = resume.run_child(db, workdir)
    base = resume.run_child(empty, workdir)
    restart = resume.compare(full, base)
    return {
        "games": len(bench.games), "templates": templates, "built_s": built_s,
        "copied_s": copied_s, "warm_s": warm_s, "rate_per_game": rate_per_game,
        "latency": latency, "health": health, "restart": restart,
        "memory_kib_per_game": restart["bytes_per_game"] / 1024,
        "db_bytes": db.stat().st_size,
    }


async def _empty_db(path: Path) -> None:
    from core.storage.db import close_db, init_db

    await init_db(f"sqlite://{path}")
    await close_db()


def scale_targets(out: dict[str, Any]) -> dict[str, Any]:
    p99 = out["latency"]["all"]["p99_ms"]
    kib = out["memory_kib_per_game"]
    ready = out["restart"]["ready_s"]
    armed = out["restart"]["deadlines"] == out["restart"]["games"] == out["games"]
    return {
        "scale_p99_ms": {"value": p99, "games": out["games"],
                         "target": f"<= {P99_TARGET_MS:g}", "met": p99 <= P99_TARGET_MS},
        "scale_kib_per_game": {"value": kib, "target": f"<= {MEMORY_TARGET_KIB:g}",
                               "met": kib <= MEMORY_TARGET_KIB},
        "scale_restart_ready_s": {"value": ready, "target": f"< {READY_TARGET_S:g}",
                                  "met": ready < READY_TARGET_S and armed},
    }
