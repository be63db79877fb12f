"""Shared fixtures. Each section belongs to the part of the project that needs it."""

from __future__ import annotations

import asyncio
import os
import secrets
import threading
from collections.abc import AsyncIterator, Coroutine, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import parse_qs, urlsplit, urlunsplit

import pytest
import pytest_asyncio
from hypothesis import HealthCheck, settings

if TYPE_CHECKING:
    from core.storage.service import GameService

T = TypeVar("T")

# --- storage (core/storage) ---------------------------------------------------------
# Every storage test runs twice: on a temp-file SQLite database and on a fresh, empty
# PostgreSQL schema (CREATE SCHEMA mafia_test_<random>, dropped afterwards; the URL
# carries ?schema=..., which the app supports too) in the database MAFIA_TEST_POSTGRES
# (default postgres://postgres@127.0.0.1:5432/postgres). A schema costs milliseconds
# where CREATE DATABASE costs a quarter second; tests that need a whole database of
# their own (none so far) can use new_postgres_database().
# The postgres runs skip when no server answers, unless CI is set (CI=true): then a
# missing server is a failure, so CI can never go green by skipping them.
# `-m "not postgres"` runs only the SQLite half. init_db/close_db bracket each test
# inside its own event loop, so no Tortoise context leaks from one test into the next.

PG_ADMIN_URL = os.environ.get("MAFIA_TEST_POSTGRES",
                              "postgres://postgres@127.0.0.1:5432/postgres")
_pg_problem: list[str | None] = []  # cached once per session: None = the server answers


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "postgres: needs the PostgreSQL server of MAFIA_TEST_POSTGRES "
        "(skipped when none answers, unless CI=true)")
    config.addinivalue_line(
        "markers", "slow_property: a hypothesis property playing whole games per example; "
        "its example count comes from the profile (tests/conftest.py: slow_property)")


#: The longest single tests, started first: under xdist (pyproject's addopts) a long test
#: picked up last would keep one worker busy after the other has finished.
SLOW_FIRST = ("tests/test_bench_smoke.py", "tests/test_house.py", "tests/test_wheel.py",
              "tests/archive/test_browser.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests that take `postgres_url` are PostgreSQL tests too (for `-m "not postgres"`)."""
    for item in items:
        if "postgres_url" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.postgres)
    items.sort(key=lambda item: not item.nodeid.startswith(SLOW_FIRST))  # stable


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


# --- properties (hypothesis) ------------------------------------------------------------
# Property tests check what the rules do, not how fast: a shared 2-core CI machine made
# hypothesis's default 200 ms deadline per example fail a test now and then. Profiles:
# "dev" at a developer's desk, "ci" when CI is set; HYPOTHESIS_PROFILE chooses another.
# The slow properties (whole games per example, marked `slow_property`) take their
# example count from the profile: a few at the desk, more in CI.
PROFILE = os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if in_ci() else "dev")
SLOW_EXAMPLES = {"dev": 4, "ci": 20}
for _name in ("dev", "ci"):
    settings.register_profile(_name, deadline=None)
    settings.register_profile(f"slow-{_name}", deadline=None,
                              max_examples=SLOW_EXAMPLES[_name],
                              suppress_health_check=list(HealthCheck))
settings.load_profile(PROFILE)
slow_property = settings.get_profile(f"slow-{PROFILE}" if PROFILE in SLOW_EXAMPLES
                                     else PROFILE)


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion from sync code, whether or not a loop is running."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(coro)
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=target)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]  # type: ignore[no-any-return]


def _dsn(url: str) -> str:
    return url.replace("postgres://", "postgresql://", 1)


async def _admin(statement: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(_dsn(PG_ADMIN_URL), timeout=5)
    try:
        await conn.execute(statement)
    finally:
        await conn.close()


def require_postgres() -> None:
    """Skip (or, in CI, fail) the test when the PostgreSQL server does not answer."""
    if not _pg_problem:
        try:
            import asyncpg  # noqa: F401

            run_sync(_admin("SELECT 1"))
            _pg_problem.append(None)
        except Exception as exc:
            _pg_problem.append(f"no PostgreSQL at {PG_ADMIN_URL}: {type(exc).__name__}: {exc}")
    problem = _pg_problem[0]
    if problem is not None:
        if in_ci():
            pytest.fail(f"{problem} (CI=true: PostgreSQL tests must run, not skip)")
        pytest.skip(problem)


def new_postgres_schema() -> str:
    """CREATE a fresh, empty schema on the test server; returns a URL that uses it."""
    require_postgres()
    name = f"mafia_test_{secrets.token_hex(6)}"
    run_sync(_admin(f'CREATE SCHEMA "{name}"'))
    parts = urlsplit(PG_ADMIN_URL)
    query = "&".join(q for q in (parts.query, f"schema={name}") if q)
    return urlunsplit(parts._replace(query=query))


def drop_postgres_schema(url: str) -> None:
    name = parse_qs(urlsplit(url).query)["schema"][-1]
    assert name.startswith("mafia_test_"), url
    run_sync(_admin(f'DROP SCHEMA IF EXISTS "{name}" CASCADE'))


def new_postgres_database() -> str:
    """CREATE a fresh, empty database on the test server; returns its URL."""
    require_postgres()
    name = f"mafia_test_{secrets.token_hex(6)}"
    run_sync(_admin(f'CREATE DATABASE "{name}"'))
    return urlunsplit(urlsplit(PG_ADMIN_URL)._replace(path=f"/{name}"))


def drop_postgres_database(url: str) -> None:
    name = urlsplit(url).path.lstrip("/")
    assert name.startswith("mafia_test_"), url
    run_sync(_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A fresh, empty PostgreSQL schema for this test alone (dropped afterwards)."""
    url = new_postgres_schema()
    try:
        yield url
    finally:
        drop_postgres_schema(url)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def storage_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def storage_url(storage_backend: str, tmp_path: Path) -> Iterator[str]:
    """An empty database of each backend in turn (see the section comment)."""
    if storage_backend == "sqlite":
        yield f"sqlite://{tmp_path / 'storage' / 'mafia.db'}"
        return
    url = new_postgres_schema()
    try:
        yield url
    finally:
        drop_postgres_schema(url)


@pytest_asyncio.fixture
async def storage_db(storage_url: str) -> AsyncIterator[str]:
    from core.storage.db import close_db, init_db

    await init_db(storage_url)
    try:
        yield storage_url
    finally:
        await close_db()


@pytest_asyncio.fixture
async def game_service(storage_db: str) -> AsyncIterator[GameService]:
    from core.storage.service import GameService

    service = GameService()
    yield service
    await service.close()  # commits still in flight land before the database closes


# --- i18n (core/text/i18n.py) -------------------------------------------------------------
# Outside tests a missing key, parameter or plural form is logged and rendered as best
# it can be; every test under tests/i18n (tests/i18n/conftest.py) and the bot tests that
# read catalogue text (pytestmark = pytest.mark.usefixtures("strict_i18n")) run strict.


@pytest.fixture
def strict_i18n() -> Iterator[None]:
    """A missing key, parameter or plural form fails the test instead of being logged."""
    from core.text import i18n

    previous = i18n.is_strict()
    i18n.set_strict(True)
    yield
    i18n.set_strict(previous)
