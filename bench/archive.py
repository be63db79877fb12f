"""Archive benchmark: `python -m bench.archive [--days 15] [--players 30]`.

Builds a scripted game of `players` players lasting `days` voting days (every
player votes, changes and withdraws; the nights give orders), then measures

  record    the after-game record (core.sight.record.build: one replay of the log)
  html      the HTML archive with its inline SVG charts, and its size
  pictures  one vote-timeline PNG per day (matplotlib)
  total     archive + every picture (the target: < 1 s)
  latency   the event loop's responsiveness (p50/p99 of a 1 ms timer's lateness)
            idle, and while the whole build runs in a worker thread the way the bot
            runs it (asyncio.to_thread): what an interaction would wait meanwhile.

Run it once, by hand: the CPU is shared.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from typing import Any

from core.game import commands as c
from core.game.engine import apply, create_game
from core.game.roles import Role
from core.game.state import GameState, Options, PhaseKind
from core.play.sim import EPOCH, MASTER
from core.sight.record import LogRow, build, names_of, timeline_of

TARGET_S = 1.0


def scripted_game(players: int = 30, days: int = 15) -> tuple[GameState, list[LogRow]]:
    """A long, vote-heavy game: nobody dies at night (the bouncer covers the mafioso's
    target), one citizen is hanged a day, and on day `days` the mafioso is."""
    opts = Options(currency=True, shop=True, crypto=True)
    initial = create_game(seed=1, master=MASTER, title="Bench", options=opts)
    state, log = initial, []
    clock = EPOCH

    def send(cmd: c.Command) -> None:
        nonlocal state
        out = apply(state, cmd)
        state = out.state
        log.append((state.seq, cmd, out.events))

    def tick(minutes: int = 3) -> Any:
        nonlocal clock
        from datetime import timedelta

        clock += timedelta(minutes=minutes)
        return clock

    for i in range(players):
        send(c.Join(by=100 + i, at=clock, name=f"Игрок {i + 1}"))
    send(c.Configure(by=MASTER, at=clock, roles=f"mafioso; bouncer; citizen x{players - 2}"))
    send(c.Start(by=MASTER, at=clock))
    for _ in range(4 * days + 10):
        if state.over:
            break
        living = state.living()
        if state.phase is PhaseKind.DAY and state.number == 0:
            for p in living:
                send(c.CheckIn(by=p.uid, at=tick()))
        elif state.phase is PhaseKind.DAY:
            mafioso = next(p.uid for p in living if p.role is Role.MAFIOSO)
            citizens = [p.uid for p in living if p.role is Role.CITIZEN]
            target = mafioso if state.number >= days else citizens[state.number % len(citizens)]
            decoy = citizens[(state.number + 1) % len(citizens)]
            for p in living:
                if p.uid not in (decoy, target):
                    send(c.Vote(by=p.uid, at=tick(), target=decoy))
                    send(c.Unvote(by=p.uid, at=tick()))
                if p.uid != target:
                    send(c.Vote(by=p.uid, at=tick(), target=target))
        else:
            mafioso = next(p for p in living if p.role is Role.MAFIOSO)
            bouncer = next((p for p in living if p.role is Role.BOUNCER), None)
            covered = set(state.covered.get(bouncer.uid, [])) if bouncer else set()
            victims = [p.uid for p in living if p.role is Role.CITIZEN and p.uid not in covered]
            victim = victims[state.number % len(victims)]
            send(c.NightOrder(by=mafioso.uid, at=tick(), target=victim,
                              story=f"Ночь {state.number}: <история>"))
            if bouncer is not None:
                send(c.NightOrder(by=bouncer.uid, at=tick(), target=victim))
        send(c.Advance(by=MASTER, at=tick(60)))
    if not state.over:
        raise AssertionError("the scripted game did not end")
    return initial, log


def build_all(initial: GameState, log: list[LogRow], lang: str = "ru") -> dict[str, Any]:
    """Everything the end of a game builds (the archive and every day's picture), timed."""
    from archive.html import render
    from archive.picture import timeline_png

    t0 = time.perf_counter()
    record = build(initial, log)
    t1 = time.perf_counter()
    html = render(record, lang)
    t2 = time.perf_counter()
    names = names_of(log)
    pngs = [timeline_png(d.timeline, lambda u: names.get(u, str(u)), lang) for d in record.days]
    t3 = time.perf_counter()
    # what the bot does for ONE day's result: replay up to that day, then draw it
    last = record.days[-1].number
    tl = timeline_of(initial, log, last)
    assert tl is not None
    timeline_png(tl, lambda u: names.get(u, str(u)), lang)
    t4 = time.perf_counter()
    return {"days": len(record.days), "players": len(record.players), "commands": len(log),
            "record_s": t1 - t0, "html_s": t2 - t1, "html_bytes": len(html.encode()),
            "pictures_s": t3 - t2, "picture_s": (t3 - t2) / max(1, len(pngs)),
            "one_day_result_s": t4 - t3, "total_s": t3 - t0}


async def _lateness(seconds: float, busy: asyncio.Future[Any] | None) -> list[float]:
    loop = asyncio.get_running_loop()
    out: list[float] = []
    end = loop.time() + seconds
    while loop.time() < end and (busy is None or not busy.done()):
        before = loop.time()
        await asyncio.sleep(0.001)
        out.append((loop.time() - before - 0.001) * 1000)
    return out


async def latency(initial: GameState, log: list[LogRow]) -> dict[str, Any]:
    idle = await _lateness(1.0, None)
    job = asyncio.ensure_future(asyncio.to_thread(build_all, initial, log))
    busy = await _lateness(60.0, job)
    await job

    def p(xs: list[float], q: float) -> float:
        return statistics.quantiles(xs, n=100)[int(q) - 1] if len(xs) > 1 else 0.0

    return {"idle_p50_ms": p(idle, 50), "idle_p99_ms": p(idle, 99),
            "busy_p50_ms": p(busy, 50), "busy_p99_ms": p(busy, 99), "samples": len(busy)}


async def measure_async(players: int = 30, days: int = 15) -> dict[str, Any]:
    import archive.picture  # noqa: F401  (matplotlib's import is paid once, at start-up)

    initial, log = scripted_game(players, days)
    build_all(initial, log)  # warm up (fonts, caches)
    out = build_all(initial, log)
    out |= await latency(initial, log)
    out["target_s"] = TARGET_S
    out["ok"] = out["total_s"] < TARGET_S and out["html_bytes"] < 1_000_000
    return out


def measure(players: int = 30, days: int = 15) -> dict[str, Any]:
    return asyncio.run(measure_async(players, days))


def table(out: dict[str, Any]) -> str:
    return "\n".join([
        "ARCHIVE (a {players}-player, {days}-day game, {commands} commands)".format(**out),
        f"  record (replay)        {out['record_s'] * 1000:8.1f} ms",
        f"  HTML + inline SVG      {out['html_s'] * 1000:8.1f} ms  "
        f"{out['html_bytes'] / 1024:.0f} KiB (limit 1000 KB)",
        f"  {out['days']} PNG pictures        {out['pictures_s'] * 1000:8.1f} ms  "
        f"({out['picture_s'] * 1000:.0f} ms each)",
        f"  one day's result PNG   {out['one_day_result_s'] * 1000:8.1f} ms  (replay + draw)",
        f"  total archive+pictures {out['total_s'] * 1000:8.1f} ms  "
        f"(target < {out['target_s'] * 1000:.0f} ms: {'ok' if out['ok'] else 'MISSED'})",
        f"  loop lateness idle     p50 {out['idle_p50_ms']:.2f} ms, "
        f"p99 {out['idle_p99_ms']:.2f} ms",
        f"  ... during a build     p50 {out['busy_p50_ms']:.2f} ms, p99 {out['busy_p99_ms']:.2f} ms"
        f"  (build in a worker thread, {out['samples']} samples)",
    ])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.archive")
    p.add_argument("--players", type=int, default=30)
    p.add_argument("--days", type=int, default=15)
    args = p.parse_args(argv)
    print(table(measure(args.players, args.days)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
