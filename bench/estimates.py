"""What the balance estimate costs the players (issue 41, item 6): command latency p99
while 30 estimates are asked at once, against the same load without them.

The real bot inside the harness (bench/e2e.py's world): live games on day 1 take a
Poisson stream of /vote, /night and /role (open loop, `rate`/s). The stream is run
twice on the same games: first alone, then right after `estimates` masters, each in a
game of their own in signup, send /game setup at the same moment through the command
tree (each setup asks for an estimate: the bot's own estimator, worker processes, its
budget, queue and allowance). Target: the p99 with the estimates within 1.5 times the
p99 without them, plus 5 ms (the estimates run in worker processes at a lower
priority, so the event loop only awaits their answers).
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cogs import balance
from core.game import commands as c
from core.game.state import Options

from .e2e import EVERYTHING, Bench, open_loop, running_bot

RATIO = 1.5
SLACK_MS = 5.0
ROLES = "mafioso x2; investigator; sergeant; bouncer"


async def _signup_games(bench: Bench, count: int, players: int) -> list[tuple[Any, int]]:
    """`count` games in signup, each with its master and `players` joined, in a guild
    of their own: (master, channel id) for each."""
    h, svc, now = bench.h, bench.service, datetime.now(UTC)
    guild = h.add_guild("Estimates", locale="en-US")
    h.set_bot_permissions(EVERYTHING, guild)
    out = []
    for i in range(count):
        channel = h.add_text_channel(f"signup-{i + 1}", guild)
        master = h.add_member(f"EM{i + 1}", guild)
        gid = await svc.create(guild.id, channel.id, master.id, f"Signup {i + 1}",
                               options=Options(), seed=i + 1, language="en")
        for k in range(players):
            member = h.add_member(f"E{i + 1}P{k + 1}", guild)
            await svc.apply(gid, c.Join(by=member.id, at=now, name=f"P{k + 1}"))
        out.append((master, channel.id))
    await bench.bot.outbox.idle(within=120)
    await h.settle()
    return out


async def measure(workdir: Path, *, games: int = 20, samples: int = 300, rate: float = 10.0,
                  estimates: int = 30, players: int = 9) -> dict[str, Any]:
    await asyncio.to_thread(workdir.mkdir, parents=True, exist_ok=True)
    async with running_bot(workdir) as bench:
        await bench.grow(games)
        masters = await _signup_games(bench, estimates, players)
        await bench.quiesce()
        without = await open_loop(bench, bench.games, samples, rate, seed=41)
        await bench.quiesce()
        lobby: Any = bench.bot.get_cog("Lobby")
        replies = await asyncio.gather(*(
            bench.h.slash(master, "game setup", channel=channel, roles=ROLES)
            for master, channel in masters))
        asked = {"now": 0, "queued": 0, "refused": 0}
        for res in replies:
            text = res.response_data.get("content", "")
            asked["now" if "Estimating" in text else "queued" if "queued" in text
                  else "refused"] += 1
        running = balance.ESTIMATOR.running + balance.ESTIMATOR.waiting
        with_estimates = await open_loop(bench, bench.games, samples, rate, seed=41)
        lobby.estimates.cancel_all()
    p99, base = with_estimates["all"]["p99_ms"], without["all"]["p99_ms"]
    limit = RATIO * base + SLACK_MS
    return {"games": games, "samples": samples, "rate": rate, "estimates": estimates,
            "asked": asked, "under_way_at_start": running,
            "workers": balance.ESTIMATOR.workers, "without": without["all"],
            "with": with_estimates["all"], "p99_ms": p99, "without_p99_ms": base,
            "limit_ms": limit, "ok": p99 <= limit}


def table(out: dict[str, Any]) -> str:
    a = out["asked"]
    return (f"ESTIMATES UNDER LOAD\n  {out['estimates']} /game setup at once "
            f"({a['now']} estimated at once, {a['queued']} queued, {a['refused']} refused; "
            f"{out['workers']} worker process(es)): command p99 {out['p99_ms']:.1f} ms "
            f"(p50 {out['with']['p50_ms']:.1f}) against {out['without_p99_ms']:.1f} ms "
            f"(p50 {out['without']['p50_ms']:.1f}) without them, {out['samples']} commands "
            f"at {out['rate']:g}/s over {out['games']} games each")


def target(out: dict[str, Any]) -> dict[str, Any]:
    return {"value": out["p99_ms"], "without_ms": out["without_p99_ms"],
            "target": f"<= {RATIO:g}x+{SLACK_MS:g}", "met": bool(out["ok"])}
