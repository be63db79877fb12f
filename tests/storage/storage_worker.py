"""Crash-test helper: plays simulated games through GameService in a child process.

    python tests/storage/storage_worker.py DATABASE_URL GAMES SEED

Creates games until GAMES exist, then plays every running one to its end (resuming
what a killed predecessor left). After each `apply` RETURNS it prints
`ACK <game id> <seq>`: the parent kills us at random and then checks that every
acknowledged command survived. Prints `DONE` at the end.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.soak import create_sim_game, play_stored
from core.storage.db import close_db, init_db
from core.storage.models import Game
from core.storage.service import Applied, GameService

SIZES = (6, 8, 10, 12, 14)


_out = threading.Lock()


def ack(applied: Applied) -> None:
    # Called from the agents' threads: one write per line, or lines interleave.
    with _out:
        sys.stdout.write(f"ACK {applied.game_id} {applied.seq}\n")
        sys.stdout.flush()


async def main(url: str, games: int, seed: int) -> None:
    await init_db(url)
    try:
        svc = GameService()
        for i in range(await Game.all().count(), games):
            gid = await create_sim_game(svc, seed=i, channel_id=1000 + i)
            print(f"GAME {gid}", flush=True)
        running = await svc.active_games()
        with ThreadPoolExecutor(max_workers=max(1, len(running))) as pool:
            await asyncio.gather(*(
                play_stored(svc, g.id, players=SIZES[g.id % len(SIZES)], seed=seed,
                            on_applied=ack, executor=pool)
                for g in running))
        print("DONE", flush=True)
    finally:
        await close_db()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3])))
