"""Crash test: SIGKILL a process playing games through the service, at random moments.

Every command the child acknowledged (printed after `apply` returned) must be in
the log and the state; every stored state must equal the replay of its log
(nothing half-written); and play must go on to the end after the restarts.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import sys
from pathlib import Path

from core.storage.db import close_db, init_db
from core.storage.models import EventLog, Game
from core.storage.service import GameService

WORKER = Path(__file__).with_name("storage_worker.py")
ROOT = Path(__file__).resolve().parents[2]
GAMES = 6
ROUNDS = 6


async def run_worker(url: str, seed: int, kill_after: int | None,
                     rng: random.Random) -> tuple[list[tuple[int, int]], bool, bytes]:
    """Run the worker; SIGKILL it after `kill_after` ACKs (None: let it finish).

    Returns the acknowledged (game, seq) pairs, whether it finished, and its stderr.
    """
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(WORKER), url, str(GAMES), str(seed),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env)
    assert proc.stdout is not None and proc.stderr is not None
    acks: list[tuple[int, int]] = []
    done = killed = False
    try:
        async with asyncio.timeout(60):
            while line := await proc.stdout.readline():
                word, *rest = line.decode().split()
                if word == "ACK":
                    acks.append((int(rest[0]), int(rest[1])))
                done = done or word == "DONE"
                if kill_after is not None and not killed and len(acks) >= kill_after:
                    await asyncio.sleep(rng.uniform(0, 0.02))  # land anywhere, mid-commit too
                    proc.send_signal(signal.SIGKILL)
                    killed = True  # keep reading: ACKs flushed before the kill count
            err = await proc.stderr.read()
            await proc.wait()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    if not killed:
        assert proc.returncode == 0, err.decode()
    return acks, done, err


async def check_database(url: str, acked: dict[int, int]) -> list[Game]:
    await init_db(url)
    try:
        svc = GameService()
        games = await Game.all().order_by("id")
        stored_seq = {g.id: g.seq for g in games}
        for gid, seq in acked.items():
            assert stored_seq.get(gid, 0) >= seq, f"game {gid}: acknowledged {seq} lost"
            assert await EventLog.filter(game_id=gid, seq=seq).exists()
        for game in games:
            assert await EventLog.filter(game_id=game.id).count() == game.seq
            await svc.verify(game.id)  # stored state == replay of the log, byte for byte
        return games
    finally:
        await close_db()


async def test_sigkill_never_loses_an_acknowledged_command(storage_url: str) -> None:
    url = storage_url  # SQLite file, then a PostgreSQL database (tests/conftest.py)
    rng = random.Random(20260101)
    acked: dict[int, int] = {}
    kills = 0
    for round_no in range(ROUNDS):
        acks, done, _ = await run_worker(url, round_no, rng.randint(20, 150), rng)
        for gid, seq in acks:
            acked[gid] = max(acked.get(gid, 0), seq)
        kills += not done
        await check_database(url, acked)
        if done:
            break
    assert kills >= 3, "the worker finished too early for the test to mean anything"
    acks, done, _ = await run_worker(url, 99, None, rng)  # the survivors play to the end
    assert done
    for gid, seq in acks:
        acked[gid] = max(acked.get(gid, 0), seq)
    games = await check_database(url, acked)
    assert len(games) == GAMES
    assert all(g.phase in ("ended", "cancelled") and not g.active for g in games)
