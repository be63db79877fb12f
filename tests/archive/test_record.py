"""The after-game record (core.sight.record), the picture and the HTML, without a browser."""

from __future__ import annotations

import io
import re
import threading
from html.parser import HTMLParser
from pathlib import Path
from xml.etree import ElementTree

import pytest
from PIL import Image

from archive.html import render
from archive.picture import timeline_png
from archive.svg import timeline_svg
from core.game import commands as c
from core.game.events import Audience, Event
from core.game.state import PhaseKind
from core.sight.record import (
    GameRecord,
    NotFinished,
    build,
    files_for,
    names_of,
    team_channel_readers,
    timeline_of,
)
from core.sight.timeline import DayTimeline
from tests.archive.scripted import EVIL_TEXT, NAMES, play_scripted


@pytest.fixture(scope="module")
def scripted():  # type: ignore[no-untyped-def]
    initial, table = play_scripted()
    return initial, table, build(initial, table.log)


def test_the_record_holds_every_vote_order_and_secret(scripted) -> None:  # type: ignore[no-untyped-def]
    _, table, record = scripted
    state = table.state
    assert [p.name for p in record.players] == NAMES
    assert [(p.role, p.alive) for p in record.players] == \
        [(str(p.role), p.alive) for p in state.players]
    assert [d.number for d in record.days] == [d.number for d in state.days]
    for day, kept in zip(record.days, state.days, strict=True):
        assert day.timeline.final == kept.tally and day.timeline.hanged == kept.hanged
    cmds = [(seq, cmd) for seq, cmd, _ in table.log]
    votes = [seq - 1 for seq, cmd in cmds if isinstance(cmd, c.Vote | c.Unvote)]
    assert [s.seq for d in record.days for s in d.timeline.steps] == votes
    orders = [seq - 1 for seq, cmd in cmds if isinstance(cmd, c.NightOrder)]
    assert sorted(o.seq for n in record.nights for o in n.orders) == orders
    anon = [s for s in record.secrets if s.kind == "anon"]
    assert anon and anon[0].text == EVIL_TEXT and anon[0].sender == 100
    assert {s.kind for s in record.secrets} >= {"anon", "whisper", "buy", "cast"}
    assert record.bonuses and record.bonuses[0].reason == "for <i>style</i>"
    checks = [x for n in record.nights for x in n.checks]
    assert checks and all(role for _, _, role in checks)


def test_payout_arithmetic_adds_up(scripted) -> None:  # type: ignore[no-untyped-def]
    _, table, record = scripted
    assert [(p.uid, p.amount, p.reason) for p in record.payouts] == \
        [(p.uid, p.amount, p.reason) for p in table.state.payouts]
    for line in record.payouts:
        if line.unit is not None:
            assert line.count * line.unit == line.amount
    prize = [x for x in record.payouts if x.reason == "prize"]
    if prize:
        assert sum(x.amount for x in prize) == prize[0].pool
        assert len(prize) == prize[0].shares


def test_a_running_game_has_no_record(scripted) -> None:  # type: ignore[no-untyped-def]
    initial, table, _ = scripted
    cut = next(i for i, (_, cmd, _) in enumerate(table.log) if isinstance(cmd, c.Start))
    with pytest.raises(NotFinished):
        build(initial, table.log[: cut + 5])


def test_timeline_of_a_day_reads_nothing_later(scripted) -> None:  # type: ignore[no-untyped-def]
    initial, table, record = scripted
    first = record.days[0]
    # cut the log right after that day's close: the same timeline
    close = next(i for i, (_, _, events) in enumerate(table.log)
                 if any(e.kind == "day_result" and e.data["number"] == first.number
                        for e in events))
    short = timeline_of(initial, table.log[: close + 1], first.number)
    assert short == first.timeline
    assert timeline_of(initial, table.log[:close], first.number) is None


def test_files_for_announcements() -> None:
    assert files_for(Event(kind="day_result", data={"number": 3, "tally": {"5": 2}})) == \
        [{"kind": "timeline", "day": 3}]
    assert files_for(Event(kind="day_result", data={"number": 3, "tally": {}})) == []
    assert files_for(Event(kind="game_over", data={})) == [{"kind": "archive"}]
    assert files_for(Event(kind="game_over", audience=Audience.master())) == []
    assert files_for(Event(kind="vote_cast", data={})) == []


