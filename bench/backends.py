"""The GameService's own durable command stream, and the same stream on two backends.

`stream`: one process's durable command stream (issue 22: >= 0.5 x the bare aiosqlite
commit floor). Live games (12 players, every module on, day 1) on a SQLite file, and
clients sending votes and night orders straight to `GameService.apply` as fast as they
are answered (a closed loop), each command committed with its log and outbox rows,
group commit as in production; no Discord, no cogs, no outbox delivery. The floor is
measured just before and just after on the same disk, and the ratio uses their mean:
both move with the machine's load, so only figures taken side by side compare.

`compare`: whole simulated games (every module on) played concurrently through the
service, each command durably committed with its events and outbox rows; the soak
verifies every replay. PostgreSQL is measured when a server answers (`--postgres URL`,
or MAFIA_TEST_POSTGRES as CI sets it); otherwise the column says why it is missing.
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench import floor
from bench.soak import simulate_stored
from core.game import commands as c
from core.game.engine import legal_targets, night_move
from core.game.errors import RuleError
from core.game.state import GameState, Options
from core.storage.db import close_db, init_db
from core.storage.service import GameService

ALL = Options(extra_roles=True, currency=True, shop=True, crypto=True)
SCHEMA = "mafia_bench"


async def _reset_schema(url: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(url.replace("postgres://", "postgresql://", 1), timeout=5)
    try:
        await conn.execute(f"DROP SCHEMA IF EXISTS {SCHEMA} CASCADE")
    finally:
        await conn.close()


async def _one(url: str, games: int, players: int) -> dict[str, Any]:
    report = await simulate_stored(url, games, players, 11, options=ALL, deliver_outbox=False)
    return {"games": games, "players": players, "commands": report.commands,
            "seconds": report.seconds, "verified": report.verified,
            "commands_per_s": report.commands / report.seconds if report.seconds else 0.0}


async def compare(workdir: Path, games: int, players: int, postgres: str | None
                  ) -> dict[str, Any]:
    out: dict[str, Any] = {"sqlite": await _one(f"sqlite://{workdir / 'backends.db'}",
                                                games, players)}
    url = postgres or os.environ.get("MAFIA_TEST_POSTGRES")
    if not url:
        out["postgres"] = {"missing": "no server given (--postgres URL)"}
        return out
    try:
        await _reset_schema(url)
        sep = "&" if "?" in url else "?"
        out["postgres"] = await _one(f"{url}{sep}schema={SCHEMA}", games, players)
        await _reset_schema(url)
    except (OSError, ImportError) as exc:
        out["postgres"] = {"missing": f"server did not answer: {type(exc).__name__}"}
    return out


# --- one process's durable stream ----------------------------------------------------
async def _live_game(svc: GameService, index: int, players: int) -> int:
    """A game at day 1 (votes and night orders open), seated through the service."""
    now, master = datetime.now(UTC), 10**9 + index
    gid = await svc.create(1, 10**6 + index, master, f"Stream {index}", options=ALL,
                           seed=index)
    uids = [2 * 10**9 + index * 100 + i for i in range(players)]
    for i, uid in enumerate(uids):
        await svc.apply(gid, c.Join(by=uid, at=now, name=f"P{i + 1}"))
    await svc.apply(gid, c.Start(by=master, at=now))
    for uid in uids:
        await svc.apply(gid, c.CheckIn(by=uid, at=now))
    for _ in range(2):  # day 0 -> night 0 -> day 1
        await svc.apply(gid, c.Advance(by=master, at=now))
    return gid


class _Chooser:
    """The clients' picks: a vote, or a night order of a living player who has one. The
    day's living players and their legal night targets do not change while the stream
    runs (votes and orders kill nobody before the deadline): worked out once a game, so
    the clients' own CPU stays small beside the service's."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.moves: dict[int, tuple[list[int], list[tuple[int, list[int]]]]] = {}

    def next(self, gid: int, state: GameState, night: bool) -> c.Command | None:
        if gid not in self.moves:
            living = [p.uid for p in state.living()]
            self.moves[gid] = living, [
                (u, legal_targets(state, u, "night")) for u in living
                if night_move(state, u) is not None]
        living, orders = self.moves[gid]
        now, rng = datetime.now(UTC), self.rng
        orders = [o for o in orders if o[1]]
        if night and orders:
            actor, targets = rng.choice(orders)
            return c.NightOrder(by=actor, at=now, target=rng.choice(targets))
        if len(living) < 2:
            return None
        voter = rng.choice(living)
        return c.Vote(by=voter, at=now, target=rng.choice([u for u in living if u != voter]))


