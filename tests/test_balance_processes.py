"""Issue 41, item 3: the balance estimate's worker processes never outlive the bot.

A real child Python process starts an Estimator with worker processes (forkserver and
all) and plays an estimate; then it closes the estimator and exits (a graceful stop),
or it is killed with SIGKILL (a crash). Its descendants are read from /proc: after
the close none of the pool's is left while the child still runs, and after the child
ends, by either road, none at all within seconds. Also: the workers run at a lower CPU
priority than the process that started them.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROC = Path("/proc")

pytestmark = pytest.mark.skipif(not PROC.is_dir(), reason="reads /proc (Linux)")

CHILD = """
import asyncio, sys
from cogs.balance import Estimator
from core.game.state import Options
from core.play.balance import Job

est = Estimator(max_games=4, chunk=1, workers=2, budget_s=60.0)
tally = asyncio.run(est.run(Job("mafioso; investigator", 6, Options(), seed=1)))
assert tally.games == 4, tally
print("ready", flush=True)
if sys.argv[1] == "close":
    sys.stdin.readline()  # the test has counted the pool's processes
    est.close()
    print("closed", flush=True)
sys.stdin.read()  # until the test lets it end (or kills it)
"""


def _stat(pid: int) -> tuple[int, str, int] | None:
    """(ppid, state, start time) of a live process, None if it is gone or a zombie."""
    try:
        raw = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    fields = raw[raw.rindex(")") + 2:].split()
    state, ppid, start = fields[0], int(fields[1]), int(fields[19])
    return None if state in ("Z", "X") else (ppid, state, start)


def descendants(root: int) -> dict[int, int]:
    """Every live descendant of `root`: pid -> its start time (against pid reuse)."""
    parents: dict[int, list[int]] = {}
    starts: dict[int, int] = {}
    for entry in PROC.iterdir():
        if entry.name.isdigit():
            st = _stat(int(entry.name))
            if st is not None:
                parents.setdefault(st[0], []).append(int(entry.name))
                starts[int(entry.name)] = st[2]
    out: dict[int, int] = {}
    todo = [root]
    while todo:
        for child in parents.get(todo.pop(), []):
            out[child] = starts[child]
            todo.append(child)
    return out


def alive(pids: dict[int, int]) -> list[int]:
    """Those of `pids` still running (the same processes: same start time)."""
    return [pid for pid, start in pids.items()
            if (st := _stat(pid)) is not None and st[2] == start]


def cmdline(pid: int) -> str:
    try:
        return (PROC / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def wait_gone(pids: dict[int, int], seconds: float = 10.0) -> list[int]:
    ends = time.monotonic() + seconds
    while alive(pids) and time.monotonic() < ends:
        time.sleep(0.1)
    return alive(pids)


def started_child(mode: str) -> subprocess.Popen[str]:
    child = subprocess.Popen([sys.executable, "-c", CHILD, mode], cwd=ROOT, text=True,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert child.stdout is not None
    line = child.stdout.readline()
    assert line.strip() == "ready", line
    return child


def pool_processes(pids: dict[int, int]) -> dict[int, int]:
    """The pool's processes: the forkserver and its workers (not multiprocessing's
    resource tracker, which ends with the process that started it)."""
    return {p: s for p, s in pids.items() if "resource_tracker" not in cmdline(p)}


@pytest.mark.timeout(120)
def test_a_killed_bot_leaves_no_worker_behind() -> None:
    child = started_child("stay")
    before: dict[int, int] = {}
    try:
        before = descendants(child.pid)
        # the forkserver and the two workers (and the resource tracker)
        assert len(pool_processes(before)) >= 3, {p: cmdline(p) for p in before}
        os.kill(child.pid, signal.SIGKILL)
        child.wait(10)
        assert wait_gone(before) == [], {p: cmdline(p) for p in alive(before)}
    finally:
        if child.poll() is None:
            child.kill()
        for pid in alive(before):  # (the old tree's orphans: not left to pile up)
            os.kill(pid, signal.SIGKILL)


@pytest.mark.timeout(120)
def test_a_stopped_bot_leaves_no_worker_behind() -> None:
    child = started_child("close")
    assert child.stdout is not None and child.stdin is not None
    before: dict[int, int] = {}
    try:
        before = descendants(child.pid)
        pool = pool_processes(before)
        assert len(pool) >= 3, {p: cmdline(p) for p in before}
        child.stdin.write("close\n")
        child.stdin.flush()
        assert child.stdout.readline().strip() == "closed"
        # closed: the forkserver and the workers are gone while the process still runs
        assert wait_gone(pool, 5.0) == [], {p: cmdline(p) for p in alive(pool)}
        child.stdin.close()  # the process ends: nothing of it is left
        assert child.wait(10) == 0
        assert wait_gone(before) == [], {p: cmdline(p) for p in alive(before)}
    finally:
        if child.poll() is None:
            child.kill()
        for pid in alive(before):
            os.kill(pid, signal.SIGKILL)


def test_the_workers_run_at_a_lower_priority() -> None:
    from cogs.balance import NICE, Estimator

    est = Estimator(workers=1)
    try:
        mine = os.nice(0)
        theirs = est.pool().submit(os.nice, 0).result(timeout=60)
        assert theirs == min(19, mine + NICE), (mine, theirs)
    finally:
        est.close()
