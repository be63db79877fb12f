"""The archive as people read it: in a real headless Chromium (the distribution's,
/usr/bin/chromium) driven by Playwright. Every player, role, vote and order of a
scripted game is in the DOM; "hide roles" hides and shows them; it reads without
JavaScript; nothing is ever fetched from outside the file; a screenshot is kept
under tests/artifacts/ (gitignored)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from archive.html import render
from core.sight.narrate import role_name
from core.sight.record import GameRecord, build
from core.text.i18n import t
from tests.archive.scripted import EVIL_TEXT, play_scripted
from tests.conftest import in_ci

CHROMIUM = os.environ.get("MAFIA_TEST_CHROMIUM", "/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"

playwright = pytest.importorskip("playwright.sync_api")
if not shutil.which(CHROMIUM) and not Path(CHROMIUM).exists() and not in_ci():
    # Outside CI a machine without Chromium skips; in CI (.ci/run installs it) it fails.
    pytestmark = pytest.mark.skip(reason=f"no Chromium at {CHROMIUM} (.ci/run installs it)")


@pytest.fixture(scope="module")
def game(tmp_path_factory: pytest.TempPathFactory) -> tuple[GameRecord, Path]:
    initial, table = play_scripted()
    record = build(initial, table.log)
    path = tmp_path_factory.mktemp("archive") / "game.html"
    path.write_text(render(record, "en"), encoding="utf-8")
    return record, path


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with playwright.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            yield b
        finally:
            b.close()


def open_page(browser: object, path: Path, *, js: bool = True) -> tuple[object, list[str]]:
    context = browser.new_context(java_script_enabled=js)  # type: ignore[attr-defined]
    page = context.new_page()
    requests: list[str] = []

    def route(r: object) -> None:
        url = r.request.url  # type: ignore[attr-defined]
        requests.append(url)
        if url == path.as_uri():
            r.continue_()  # type: ignore[attr-defined]
        else:
            r.abort()  # type: ignore[attr-defined]

    context.route("**/*", route)
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    return page, requests


def test_every_player_role_vote_and_order_is_in_the_dom(browser: object,
                                                        game: tuple[GameRecord, Path]) -> None:
    record, path = game
    page, requests = open_page(browser, path)
    assert requests == [path.as_uri()]  # nothing but the file itself, ever
    for p in record.players:
        row = page.locator(f'#players tr[data-uid="{p.uid}"]')
        assert row.locator("td").first.inner_text().startswith(p.name)
        assert row.locator(".role").inner_text() == role_name(p.role, "en")
    assert record.days and record.nights
    votes = 0
    for day in record.days:
        for step in day.timeline.steps:
            row = page.locator(f'#day-{day.number} tr[data-seq="{step.seq}"]')
            cells = row.locator("td").all_inner_texts()
            assert cells[1] == record.names[step.voter]
            target = step.target if step.target is not None else step.previous
            assert target is not None and record.names[target] in cells[2]
            votes += 1
    orders = 0
    for night in record.nights:
        for order in night.orders:
            row = page.locator(f'#night-{night.number} tr[data-seq="{order.seq}"]')
            cells = row.locator("td").all_inner_texts()
            assert cells[1].startswith(record.names[order.actor])
            assert cells[3] == record.names[order.target]
            if order.story:
                assert cells[5] == order.story
            orders += 1
    assert votes > 10 and orders > 5
    # user text is text, never markup: the planted script did not run, nothing was loaded
    assert page.evaluate("window.pwned") is None
    assert page.evaluate("document.scripts.length") == 1
    assert page.evaluate("document.images.length") == 0
    assert EVIL_TEXT in page.locator("#secrets").inner_text()
    assert requests == [path.as_uri()]


def test_hide_roles_toggle(browser: object, game: tuple[GameRecord, Path]) -> None:
    _, path = game
    page, requests = open_page(browser, path)
    toggle = page.locator("#toggle")
    roles = page.locator("#players .role")
    assert toggle.is_visible() and roles.first.is_visible()
    toggle.click()
    assert toggle.get_attribute("aria-pressed") == "true"
    assert all(not roles.nth(i).is_visible() for i in range(roles.count()))
    assert not page.locator("#nights .secret").first.is_visible()
    assert not page.locator("#secrets .secret").first.is_visible()
    assert page.locator("#players .ph").first.is_visible()
    # what everybody saw stays: the votes and the public feed
    assert page.locator("#days table").first.is_visible()
    assert page.locator("#feed p:not(.team)").nth(1).is_visible()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "archive-roles-hidden.png"), full_page=False)
    toggle.click()
    assert all(roles.nth(i).is_visible() for i in range(roles.count()))
    assert page.locator("#nights .secret").first.is_visible()
    page.screenshot(path=str(ARTIFACTS / "archive.png"), full_page=True)
    assert (ARTIFACTS / "archive.png").stat().st_size > 10_000
    assert requests == [path.as_uri()]


def test_reads_without_javascript(browser: object, game: tuple[GameRecord, Path]) -> None:
    record, path = game
    page, _ = open_page(browser, path, js=False)
    assert not page.locator("#toggle").is_visible()  # a toggle that could not work is hidden
    roles = page.locator("#players .role")
    assert roles.count() == len(record.players) and roles.first.is_visible()
    assert page.locator("#nights .secret").first.is_visible()
    assert page.locator("svg.chart").count() == len(record.days)


def test_each_days_votes_read_as_a_table_beside_the_picture(
        browser: object, game: tuple[GameRecord, Path]) -> None:
    """#34: the chart in words. Every vote, change and withdrawal of a day, in order, with
    its time, in a captioned table the chart points to (aria-describedby): what a screen
    reader announces and what a search finds. On a wide screen it stands beside the chart."""
    record, path = game
    page, _ = open_page(browser, path)
    page.set_viewport_size({"width": 1280, "height": 900})  # type: ignore[attr-defined]
    for day in record.days:
        n = day.number
        table = page.get_by_role("table", name=t("archive.html.votes_caption", "en", number=n))
        assert table.get_attribute("id") == f"votes-{n}"
        chart = page.locator(f"#day-{n} svg.chart")
        assert chart.get_attribute("aria-describedby") == f"votes-{n}"
        rows = table.locator("tr[data-seq]")
        assert [int(s) for s in rows.evaluate_all("rs => rs.map(r => r.dataset.seq)")] == \
            [s.seq for s in day.timeline.steps]
        times = table.locator("time").evaluate_all("ts => ts.map(x => x.dateTime)")
        assert times == [s.at.isoformat() for s in day.timeline.steps if s.at is not None]
        assert times == sorted(times)
        for i, step in enumerate(day.timeline.steps):
            cells = rows.nth(i).locator("td").all_inner_texts()
            assert step.at is not None and cells[0].endswith(step.at.strftime("%H:%M:%S"))
            if step.target is None:  # a withdrawal says so, and whose vote it took back
                assert step.previous is not None
                assert cells[2] == t("archive.html.withdrawn", "en",
                                     name=record.names[step.previous])
        box, pic = table.bounding_box(), chart.bounding_box()
        assert box["x"] >= pic["x"] + pic["width"] and box["y"] < pic["y"] + pic["height"]
    assert any(s.target is None for d in record.days for s in d.timeline.steps)
    ARTIFACTS.mkdir(exist_ok=True)
    page.locator("#day-1").screenshot(path=str(ARTIFACTS / "archive-day-1.png"))