async def stream(workdir: Path, *, games: int, workers: int, samples: int,
                 floor_commits: int, players: int = 12, seed: int = 5) -> dict[str, Any]:
    """Durable commands/s through the GameService alone, over the floor beside it."""
    before = await floor.bare_commits(workdir / "stream-floor-1.db", floor_commits)
    await init_db(f"sqlite://{workdir / 'stream.db'}")
    try:
        svc = GameService()
        ids: list[int] = []
        for start in range(0, games, 8):
            ids += await asyncio.gather(*(_live_game(svc, i, players)
                                          for i in range(start, min(games, start + 8))))
        chooser, busy = _Chooser(seed), set[int]()
        rng = chooser.rng
        issued = committed = refused = 0

        async def client() -> None:
            nonlocal issued, committed, refused
            while issued < samples:
                issued += 1
                gid = rng.choice(ids)
                while gid in busy:
                    gid = rng.choice(ids)
                busy.add(gid)
                try:
                    cmd = chooser.next(gid, await svc.state(gid), issued % 2 == 0)
                    if cmd is None:
                        refused += 1
                        continue
                    await svc.apply(gid, cmd)
                    committed += 1
                except RuleError:
                    refused += 1
                finally:
                    busy.discard(gid)

        marks = await _marks(workdir / "stream.db")
        transactions = svc._group.transactions
        cpu, wall = time.process_time(), time.perf_counter()
        await asyncio.gather(*(client() for _ in range(min(workers, games))))
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        transactions = svc._group.transactions - transactions
        await svc.close()
        for gid in ids:  # not timed: every stored state is what its log replays to
            await svc.verify(gid)
    finally:
        await close_db()
    after = await floor.bare_commits(workdir / "stream-floor-2.db", floor_commits)
    floor_per_s = (before["commits_per_s"] + after["commits_per_s"]) / 2
    per_s = committed / wall if wall else float("nan")
    # the floor doing the same writes in the same grouping (issue 30): the rows the
    # stream wrote, counted and sized in its database, committed bare in as many
    # transactions of as many commands
    work = await _work(workdir / "stream.db", marks, committed)
    same = await floor.same_work(
        workdir / "stream-floor-same.db", transactions=max(1, transactions),
        commands_per_transaction=committed / max(1, transactions),
        rows_per_command=work["rows_per_command"], row_bytes=work["row_bytes"],
        state_bytes=work["state_bytes"])
    return {"games": games, "players": players, "workers": min(workers, games),
            "commands": committed, "refused": refused, "seconds": wall, "verified": len(ids),
            "commands_per_s": per_s, "cpu_ms_per_command": cpu / max(1, committed) * 1e3,
            "commands_per_transaction": committed / max(1, transactions),
            "floor_before_per_s": before["commits_per_s"],
            "floor_after_per_s": after["commits_per_s"], "floor_per_s": floor_per_s,
            "ratio": per_s / floor_per_s,
            "same_work": {**work, **same}, "same_work_floor_per_s": same["commands_per_s"],
            "same_work_ratio": per_s / same["commands_per_s"]}


async def _marks(path: Path) -> dict[str, int]:
    """The last row id of each table the stream inserts into."""
    import aiosqlite

    async with aiosqlite.connect(path) as db:
        out = {}
        for table in ("event_log", "outbox"):
            async with db.execute(f"SELECT coalesce(max(id), 0) FROM {table}") as cur:
                row = await cur.fetchone()
            out[table] = int(row[0]) if row else 0
        return out


async def _work(path: Path, marks: dict[str, int], committed: int) -> dict[str, Any]:
    """Rows per command and their mean size, of the rows written after `marks`."""
    import aiosqlite

    sizes = {"event_log": "length(command) + length(events)", "outbox": "length(payload)"}
    rows: dict[str, float] = {}
    nbytes: dict[str, float] = {}
    async with aiosqlite.connect(path) as db:
        for table, size in sizes.items():
            async with db.execute(f"SELECT count(*), coalesce(avg({size}), 0) FROM {table} "
                                  "WHERE id > ?", (marks[table],)) as cur:
                row = await cur.fetchone()
            count, mean = (row[0], row[1]) if row else (0, 0.0)
            rows[table] = count / max(1, committed)
            nbytes[table] = float(mean)
        async with db.execute("SELECT coalesce(avg(length(state)), 0) FROM game") as cur:
            row = await cur.fetchone()
    return {"rows_per_command": rows, "row_bytes": nbytes,
            "state_bytes": float(row[0]) if row else 0.0}