def test_team_channel_readers(scripted) -> None:  # type: ignore[no-untyped-def]
    _, table, _ = scripted
    ended = table.state
    everybody = sorted(p.uid for p in ended.players)
    for team in ("clan:1", "police", "opcop", "graveyard"):
        assert team_channel_readers(ended, team, [100, 101]) == everybody
    assert team_channel_readers(ended, "desk", [1]) == [1]  # the master's desk stays his
    off = ended.model_copy(update={"options": ended.options.model_copy(
        update={"open_team_channels": False})})
    assert team_channel_readers(off, "clan:1", [100, 101]) == [100, 101]
    for phase in (PhaseKind.DAY, PhaseKind.NIGHT, PhaseKind.CANCELLED):
        running = ended.model_copy(update={"phase": phase})
        assert team_channel_readers(running, "clan:1", [100, 101]) == [100, 101]


def test_picture_is_a_real_png(scripted) -> None:  # type: ignore[no-untyped-def]
    _, table, record = scripted
    names = names_of(table.log)
    day = next(d for d in record.days if len(d.timeline.candidates) > 1)
    data = timeline_png(day.timeline, lambda u: names[u], "ru")
    image = Image.open(io.BytesIO(data))
    image.load()
    assert image.format == "PNG" and image.size == (960, 540)
    rgb = image.convert("RGB")
    colours = rgb.getcolors(maxcolors=1 << 20)
    assert colours is not None and len(colours) > 50
    assert rgb.getpixel((5, 5)) == (255, 255, 255)
    # the hanged player's colour (Okabe-Ito blue) and the star's vermillion are drawn
    present = {c for _, c in colours}
    assert (0, 114, 178) in present and (213, 94, 0) in present
    assert data == timeline_png(day.timeline, lambda u: names[u], "ru")  # deterministic
    assert data != timeline_png(day.timeline, lambda u: names[u], "en")
    empty = timeline_png(DayTimeline(day=4), lambda u: "", "en")
    assert Image.open(io.BytesIO(empty)).size == (960, 540)


def test_a_reused_figure_draws_as_a_fresh_one(scripted) -> None:  # type: ignore[no-untyped-def]
    """Pictures reuse one figure per thread: nothing of the last picture may remain."""
    _, table, record = scripted
    names = names_of(table.log)
    days = [d for d in record.days if d.timeline.steps]
    assert len(days) >= 2
    first, other = days[0].timeline, days[-1].timeline
    fresh: list[bytes] = []

    def draw_first() -> None:
        fresh.append(timeline_png(first, lambda u: names[u], "en"))

    worker = threading.Thread(target=draw_first)
    worker.start()
    worker.join()
    timeline_png(other, lambda u: names[u], "ru")  # this thread's figure drew another day first
    timeline_png(DayTimeline(day=9), lambda u: "", "ru")  # and an empty one
    assert timeline_png(first, lambda u: names[u], "en") == fresh[0]


def test_svg_charts_are_well_formed_and_escaped(scripted) -> None:  # type: ignore[no-untyped-def]
    _, table, record = scripted
    names = names_of(table.log)
    for day in record.days:
        svg = timeline_svg(day.timeline, lambda u: names[u], "en")
        root = ElementTree.fromstring(svg)
        assert root.tag.endswith("svg") and "<b>" not in svg


def test_html_escapes_user_text_and_is_self_contained(scripted) -> None:  # type: ignore[no-untyped-def]
    _, _, record = scripted
    html = render(record, "ru")
    assert "<script>window.pwned" not in html and "&lt;script&gt;window.pwned" in html
    assert "<b>bold</b>" not in html and "Bob &lt;b&gt;bold&lt;/b&gt;" in html
    assert "<i>style</i>" not in html and "<em>strikes" not in html
    assert html.count("<script>") == 1
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    assert "@import" not in html and "url(" not in html


