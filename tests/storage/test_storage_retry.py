"""The one retry loop of a game's writes (core/storage/retry.py): what is run again,
what is given up, and when the cached state is forgotten."""

from __future__ import annotations

import sqlite3

import pytest
from tortoise.exceptions import IntegrityError, OperationalError

from core.storage.retry import ATTEMPTS, Stale, as_stale, conflict, retrying


class Trace:
    def __init__(self, outcomes: list[BaseException | None]) -> None:
        self.outcomes = outcomes
        self.tries: list[int] = []
        self.forgotten = 0

    async def attempt(self, n: int) -> str:
        self.tries.append(n)
        outcome = self.outcomes[min(n, len(self.outcomes) - 1)]
        if outcome is not None:
            raise outcome
        return "done"

    def forget(self) -> None:
        self.forgotten += 1


def stale(cause: BaseException | None = None) -> Stale:
    exc = Stale()
    exc.__cause__ = cause
    return exc


async def test_another_writer_is_retried_at_once() -> None:
    trace = Trace([stale(), stale(), None])
    assert await retrying(1, trace.attempt, forget=trace.forget) == "done"
    assert trace.tries == [0, 1, 2] and trace.forgotten == 2


async def test_a_lasting_conflict_raises_its_cause() -> None:
    locked = OperationalError("database is locked")
    trace = Trace([stale(locked)])
    with pytest.raises(OperationalError, match="locked"):
        await retrying(1, trace.attempt, forget=trace.forget)
    assert trace.tries == list(range(ATTEMPTS)) and trace.forgotten == ATTEMPTS


async def test_a_game_that_keeps_moving_is_given_up() -> None:
    trace = Trace([stale()])
    with pytest.raises(RuntimeError, match="keeps changing"):
        await retrying(7, trace.attempt, forget=trace.forget)
    assert len(trace.tries) == ATTEMPTS


async def test_other_errors_are_not_retried() -> None:
    boom, kept = ValueError("boom"), KeyError("kept")
    trace = Trace([boom])
    with pytest.raises(ValueError):
        await retrying(1, trace.attempt, forget=trace.forget)
    assert trace.tries == [0] and trace.forgotten == 1
    trace = Trace([kept])
    with pytest.raises(KeyError):
        await retrying(1, trace.attempt, forget=trace.forget, keeps=lambda e: e is kept)
    assert trace.forgotten == 0  # a refusal that leaves the cache valid


def test_what_counts_as_a_conflict() -> None:
    assert conflict(IntegrityError("unique"))
    assert conflict(OperationalError("database is locked"))
    deadlock = Exception("deadlock detected")
    deadlock.sqlstate = "40P01"  # type: ignore[attr-defined]
    wrapped = RuntimeError("wrapper")
    wrapped.__cause__ = deadlock
    assert conflict(wrapped)
    assert not conflict(sqlite3.ProgrammingError("bad SQL"))
    converted = as_stale(IntegrityError("unique"))
    assert isinstance(converted, Stale) and isinstance(converted.__cause__, IntegrityError)
    plain = ValueError("x")
    assert as_stale(plain) is plain