def test_a_30_player_15_day_archive_stays_under_1_mb() -> None:
    from bench.archive import scripted_game

    initial, log = scripted_game(30, 15)
    record = build(initial, log)
    assert len(record.days) >= 15 and len(record.players) == 30
    for lang in ("ru", "en"):
        assert len(render(record, lang).encode()) < 1_000_000


@pytest.mark.parametrize("lang", ["ru", "en"])
def test_the_archive_has_no_raw_catalogue_key(scripted, lang: str) -> None:  # type: ignore[no-untyped-def]
    """Every event reads as words, the master's desk accounts (night_explained) too."""
    _, _, record = scripted
    assert any(e.kind == "night_explained" for n in record.nights for e in n.steps)
    html = render(record, lang)
    assert not re.search(r"\b(event|desk)\.[a-z_]+\b", html), re.findall(
        r"\b(?:event|desk)\.[a-z_]+\b", html)[:5]


HOSTILE = ("</title></style></textarea><script>window.pwned=1</script>"
           "<img src=x onerror=\"window.pwned=2\">\"'&amp;{{ 'pw' ~ 'ned' }}")
# every element the archive is made of: anything else came from text that was not escaped
ARCHIVE_TAGS = {"html", "head", "meta", "title", "style", "body", "h1", "h2", "h3", "h4", "p",
                "button", "nav", "a", "section", "article", "table", "caption", "tr", "th",
                "td", "code", "b", "span", "ul", "ol", "li", "del", "br", "div", "time",
                "script", "svg", "rect", "line", "text", "polyline", "polygon", "circle", "g"}


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.handlers: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.handlers += [k for k, _ in attrs if k.startswith("on")]

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _hostile(record: GameRecord) -> GameRecord:
    """The record with hostile text in every field a user or a catalogue writes."""
    out = record.model_copy(deep=True)
    out.title = out.plot = out.roles_text = HOSTILE
    out.names = {uid: HOSTILE for uid in out.names}
    for p in out.players:
        p.name = HOSTILE
    for n in out.nights:
        for o in n.orders:
            o.story = HOSTILE
    for s in out.secrets:
        s.text = s.against = HOSTILE
    for b in out.bonuses:
        b.reason = HOSTILE
    return out


def test_no_field_can_write_markup(scripted, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """A title with <script> in every field, and every catalogue text hostile too: the
    page is made of its own elements only, runs its own script only, and shows the
    hostile text as text (autoescape: no field depends on a filter someone remembered)."""
    import archive.html
    import archive.svg
    import core.sight.desk
    import core.sight.narrate

    for module in (archive.html, archive.svg, core.sight.narrate, core.sight.desk):
        monkeypatch.setattr(module, "t", lambda *_, **__: HOSTILE)
    _, _, record = scripted
    html = render(_hostile(record), "en")
    parsed = _Tags()
    parsed.feed(html)
    assert set(parsed.tags) <= ARCHIVE_TAGS, set(parsed.tags) - ARCHIVE_TAGS
    assert parsed.tags.count("script") == 1 and parsed.handlers == []
    assert "pwned" not in "".join(parsed.text).replace("window.pwned", "")  # no template ran
    assert "".join(parsed.text).count(HOSTILE) > 100


def test_no_template_or_module_opts_out_of_escaping() -> None:
    """Escaping is not a convention here: nothing in archive/ makes markup by hand."""
    root = Path(__file__).resolve().parents[2] / "archive"
    for path in [*root.glob("*.py"), *(root / "templates").iterdir()]:
        text = path.read_text(encoding="utf-8")
        for bad in ("Markup(", "markupsafe", "|safe", "| safe", "autoescape false",
                    "autoescape=False", "html.escape", "from html import"):
            assert bad not in text, f"{path.name}: {bad}"


def test_the_html_archive_needs_no_matplotlib() -> None:
    """The page, the site and the bot's import of archive.build load no matplotlib: only
    the PNG pictures do, in the worker that draws them."""
    import subprocess
    import sys

    code = ("import sys, archive.build, archive.html, archive.web; "
            "print('matplotlib' in sys.modules)")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=Path(__file__).resolve().parents[2], timeout=120)
    assert run.stdout.strip() == "False", run.stderr
